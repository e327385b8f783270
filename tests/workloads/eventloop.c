/* eventloop: one epoll server thread, two clients.  Thread "server"
 * (process "evsrv") waits in epoll_wait on two Unix stream sockets; on
 * each request it computes (a calibrated loop, no system calls) and
 * answers.  Process "slowclient" sends a 1 ms request every 20 ms; process
 * "ui-main" sends a 1 ms request six times, 30 ms apart, and waits for
 * the answer.  With "anomaly", 3 ms before ui-main's request 3 the
 * slowclient sends a 300 ms request: the server is busy with it when
 * ui-main's arrives, and serves ui-main in the same run of its loop. */
#define _GNU_SOURCE
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

static volatile int *shared; /* [0]: ui-main's iteration, for slowclient */

static void server(int a, int b) {
  prctl(PR_SET_NAME, "server");
  int ep = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN};
  e.data.fd = a; epoll_ctl(ep, EPOLL_CTL_ADD, a, &e);
  e.data.fd = b; epoll_ctl(ep, EPOLL_CTL_ADD, b, &e);
  for (;;) {
    struct epoll_event ev[4];
    int n = epoll_wait(ep, ev, 4, -1);
    for (int i = 0; i < n; i++) {
      long us;
      if (read(ev[i].data.fd, &us, sizeof us) != sizeof us) return;
      work(us);
      if (write(ev[i].data.fd, &us, sizeof us) != sizeof us) return;
    }
  }
}

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  calibrate();
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  shared[0] = -1;
  int ui[2], slow[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, ui);
  socketpair(AF_UNIX, SOCK_STREAM, 0, slow);
  pid_t srv = fork();
  if (srv == 0) { prctl(PR_SET_NAME, "evsrv"); server(ui[1], slow[1]); _exit(0); }
  pid_t sc = fork();
  if (sc == 0) {
    prctl(PR_SET_NAME, "slowclient");
    int big = 0;
    long next = now_us();
    while (shared[0] < 6) {
      long us = 1000;
      if (anomaly && shared[0] == 3 && !big) { big = 1; us = 300000; shared[1] = 1; }
      write(slow[0], &us, sizeof us); read(slow[0], &us, sizeof us);
      next += 20000;
      while (now_us() < next && !(anomaly && shared[0] == 3 && !big)) msleep(1);
      if (now_us() > next) next = now_us();
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { shared[0] = 3; while (!shared[1]) msleep(1); msleep(3); }
    shared[0] = i;
    long us = 1000;
    write(ui[0], &us, sizeof us); read(ui[0], &us, sizeof us);
  }
  shared[0] = 6;
  waitpid(sc, 0, 0);
  kill(srv, SIGTERM); waitpid(srv, 0, 0);
  return 0;
}
