/* mixchain: process "ui-main" sends six requests through a pipe to a server
 * process (named after its main thread "srv-io"); srv-io reads them and
 * hands each to thread "srv-db" (mutex and condition variable), which needs
 * a POSIX record lock (fcntl F_SETLKW) on a file that process "compactor"
 * takes every 10 ms for 1 ms; srv-db hands the result back to srv-io, which
 * answers through a second pipe.  With argument "anomaly", compactor holds
 * the lock for 300 ms (sleeping) once, during iteration 3:
 * pipe -> thread -> file lock -> process sleeping.
 *   cc -O2 -pthread -o mixchain mixchain.c && ./mixchain anomaly */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define LOCKFILE "/tmp/argusq-mixchain.lock"
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int req, done, quit, lockfd;
static volatile int *shared;          /* [0]: iteration of ui-main, [1]: quit */

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static void spin(long us) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us); }
static void lockf_(int fd, short type) { struct flock l = {.l_type = type, .l_whence = SEEK_SET}; fcntl(fd, F_SETLKW, &l); }

static void *db(void *x) {
  (void)x; prctl(PR_SET_NAME, "srv-db");
  for (;;) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    req = 0; pthread_mutex_unlock(&q);
    lockf_(lockfd, F_WRLCK); spin(300); lockf_(lockfd, F_UNLCK);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  int rq[2], rs[2];
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED || pipe(rq) || pipe(rs)) return 1;
  pid_t cp = fork();
  if (cp == 0) {
    prctl(PR_SET_NAME, "compactor");
    close(rq[0]); close(rq[1]); close(rs[0]); close(rs[1]);
    int fd = open(LOCKFILE, O_RDWR | O_CREAT, 0600), fired = 0;
    while (!shared[1]) {
      lockf_(fd, F_WRLCK);
      if (anomaly && shared[0] == 3 && !fired) { fired = 1; msleep(300); } else msleep(1);
      lockf_(fd, F_UNLCK);
      msleep(10);
    }
    _exit(0);
  }
  pid_t sv = fork();
  if (sv == 0) {
    prctl(PR_SET_NAME, "srv-io");
    close(rq[1]); close(rs[0]);
    lockfd = open(LOCKFILE, O_RDWR | O_CREAT, 0600);
    pthread_t t; pthread_create(&t, 0, db, 0);
    char i;
    while (read(rq[0], &i, 1) == 1) {
      pthread_mutex_lock(&q); req = 1; done = 0; pthread_cond_signal(&req_cv);
      while (!done) pthread_cond_wait(&done_cv, &q);
      pthread_mutex_unlock(&q);
      if (write(rs[1], &i, 1) != 1) break;
    }
    pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
    pthread_join(t, 0);
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  close(rq[0]); close(rs[1]);
  char i;
  for (char n = 0; n < 6; n++) {
    shared[0] = n;
    msleep(30);
    if (write(rq[1], &n, 1) != 1 || read(rs[0], &i, 1) != 1) return 1;
    spin(200);
  }
  close(rq[1]); waitpid(sv, 0, 0);
  shared[1] = 1; waitpid(cp, 0, 0);
  unlink(LOCKFILE);
  return 0;
}
