/* spinhold: a lock that spins instead of sleeping.  Thread "ui-main" asks
 * thread "worker" for a result six times, 30 ms apart (mutex and condition
 * variable); the worker needs spinlock S (pthread_spin_lock: a user-space
 * busy wait, no futex, no system call), which thread "holder" takes every
 * 10 ms to compute 0.5 ms.  Worker (with ui-main) is pinned to CPU 0,
 * holder to CPU 1, so both spin at once.  With "anomaly", holder takes S
 * just before request 3 and computes 300 ms under it (a clock loop, no
 * system calls): the worker spins on S the whole time, on its own CPU.
 * The culprit is holder (running): nothing wakes anybody -- the worker
 * never sleeps, it runs 300 ms doing nothing useful; no wakeup, futex or
 * edge of any kind leads from it to holder, only the lock word in memory. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "timing.h"

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_spinlock_t S;
static int req, done, quit;
static volatile int big, holding, stop;

static void pin(int cpu) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s); }

static void *worker(void *x) {
  (void)x; prctl(PR_SET_NAME, "worker"); pin(0);
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&q);
    while (req == seen && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    seen = req;
    pthread_mutex_unlock(&q);
    pthread_spin_lock(&S); work(100); pthread_spin_unlock(&S);
    pthread_mutex_lock(&q); done = seen; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *holder(void *x) {
  (void)x; prctl(PR_SET_NAME, "holder"); pin(1);
  while (!stop) {
    pthread_spin_lock(&S);
    if (big == 1) { big = 2; holding = 1; spin_us(300000); } else work(500);
    pthread_spin_unlock(&S);
    msleep(10);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main"); pin(0);
  calibrate();
  pthread_spin_init(&S, PTHREAD_PROCESS_PRIVATE);
  pthread_t w, h; pthread_create(&w, 0, worker, 0); pthread_create(&h, 0, holder, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { big = 1; while (!holding) msleep(1); }
    pthread_mutex_lock(&q); req = i + 1; pthread_cond_signal(&req_cv);
    while (done < i + 1) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  stop = 1;
  pthread_join(w, 0); pthread_join(h, 0);
  return 0;
}
