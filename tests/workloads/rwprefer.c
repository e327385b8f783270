/* rwprefer: readers queued behind a writer that waits for a long reader.
 * Thread "ui-main" asks thread "reader" for a result six times, 30 ms
 * apart (mutex and condition variable); reader takes read lock RW, a
 * pthread rwlock that prefers writers (PTHREAD_RWLOCK_PREFER_WRITER_-
 * NONRECURSIVE_NP, as configuration and routing tables often use, so that
 * updates are not starved), looks something up (0.1 ms) and answers.
 * Thread "updater" takes RW for writing every 10 ms for 0.2 ms; thread
 * "scanner" takes it for reading every 10 ms for 0.5 ms.  With "anomaly",
 * just before request 3 scanner takes the read lock and computes 300 ms
 * under it (a clock loop); updater then asks for the write lock and
 * sleeps on it, and reader, arriving 15 ms later, sleeps behind the
 * waiting writer although the lock is only read-held.  When scanner lets
 * go, its unlock wakes updater (and reader, which finds the lock
 * write-locked and sleeps again, as glibc's rwlock does), updater updates
 * and its unlock wakes reader.  The culprit is scanner (running), two
 * hops away through updater, which only waited its turn and held the lock
 * 0.2 ms: the wakeup that lets reader through is updater's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "timing.h"

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t RW;
static int req, done, quit;
static volatile int big, holding, stop;

static void *reader(void *x) {
  (void)x; prctl(PR_SET_NAME, "reader");
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&q);
    while (req == seen && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    seen = req;
    pthread_mutex_unlock(&q);
    pthread_rwlock_rdlock(&RW); work(100); pthread_rwlock_unlock(&RW);
    pthread_mutex_lock(&q); done = seen; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *updater(void *x) {
  (void)x; prctl(PR_SET_NAME, "updater");
  while (!stop) {
    pthread_rwlock_wrlock(&RW); work(200); pthread_rwlock_unlock(&RW);
    msleep(10);
  }
  return 0;
}
static void *scanner(void *x) {
  (void)x; prctl(PR_SET_NAME, "scanner");
  while (!stop) {
    pthread_rwlock_rdlock(&RW);
    if (big == 1) { big = 2; holding = 1; spin_us(300000); } else work(500);
    pthread_rwlock_unlock(&RW);
    msleep(10);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  pthread_rwlockattr_t a; pthread_rwlockattr_init(&a);
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&RW, &a);
  pthread_t r, u, s;
  pthread_create(&r, 0, reader, 0); pthread_create(&u, 0, updater, 0); pthread_create(&s, 0, scanner, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { big = 1; while (!holding) msleep(1); msleep(15); }
    pthread_mutex_lock(&q); req = i + 1; pthread_cond_signal(&req_cv);
    while (done < i + 1) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  stop = 1;
  pthread_join(r, 0); pthread_join(u, 0); pthread_join(s, 0);
  return 0;
}
