/* jitterpool: a thread that no normal run goes through, under jittery
 * work that every run has (for diagnose against many normal runs).
 * Thread "ui-main" submits a job per frame, six frames 30 ms apart, to a
 * pool of two worker threads (both "poolw") through a queue (mutex and
 * condition variable), and waits for its result.  Each job computes a
 * RANDOM 1-6 ms of CPU time (a calibrated loop), sleeps a RANDOM 5-25 ms
 * on a timer (an emulated downstream call; seeded from the time and the
 * pid, so every run differs), then, as its final step, takes mutex L
 * (the result store) for 0.2 ms of CPU and answers.  Thread "compactor",
 * started at the beginning, sleeps on a condition variable the whole run.
 * Nothing is pinned.  With "anomaly", for frame 3 (counting from 0) the
 * job, after its sleep, wakes compactor and waits until it holds L;
 * compactor yields its CPU once (the job may share it) and computes 6 ms
 * holding L (a clock loop, no system calls), so the job's final step
 * waits about 6 ms for L.  Truth for ui-main's wait of frame 3: the
 * culprit is compactor, state running (~6 ms), a thread no normal path
 * goes through; the worker's own sleep (5-25 ms, timer) is usually larger,
 * but every normal run has it (and the worker's 1-6 ms of computation),
 * so it must not come first. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "timing.h"

typedef struct job { int frame, done; struct job *next; } job;
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER, L = PTHREAD_MUTEX_INITIALIZER, c = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t comp_cv = PTHREAD_COND_INITIALIZER, ack_cv = PTHREAD_COND_INITIALIZER;
static job *head, *tail;
static int quit, anomaly, compact, holding;
static unsigned seed;

static long rnd(unsigned *s, long lo, long hi) { return lo + rand_r(s) % (hi - lo + 1); }

static void *worker(void *a) {
  prctl(PR_SET_NAME, "poolw");
  unsigned s = (seed ^ (unsigned)(long)a) * 2654435761u;
  for (;;) {
    pthread_mutex_lock(&q);
    while (!head && !quit) pthread_cond_wait(&q_cv, &q);
    if (!head) { pthread_mutex_unlock(&q); break; }
    job *j = head; head = j->next; if (!head) tail = 0;
    pthread_mutex_unlock(&q);
    work(rnd(&s, 1000, 6000));                       /* the job's own computation */
    msleep(rnd(&s, 5, 25));                          /* the downstream call: jittery, in every run */
    if (anomaly && j->frame == 3) {                  /* the injected cause: compactor takes L first */
      pthread_mutex_lock(&c); compact = 1; pthread_cond_signal(&comp_cv);
      while (!holding) pthread_cond_wait(&ack_cv, &c);
      pthread_mutex_unlock(&c);
    }
    pthread_mutex_lock(&L); work(200); pthread_mutex_unlock(&L);   /* the final step: store the result */
    pthread_mutex_lock(&q); j->done = 1; pthread_cond_broadcast(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *compactor(void *a) {
  (void)a; prctl(PR_SET_NAME, "compactor");
  pthread_mutex_lock(&c);
  for (;;) {
    while (!compact && !quit) pthread_cond_wait(&comp_cv, &c);
    if (!compact) break;
    compact = 0; pthread_mutex_lock(&L); holding = 1; pthread_cond_signal(&ack_cv);
    pthread_mutex_unlock(&c);
    sched_yield();                                   /* let the job, if on this CPU, go on to its final step */
    spin_us(6000);                                   /* compacting, holding L */
    pthread_mutex_unlock(&L);
    pthread_mutex_lock(&c);
  }
  pthread_mutex_unlock(&c);
  return 0;
}
int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  seed = (unsigned)(time(0) ^ now_us() ^ ((long)getpid() << 16));
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  pthread_t w[2], k;
  pthread_create(&k, 0, compactor, 0);
  for (long i = 0; i < 2; i++) pthread_create(&w[i], 0, worker, (void *)(i * 7919 + 1));
  static job jobs[6];
  for (int i = 0; i < 6; i++) {
    msleep(30);
    job *j = &jobs[i]; j->frame = i;
    pthread_mutex_lock(&q);
    if (tail) tail->next = j; else head = j; tail = j;
    pthread_cond_signal(&q_cv);
    while (!j->done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&q_cv); pthread_mutex_unlock(&q);
  pthread_mutex_lock(&c); quit = 1; pthread_cond_broadcast(&comp_cv); pthread_mutex_unlock(&c);
  pthread_join(w[0], 0); pthread_join(w[1], 0); pthread_join(k, 0);
  return 0;
}
