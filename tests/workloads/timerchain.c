/* timerchain: process "ui-main" asks process "gateway" for a result six
 * times over a Unix stream socket; gateway forwards each request over a
 * second Unix socket to process "ticker", which answers only when a timerfd
 * it arms for the request expires (2 ms).  With argument "anomaly", ticker
 * arms the timer for 250 ms for request 3 (a back-off), so ui-main's wait
 * for that answer is long and its cause is the timer ticker armed, two
 * processes away.
 *   cc -O2 -pthread -o timerchain timerchain.c && ./timerchain anomaly */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static void spin(long us) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us); }

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  int s1[2], s2[2];                      /* ui-main <-> gateway, gateway <-> ticker */
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, s1) || socketpair(AF_UNIX, SOCK_STREAM, 0, s2)) return 1;
  char i;
  pid_t tk = fork();
  if (tk == 0) {
    prctl(PR_SET_NAME, "ticker");
    close(s1[0]); close(s1[1]); close(s2[0]);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    uint64_t ticks;
    while (recv(s2[1], &i, 1, 0) == 1) {
      long ms = anomaly && i == 3 ? 250 : 2;
      struct itimerspec it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000L}};
      timerfd_settime(tfd, 0, &it, 0);
      if (read(tfd, &ticks, sizeof ticks) != sizeof ticks) break;
      spin(100);
      if (send(s2[1], &i, 1, 0) != 1) break;
    }
    _exit(0);
  }
  pid_t gw = fork();
  if (gw == 0) {
    prctl(PR_SET_NAME, "gateway");
    close(s1[0]); close(s2[1]);
    while (recv(s1[1], &i, 1, 0) == 1) {
      spin(50);
      if (send(s2[0], &i, 1, 0) != 1 || recv(s2[0], &i, 1, 0) != 1) break;
      if (send(s1[1], &i, 1, 0) != 1) break;
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  close(s1[1]); close(s2[0]); close(s2[1]);
  for (char n = 0; n < 6; n++) {
    msleep(30);
    if (send(s1[0], &n, 1, 0) != 1 || recv(s1[0], &i, 1, 0) != 1) return 1;
    spin(200);
  }
  close(s1[0]);
  waitpid(gw, 0, 0); waitpid(tk, 0, 0);
  return 0;
}
