/* cpucontend: CPU contention, with no wakeup chain at all.  Thread "ui-main"
 * draws six frames on CPU 0: each frame sleeps 30 ms, then computes 40 ms of CPU time.
 * Threads "hog1" and "hog2", pinned to the same CPU, sleep in 5 ms naps
 * (their normal pacing); with argument "anomaly", when frame 3 begins they
 * both spin for 300 ms, so ui-main is runnable but off the CPU for most of
 * that frame: the frame stretches, and the culprits are the hogs, which
 * never wake ui-main nor hold anything it waits for. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "timing.h"

static volatile int quit, frame = -1, anomaly;

/* busy for `us` of CPU time: a loop calibrated before the threads start
 * (a CPU-time clock would cost a system call per check), so preemption
 * stretches it */
static void pin0(void) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(0, &s); sched_setaffinity(0, sizeof s, &s); }

static void *hog(void *name) {
  prctl(PR_SET_NAME, name); pin0();
  int spun = 0;
  while (!quit) {
    if (anomaly && frame == 3 && !spun) { spun = 1; long t = now_us(); while (now_us() - t < 300000) ; }
    msleep(5);
  }
  return 0;
}

int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main"); pin0();
  calibrate();
  pthread_t a, b;
  pthread_create(&a, 0, hog, "hog1"); pthread_create(&b, 0, hog, "hog2");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    frame = i;
    work(40000);
  }
  quit = 1;
  pthread_join(a, 0); pthread_join(b, 0);
  return 0;
}
