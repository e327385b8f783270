/* cpusteal: the thread that works for the victim loses its CPU to an
 * unrelated process.  Thread "ui-main" (pinned to CPU 0) asks thread
 * "worker" (pinned to CPU 1) for a result six times, 30 ms apart (mutex
 * and condition variable); the worker computes 2 ms of CPU time (a
 * calibrated loop, no system calls) per request.  Process "batch", forked
 * at the start and then connected to nothing (no pipe, no lock, no
 * wakeup: only a shared flag that times it), is pinned to CPU 1 too and
 * naps; with "anomaly", just before request 3 it makes itself real-time
 * (SCHED_FIFO 1, as an audio or a control daemon is) and spins 300 ms
 * (a clock loop, no system calls), then goes back to SCHED_OTHER.  The
 * worker, woken by ui-main's request, is runnable but off its CPU for all
 * that time while ui-main waits for it: the culprit is batch, which took
 * the worker's CPU (state runnable: it ran while the worker was runnable),
 * two hops from the victim through a thread that did nothing wrong. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int req, done, quit;
static volatile int *shared; /* [0]: spin now, [1]: batch is spinning, [2]: stop */

static void pin(int cpu) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s); }

static void *worker(void *x) {
  (void)x; prctl(PR_SET_NAME, "worker"); pin(1);
  for (;;) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    req = 0; pthread_mutex_unlock(&q);
    work(2000);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  pin(0);
  calibrate();
  pid_t b = fork();
  if (b == 0) {
    prctl(PR_SET_NAME, "batch"); pin(1);
    while (!shared[2]) {
      if (shared[0] == 1) {
        shared[0] = 2;
        struct sched_param sp = {.sched_priority = 1};
        sched_setscheduler(0, SCHED_FIFO, &sp);
        shared[1] = 1;
        spin_us(300000);
        sp.sched_priority = 0;
        sched_setscheduler(0, SCHED_OTHER, &sp);
      }
      msleep(10);
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  pthread_t w; pthread_create(&w, 0, worker, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { shared[0] = 1; while (!shared[1]) msleep(1); }
    pthread_mutex_lock(&q); req = 1; done = 0; pthread_cond_signal(&req_cv);
    while (!done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(w, 0);
  shared[2] = 1; waitpid(b, 0, 0);
  return 0;
}
