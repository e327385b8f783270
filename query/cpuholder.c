/* query/cpuholder.c -- who had a cpu while a woken thread waited for it.
 *
 * The critical path gives a thread's wakeup latency to the thread that
 * held its cpu (critpath.c, latency): the graph's preempt edges name it
 * when that thread was switched out, runnable, for the woken one.  When
 * something else ran between them -- the holder was switched out for a
 * softirq thread or a kworker that then blocked, and only then the woken
 * thread came in -- no edge joins the two, and the scheduler's own events
 * on that cpu say who had it: the time from each event on the cpu to the
 * next is the thread's that was on it (the next_pid of a sched_switch,
 * else the event's thread), and the thread with most of [a, b] had it --
 * if it left the cpu runnable (switched out in state R: it still wanted
 * the cpu, contention); one that went to sleep gave the cpu up, and the
 * wait is the scheduler's latency, as when it is the last one before. */
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define HOLDER_TIDS 16
#define HOLDER_EVENTS 200000 /* events read at most: bounds a long wait on a busy trace */

typedef struct scan {
    uint16_t cpu;
    uint32_t skip;
    uint64_t a, b, last;
    uint32_t on; /* the thread on the cpu since `last` (0: idle or unknown) */
    bool known;
    size_t events;
    struct holder_ns {
        uint32_t tid;
        uint64_t ns;
        bool preempted; /* switched out runnable during [a, b] */
    } t[HOLDER_TIDS];
    int n;
} scan;

static struct holder_ns *tally(scan *s, uint32_t tid)
{
    if (!tid || tid == s->skip)
        return NULL;
    for (int i = 0; i < s->n; i++)
        if (s->t[i].tid == tid)
            return &s->t[i];
    if (s->n == HOLDER_TIDS)
        return NULL;
    s->t[s->n] = (struct holder_ns){.tid = tid};
    return &s->t[s->n++];
}

static void credit(scan *s, uint32_t tid, uint64_t ns)
{
    struct holder_ns *h = ns ? tally(s, tid) : NULL;
    if (h)
        h->ns += ns;
}

static int one(void *p, const db_event *ev)
{
    scan *s = p;
    if (++s->events > HOLDER_EVENTS)
        return 1;
    if (ev->cpu != s->cpu)
        return 0;
    if (s->known)
        credit(s, s->on, ev->ts - s->last);
    uint64_t next;
    bool sw = ev->name && strcmp(ev->name, "sched_switch") == 0;
    const char *st;
    size_t sl;
    if (sw && db_event_attr(ev, "state", &st, &sl) && sl && st[0] == 'R') { /* the event's task, switched out */
        struct holder_ns *h = tally(s, ev->tid);
        if (h)
            h->preempted = true;
    }
    s->on = sw && db_event_attr_u64(ev, "next_pid", &next) ? (uint32_t)next : ev->tid;
    s->last = ev->ts;
    s->known = true;
    return 0;
}

struct best {
    uint64_t a, b, most;
    db_node n;
};

static int node_one(void *p, const db_node *n)
{
    struct best *x = p;
    uint64_t lo = n->begin > x->a ? n->begin : x->a, hi = n->end < x->b ? n->end : x->b;
    if (!db_node_kind_isolated(n->kind) && hi > lo && hi - lo > x->most) {
        x->most = hi - lo;
        x->n = *n;
    }
    return 0;
}

int query_cpu_holder(db_reader *r, const db_node *k, uint64_t a, uint64_t b, db_node *out, db_error *de)
{
    db_event ev;
    int got = db_get_event(r, k->first_event, &ev, de);
    if (got <= 0 || ev.cpu == DB_CPU_NONE || b <= a)
        return got < 0 ? -1 : 0;
    scan *s = calloc(1, sizeof *s);
    if (!s)
        return db_fail_oom(de);
    *s = (scan){.cpu = ev.cpu, .skip = k->tid, .a = a, .b = b, .last = a};
    int rc = db_scan_time(r, a, b, one, s, de);
    if (rc < 0) {
        free(s);
        return -1;
    }
    if (s->known && rc == 0)
        credit(s, s->on, b - s->last);
    uint32_t tid = 0;
    uint64_t ns = 0;
    for (int i = 0; i < s->n; i++)
        if (s->t[i].preempted && s->t[i].ns > ns) {
            ns = s->t[i].ns;
            tid = s->t[i].tid;
        }
    free(s);
    if (!tid || ns * 2 < b - a)
        return 0; /* nobody that still wanted the cpu had most of it */
    struct best x = {.a = a, .b = b};
    if (db_scan_thread_nodes(r, tid, a, b, node_one, &x, de) < 0)
        return -1;
    if (!x.most)
        return 0;
    *out = x.n;
    return 1;
}
