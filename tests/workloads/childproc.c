/* childproc: the work is done in a short-lived child process.  Thread
 * "ui-main" asks for a result six times, 30 ms apart, the way popen() and
 * build tools do: it makes a pipe, forks, and the child execs this program
 * again (/proc/self/exe child US), renames itself "cruncher", computes US
 * microseconds (a clock loop, no system calls), writes one byte to the
 * pipe and exits; ui-main reads the pipe to its end, then reaps the child
 * with waitpid.  Each child lives about a millisecond; with "anomaly", the
 * child of request 3 computes 300 ms.  The culprit is that child: it ran
 * the whole wait, and it did not exist before the request nor after it.
 *   cc -O2 -o childproc childproc.c && ./childproc anomaly */
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
  if (argc > 2 && !strcmp(argv[1], "child")) {
    prctl(PR_SET_NAME, "cruncher");
    spin(atol(argv[2]));
    char c = 'x';
    return write(1, &c, 1) == 1 ? 0 : 1;
  }
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    int p[2];
    if (pipe(p)) return 1;
    pid_t c = fork();
    if (c == 0) {
      dup2(p[1], 1); close(p[0]); close(p[1]);
      execl("/proc/self/exe", "childproc", "child", anomaly && i == 3 ? "300000" : "1000", (char *)0);
      _exit(127);
    }
    close(p[1]);
    char buf[16];
    while (read(p[0], buf, sizeof buf) > 0) {}
    close(p[0]);
    waitpid(c, 0, 0);
    spin(200);
  }
  return 0;
}
