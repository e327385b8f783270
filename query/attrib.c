/* query/attrib.c -- suspects by the time they took: the threads
 * of an anomaly's critical path (critpath.c), ranked by the nanoseconds of
 * the anomalous period given to them, less what the same threads took of
 * the normal counterpart's period when there is one.
 *
 * This puts numbers on the paper's path comparison (paper/004 §Path
 * Comparison): a thread that merely sat blocked on the path (a parent in
 * pthread_join, the shell that started the program) takes nothing unless
 * the chain of waits runs through it, and a thread's normal pacing (the
 * 30 ms sleep of a frame loop, its usual run) is what the baseline takes
 * away.  The reason names the state the time went to. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define ON_REQUEST QUERY_CP__COUNT /* running of another thread on its request */

typedef struct tally {
    uint32_t tid;
    char thread[DB_NAME_MAX];
    uint64_t ns[QUERY_CP__COUNT + 1];
    uint32_t parts[QUERY_CP__COUNT + 1]; /* how many stretches */
    char exec[DB_NAME_MAX]; /* ON_REQUEST: the thread that ran, its node */
    uint64_t dev_ns[QUERY_DEV_TIMER + 1]; /* io by device */
    uint32_t exec_node, req_node;
    uint64_t exec_ns;
    char held[DB_NAME_MAX]; /* RUNNABLE: the thread it held off the cpu most */
    uint64_t held_ns;
    char flush[DB_NAME_MAX]; /* IO: whose cache flush waited for its writes */
    uint64_t flush_ns, flush_bytes;
    uint64_t total;
    uint32_t node;  /* the node of its largest part */
    uint64_t node_ns;
} tally;

typedef struct tallies {
    tally *v;
    size_t n, cap;
} tallies;

static tally *tally_of(tallies *t, uint32_t tid, const char *name, bool by_name)
{
    for (size_t i = 0; i < t->n; i++)
        if (by_name ? strncmp(t->v[i].thread, name, DB_NAME_MAX) == 0 : t->v[i].tid == tid)
            return &t->v[i];
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 16;
        void *p = realloc(t->v, c * sizeof *t->v);
        if (!p)
            return NULL;
        t->v = p;
        t->cap = c;
    }
    tally *x = &t->v[t->n++];
    memset(x, 0, sizeof *x);
    x->tid = tid;
    memcpy(x->thread, name, DB_NAME_MAX);
    x->thread[DB_NAME_MAX - 1] = 0;
    return x;
}

/* Per thread (by id; by name for a baseline from another run). */
static int tally_cp(const query_cp *cp, bool by_name, tallies *out)
{
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        bool req = p->state == QUERY_CP_RUNNING && p->for_tid;
        /* a server's or a worker's run on a request is the requester's */
        tally *t = req ? tally_of(out, p->for_tid, p->for_thread, by_name) : tally_of(out, p->tid, p->thread, by_name);
        if (!t)
            return -1;
        t->ns[req ? ON_REQUEST : p->state] += p->ns;
        if (p->state == QUERY_CP_IO && p->device <= QUERY_DEV_TIMER)
            t->dev_ns[p->device] += p->ns;
        t->parts[req ? ON_REQUEST : p->state]++;
        t->total += p->ns;
        if (p->ns > t->node_ns) {
            t->node_ns = p->ns;
            t->node = req ? p->for_node : p->node;
        }
        if (p->state == QUERY_CP_RUNNABLE && p->held_tid && p->ns > t->held_ns) { /* whose cpu, mostly */
            t->held_ns = p->ns;
            memcpy(t->held, p->held_thread, DB_NAME_MAX);
        }
        if (p->state == QUERY_CP_IO && p->flush_tid) {
            if (!t->flush_ns || strncmp(t->flush, p->flush_thread, DB_NAME_MAX) == 0)
                memcpy(t->flush, p->flush_thread, DB_NAME_MAX);
            t->flush_ns += p->ns;
            t->flush_bytes += p->flush_bytes;
        }
        if (req && p->ns > t->exec_ns) { /* the largest run on its request: who ran it */
            t->exec_ns = p->ns;
            memcpy(t->exec, p->thread, DB_NAME_MAX);
            t->exec_node = p->node;
            t->req_node = p->for_node;
        }
    }
    return 0;
}

static int dominant(const tally *t)
{
    int best = 0;
    for (int s = 1; s <= ON_REQUEST; s++)
        if (t->ns[s] > t->ns[best])
            best = s;
    return best;
}

int query_cp_io_device(const query_cp *cp)
{
    uint64_t ns[QUERY_DEV_TIMER + 1] = {0};
    int best = QUERY_DEV_NONE;
    for (size_t i = 0; i < cp->n; i++)
        if (cp->parts[i].state == QUERY_CP_IO && cp->parts[i].device <= QUERY_DEV_TIMER &&
            (ns[cp->parts[i].device] += cp->parts[i].ns) > ns[best])
            best = cp->parts[i].device;
    return best;
}

