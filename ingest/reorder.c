/* ingest/reorder.c -- the reorder window between a text reader and its
 * sink (ingest_int.h says what it promises).  Each event travels with the
 * declarations its line made (a rename belongs to the event that showed
 * it), as one group of sink calls (calls.c); groups wait in time order
 * and leave, oldest first, once the window is full or the read ends: the
 * time merge's window shape (ingest_int.h), which holds the order, the
 * bound and the late rule, while this file holds the groups and decides
 * where an event may go among the held ones.
 *
 * Memory: INGEST_REORDER_WINDOW + 1 groups, each a buffer reused for the
 * life of the window. */
#include <stdlib.h>
#include <string.h>

#include "ingest_int.h"

typedef struct group {
    ingest_merge_key key; /* its event's time (raised if late) and arrival */
    uint64_t line; /* of its event, for a message */
    uint32_t tid;
    bool decl;         /* holds declarations (proc, thread, symbol) */
    uint32_t decl_tid; /* 1 + the thread its thread() calls declare, and */
    uint32_t decl_pid; /* 1 + the process of its proc() and thread() calls:
                          0 none, UINT32_MAX several */
    char *buf;
    size_t len, cap;
} group;

struct ingest_reorder {
    ingest_sink back, front;
    const char *path;
    const uint64_t *lineno; /* the reader's line */
    ingest_stats *st;
    group *g;          /* INGEST_REORDER_WINDOW + 1 groups */
    ingest_merge win;  /* the held groups' keys, oldest first */
    group **free;      /* groups not held */
    size_t nfree;
    group *open;       /* the group the current line fills, or NULL */
};

#define SLOTS (INGEST_REORDER_WINDOW + 1)

static char *room(ingest_reorder *ro, size_t n)
{
    if (!ro->open) {
        ro->open = ro->free[--ro->nfree];
        ro->open->len = 0;
        ro->open->decl = false;
        ro->open->decl_tid = ro->open->decl_pid = 0;
    }
    group *g = ro->open;
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap : 256;
        while (g->len + n > cap)
            cap *= 2;
        char *b = realloc(g->buf, cap);
        if (!b)
            return NULL;
        g->buf = b;
        g->cap = cap;
    }
    char *q = g->buf + g->len;
    g->len += n;
    return q;
}

static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory (reorder window)");
    return -1;
}

static group *held(const ingest_reorder *ro, size_t i)
{
    return INGEST_MERGE_OF(ingest_merge_win_at(&ro->win, i), group, key);
}

/* The oldest held group to the back sink. */
static int emit_oldest(ingest_reorder *ro, char *err, size_t errlen)
{
    group *g = INGEST_MERGE_OF(ingest_merge_win_take(&ro->win), group, key);
    ro->free[ro->nfree++] = g;
    if (ingest_calls_replay(g->buf, g->len, &ro->back, err, errlen) == 0)
        return 0;
    return ingest_sink_failed(err, errlen, ro->path, g->line); /* the event's line, not the reader's */
}

static void note(uint32_t *slot, uint32_t id)
{
    *slot = *slot == 0 || *slot == id ? id : UINT32_MAX;
}

static bool same(uint32_t a, uint32_t b)
{
    return a && b && (a == b || a == UINT32_MAX || b == UINT32_MAX);
}

/* May the event of thread tid, with the declarations of its line (own,
 * or NULL), not go before held group h?  A thread is declared before its
 * events, a process before its threads, and a rename stays where it was
 * among the declarations of the same thread or process; nor does a
 * thread's declaration pass that thread's events, which were read under
 * the one before (their pid is that one's). */
static bool depends(const group *own, const group *h, uint32_t tid)
{
    if (own && own->decl && same(own->decl_tid, h->tid + 1))
        return true;
    if (!h->decl)
        return false;
    if (same(h->decl_tid, tid + 1))
        return true;
    return own && own->decl && (same(h->decl_pid, own->decl_pid) || same(h->decl_tid, own->decl_tid));
}

