/* flockchain: thread "ui-main" asks thread "worker" for a result six times
 * (mutex and condition variable); worker needs an flock() lock on a file
 * that process "locker" takes every 10 ms for 1 ms.  With argument
 * "anomaly", locker holds the lock for 300 ms (sleeping) once, during
 * iteration 3, so ui-main's wait for that result is long and its cause is
 * locker's sleep, in another process.
 *   cc -O2 -pthread -o flockchain flockchain.c && ./flockchain anomaly */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define LOCKFILE "/tmp/argusq-flockchain.lock"
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int req, done, quit;
static volatile int *shared;          /* [0]: iteration of ui-main, [1]: quit */

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static void spin(long us) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us); }

static void *worker(void *x) {
  (void)x; prctl(PR_SET_NAME, "worker");
  int fd = open(LOCKFILE, O_RDWR | O_CREAT, 0600);   /* its own open file: flock conflicts */
  for (;;) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    req = 0; pthread_mutex_unlock(&q);
    flock(fd, LOCK_EX); spin(300); flock(fd, LOCK_UN);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  close(fd);
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return 1;
  pid_t lk = fork();
  if (lk == 0) {
    prctl(PR_SET_NAME, "locker");
    int fd = open(LOCKFILE, O_RDWR | O_CREAT, 0600), fired = 0;
    while (!shared[1]) {
      flock(fd, LOCK_EX);
      if (anomaly && shared[0] == 3 && !fired) { fired = 1; msleep(300); } else msleep(1);
      flock(fd, LOCK_UN);
      msleep(10);
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  pthread_t w; pthread_create(&w, 0, worker, 0);
  for (int n = 0; n < 6; n++) {
    shared[0] = n;
    msleep(30);
    pthread_mutex_lock(&q); req = 1; done = 0; pthread_cond_signal(&req_cv);
    while (!done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    spin(200);
  }
  shared[1] = 1;
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(w, 0); waitpid(lk, 0, 0);
  unlink(LOCKFILE);
  return 0;
}
