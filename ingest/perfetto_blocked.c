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
 * here: a table by arrival number (seq) of the switches held, which the
 * merge takes a switch out of when it hands it on, and by task the
 * numbers of its switches in arrival order, the newest last.  A
 * sched_blocked_reason marks the newest of its task's that is still in
 * the first table; the numbers of switches handed on are dropped from a
 * task's list when they are at its end, or when the list has grown to
 * twice what the task holds.  (Taking a switch out of its task's list
 * when handed on was a scan: a wrapped ring buffer hands a task's
 * switches on far from the order they came in.)  Both tables are open
 * addressing with linear probing. */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

typedef struct pf_blk_sw {
    uint64_t seq; /* + 1; 0: an empty slot */
    uint64_t caller;
    bool has;
} pf_blk_sw;

typedef struct pf_blk_task {
    int32_t pid;
    bool used;
    size_t held;       /* of its switches in the table */
    size_t n, cap;     /* v: the seqs of its switches, in arrival order */
    uint64_t *v;
} pf_blk_task;

struct pf_blk {
    pf_blk_sw *sw;
    size_t sw_cap, sw_n;
    pf_blk_task *t;
    size_t t_cap, t_n;
};

static size_t mix(uint64_t k, size_t cap)
{
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 32) & (cap - 1);
}

/* ---- the switches held, by seq ---- */

static pf_blk_sw *sw_find(const pf_blk *b, uint64_t seq)
{
    if (!b->sw_cap)
        return NULL;
    for (size_t i = mix(seq, b->sw_cap);; i = (i + 1) & (b->sw_cap - 1)) {
        if (!b->sw[i].seq)
            return NULL;
        if (b->sw[i].seq == seq + 1)
            return &b->sw[i];
    }
}

static int sw_grow(pf_blk *b)
{
    size_t cap = b->sw_cap ? 2 * b->sw_cap : 1024;
    pf_blk_sw *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t k = 0; k < b->sw_cap; k++) {
        if (!b->sw[k].seq)
            continue;
        size_t i = mix(b->sw[k].seq - 1, cap);
        while (t[i].seq)
            i = (i + 1) & (cap - 1);
        t[i] = b->sw[k];
    }
    free(b->sw);
    b->sw = t;
    b->sw_cap = cap;
    return 0;
}

static int sw_add(pf_blk *b, uint64_t seq)
{
    if (2 * (b->sw_n + 1) > b->sw_cap && sw_grow(b) < 0)
        return -1;
    size_t i = mix(seq, b->sw_cap);
    while (b->sw[i].seq)
        i = (i + 1) & (b->sw_cap - 1);
    b->sw[i] = (pf_blk_sw){seq + 1, 0, false};
    b->sw_n++;
    return 0;
}

/* Takes slot s out, moving later entries of its probe run back into the
 * hole (no tombstones: the table is churned by every switch). */
static void sw_del(pf_blk *b, pf_blk_sw *s)
{
    size_t mask = b->sw_cap - 1, i = (size_t)(s - b->sw), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!b->sw[j].seq)
            break;
        size_t home = mix(b->sw[j].seq - 1, b->sw_cap);
        /* j's entry may fill the hole at i when its home is not in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            b->sw[i] = b->sw[j];
            i = j;
        }
    }
    b->sw[i].seq = 0;
    b->sw_n--;
}

/* ---- tasks ---- */

static pf_blk_task *task_find(const pf_blk *b, int32_t pid)
{
    if (!b->t_cap)
        return NULL;
    for (size_t i = mix((uint32_t)pid, b->t_cap);; i = (i + 1) & (b->t_cap - 1)) {
        if (!b->t[i].used)
            return NULL;
        if (b->t[i].pid == pid)
            return &b->t[i];
    }
}

static int task_grow(pf_blk *b)
{
    size_t cap = b->t_cap ? 2 * b->t_cap : 256;
    pf_blk_task *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t k = 0; k < b->t_cap; k++) {
        if (!b->t[k].used)
            continue;
        size_t i = mix((uint32_t)b->t[k].pid, cap);
        while (t[i].used)
            i = (i + 1) & (cap - 1);
        t[i] = b->t[k];
    }
    free(b->t);
    b->t = t;
    b->t_cap = cap;
    return 0;
}

static pf_blk_task *task_get(pf_blk *b, int32_t pid)
{
    pf_blk_task *k = task_find(b, pid);
    if (k)
        return k;
    if (2 * (b->t_n + 1) > b->t_cap && task_grow(b) < 0)
        return NULL;
    size_t i = mix((uint32_t)pid, b->t_cap);
    while (b->t[i].used)
        i = (i + 1) & (b->t_cap - 1);
    b->t[i].used = true;
    b->t[i].pid = pid;
    b->t_n++;
    return &b->t[i];
}

/* The task's list without the switches handed on. */
static void task_compact(const pf_blk *b, pf_blk_task *k)
{
    size_t n = 0;
    for (size_t j = 0; j < k->n; j++)
        if (sw_find(b, k->v[j]))
            k->v[n++] = k->v[j];
    k->n = n;
}

int ingest_pf_blk_held(pf_blk **bp, int32_t prev_pid, uint64_t seq)
{
    if (!*bp && !(*bp = calloc(1, sizeof **bp)))
        return -1;
    pf_blk *b = *bp;
    pf_blk_task *k = task_get(b, prev_pid);
    if (!k || sw_add(b, seq) < 0)
        return -1;
    if (k->n == k->cap && k->n > 2 * k->held + 16)
        task_compact(b, k);
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        uint64_t *v = realloc(k->v, cap * sizeof *v);
        if (!v)
            return -1;
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = seq;
    k->held++;
    return 0;
}

void ingest_pf_blk_reason(pf_blk *b, int32_t pid, uint64_t caller)
{
    pf_blk_task *k = b ? task_find(b, pid) : NULL;
    while (k && k->n) { /* arrival order: the newest held is the last still in the table */
        pf_blk_sw *s = sw_find(b, k->v[k->n - 1]);
        if (s) {
            s->has = true;
            s->caller = caller;
            return;
        }
        k->n--;
    }
}

bool ingest_pf_blk_take(pf_blk *b, int32_t prev_pid, uint64_t seq, uint64_t *caller)
{
    pf_blk_sw *s = b ? sw_find(b, seq) : NULL;
    if (!s)
        return false;
    bool has = s->has;
    *caller = s->caller;
    sw_del(b, s);
    pf_blk_task *k = task_find(b, prev_pid);
    if (k && k->held)
        k->held--;
    return has;
}

void ingest_pf_blk_free(pf_blk *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->t_cap; i++)
        free(b->t[i].v);
    free(b->t);
    free(b->sw);
    free(b);
}
