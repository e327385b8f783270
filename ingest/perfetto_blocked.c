/* ingest/perfetto_blocked.c -- which held switch a sched_blocked_reason
 * names (perfetto.c's blocked_reason rule, paper/000 1.b: the reason of
 * the wait the task's last switch began).
 *
 * The rule: the reason goes on the latest switch away from its task (by
 * arrival) still waiting in the merge of the CPUs; one handed on already
 * keeps reason=io only.  Finding that switch by looking at every event
 * held (up to PF_HEAP_MAX) for each sched_blocked_reason was 78% of an
 * ingest of the Android 13 startup trace of ../shared (1,254 of them in
 * 60,614 events: 0.32 s, 190K events/s).  So the held switches are kept
 * by task here, each task's in arrival order: a sched_blocked_reason
 * marks the newest of its task's, and the merge takes the mark when it
 * hands the switch on.  A task's switches mostly leave in the order they
 * came (one CPU's run), so the one handed on is the first of its list.
 *
 * The tasks: an open-addressing table by pid, its lists in one array. */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

typedef struct pf_blk_sw {
    uint64_t seq, caller;
    bool has;
} pf_blk_sw;

typedef struct pf_blk_task {
    int32_t pid;
    bool used;
    size_t head, n, cap; /* its held switches: v[head .. head + n) */
    pf_blk_sw *v;
} pf_blk_task;

struct pf_blk {
    pf_blk_task *t;
    size_t cap, n; /* slots (a power of two), tasks in them */
};

static size_t slot_of(int32_t pid, size_t cap)
{
    uint32_t h = (uint32_t)pid * 0x9e3779b1u;
    return (size_t)(h >> 7) & (cap - 1);
}

static pf_blk_task *find(pf_blk *b, int32_t pid)
{
    if (!b || !b->cap)
        return NULL;
    for (size_t i = slot_of(pid, b->cap);; i = (i + 1) & (b->cap - 1)) {
        if (!b->t[i].used)
            return NULL;
        if (b->t[i].pid == pid)
            return &b->t[i];
    }
}

static int grow(pf_blk *b)
{
    size_t cap = b->cap ? 2 * b->cap : 256;
    pf_blk_task *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t k = 0; k < b->cap; k++) {
        if (!b->t[k].used)
            continue;
        size_t i = slot_of(b->t[k].pid, cap);
        while (t[i].used)
            i = (i + 1) & (cap - 1);
        t[i] = b->t[k];
    }
    free(b->t);
    b->t = t;
    b->cap = cap;
    return 0;
}

static pf_blk_task *get(pf_blk *b, int32_t pid)
{
    pf_blk_task *k = find(b, pid);
    if (k)
        return k;
    if (2 * (b->n + 1) > b->cap && grow(b) < 0)
        return NULL;
    size_t i = slot_of(pid, b->cap);
    while (b->t[i].used)
        i = (i + 1) & (b->cap - 1);
    b->t[i].used = true;
    b->t[i].pid = pid;
    b->n++;
    return &b->t[i];
}

int ingest_pf_blk_held(pf_blk **bp, int32_t prev_pid, uint64_t seq)
{
    if (!*bp && !(*bp = calloc(1, sizeof **bp)))
        return -1;
    pf_blk_task *k = get(*bp, prev_pid);
    if (!k)
        return -1;
    if (k->head + k->n == k->cap) {
        if (k->head > 0) { /* room at the front: the list moves there */
            memmove(k->v, k->v + k->head, k->n * sizeof *k->v);
            k->head = 0;
        }
        if (k->n == k->cap) {
            size_t cap = k->cap ? 2 * k->cap : 8;
            pf_blk_sw *v = realloc(k->v, cap * sizeof *v);
            if (!v)
                return -1;
            k->v = v;
            k->cap = cap;
        }
    }
    k->v[k->head + k->n++] = (pf_blk_sw){seq, 0, false};
    return 0;
}

void ingest_pf_blk_reason(pf_blk *b, int32_t pid, uint64_t caller)
{
    pf_blk_task *k = find(b, pid);
    if (k && k->n) { /* arrival order: the newest is the last */
        pf_blk_sw *s = &k->v[k->head + k->n - 1];
        s->has = true;
        s->caller = caller;
    }
}

bool ingest_pf_blk_take(pf_blk *b, int32_t prev_pid, uint64_t seq, uint64_t *caller)
{
    pf_blk_task *k = find(b, prev_pid);
    if (!k)
        return false;
    for (size_t j = 0; j < k->n; j++) {
        pf_blk_sw *s = &k->v[k->head + j];
        if (s->seq != seq)
            continue;
        bool has = s->has;
        *caller = s->caller;
        if (j == 0) {
            k->head++;
        } else {
            memmove(s, s + 1, (k->n - j - 1) * sizeof *s);
        }
        if (--k->n == 0)
            k->head = 0;
        return has;
    }
    return false;
}

void ingest_pf_blk_free(pf_blk *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->cap; i++)
        free(b->t[i].v);
    free(b->t);
    free(b);
}
