/* prioinv: priority inversion, the textbook case (real-time threads, a
 * plain mutex without priority inheritance).  Thread "ui-main" (SCHED_FIFO
 * 30, pinned to CPU 0) needs mutex M six times, 30 ms apart.  Thread
 * "lowprio" (SCHED_FIFO 10, pinned to CPU 1) takes M every 10 ms to
 * compute 1 ms under it (a calibrated loop, no system calls).  Thread
 * "medprio" (SCHED_FIFO 20, pinned to CPU 1, sharing nothing with either)
 * naps; with "anomaly", at iteration 3 lowprio takes M for a longer
 * computation (until medprio has started, then 5 ms more) and medprio,
 * seeing it hold M, spins 300 ms (a clock loop): lowprio is runnable but
 * gets no CPU, and ui-main blocks on M right after.  ui-main waits on
 * lowprio (the holder), which waits for its CPU: the culprit is medprio
 * (state runnable: it ran while the holder was runnable), not lowprio,
 * which did nothing wrong but hold a lock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static volatile int quit, go, holding;

static void pin(int cpu) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s); }
static void rt(int prio) { struct sched_param p = {.sched_priority = prio}; pthread_setschedparam(pthread_self(), SCHED_FIFO, &p); }

static void *lowprio(void *x) {
  (void)x; prctl(PR_SET_NAME, "lowprio"); pin(1); rt(10);
  while (!quit) {
    pthread_mutex_lock(&M);
    if (go == 1) { go = 2; holding = 1; while (holding != 2) work(50); work(5000); } else work(1000);
    pthread_mutex_unlock(&M);
    msleep(10);
  }
  return 0;
}
static void *medprio(void *x) {
  (void)x; prctl(PR_SET_NAME, "medprio"); pin(1); rt(20);
  while (!quit) {
    if (holding == 1) { holding = 2; spin_us(300000); }
    msleep(go ? 1 : 10);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main"); pin(0);
  calibrate();
  rt(30);
  pthread_t l, m; pthread_create(&l, 0, lowprio, 0); pthread_create(&m, 0, medprio, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { go = 1; while (holding != 2) msleep(1); }
    pthread_mutex_lock(&M); work(200); pthread_mutex_unlock(&M);
    work(200);
  }
  quit = 1;
  pthread_join(l, 0); pthread_join(m, 0);
  return 0;
}
