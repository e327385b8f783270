/* pipechain: process "ui-main" asks process "relay" for a result six times
 * through a pipe; relay forwards each request through a second pipe to
 * process "backend" and passes the answer back; answers return through two
 * more pipes.  With argument "anomaly", backend sleeps 250 ms (nanosleep)
 * before answering request 3, so ui-main's wait for that answer is long and
 * its cause is backend's sleep, two processes away.
 *   cc -O2 -pthread -o pipechain pipechain.c && ./pipechain anomaly */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static void spin(long us) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us); }

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  int up[2], down[2], back[2], ans[2];  /* ui->relay, relay->backend, backend->relay, relay->ui */
  if (pipe(up) || pipe(down) || pipe(back) || pipe(ans)) return 1;
  char i;
  pid_t be = fork();
  if (be == 0) {
    prctl(PR_SET_NAME, "backend");
    close(up[0]); close(up[1]); close(ans[0]); close(ans[1]); close(down[1]); close(back[0]);
    while (read(down[0], &i, 1) == 1) {
      spin(100);
      if (anomaly && i == 3) msleep(250);
      if (write(back[1], &i, 1) != 1) break;
    }
    _exit(0);
  }
  pid_t re = fork();
  if (re == 0) {
    prctl(PR_SET_NAME, "relay");
    close(up[1]); close(ans[0]); close(down[0]); close(back[1]);
    while (read(up[0], &i, 1) == 1) {
      spin(50);
      if (write(down[1], &i, 1) != 1 || read(back[0], &i, 1) != 1) break;
      if (write(ans[1], &i, 1) != 1) break;
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  close(up[0]); close(ans[1]); close(down[0]); close(down[1]); close(back[0]); close(back[1]);
  for (char n = 0; n < 6; n++) {
    msleep(30);
    if (write(up[1], &n, 1) != 1 || read(ans[0], &i, 1) != 1) return 1;
    spin(200);
  }
  close(up[1]);
  waitpid(re, 0, 0); waitpid(be, 0, 0);
  return 0;
}
