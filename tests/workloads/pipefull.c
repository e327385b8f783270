/* pipefull: backpressure; the victim waits to write, not for an answer.
 * Thread "ui-main" writes 256 KiB of log records into a pipe six times,
 * 30 ms apart (a pipe holds 64 KiB, so each batch fills it and ui-main's
 * write sleeps until the reader makes room).  Process "logger" reads the
 * pipe 4 KiB at a time and processes each piece (20 us, a calibrated
 * loop).  With "anomaly", when batch 3 begins logger spends 300 ms on
 * something of its own (rotating its file, say: a calibrated loop, no
 * system calls) before it reads on: the pipe stays full and ui-main's
 * write waits.  The wakeup that ends the wait comes from the reader, in
 * the direction opposite to the data.  The culprit is logger (running). */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

#define BATCH (256 << 10)

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  calibrate();
  volatile int *batch = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int p[2];
  if (batch == MAP_FAILED || pipe(p)) return 2;
  pid_t lg = fork();
  if (lg == 0) {
    prctl(PR_SET_NAME, "logger");
    close(p[1]);
    char buf[4096]; int rotated = 0;
    for (;;) {
      if (anomaly && batch[0] == 3 && !rotated) { rotated = 1; work(300000); }
      ssize_t r = read(p[0], buf, sizeof buf);
      if (r <= 0) break;
      work(20);
    }
    _exit(0);
  }
  close(p[0]);
  prctl(PR_SET_NAME, "ui-main");
  static char rec[BATCH];
  memset(rec, 'l', sizeof rec);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    batch[0] = i;
    for (size_t off = 0; off < sizeof rec;) {
      ssize_t w = write(p[1], rec + off, sizeof rec - off);
      if (w <= 0) return 3;
      off += (size_t)w;
    }
    work(200);
  }
  close(p[1]);
  waitpid(lg, 0, 0);
  return 0;
}
