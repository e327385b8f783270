/* jitterpipe: a small injected cause under a large part that every run has
 * (for diagnose against many normal runs).  Thread "ui-main" asks
 * thread "pipeline" for a result six times, 30 ms apart (mutex and
 * condition variable), and waits for it.  For each request pipeline sleeps
 * a RANDOM 10-40 ms on its own timer (nanosleep; seeded from the time and
 * the pid, so every run differs: an emulated downstream call), then asks
 * thread "fetch" (a second mutex/cv hand-off) and waits; fetch takes mutex
 * M, computes 0.3 ms and answers.  Thread "indexer" takes M every 10 ms
 * for 0.2 ms (a timed wait on its own condition variable).  Thread
 * "bgload", in about a third of the runs (drawn at random at the start, in
 * normal and anomaly alike), spins 2-5 ms at a random moment of each frame
 * on ui-main's CPU: background load that comes and goes.  ui-main, fetch
 * and bgload are pinned to CPU 0, pipeline and indexer to CPU 1.
 * With "anomaly", for request 3 (counting from 0) pipeline, after its
 * sleep, wakes indexer and waits until it holds M; indexer yields its CPU
 * once (pipeline shares it) and computes 8 ms holding M (a clock loop, no
 * system calls) while pipeline asks fetch, so fetch waits about 8 ms for
 * M.  Truth for ui-main's wait of request 3: the culprit is indexer,
 * state running (~8 ms); pipeline's own sleep (10-40 ms, timer) is larger
 * but every normal run has it, so it must not come first. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "timing.h"

static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;                 /* the lock fetch and indexer share */
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER, q2 = PTHREAD_MUTEX_INITIALIZER;      /* the two hand-offs */
static pthread_mutex_t x = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;       /* indexer's, bgload's */
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;   /* ui-main <-> pipeline */
static pthread_cond_t req2_cv = PTHREAD_COND_INITIALIZER, done2_cv = PTHREAD_COND_INITIALIZER; /* pipeline <-> fetch */
static pthread_cond_t ix_cv = PTHREAD_COND_INITIALIZER, ack_cv = PTHREAD_COND_INITIALIZER;     /* pipeline <-> indexer */
static pthread_cond_t frame_cv = PTHREAD_COND_INITIALIZER;                                      /* ui-main -> bgload */
static int req, done, req2, done2, hold_req, holding, frame, quit, anomaly, bg_on;
static unsigned seed;

static void pin(int cpu) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s); }
static long rnd(unsigned *s, long lo, long hi) { return lo + rand_r(s) % (hi - lo + 1); }

static void *fetch(void *a) {
  (void)a; prctl(PR_SET_NAME, "fetch"); pin(0);
  for (;;) {
    pthread_mutex_lock(&q2);
    while (!req2 && !quit) pthread_cond_wait(&req2_cv, &q2);
    if (quit) { pthread_mutex_unlock(&q2); break; }
    req2 = 0; pthread_mutex_unlock(&q2);
    pthread_mutex_lock(&M); work(300); pthread_mutex_unlock(&M);
    pthread_mutex_lock(&q2); done2 = 1; pthread_cond_signal(&done2_cv); pthread_mutex_unlock(&q2);
  }
  return 0;
}
static void *pipeline(void *a) {
  (void)a; prctl(PR_SET_NAME, "pipeline"); pin(1);
  unsigned s = seed ^ 0x9e3779b9u;
  for (int i = 0;; i++) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    req = 0; pthread_mutex_unlock(&q);
    msleep(rnd(&s, 10, 40));                        /* the jittery part every run has */
    if (anomaly && i == 3) {                         /* the injected cause: indexer takes M first */
      pthread_mutex_lock(&x); hold_req = 1; pthread_cond_signal(&ix_cv);
      while (!holding) pthread_cond_wait(&ack_cv, &x);
      pthread_mutex_unlock(&x);
    }
    pthread_mutex_lock(&q2); req2 = 1; done2 = 0; pthread_cond_signal(&req2_cv);
    while (!done2) pthread_cond_wait(&done2_cv, &q2);
    pthread_mutex_unlock(&q2);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *indexer(void *a) {
  (void)a; prctl(PR_SET_NAME, "indexer"); pin(1);
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  pthread_mutex_lock(&x);
  while (!quit) {
    t.tv_nsec += 10000000L; if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
    while (!hold_req && !quit && pthread_cond_timedwait(&ix_cv, &x, &t) == 0) ;
    if (hold_req) {                                  /* anomaly: hold M 8 ms, computing */
      hold_req = 0; pthread_mutex_lock(&M); holding = 1; pthread_cond_signal(&ack_cv);
      pthread_mutex_unlock(&x);
      sched_yield();                                 /* let pipeline, on this CPU, go on to ask fetch */
      spin_us(8000);
      pthread_mutex_unlock(&M);
      pthread_mutex_lock(&x); clock_gettime(CLOCK_MONOTONIC, &t);
    } else {
      pthread_mutex_unlock(&x);
      pthread_mutex_lock(&M); work(200); pthread_mutex_unlock(&M);
      pthread_mutex_lock(&x);
    }
  }
  pthread_mutex_unlock(&x);
  return 0;
}
static void *bgload(void *a) {
  (void)a; prctl(PR_SET_NAME, "bgload"); pin(0);
  unsigned s = seed ^ 0x5bd1e995u;
  int seen = 0;
  pthread_mutex_lock(&b);
  for (;;) {
    while (frame == seen && !quit) pthread_cond_wait(&frame_cv, &b);
    if (quit) break;
    seen = frame; pthread_mutex_unlock(&b);
    if (bg_on) { msleep(rnd(&s, 0, 60)); spin_us(rnd(&s, 2000, 5000)); }
    pthread_mutex_lock(&b);
  }
  pthread_mutex_unlock(&b);
  return 0;
}
int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  seed = (unsigned)(time(0) ^ now_us() ^ ((long)getpid() << 16));
  bg_on = rand_r(&seed) % 3 == 0;                    /* about a third of the runs */
  prctl(PR_SET_NAME, "ui-main"); pin(0);
  calibrate();
  pthread_condattr_t ca; pthread_condattr_init(&ca); pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&ix_cv, &ca);                    /* indexer's timed wait is on CLOCK_MONOTONIC */
  pthread_t f, p, ix, bg;
  pthread_create(&f, 0, fetch, 0); pthread_create(&p, 0, pipeline, 0);
  pthread_create(&ix, 0, indexer, 0); pthread_create(&bg, 0, bgload, 0);
  for (int i = 0; i < 6; i++) {
    pthread_mutex_lock(&b); frame++; pthread_cond_signal(&frame_cv); pthread_mutex_unlock(&b);
    msleep(30);
    pthread_mutex_lock(&q); req = 1; done = 0; pthread_cond_signal(&req_cv);
    while (!done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  quit = 1;
  pthread_mutex_lock(&q); pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_mutex_lock(&q2); pthread_cond_broadcast(&req2_cv); pthread_mutex_unlock(&q2);
  pthread_mutex_lock(&x); pthread_cond_broadcast(&ix_cv); pthread_mutex_unlock(&x);
  pthread_mutex_lock(&b); pthread_cond_broadcast(&frame_cv); pthread_mutex_unlock(&b);
  pthread_join(p, 0); pthread_join(f, 0); pthread_join(ix, 0); pthread_join(bg, 0);
  return 0;
}
