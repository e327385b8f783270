/* tests/workloads/timing.h -- sleeping and computing for a given time, for
 * the workloads that argusq's test traces were recorded from: work(us)
 * spins the CPU for about us microseconds (calibrate() first). */
#include <time.h>

static volatile unsigned long sink;
static double loops_per_us;

static inline void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static inline long now_us(void) { struct timespec a; clock_gettime(CLOCK_MONOTONIC, &a); return a.tv_sec * 1000000L + a.tv_nsec / 1000; }
static inline void loop(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }
static inline void calibrate(void) { long t = now_us(); loop(20000000); loops_per_us = 20000000.0 / (double)(now_us() - t); }
static inline void work(long us) { loop((unsigned long)(us * loops_per_us)); }
