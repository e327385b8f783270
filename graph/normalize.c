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
#include <stdio.h>
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

/* The event's "key=value" entries, each measured once, as lookups reach
 * them: the graph looks up several attributes of some events (a message's
 * peer, reply, kmsg, voucher and id), and db_event_attr measured every
 * entry before the one it wanted again for each.  An entry matches as it
 * does there: key, then '=' (key has no '='). */
bool graph_attr_more(graph_state *g, const db_event *ev, const char *key, size_t kl, const char **val, size_t *len)
{
    if (g->attr_ev != ev || g->attr_seq != g->ev_seq) { /* a new event: its first entry was not the key */
        g->attr_ev = ev;
        g->attr_seq = g->ev_seq;
        g->nattrs = 0;
        g->attr_p = ev->attrs;
        g->attr_end = ev->attrs ? ev->attrs + ev->attrs_len : ev->attrs;
    }
    for (size_t i = 0;; i++) {
        if (i == g->nattrs) { /* measure the next entry */
            const char *p = g->attr_p;
            if (p >= g->attr_end)
                return false;
            const char *q = graph_entry_end(p, g->attr_end);
            g->attr_p = q + 1;
            if (g->nattrs == g->attrs_cap) {
                size_t c = g->attrs_cap ? 2 * g->attrs_cap : 16;
                void *a = realloc(g->attrs, c * sizeof *g->attrs);
                if (!a) /* out of memory: the lookup as it was */
                    return g->attr_ev = NULL, db_event_attr(ev, key, val, len);
                g->attrs = a;
                g->attrs_cap = c;
            }
            g->attrs[g->nattrs++] = (struct graph_attr){p, (size_t)(q - p)};
        }
        const struct graph_attr *a = &g->attrs[i];
        if (a->len > kl && a->p[kl] == '=') {
            size_t k = 0;
            while (k < kl && a->p[k] == key[k])
                k++;
            if (k == kl) {
                *val = a->p + kl + 1;
                *len = a->len - kl - 1;
                return true;
            }
        }
    }
}

#define attr(g, ev, key, v, n) attr_n(g, ev, key, sizeof key - 1, v, n)
static bool attr_n(graph_state *g, const db_event *ev, const char *key, size_t kl, const char **v, int *n)
{
    size_t len;
    if (!graph_attr_n(g, ev, key, kl, v, &len))
        return false;
    *n = (int)(len < 64 ? len : 64);
    return true;
}

/* The normal form is built piece by piece into the caller's buffer
 * (cut at its end), not by snprintf: its parsing of a format showed in an
 * Argus ingest's profile, for the commonest texts of all
 * (docs/PERFORMANCE.md). */
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

/* inline, so that a literal's length is a constant, not a strlen call */
static inline void put_s(norm_buf *b, const char *s) { put_n(b, s, strlen(s)); }

static void put_u64(norm_buf *b, uint64_t v)
{
    char d[20];
    put_n(b, d, base_fmt_u64(d, v));
}

/* The name of a thread or of the process of a peer, as the trace says.
 * A woken thread has its graph_thread (graph_sched_event made it): its
 * name is kept there (graph_name_thread). */