const char *query_cp_kind(const query_cp *cp)
{
    uint64_t ns[QUERY_CP__COUNT] = {0}, own_run = 0, period = cp->end - cp->begin;
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        if (p->tid == cp->node.tid && p->state == QUERY_CP_RUNNING)
            own_run += p->ns;
        else
            ns[p->state] += p->ns;
    }
    if (own_run * 2 >= period)
        return "busy";
    if (ns[QUERY_CP_RUNNABLE] >= own_run && ns[QUERY_CP_RUNNABLE] * 3 >= period &&
        ns[QUERY_CP_RUNNABLE] >= ns[QUERY_CP_TIMER] + ns[QUERY_CP_BLOCKED] + ns[QUERY_CP_IO])
        return "runnable";
    if (ns[QUERY_CP_IO] * 3 >= period && ns[QUERY_CP_IO] >= ns[QUERY_CP_TIMER] + ns[QUERY_CP_BLOCKED])
        return "io";
    return "wait";
}

/* " through worker, relay": the threads between the victim and tid on the
 * anomaly's slice (its first node of tid, back to the start). */
static void through(const query_path *p, uint32_t tid, uint32_t victim, char *buf, size_t len)
{
    buf[0] = 0;
    if (!p)
        return;
    size_t at = p->len;
    for (size_t i = 0; i < p->len && at == p->len; i++)
        if (p->items[i].node.tid == tid)
            at = i;
    if (at == p->len || at == 0)
        return;
    const char *names[8];
    int n = 0;
    for (size_t i = p->items[at].parent; i > 0 && n < 8; i = p->items[i].parent) {
        const db_node *x = &p->items[i].node;
        if (x->tid != victim && x->tid != tid && x->kind == DB_NODE_THREAD &&
            (n == 0 || strcmp(names[n - 1], x->thread) != 0))
            names[n++] = x->thread;
    }
    size_t k = 0;
    for (int i = n - 1; i >= 0 && k < len; i--)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i == n - 1 ? " through " : ", ", names[i]);
}

static void reason(query_suspect *s, const tally *t, int state, const db_node *victim, const char *via,
                   uint64_t base_ns, bool have_base)
{
    char d[32], b[32];
    query_fmt_duration(d, sizeof d, t->ns[state]);
    query_fmt_duration(b, sizeof b, base_ns);
    int n;
    switch (state) {
    case ON_REQUEST:
        n = snprintf(s->reason, sizeof s->reason,
                     "its request (node %" PRIu32 ") kept %s running %s (node %" PRIu32 ") while %s waited on %s",
                     t->req_node, t->exec, d, t->exec_node, victim->thread, t->exec);
        break;
    case QUERY_CP_RUNNING:
        n = snprintf(s->reason, sizeof s->reason, "ran %s (node %" PRIu32 ") while %s waited on it%s", d, t->node,
                     victim->thread, via);
        break;
    case QUERY_CP_RUNNABLE: {
        if (!t->held[0] && t->tid != victim->tid) { /* its own wait for a cpu: nobody named had it */
            n = snprintf(s->reason, sizeof s->reason,
                         "was runnable %s (node %" PRIu32 "), waiting for a cpu, while %s waited on it%s", d, t->node,
                         victim->thread, via);
            break;
        }
        const char *held = t->held[0] ? t->held : victim->thread;
        n = snprintf(s->reason, sizeof s->reason, "ran %s on %s's cpu while %s was runnable (node %" PRIu32 ")", d,
                     held, held, t->node);
        if (strcmp(held, victim->thread) != 0)
            n = snprintf(s->reason, sizeof s->reason,
                         "ran %s on %s's cpu while %s was runnable (node %" PRIu32 ") and %s waited on %s%s", d, held,
                         held, t->node, victim->thread, held, strstr(via, held) ? "" : via);
        break;
    }
    case QUERY_CP_TIMER:
        n = snprintf(s->reason, sizeof s->reason, "slept %s on a timer it armed (node %" PRIu32 ") while %s waited on it%s",
                     d, t->node, victim->thread, via);
        break;
    case QUERY_CP_IO: {
        if (t->dev_ns[QUERY_DEV_NETWORK] > t->dev_ns[QUERY_DEV_DISK]) {
            n = snprintf(s->reason, sizeof s->reason, "waited %s on the network (node %" PRIu32 ") while %s waited on it%s",
                         d, t->node, victim->thread, via);
            break;
        }
        if (t->flush_ns * 2 > t->ns[QUERY_CP_IO]) { /* flush.c */
            char by[32];
            query_fmt_bytes(by, sizeof by, t->flush_bytes);
            n = snprintf(s->reason, sizeof s->reason,
                         "its writes (%s, node %" PRIu32 ") kept %s's cache flush waiting %s while %s waited on %s%s", by,
                         t->node, t->flush, d, victim->thread, t->flush, strstr(via, t->flush) ? "" : via);
            break;
        }
        char r[32] = "";
        if (t->ns[QUERY_CP_RUNNING] * 5 >= t->total)
            query_fmt_duration(r, sizeof r, t->ns[QUERY_CP_RUNNING]);
        n = snprintf(s->reason, sizeof s->reason,
                     "waited %s for %" PRIu32 " device request%s it issued (node %" PRIu32 ")%s%s%s while %s waited on it%s",
                     d, t->parts[QUERY_CP_IO], t->parts[QUERY_CP_IO] == 1 ? "" : "s", t->node, r[0] ? ", running " : "", r,
                     r[0] ? " between them" : "", victim->thread, via);
        break;
    }
    case QUERY_CP_INTERRUPT:
        n = snprintf(s->reason, sizeof s->reason, "interrupts took %s (node %" PRIu32 ") of %s's period", d, t->node,
                     victim->thread);
        break;
    default:
        n = snprintf(s->reason, sizeof s->reason, "was blocked %s (node %" PRIu32 ") with no cause in the trace, while %s waited on it%s",
                     d, t->node, victim->thread, via);
        break;
    }
    if (have_base && n > 0 && (size_t)n < sizeof s->reason)
        snprintf(s->reason + n, sizeof s->reason - (size_t)n, " (%s in the normal run)", b);
}

