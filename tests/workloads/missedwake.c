/* missedwake: a wakeup that never came, ended by a timeout.  Thread
 * "ui-main" posts a request to thread "notifier" six times, 30 ms apart,
 * and waits for the answer with pthread_cond_timedwait, at most 300 ms
 * (then it gives up on that answer and goes on).  The notifier needs mutex
 * P to answer; thread "peer" takes P every 10 ms to compute 0.5 ms.  Normally
 * the notifier answers within a millisecond and its signal wakes ui-main.
 * With "anomaly", for request 3 peer takes P just before the request and
 * computes 310 ms under it (a clock loop, no system calls): the
 * notifier waits on P, ui-main's wait ends by its own timer after 300 ms,
 * and the answer comes 10 ms after nobody waits for it.  The culprit is
 * peer (running): notifier, the thread that woke ui-main in every other
 * request, was blocked on peer the whole time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "timing.h"

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER, P = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv;
static int req, done, quit;                /* request and answer sequence numbers */
static volatile int big, holding;

static void *notifier(void *x) {
  (void)x; prctl(PR_SET_NAME, "notifier");
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&q);
    while (req == seen && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    seen = req;
    pthread_mutex_unlock(&q);
    pthread_mutex_lock(&P); work(100); pthread_mutex_unlock(&P);
    pthread_mutex_lock(&q); done = seen; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void *peer(void *x) {
  (void)x; prctl(PR_SET_NAME, "peer");
  while (!quit) {
    pthread_mutex_lock(&P);
    if (big == 1) { big = 2; holding = 1; spin_us(310000); } else work(500);
    pthread_mutex_unlock(&P);
    msleep(10);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  pthread_condattr_t ca; pthread_condattr_init(&ca); pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&done_cv, &ca);
  pthread_t n, p; pthread_create(&n, 0, notifier, 0); pthread_create(&p, 0, peer, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { big = 1; while (!holding) msleep(1); }
    struct timespec dl; clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_nsec += 300 * 1000000L; if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&q); req = i + 1; pthread_cond_signal(&req_cv);
    while (done < i + 1 && pthread_cond_timedwait(&done_cv, &q, &dl) == 0) {}
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(n, 0); pthread_join(p, 0);
  return 0;
}
