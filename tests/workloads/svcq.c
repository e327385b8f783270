/* svcq: a shared server with a work queue; whose request was slow decides
 * the culprit.  Process "svc": its main thread "svc" waits in epoll_wait on
 * two Unix stream sockets and queues each request it reads (a number of
 * microseconds of computation) for its one worker thread "cruncher", which
 * computes it (a calibrated loop, no system calls) and writes the answer
 * to the client's socket itself.  Process "batchcli" sends a 1 ms request
 * every 20 ms; "ui-main" sends a 1 ms request six times, 30 ms apart, and
 * waits for the answer.  With "anomaly":
 *
 *   svcq anomaly own   ui-main's own request 3 asks for 300 ms: cruncher
 *                      computes it.  The request chain leads back to the
 *                      victim itself; svc only passed it on: the culprit
 *                      is cruncher, which did the work (running).
 *   svcq anomaly hol   3 ms before ui-main's request 3, batchcli sends a
 *                      300 ms request; ui-main's waits behind it in the
 *                      queue (head-of-line blocking).  The culprit is the
 *                      third party, batchcli: its request kept cruncher
 *                      running while ui-main waited (running).
 *
 * With "normal" (either mode) every request is 1 ms. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

typedef struct job { int fd; long us; struct job *next; } job;
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static job *head, *tail;
static volatile int *shared; /* [0]: ui-main's iteration, [1]: batchcli sent its big request, [2]: stop */

static void *cruncher(void *x) {
  (void)x; prctl(PR_SET_NAME, "cruncher");
  for (;;) {
    pthread_mutex_lock(&q);
    while (!head) pthread_cond_wait(&q_cv, &q);
    job *j = head; head = j->next; if (!head) tail = 0;
    pthread_mutex_unlock(&q);
    work(j->us);
    if (write(j->fd, &j->us, sizeof j->us) != sizeof j->us) return 0;
  }
}
static void server(int a, int b) {
  prctl(PR_SET_NAME, "svc");
  pthread_t t; pthread_create(&t, 0, cruncher, 0);
  int ep = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN};
  e.data.fd = a; epoll_ctl(ep, EPOLL_CTL_ADD, a, &e);
  e.data.fd = b; epoll_ctl(ep, EPOLL_CTL_ADD, b, &e);
  static job jobs[256]; int n = 0;
  for (;;) {
    struct epoll_event ev[4];
    int k = epoll_wait(ep, ev, 4, -1);
    for (int i = 0; i < k; i++) {
      job *j = &jobs[n++ % 256];
      if (read(ev[i].data.fd, &j->us, sizeof j->us) != sizeof j->us) return;
      j->fd = ev[i].data.fd; j->next = 0;
      pthread_mutex_lock(&q);
      if (tail) tail->next = j; else head = j;
      tail = j;
      pthread_cond_signal(&q_cv); pthread_mutex_unlock(&q);
    }
  }
}

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  int hol = argc > 2 && !strcmp(argv[2], "hol");
  calibrate();
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  shared[0] = -1;
  int ui[2], bc[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, ui);
  socketpair(AF_UNIX, SOCK_STREAM, 0, bc);
  pid_t srv = fork();
  if (srv == 0) { server(ui[1], bc[1]); _exit(0); }
  pid_t cl = fork();
  if (cl == 0) {
    prctl(PR_SET_NAME, "batchcli");
    int big = 0;
    while (!shared[2]) {
      long us = 1000;
      if (anomaly && hol && shared[0] == 3 && !big) { big = 1; us = 300000; shared[1] = 1; }
      if (write(bc[0], &us, sizeof us) != sizeof us || read(bc[0], &us, sizeof us) != sizeof us) break;
      for (int i = 0; i < 20 && !shared[2] && !(anomaly && hol && shared[0] == 3 && !big); i++) msleep(1);
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    long us = 1000;
    if (anomaly && i == 3) {
      if (hol) { shared[0] = 3; while (!shared[1]) msleep(1); msleep(3); }
      else us = 300000;
    }
    shared[0] = i;
    if (write(ui[0], &us, sizeof us) != sizeof us || read(ui[0], &us, sizeof us) != sizeof us) return 3;
    work(200);
  }
  shared[2] = 1;
  waitpid(cl, 0, 0);
  kill(srv, SIGTERM); waitpid(srv, 0, 0);
  return 0;
}