int query_attrib_suspects(db_reader *r, const query_cp *a, const query_cp *normal, const query_path *anomaly,
                          query_suspect **out, size_t *len, db_error *de)
{
    tallies ta = {0}, tn = {0};
    *out = NULL;
    *len = 0;
    if (tally_cp(a, false, &ta) || (normal && tally_cp(normal, true, &tn))) {
        free(ta.v);
        free(tn.v);
        return db_fail_oom(de);
    }
    uint64_t period = a->end - a->begin;
    query_suspect *v = calloc(ta.n ? ta.n : 1, sizeof *v);
    if (!v) {
        free(ta.v);
        free(tn.v);
        return db_fail_oom(de);
    }
    size_t nv = 0;
    for (size_t i = 0; i < ta.n; i++) {
        const tally *t = &ta.v[i];
        if (t->tid == a->node.tid || !t->node)
            continue; /* the victim itself: the anomaly's kind says what it did */
        const tally *b = NULL;
        for (size_t j = 0; j < tn.n && !b; j++)
            if (strncmp(tn.v[j].thread, t->thread, DB_NAME_MAX) == 0)
                b = &tn.v[j];
        uint64_t base = b ? b->total : 0;
        int64_t more = (int64_t)t->total - (int64_t)base;
        if (more <= 0 || (uint64_t)more * 100 < period)
            continue; /* less than 1% more than in the normal run */
        query_suspect *s = &v[nv++];
        if (db_get_node(r, t->node, &s->node, de) != 1)
            memset(&s->node, 0, sizeof s->node);
        s->node.id = t->node;
        memcpy(s->node.thread, t->thread, DB_NAME_MAX);
        int st = dominant(t);
        s->state = st == ON_REQUEST ? QUERY_CP_RUNNING : st;
        s->ns = t->total;
        s->attributed = true;
        s->score = 10.0 + 100.0 * (double)more / (double)(period ? period : 1);
        s->on_path = true;
        char via[256];
        through(anomaly, t->tid, a->node.tid, via, sizeof via);
        if (a->expect_tid && t->tid != a->expect_tid) /* a missed wakeup: the path is the expected waker's */
            snprintf(via, sizeof via, " through %s, which woke %s in the normal run", a->expected, a->node.thread);
        reason(s, t, st, &a->node, via, base, normal != NULL);
        /* the share the breakdown shows for it (its dominant state), and
         * all it took when that is more */
        double all = 100.0 * (double)t->total / (double)(period ? period : 1);
        double one = 100.0 * (double)t->ns[st] / (double)(period ? period : 1);
        if (t->ns[st] == t->total)
            snprintf(s->evidence, sizeof s->evidence, "%.1f%% of the %.1f ms period", all, (double)period / 1e6);
        else
            snprintf(s->evidence, sizeof s->evidence, "%s %.1f%% of the %.1f ms period, %.1f%% in all",
                     st == ON_REQUEST ? "running on its request" : query_cp_state_name(st), one, (double)period / 1e6,
                     all);
    }
    free(ta.v);
    free(tn.v);
    /* most time first */
    for (size_t i = 1; i < nv; i++)
        for (size_t j = i; j > 0 && v[j].score > v[j - 1].score; j--) {
            query_suspect x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *out = v;
    *len = nv;
    return 0;
}
