/* flagwatch: a data flag, the paper's under-connection case (paper/000
 * §Inherent Inaccuracy, paper/003 "Tracing Data Flags").  Thread "setter"
 * works 30 ms, then sets the global `ready` to 1; thread "poller" polls
 * `ready` every millisecond (a read each time) and stops at 1.  No kernel
 * event connects them -- the poller is woken by its own timer -- so only
 * a watch on `ready` (argusq record --watch ready) shows that the setter
 * released the poller: a flag edge from the setter's write to the read
 * that saw 1.  `generation` is written by main only, to test a second
 * watch. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>

volatile int ready;
volatile long generation;

static void msleep(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, 0);
}

static void spin(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *setter(void *x)
{
    (void)x;
    prctl(PR_SET_NAME, "setter");
    msleep(20);
    spin(10000);
    ready = 1;
    return 0;
}

static void *poller(void *x)
{
    (void)x;
    prctl(PR_SET_NAME, "poller");
    while (!ready)
        msleep(1);
    spin(200);
    return 0;
}

int main(void)
{
    prctl(PR_SET_NAME, "flag-main");
    generation = 1;
    pthread_t s, p;
    pthread_create(&p, 0, poller, 0);
    pthread_create(&s, 0, setter, 0);
    pthread_join(s, 0);
    pthread_join(p, 0);
    generation = 2;
    return 0;
}
