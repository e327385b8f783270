/* graph/normalize.c -- the normal form of a node (paper/004 §Node
 * Comparison): "we first normalize the nodes with selected events ... we
 * exclude the interrupts ... for the events that connected to other events,
 * we normalize it with a peer attribute ... we also record the name of the
 * system calls, message id carried in mach_msg ... the comparison omits the
 * repeating times of the same events".
 *
 * Each event becomes a short text naming what identifies it across runs
 * (never a pid, a timestamp or an address, which change from run to run),
 * e.g. "syscall:futex", "wakeup:worker", "mach_msg:send:29:WindowServer".
 * A node's signature is the set of the texts' hashes. */
#include <stdlib.h>
#include <string.h>

#include "graph_int.h"

uint32_t graph_fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

/* Counterparts are nodes of a thread with the same name and role (the
 * archive's signature index keys them so: db_thread_key). */
uint32_t graph_thread_key(const char *thread, int kind) { return db_thread_key(thread, kind); }

static bool attr(const db_event *ev, const char *key, const char **v, int *n)
{
    size_t len;
    if (!db_event_attr(ev, key, v, &len))
        return false;
    *n = (int)(len < 64 ? len : 64);
    return true;
}

/* The normal form is built piece by piece into the caller's buffer
 * (cut at its end): snprintf's parsing of a format was some 6% of an
 * Argus ingest, for the commonest texts of all. */
typedef struct norm_buf {
    char *p;
    size_t len, cap;
} norm_buf;

