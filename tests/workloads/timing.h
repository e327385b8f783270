/* tests/workloads/timing.h -- sleeping and computing for a given time, for
 * the workloads that argusq's test traces were recorded from: work(us)
 * spins the CPU for about us microseconds of CPU time (calibrate() first;
 * preemption stretches it), spin_us(us) for us microseconds of wall time
 * (a clock loop: clock_gettime is in the vDSO, so no system calls either).
 * calibrate() counts loops per microsecond of the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: two system calls a round, at the start only),
 * the fastest of five rounds, so that a busy machine, which preempts the
 * calibration, does not make every work() short. */
#include <time.h>

static volatile unsigned long sink;
static double loops_per_us;

static inline void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static inline long now_us(void) { struct timespec a; clock_gettime(CLOCK_MONOTONIC, &a); return a.tv_sec * 1000000L + a.tv_nsec / 1000; }
static inline void loop(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }
static inline long cpu_ns(void) { struct timespec a; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a); return a.tv_sec * 1000000000L + a.tv_nsec; }
static inline void calibrate(void) {
  for (int r = 0; r < 5; r++) {
    long t = cpu_ns(); loop(4000000);
    double l = 4000000.0 * 1000.0 / (double)(cpu_ns() - t + 1);
    if (l > loops_per_us) loops_per_us = l;
  }
}
static inline void spin_us(long us) { long t = now_us(); while (now_us() - t < us) ; }
static inline void work(long us) { loop((unsigned long)(us * loops_per_us)); }
