/* busyhold: a busy lock holder.  "ui-main" asks thread "helper" for a
 * result six times, 30 ms apart (mutex and condition variable); helper
 * needs mutex M, which thread "holder" takes every 20 ms to compute 1 ms
 * (a calibrated loop: no system calls inside).  With "anomaly", on
 * iteration 3 the holder computes 300 ms under M: helper waits on M, and
 * ui-main on helper.  The culprit runs the whole time; nobody sleeps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "timing.h"

static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER, q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static volatile int req, done, quit, anomaly, iter;

static void *holder(void *x) {
  (void)x; prctl(PR_SET_NAME, "holder");
  int big = 0;
  while (!quit) {
    pthread_mutex_lock(&M);
    if (anomaly && iter == 3 && !big) { big = 1; work(300000); } else work(1000);
    pthread_mutex_unlock(&M);
    msleep(20);
  }
  return 0;
}
static void *helper(void *x) {
  (void)x; prctl(PR_SET_NAME, "helper");
  for (;;) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    req = 0; pthread_mutex_unlock(&q);
    pthread_mutex_lock(&M); work(300); pthread_mutex_unlock(&M);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  pthread_t h, w; pthread_create(&w, 0, helper, 0); pthread_create(&h, 0, holder, 0);
  for (iter = 0; iter < 6; iter++) {
    msleep(30);
    pthread_mutex_lock(&q); req = 1; done = 0; pthread_cond_signal(&req_cv);
    while (!done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  quit = 1; pthread_mutex_lock(&q); pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(w, 0); pthread_join(h, 0);
  return 0;
}