static int f_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    ingest_reorder *ro = ctx;
    /* Placed from the newest end, past the held events later than it (in
     * a sorted file: none; equal times keep file order).  Declarations
     * keep their order, and an event does not pass the declaration of its
     * own thread (declared before its events, with the pid they carry);
     * stopped there, or behind what has gone on, it goes on at the time of
     * the event before it (the late rule). */
    size_t n = ro->win.nwin, i = n;
    const group *own = ro->open;
    while (i > 0 && held(ro, i - 1)->key.ts > ev->ts && !depends(own, held(ro, i - 1), ev->tid))
        i--;
    bool late = ingest_merge_late(&ro->win, &ev->ts, ingest_merge_win_floor(&ro->win, i));
    size_t size = ingest_call_event_size(ev);
    char *q = room(ro, size);
    if (!q)
        return oom(err, errlen);
    ingest_call_event_put(q, ev, size);
    group *g = ro->open;
    ro->open = NULL;
    g->key.ts = ev->ts;
    g->key.seq = ingest_merge_arrive(&ro->win);
    g->tid = ev->tid;
    g->line = ro->lineno ? *ro->lineno : 0;
    if (i < n)
        ro->st->reordered += !late;
    ingest_merge_win_put(&ro->win, i, &g->key);
    /* SLOTS is the window and one: the group just placed may be the oldest */
    return ingest_merge_full(&ro->win) ? emit_oldest(ro, err, errlen) : 0;
}

static int f_proc(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen)
{
    ingest_reorder *ro = ctx;
    char *q = room(ro, ingest_call_named_size(4, name));
    if (!q)
        return oom(err, errlen);
    ingest_call_named_put(q, INGEST_C_PROC, &pid, 4, name);
    ro->open->decl = true;
    note(&ro->open->decl_pid, pid + 1);
    return 0;
}

static int f_symbol(void *ctx, uint64_t addr, const char *name, char *err, size_t errlen)
{
    ingest_reorder *ro = ctx;
    char *q = room(ro, ingest_call_named_size(8, name));
    if (!q)
        return oom(err, errlen);
    ingest_call_named_put(q, INGEST_C_SYMBOL, &addr, 8, name);
    ro->open->decl = true;
    return 0;
}

static int f_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    ingest_reorder *ro = ctx;
    char *q = room(ro, INGEST_CALL_THREAD_SIZE);
    if (!q)
        return oom(err, errlen);
    ingest_call_thread_put(q, t);
    ro->open->decl = true;
    note(&ro->open->decl_tid, t->tid + 1);
    note(&ro->open->decl_pid, t->pid + 1);
    return 0;
}

/* skip and progress count lines and bytes, not time: straight on */
static void f_skip(void *ctx)
{
    ingest_reorder *ro = ctx;
    if (ro->back.skip)
        ro->back.skip(ro->back.ctx);
}

static void f_progress(void *ctx, uint64_t done, uint64_t total)
{
    ingest_reorder *ro = ctx;
    if (ro->back.progress)
        ro->back.progress(ro->back.ctx, done, total);
}

ingest_reorder *ingest_reorder_new(const ingest_sink *back, ingest_stats *st, const char *path,
                                   const uint64_t *lineno)
{
    ingest_reorder *ro = calloc(1, sizeof *ro);
    if (!ro)
        return NULL;
    ingest_merge_init(&ro->win, SLOTS, &st->late);
    ro->g = calloc(SLOTS, sizeof *ro->g);
    ro->free = malloc(SLOTS * sizeof *ro->free);
    if (!ro->g || ingest_merge_win_init(&ro->win) < 0 || !ro->free) {
        ingest_reorder_free(ro);
        return NULL;
    }
    for (size_t i = 0; i < SLOTS; i++)
        ro->free[ro->nfree++] = &ro->g[SLOTS - 1 - i];
    ro->back = *back;
    ro->st = st;
    ro->path = path;
    ro->lineno = lineno;
    ro->front = (ingest_sink){.ctx = ro,
                              .proc = f_proc,
                              .thread = f_thread,
                              .symbol = f_symbol,
                              .event = f_event,
                              .skip = back->skip ? f_skip : NULL,
                              .progress = back->progress ? f_progress : NULL,
                              .end = NULL}; /* the reader calls finish */
    return ro;
}

const ingest_sink *ingest_reorder_front(ingest_reorder *ro)
{
    return &ro->front;
}

int ingest_reorder_finish(ingest_reorder *ro, char *err, size_t errlen)
{
    if (ro->open) { /* declarations of a line that made no event */
        ro->free[ro->nfree++] = ro->open;
        ro->open = NULL;
    }
    while (ro->win.nwin)
        if (emit_oldest(ro, err, errlen) < 0)
            return -1;
    return 0;
}

void ingest_reorder_free(ingest_reorder *ro)
{
    if (!ro)
        return;
    if (ro->g)
        for (size_t i = 0; i < SLOTS; i++)
            free(ro->g[i].buf);
    free(ro->g);
    ingest_merge_free(&ro->win);
    free(ro->free);
    free(ro);
}