static void put_thread(graph_state *g, norm_buf *b, uint64_t tid)
{
    char name[DB_NAME_MAX];
    db_error e;
    if (tid > UINT32_MAX) {
        put_s(b, "?");
        return;
    }
    graph_thread *t = graph_thread_find(g, tid);
    if (graph_name_thread(g, t ? &t->tname : NULL, (uint32_t)tid, name, &e) == 1)
        put_n(b, name, strnlen(name, sizeof name));
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
static void put_func(graph_state *g, norm_buf *b, const db_event *ev)
{
    const char *v;
    int n;
    if (attr(g, ev, "func", &v, &n) || attr(g, ev, "sym", &v, &n) || attr(g, ev, "class", &v, &n)) {
        const char *slash = memchr(v, '/', (size_t)n); /* "hrtimer_wakeup/0x0" */
        put_s(b, ":");
        put_n(b, v, slash ? (size_t)(slash - v) : (size_t)n);
    }
}

/* Writes the normalized text of ev into buf and returns its length (the
 * caller hashes it: no strlen of what was just built); 0 if the event is
 * left out of normal forms (source events outside the Argus vocabulary,
 * backtraces, whose frames are addresses).  Every form has a letter. */
size_t graph_normalize(graph_state *g, const db_event *ev, char *buf, size_t len)
{
    const char *v;
    int n;
    if (!len)
        return 0;
    norm_buf b = {buf, 0, len};
    buf[0] = 0;
    switch (ev->type) {
    case DB_EV_RAW:
    case DB_EV_BACKTRACE: return 0;
    case DB_EV_SYSCALL:
        put_s(&b, "syscall:");
        if (attr(g, ev, "name", &v, &n))
            put_n(&b, v, (size_t)n);
        else
            put_u64(&b, ev->obj);
        return b.len;
    case DB_EV_WAIT:
        put_s(&b, "wait");
        if (attr(g, ev, "reason", &v, &n)) {
            put_s(&b, ":");
            put_n(&b, v, (size_t)n);
        }
        return b.len;
    case DB_EV_WAKEUP: /* the peer: the thread woken */
        put_s(&b, "wakeup:");
        put_thread(g, &b, ev->obj);
        return b.len;
    case DB_EV_MACH_MSG: {
        put_s(&b, ev->phase == DB_PH_BEGIN ? "mach_msg:send:" : "mach_msg:recv:");
        if (attr(g, ev, "id", &v, &n))
            put_n(&b, v, (size_t)n);
        put_s(&b, ":");
        uint32_t pid;
        if (graph_msg_peer(g, ev, &pid))
            put_proc(g, &b, pid);
        else
            put_s(&b, "?");
        return b.len;
    }
    case DB_EV_RUNLOOP_OBSERVER:
        put_s(&b, "runloop_observer:");
        if (attr(g, ev, "stage", &v, &n))
            put_n(&b, v, (size_t)n);
        return b.len;
    default:
        put_s(&b, db_evtype_name(ev->type));
        put_s(&b, ev->phase == DB_PH_BEGIN ? ":begin" : ev->phase == DB_PH_END ? ":end" : "");
        put_func(g, &b, ev);
        return b.len;
    }
}

/* Adds ev's normalized event to the open node's set (repeats omitted).
 * A syscall's form depends on its number alone: its hash is cached, which
 * spares the formatting for the commonest event of all (and a wait's on
 * its reason: wait_key).
 * A normal form goes into the archive's dictionary when it was not among
 * the last written in its slot of g->norms: a set of every hash seen grew
 * with the trace (docs/PERFORMANCE.md), this stays at 256 KB; a form
 * written again is a put the dictionary refuses. */
#define GRAPH_NORMS_SEEN 65536u

/* A wait's form depends on its reason alone ("wait:S", "wait" without
 * one), so its hash is cached as a syscall's is, by the reason: up to 7
 * bytes of it with its length + 1 (0 for none) under the top bit, apart
 * from the syscalls' keys (below 2^41); 0, not cached, for a longer one.
 * Waits are many, and of a handful of reasons, and the text and its hash
 * were a large part of a wait's cost. */
/* The n (at most 7) bytes at s as a number, the first in its low bits:
 * two loads that may overlap, nothing read past them, instead of a loop
 * over the bytes. */
static inline uint64_t reason_bytes(const unsigned char *s, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        return a | (uint64_t)b << 8 * (n - 4); /* b's bytes over a's are the same */
    }
    if (n >= 2) {
        uint16_t a, b;
        memcpy(&a, s, 2);
        memcpy(&b, s + n - 2, 2);
        return a | (uint64_t)b << 8 * (n - 2);
    }
    return n ? s[0] : 0;
#else
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k |= (uint64_t)s[i] << (8 * i);
    return k;
#endif
}

