/* tcpslow: a slow server over loopback TCP, one connection per request
 * (as an HTTP/1.0 client does).  Process "dbsrv" listens on 127.0.0.1
 * (a port the kernel picks); for each connection it accepts, it reads a
 * request, computes (a calibrated loop, no system calls) and answers.
 * "ui-main" asks six times, 30 ms apart: connect, send, wait for the
 * answer, close.  Every request is the same; dbsrv answers request 3 of
 * the anomaly after computing 300 ms (its own doing: say, a cache it
 * rebuilds), the others after 1 ms.  Every wakeup between the two goes
 * through the network stack (the loopback device's NET_RX softirq, run in
 * the sender's context), none is a direct wakeup.  The culprit is dbsrv
 * (running). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  calibrate();
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 8) || getsockname(ls, (struct sockaddr *)&a, &al)) return 2;
  pid_t srv = fork();
  if (srv == 0) {
    prctl(PR_SET_NAME, "dbsrv");
    for (int n = 0;; n++) {
      int c = accept(ls, 0, 0);
      if (c < 0) _exit(3);
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      char req[64];
      if (read(c, req, sizeof req) <= 0) _exit(3);
      work(anomaly && n == 3 ? 300000 : 1000);
      char ans[256]; memset(ans, 'a', sizeof ans);
      if (write(c, ans, sizeof ans) != sizeof ans) _exit(3);
      close(c);
    }
  }
  close(ls);
  prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) {
    msleep(30);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) return 3;
    const char req[] = "GET /report HTTP/1.0\r\n\r\n";
    if (write(s, req, sizeof req - 1) != sizeof req - 1) return 3;
    char ans[256]; size_t got = 0; ssize_t r;
    while (got < sizeof ans && (r = read(s, ans + got, sizeof ans - got)) > 0) got += (size_t)r;
    close(s);
    work(200);
  }
  kill(srv, SIGTERM); waitpid(srv, 0, 0);
  return 0;
}
