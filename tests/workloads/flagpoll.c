/* flagpoll: a result polled for in a loop.  Thread "ui-main" asks thread
 * "worker" six times, 30 ms apart, through a pipe, and reads its answer
 * from a second pipe.  The worker needs a fresh result from thread
 * "producer": it raises a flag (`want`) and polls another (`ready`) in a
 * loop with no system call (an atomic load and a pause), as code that
 * expects an answer within microseconds does.  The producer, pinned to
 * the other CPU, wakes every 2 ms (nanosleep), and when `want` is up
 * computes the result (0.2 ms), sets `ready` and sleeps again.  With
 * "anomaly", the result of request 3 takes the producer 300 ms to compute
 * (a clock loop, no system calls).  The culprit is producer (running):
 * the worker runs the whole 300 ms on its own cpu doing nothing useful;
 * nothing the kernel sees joins it to producer -- no wakeup, no futex,
 * only two words in memory -- and producer's node ends when it sleeps
 * right after setting `ready`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "timing.h"

static int to_worker[2], to_main[2];
static volatile int want, ready, stop, slow;

static void pin(int cpu) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s); }

static void *worker(void *x) {
  (void)x; prctl(PR_SET_NAME, "worker"); pin(0);
  char c;
  while (read(to_worker[0], &c, 1) == 1 && c != 'q') {
    __atomic_store_n(&ready, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&want, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    work(50);
    if (write(to_main[1], &c, 1) != 1) break;
  }
  return 0;
}
static void *producer(void *x) {
  (void)x; prctl(PR_SET_NAME, "producer"); pin(1);
  while (!stop) {
    if (__atomic_load_n(&want, __ATOMIC_ACQUIRE)) {
      want = 0;
      if (slow == 1) { slow = 2; spin_us(300000); } else work(200);
      __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    msleep(2);
  }
  return 0;
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  prctl(PR_SET_NAME, "ui-main"); pin(0);
  calibrate();
  if (pipe(to_worker) || pipe(to_main)) return 1;
  pthread_t w, p; pthread_create(&w, 0, worker, 0); pthread_create(&p, 0, producer, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) slow = 1;
    char c = (char)('a' + i);
    if (write(to_worker[1], &c, 1) != 1 || read(to_main[0], &c, 1) != 1) return 1;
    work(200);
  }
  char q = 'q';
  if (write(to_worker[1], &q, 1) != 1) return 1;
  stop = 1;
  pthread_join(w, 0); pthread_join(p, 0);
  return 0;
}