static void put_n(norm_buf *b, const char *s, size_t n)
{
    if (b->len + n >= b->cap)
        n = b->cap - 1 - b->len;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void put_s(norm_buf *b, const char *s) { put_n(b, s, strlen(s)); }

static void put_u64(norm_buf *b, uint64_t v)
{
    char d[20];
    put_n(b, d, db_fmt_u64(d, v));
}

/* The name of a thread or of the process of a peer, as the trace says. */
static void put_thread(graph_state *g, norm_buf *b, uint64_t tid)
{
    db_thread t;
    db_error e;
    if (tid <= UINT32_MAX && db_writer_get_thread(g->w, (uint32_t)tid, &t, &e) == 1)
        put_n(b, t.name, strnlen(t.name, sizeof t.name));
    else
        put_s(b, "?");
}

static void put_proc(graph_state *g, norm_buf *b, uint32_t pid)
{
    char name[DB_NAME_MAX];
    db_error e;
    put_s(b, db_writer_get_proc(g->w, pid, name, sizeof name, &e) == 1 ? name : "?");
}

/* A function or object named by a symbol, a source name, or nothing. */
static void put_func(norm_buf *b, const db_event *ev)
{
    const char *v;
    int n;
    if (attr(ev, "func", &v, &n) || attr(ev, "sym", &v, &n) || attr(ev, "class", &v, &n)) {
        const char *slash = memchr(v, '/', (size_t)n); /* "hrtimer_wakeup/0x0" */
        put_s(b, ":");
        put_n(b, v, slash ? (size_t)(slash - v) : (size_t)n);
    }
}

/* Writes the normalized text of ev into buf; false if the event is left
 * out of normal forms (source events outside the Argus vocabulary,
 * backtraces, whose frames are addresses). */
bool graph_normalize(graph_state *g, const db_event *ev, char *buf, size_t len)
{
    const char *v;
    int n;
    if (!len)
        return false;
    norm_buf b = {buf, 0, len};
    buf[0] = 0;
    switch (ev->type) {
    case DB_EV_RAW:
    case DB_EV_BACKTRACE: return false;
    case DB_EV_SYSCALL:
        put_s(&b, "syscall:");
        if (attr(ev, "name", &v, &n))
            put_n(&b, v, (size_t)n);
        else
            put_u64(&b, ev->obj);
        return true;
    case DB_EV_WAIT:
        put_s(&b, "wait");
        if (attr(ev, "reason", &v, &n)) {
            put_s(&b, ":");
            put_n(&b, v, (size_t)n);
        }
        return true;
    case DB_EV_WAKEUP: /* the peer: the thread woken */
        put_s(&b, "wakeup:");
        put_thread(g, &b, ev->obj);
        return true;
    case DB_EV_MACH_MSG: {
        put_s(&b, ev->phase == DB_PH_BEGIN ? "mach_msg:send:" : "mach_msg:recv:");
        if (attr(ev, "id", &v, &n))
            put_n(&b, v, (size_t)n);
        put_s(&b, ":");
        uint32_t pid;
        if (graph_msg_peer(g, ev, &pid))
            put_proc(g, &b, pid);
        else
            put_s(&b, "?");
        return true;
    }
    case DB_EV_RUNLOOP_OBSERVER:
        put_s(&b, "runloop_observer:");
        if (attr(ev, "stage", &v, &n))
            put_n(&b, v, (size_t)n);
        return true;
    default:
        put_s(&b, db_evtype_name(ev->type));
        put_s(&b, ev->phase == DB_PH_BEGIN ? ":begin" : ev->phase == DB_PH_END ? ":end" : "");
        put_func(&b, ev);
        return true;
    }
}

/* Adds ev's normalized event to the open node's set (repeats omitted).
 * A syscall's form depends on its number alone: its hash is cached, which
 * spares the formatting for the commonest event of all.
 * A normal form goes into the archive's dictionary when it was not among
 * the last written in its slot of g->norms: a set of every hash seen grew
 * with the trace (275,000 forms in the 19M-event bench trace), this stays
 * at 256 KB; a form written again is a put the dictionary refuses. */
#define GRAPH_NORMS_SEEN 65536u
int graph_sig_add(graph_state *g, graph_open *o, const db_event *ev)
{
    char text[160];
    uint32_t h;
    bool fresh = false; /* h made from text here, not taken from the cache */
    uint64_t ck = ev->type == DB_EV_SYSCALL && ev->obj < (1u << 20) ? (1ull << 40) | ev->obj : 0;
    if (!ck || !graph_map_get(&g->norm_cache, ck, &h)) {
        if (!graph_normalize(g, ev, text, sizeof text))
            return 0;
        h = graph_fnv1a(text, strlen(text));
        if (ck && graph_map_put(&g->norm_cache, ck, h))
            return -1;
        fresh = true;
    }
    /* a form the node already has was written (or seen) when it first
     * came: the node's own short list, in cache, before the 256 KB table */
    for (uint32_t i = 0; i < o->nsig; i++)
        if (o->sig[i] == h)
            return 0;
    if (fresh) {
        if (!g->norms && !(g->norms = calloc(GRAPH_NORMS_SEEN, sizeof *g->norms)))
            return -1;
        uint32_t *seen = &g->norms[h & (GRAPH_NORMS_SEEN - 1)];
        if (*seen != h || !h) {
            if (db_writer_norm(g->w, h, text, g->err))
                return -1;
            *seen = h;
        }
    }
    if (o->nsig < DB_SIG_MAX)
        o->sig[o->nsig++] = h;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int graph_sig_write(graph_state *g, const graph_open *o)
{
    db_sig sig = {.node = o->n.id, .thread_key = graph_thread_key(o->n.thread, o->n.kind), .n = o->nsig};
    memcpy(sig.h, o->sig, o->nsig * sizeof *o->sig);
    if (sig.n <= 32) { /* most forms are a few hashes: qsort's call per compare costs more */
        for (uint32_t i = 1; i < sig.n; i++) {
            uint32_t x = sig.h[i], j = i;
            for (; j > 0 && sig.h[j - 1] > x; j--)
                sig.h[j] = sig.h[j - 1];
            sig.h[j] = x;
        }
    } else
        qsort(sig.h, sig.n, sizeof *sig.h, cmp_u32);
    return db_writer_signature(g->w, &sig, g->err);
}

/* paper/004: "checking if one node contains all distinct events in the
 * other node".  Returns |A and B| / |A or B| (1 for equal sets); *contained
 * tells whether one set holds the other. */
double graph_similarity(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, bool *contained)
{
    uint32_t i = 0, j = 0, common = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j])
            common++, i++, j++;
        else if (a[i] < b[j])
            i++;
        else
            j++;
    }
    if (contained)
        *contained = common == na || common == nb;
    uint32_t all = na + nb - common;
    return all ? (double)common / all : 1.0;
}
