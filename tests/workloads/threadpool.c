/* threadpool: head-of-line blocking in a one-worker pool.  Thread "pool-1"
 * serves a FIFO queue of jobs (each a calibrated computation, no system
 * calls).  "ui-main" submits a 1 ms job and waits for its result, six
 * times 30 ms apart; thread "producer" submits a 1 ms job every 10 ms.
 * With "anomaly", just before ui-main's job 3 the producer submits a
 * 300 ms job: it is ahead of ui-main's in the queue.  The process's main
 * thread ("pool-main") waits in pthread_join the whole run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "timing.h"

typedef struct job { long us; int *done; struct job *next; } job;
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static job *head, *tail;
static volatile int quit, anomaly, big_now;

static void submit(job *j) {
  pthread_mutex_lock(&q);
  j->next = 0; if (tail) tail->next = j; else head = j; tail = j;
  pthread_cond_signal(&q_cv); pthread_mutex_unlock(&q);
}
static void *worker(void *x) {
  (void)x; prctl(PR_SET_NAME, "pool-1");
  for (;;) {
    pthread_mutex_lock(&q);
    while (!head && !quit) pthread_cond_wait(&q_cv, &q);
    if (!head) { pthread_mutex_unlock(&q); break; }
    job *j = head; head = j->next; if (!head) tail = 0;
    pthread_mutex_unlock(&q);
    work(j->us);
    pthread_mutex_lock(&q);
    if (j->done) { *j->done = 1; pthread_cond_broadcast(&done_cv); }
    pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *producer(void *x) {
  (void)x; prctl(PR_SET_NAME, "producer");
  static job jobs[64]; int n = 0, big = 0;
  while (!quit && n < 64) {
    job *j = &jobs[n++];
    j->us = 1000; j->done = 0;
    if (anomaly && big_now && !big) { big = 1; j->us = 300000; big_now = 0; }
    submit(j);
    for (int i = 0; i < 10 && !big_now; i++) msleep(1);
  }
  return 0;
}
static void *ui(void *x) {
  (void)x; prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (i == 3 && anomaly) { big_now = 1; while (big_now) msleep(1); }
    int done = 0; job j = {1000, &done, 0};
    submit(&j);
    pthread_mutex_lock(&q); while (!done) pthread_cond_wait(&done_cv, &q); pthread_mutex_unlock(&q);
  }
  quit = 1; pthread_mutex_lock(&q); pthread_cond_broadcast(&q_cv); pthread_mutex_unlock(&q);
  return 0;
}
int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "pool-main");
  calibrate();
  pthread_t w, p, u;
  pthread_create(&w, 0, worker, 0); pthread_create(&p, 0, producer, 0); pthread_create(&u, 0, ui, 0);
  pthread_join(u, 0); pthread_join(p, 0); pthread_join(w, 0);
  return 0;
}
