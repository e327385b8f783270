/* query/spin.c -- a thread that ran through the wait it was in the middle
 * of: spinning on something another thread held.
 *
 * A busy wait -- a user-space spin lock, a flag polled in a loop, a
 * seqlock retried -- makes no system call and no wakeup: the event graph
 * has no edge from the thread that held the thing to the one that spun,
 * so the critical path gives the period to the spinner's `running`, the
 * symptom.  What the trace does show is time: the spinner ran without a
 * break while another thread ran on another cpu, and it went on (its node
 * ended, or it woke the waiter) right after that thread stopped.  That
 * coincidence of a long run with another's end is what this names, as a
 * suspect beside the path, never as a part of it: the partition stays
 * what the trace proves.
 *
 * The spinner is the thread of the path with the most `running` in the
 * period (SPIN_SHARE of it at least).  With a normal counterpart, a
 * thread that ran as long there too is computing, not spinning, and is
 * left alone.  The holder is a thread node that covers SPIN_COVER of the
 * spinner's run, was on a cpu or runnable (preempted: still holding) for
 * SPIN_COVER of its own span, and ended inside the spinner's run's last
 * SPIN_TAIL (at least SPIN_TAIL_MIN ns) before its end. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define SPIN_SHARE 0.2
#define SPIN_COVER 0.8
#define SPIN_TAIL 0.1
#define SPIN_TAIL_MIN 1000000ull
#define SPIN_MIN_NS 1000000ull /* a run shorter than 1 ms spins on nothing worth naming */
#define SPIN_THREADS 4096     /* threads looked at: bounds the cost on a huge trace */

typedef struct spin {
    db_reader *r;
    db_error *de;
    uint32_t spinner, victim;
    uint64_t lo, hi; /* the spinner's run in the period */
    db_node best;
    uint64_t best_cover;
    uint32_t tids[SPIN_THREADS];
    size_t ntids;
} spin;

static int thread_one(void *ctx, const db_thread *t)
{
    spin *s = ctx;
    if (t->tid && t->tid != s->spinner && t->tid != s->victim && s->ntids < SPIN_THREADS)
        s->tids[s->ntids++] = t->tid;
    return 0;
}

static int node_one(void *ctx, const db_node *n)
{
    spin *s = ctx;
    uint64_t span = n->end - query_node_oncpu(n);
    uint64_t lo = query_node_oncpu(n) > s->lo ? query_node_oncpu(n) : s->lo, hi = n->end < s->hi ? n->end : s->hi;
    uint64_t cover = hi > lo ? hi - lo : 0, tail = (uint64_t)(SPIN_TAIL * (double)(s->hi - s->lo));
    if (tail < SPIN_TAIL_MIN)
        tail = SPIN_TAIL_MIN;
    if (n->kind != DB_NODE_THREAD || (double)cover < SPIN_COVER * (double)(s->hi - s->lo) ||
        (double)(n->running + n->runnable) < SPIN_COVER * (double)span || n->end > s->hi || n->end + tail < s->hi)
        return 0;
    if (cover > s->best_cover) {
        s->best = *n;
        s->best_cover = cover;
    }
    return 0;
}

/* ns thread `name` ran in cp (by name: a baseline from another run) */
static uint64_t ran(const query_cp *cp, const char *name)
{
    uint64_t ns = 0;
    for (size_t i = 0; i < cp->n; i++)
        if (cp->parts[i].state == QUERY_CP_RUNNING && strncmp(cp->parts[i].thread, name, DB_NAME_MAX) == 0)
            ns += cp->parts[i].ns;
    return ns;
}