static uint64_t wait_key(graph_state *g, const db_event *ev)
{
    const char *v;
    size_t n;
    if (!graph_attr_n(g, ev, "reason", 6, &v, &n))
        return 1ull << 63;
    if (n > 7)
        return 0;
    return 1ull << 63 | (uint64_t)(n + 1) << 56 | reason_bytes((const unsigned char *)v, n);
}

int graph_sig_add_more(graph_state *g, graph_open *o, const db_event *ev)
{
    char text[160];
    uint32_t h;
    bool fresh = false; /* h made from text here, not taken from the cache */
    /* source events and backtraces have no form (graph_normalize): told
     * before the call (graph_sig_add, inline), without graph_normalize's
     * call and frame for each (many of a Perfetto trace's events are
     * source events), and now without this one's either */
    uint64_t ck = ev->type == DB_EV_SYSCALL && ev->obj < (1u << 20) ? (1ull << 40) | ev->obj
                  : ev->type == DB_EV_WAIT                           ? wait_key(g, ev)
                                                                     : 0;
    /* A wakeup's form is its woken thread's name's: its hash is kept with
     * the thread while the names stand (graph_feed_named), which spares
     * the name's copy, the formatting and the hash of the text for every
     * wakeup of the same few threads (docs/PERFORMANCE.md). */
    graph_thread *woken = ev->type == DB_EV_WAKEUP && g->names_gen && ev->obj <= UINT32_MAX
                              ? graph_thread_find(g, ev->obj)
                              : NULL;
    if (woken && woken->wake_gen == g->names_gen)
        h = woken->wake_h;
    else if (!ck || !base_map_get(&g->norm_cache, ck, &h)) {
        size_t tl = graph_normalize(g, ev, text, sizeof text);
        if (!tl)
            return 0;
        h = graph_fnv1a(text, tl);
        if (ck && base_map_put(&g->norm_cache, ck, h))
            return -1;
        /* only a name read in this generation (not an error's "?") */
        if (woken && woken->tname.gen == g->names_gen && woken->tname.id == ev->obj) {
            woken->wake_gen = g->names_gen;
            woken->wake_h = h;
        }
        fresh = true;
    }
    /* a form the node already has was written (or seen) when it first
     * came: the node's own short list, in cache, before the 256 KB table */
    for (uint32_t i = 0; i < o->sig.n; i++)
        if (o->sig.h[i] == h)
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
    if (o->sig.n < DB_SIG_MAX)
        o->sig.h[o->sig.n++] = h;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The closing node's signature, sorted where the node gathered it, not
 * copied into a db_sig of its own first (a call to memcpy per node). */
const db_sig *graph_sig_done(graph_open *o, uint32_t thread_key)
{
    db_sig *sig = &o->sig;
    sig->trace = 0;
    sig->node = o->n.id;
    sig->thread_key = thread_key;
    if (sig->n <= 32) { /* most forms are a few hashes: qsort's call per compare costs more */
        for (uint32_t i = 1; i < sig->n; i++) {
            uint32_t x = sig->h[i], j = i;
            for (; j > 0 && sig->h[j - 1] > x; j--)
                sig->h[j] = sig->h[j - 1];
            sig->h[j] = x;
        }
    } else
        qsort(sig->h, sig->n, sizeof *sig->h, cmp_u32);
    return sig;
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

bool graph_syscall_forms(const base_arch *a, uint64_t nr, uint32_t *by_number, uint32_t *by_name)
{
    const char *name = base_arch_syscall(a, nr);
    if (!name)
        return false;
    /* the texts graph_normalize writes for a syscall without and with its name */
    char t[128];
    int n = snprintf(t, sizeof t, "syscall:%llu", (unsigned long long)nr);
    *by_number = graph_fnv1a(t, (size_t)n);
    n = snprintf(t, sizeof t, "syscall:%s", name);
    *by_name = graph_fnv1a(t, (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
    return true;
}
