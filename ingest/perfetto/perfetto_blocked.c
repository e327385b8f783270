/* ingest/perfetto/perfetto_blocked.c -- which held switch a sched_blocked_reason
 * names (perfetto.c's blocked_reason rule, paper/000 1.b: the reason of
 * the wait the task's last switch began).
 *
 * The rule: the reason goes on the latest switch away from its task (by
 * arrival) still waiting in the merge of the CPUs; one handed on already
 * keeps reason=io only.  Finding that switch by looking at every event held
 * (up to PF_HEAP_MAX) for each sched_blocked_reason took most of an ingest
 * of a trace that has them.  So the held switches are kept here by task:
 * its switches in arrival order (their arrival numbers, seq, ascending),
 * the newest last.  A sched_blocked_reason marks the task's last one here,
 * and the switch takes the mark when it is handed on (marked in its run,
 * through a pointer kept here, it would take 16 bytes more of every held
 * event, which fits in 64 bytes without them).  A switch handed on is found by its number
 * (the first, mostly, else a binary search: a wrapped ring buffer hands a
 * task's switches on far from the order they came in) and marked gone; gone
 * ones are dropped from either end at once, so the first and the last are
 * always held, and from the middle when the list fills.  Not a hash table
 * of every held switch by seq beside the lists: its insert and delete a
 * switch cost more than the lists.  Tasks are found by pid (base_map). */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

typedef struct pf_blk_sw {
    uint64_t seq;
    uint64_t caller; /* has_caller: what a sched_blocked_reason said */
    bool held;       /* false: handed on */
    bool has_caller;
} pf_blk_sw;

typedef struct pf_blk_task {
    size_t lo, n, cap; /* v[lo .. n): its switches, the first and the last held */
    pf_blk_sw *v;
} pf_blk_task;

struct pf_blk {
    pf_blk_task *t; /* the tasks, in the order they came */
    size_t t_cap, t_n;
    base_map pids;  /* pid -> its task in t */
};

static pf_blk_task *task_find(const pf_blk *b, int32_t pid)
{
    uint32_t i;
    return base_map_get(&b->pids, (uint32_t)pid, &i) ? &b->t[i] : NULL;
}

static pf_blk_task *task_get(pf_blk *b, int32_t pid)
{
    pf_blk_task *k = task_find(b, pid);
    if (k)
        return k;
    if (!base_grow((void **)&b->t, &b->t_cap, b->t_n + 1, sizeof *b->t) ||
        base_map_put(&b->pids, (uint32_t)pid, (uint32_t)b->t_n))
        return NULL;
    k = &b->t[b->t_n++];
    *k = (pf_blk_task){0};
    return k;
}

/* room for one more switch at the end: the gone ones dropped, or twice
 * the room when more than half of it is held */
static int task_room(pf_blk_task *k)
{
    size_t n = 0;
    for (size_t j = k->lo; j < k->n; j++)
        if (k->v[j].held)
            k->v[n++] = k->v[j];
    k->lo = 0;
    k->n = n;
    if (2 * n < k->cap)
        return 0;
    size_t cap = k->cap ? 2 * k->cap : 8;
    pf_blk_sw *v = realloc(k->v, cap * sizeof *v);
    if (!v)
        return -1;
    k->v = v;
    k->cap = cap;
    return 0;
}

int ingest_pf_blk_held(pf_blk **bp, int32_t prev_pid, uint64_t seq)
{
    if (!*bp && !(*bp = calloc(1, sizeof **bp)))
        return -1;
    pf_blk_task *k = task_get(*bp, prev_pid);
    if (!k || (k->n == k->cap && task_room(k) < 0))
        return -1;
    k->v[k->n++] = (pf_blk_sw){.seq = seq, .held = true};
    return 0;
}

void ingest_pf_blk_reason(pf_blk *b, int32_t pid, uint64_t caller)
{
    pf_blk_task *k = b ? task_find(b, pid) : NULL;
    if (k && k->n > k->lo) { /* the last is held */
        k->v[k->n - 1].has_caller = true;
        k->v[k->n - 1].caller = caller;
    }
}

bool ingest_pf_blk_take(pf_blk *b, int32_t prev_pid, uint64_t seq, uint64_t *caller)
{
    pf_blk_task *k = b ? task_find(b, prev_pid) : NULL;
    if (!k || k->n == k->lo)
        return false;
    size_t j = k->lo;
    if (k->v[j].seq != seq) { /* not the first: the first at or after seq */
        size_t lo = k->lo, hi = k->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (k->v[mid].seq < seq)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == k->n || k->v[lo].seq != seq)
            return false;
        j = lo;
    }
    bool has = k->v[j].has_caller;
    *caller = k->v[j].caller;
    k->v[j].held = false;
    while (k->lo < k->n && !k->v[k->lo].held)
        k->lo++;
    while (k->n > k->lo && !k->v[k->n - 1].held)
        k->n--;
    return has;
}

void ingest_pf_blk_free(pf_blk *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->t_n; i++)
        free(b->t[i].v);
    free(b->t);
    base_map_free(&b->pids);
    free(b);
}
