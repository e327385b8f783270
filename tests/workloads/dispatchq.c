/* dispatchq: a serial work queue instrumented with include/argus/argus.h.
 * Thread "ui-main" submits six blocks (30 ms apart) to a queue served by
 * thread "q-worker", and does not wait for them; each submission is an
 * `argus: dispatch_enqueue` marker, each execution is framed by
 * `dispatch_invoke begin` / `end`.  The worker waits on a condition
 * variable, so the kernel shows a futex wakeup from ui-main as well; the
 * markers add what the kernel cannot know: which submission each
 * execution runs (a `dispatch` edge per block), even when the worker is
 * already awake and finds several blocks queued.  With argument "burst",
 * the six blocks are submitted back to back.
 *
 *   cc -O2 -pthread -I include -o dispatchq tests/workloads/dispatchq.c
 *   argusq record -o q.dat -- ./dispatchq */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <argus/argus.h>

typedef struct block {
    void (*fn)(struct block *);
    int n;
    struct block *next;
} block;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static block *head, **tail = &head;
static int quit;
static block blocks[6];
static const char queue_name[] = "q";

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

static void work(block *b) { spin(300 + 100 * b->n); }

static void submit(block *b)
{
    pthread_mutex_lock(&m);
    argus_dispatch_enqueue(queue_name, b);
    b->next = 0;
    *tail = b;
    tail = &b->next;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
}

static void *worker(void *x)
{
    (void)x;
    prctl(PR_SET_NAME, "q-worker");
    for (;;) {
        pthread_mutex_lock(&m);
        while (!head && !quit)
            pthread_cond_wait(&cv, &m);
        block *b = head;
        if (!b) {
            pthread_mutex_unlock(&m);
            return 0;
        }
        head = b->next;
        if (!head)
            tail = &head;
        pthread_mutex_unlock(&m);
        argus_dispatch_invoke_begin(queue_name, b, (const void *)(uintptr_t)b->fn);
        b->fn(b);
        argus_dispatch_invoke_end();
    }
}

int main(int argc, char **argv)
{
    int burst = argc > 1 && !strcmp(argv[1], "burst");
    prctl(PR_SET_NAME, "ui-main");
    pthread_t w;
    pthread_create(&w, 0, worker, 0);
    for (int i = 0; i < 6; i++) {
        if (!burst)
            msleep(30);
        blocks[i].fn = work;
        blocks[i].n = i;
        submit(&blocks[i]);
    }
    msleep(10);
    pthread_mutex_lock(&m);
    quit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    pthread_join(w, 0);
    return 0;
}
