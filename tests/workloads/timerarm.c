/* timerarm: a timer armed by one thread ends another's wait.  Thread
 * "looper" runs an epoll loop over two fds: an eventfd on which "ui-main"
 * posts its requests, and a timerfd, the flush timer; it answers the
 * requests it holds when the timer fires (an eventfd ui-main reads).  It
 * does not arm the timer itself: for each request it asks thread "pacer"
 * (an eventfd), the rate limiter, which decides when the next flush may
 * happen and arms the timerfd with timerfd_settime -- 1 ms ahead -- then
 * goes back to waiting for the next ask.  ui-main posts six requests, 30 ms
 * apart.  With "anomaly", pacer arms the timer 300 ms ahead for request 3
 * (its budget, it believes, is spent).  The culprit is pacer (timer): it
 * armed the timer whose expiry ended looper's wait, and so ui-main's; it
 * is not running nor blocked on anybody then, just waiting for more work;
 * looper's wait is ended by the timer interrupt (timerfd_tmrproc), not by
 * a thread, and the timer is not looper's own. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>

#include "timing.h"

static int req_fd, done_fd, pace_fd, tfd, anomaly;
static volatile int quit;

static void post(int fd) { uint64_t one = 1; if (write(fd, &one, 8) != 8) _exit(3); }
static uint64_t take(int fd) { uint64_t n = 0; if (read(fd, &n, 8) != 8) _exit(3); return n; }

static void *looper(void *x) {
  (void)x; prctl(PR_SET_NAME, "looper");
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  ev.data.fd = req_fd; epoll_ctl(ep, EPOLL_CTL_ADD, req_fd, &ev);
  ev.data.fd = tfd; epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
  uint64_t pending = 0;
  while (!quit) {
    struct epoll_event got[2];
    int n = epoll_wait(ep, got, 2, -1);
    for (int i = 0; i < n; i++) {
      if (got[i].data.fd == req_fd) {
        pending += take(req_fd);
        if (quit) break;
        work(50);                               /* queue the request */
        post(pace_fd);                          /* ask for a flush */
      } else if (got[i].data.fd == tfd) {
        take(tfd);
        if (pending) { work(100); pending = 0; post(done_fd); }
      }
    }
  }
  return 0;
}
static void *pacer(void *x) {
  (void)x; prctl(PR_SET_NAME, "pacer");
  int asked = 0;
  for (;;) {
    take(pace_fd);
    if (quit) break;
    asked++;
    work(30);                                   /* the budget */
    long ms = anomaly && asked == 4 ? 300 : 1;
    struct itimerspec t = {.it_value = {ms / 1000, (ms % 1000) * 1000000L}};
    timerfd_settime(tfd, 0, &t, 0);
  }
  return 0;
}
int main(int argc, char **argv) {
  anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  req_fd = eventfd(0, 0); done_fd = eventfd(0, 0); pace_fd = eventfd(0, 0);
  tfd = timerfd_create(CLOCK_MONOTONIC, 0);
  pthread_t l, p; pthread_create(&l, 0, looper, 0); pthread_create(&p, 0, pacer, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    post(req_fd);
    take(done_fd);
    work(200);
  }
  quit = 1; post(req_fd); post(pace_fd);
  pthread_join(l, 0); pthread_join(p, 0);
  return 0;
}