int query_spin_suspect(db_reader *r, const query_cp *a, const query_cp *normal, query_suspect **sus, size_t *n,
                       size_t most, db_error *de)
{
    uint64_t period = a->end - a->begin, top = 0;
    const query_cp_part *sp = NULL;
    for (size_t i = 0; i < a->n; i++) { /* the spinner: the most running of one node */
        const query_cp_part *p = &a->parts[i];
        uint64_t ns = 0;
        for (size_t j = 0; j < a->n; j++)
            if (a->parts[j].node == p->node && a->parts[j].state == QUERY_CP_RUNNING)
                ns += a->parts[j].ns;
        if (p->state == QUERY_CP_RUNNING && p->kind == DB_NODE_THREAD && p->node && ns > top) {
            top = ns;
            sp = p;
        }
    }
    if (!sp || top < SPIN_MIN_NS || (double)top < SPIN_SHARE * (double)period)
        return 0;
    if (normal && ran(normal, sp->thread) * 2 >= ran(a, sp->thread))
        return 0; /* it runs that long normally: work, not a spin */
    spin *s = calloc(1, sizeof *s);
    if (!s)
        return db_fail_oom(de);
    *s = (spin){.r = r, .de = de, .spinner = sp->tid, .victim = a->node.tid, .lo = UINT64_MAX};
    for (size_t i = 0; i < a->n; i++) /* from its first run to its node's end (preempted or not) */
        if (a->parts[i].node == sp->node && a->parts[i].state == QUERY_CP_RUNNING && a->parts[i].begin < s->lo)
            s->lo = a->parts[i].begin;
    db_node spn;
    int rc = db_get_node(r, sp->node, &spn, de);
    s->hi = rc == 1 && spn.end < a->end ? spn.end : a->end;
    rc = rc < 0 ? -1 : db_scan_threads(r, thread_one, s, de);
    for (size_t i = 0; !rc && i < s->ntids; i++)
        rc = db_scan_thread_nodes(r, s->tids[i], s->lo, s->hi, node_one, s, de);
    if (rc || !s->best_cover) {
        free(s);
        return rc ? -1 : 0;
    }
    query_suspect *v = realloc(*sus, (*n + 1) * sizeof *v);
    if (!v) {
        free(s);
        return db_fail_oom(de);
    }
    *sus = v;
    size_t at = 0; /* just before the spinner, or first when it is the victim */
    while (at < *n && v[at].node.tid != sp->tid)
        at++;
    if (at == *n)
        at = 0;
    for (size_t i = 0; i < *n; i++)
        if (v[i].node.tid == s->best.tid) { /* named already, lower: it moves up */
            memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
            (*n)--;
            if (i < at)
                at--;
            break;
        }
    memmove(v + at + 1, v + at, (*n - at) * sizeof *v);
    (*n)++;
    query_suspect *x = &v[at];
    memset(x, 0, sizeof *x);
    x->node = s->best;
    x->state = QUERY_CP_RUNNING;
    x->attributed = true; /* what it ran beside the path: ns and state say it */
    x->ns = s->best_cover;
    x->score = at + 1 < *n ? v[at + 1].score + 1 : 10;
    char d[48], w[32], g[32];
    query_fmt_duration(d, sizeof d, s->best_cover);
    if ((double)s->best.running < 0.99 * (double)(s->best.end - query_node_oncpu(&s->best))) { /* preempted meanwhile */
        char run[32];
        query_fmt_duration(run, sizeof run, s->best.running);
        size_t l = strlen(d);
        snprintf(d + l, sizeof d - l, ", %s on a cpu", run);
    }
    query_fmt_duration(w, sizeof w, top);
    query_fmt_duration(g, sizeof g, s->hi - s->best.end);
    if (snprintf(x->reason, sizeof x->reason,
                 "ran %s (node %" PRIu32 ") on another cpu while %s ran %s without a break (node %" PRIu32
                 "), and stopped %s before %s went on: %s was spinning until it let go (a lock or a flag in user space: "
                 "no event joins them)",
                 d, s->best.id, sp->thread, w, sp->node, g, sp->thread, sp->thread) < 0)
        x->reason[0] = 0;
    snprintf(x->evidence, sizeof x->evidence, "beside %s's running, %.1f%% of the %.1f ms period", sp->thread,
             100.0 * (double)top / (double)(period ? period : 1), (double)period / 1e6);
    if (*n > most)
        *n = most;
    free(s);
    return 0;
}
