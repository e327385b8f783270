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

static bool attr(const db_event *ev, const char *key, const char **v, int *n)
{
    size_t len;
    if (!db_event_attr(ev, key, v, &len))
        return false;
    *n = (int)(len < 64 ? len : 64);
    return true;
}

/* The name of a thread or of the process of a peer, as the trace says. */
static void thread_name(graph_state *g, uint64_t tid, char *buf, size_t len)
{
    db_thread t;
    db_error e;
    if (tid <= UINT32_MAX && db_writer_get_thread(g->w, (uint32_t)tid, &t, &e) == 1)
        snprintf(buf, len, "%s", t.name);
    else
        snprintf(buf, len, "?");
}

static void proc_name(graph_state *g, uint32_t pid, char *buf, size_t len)
{
    db_error e;
    if (db_writer_get_proc(g->w, pid, buf, len, &e) != 1)
        snprintf(buf, len, "?");
}

/* A function or object named by a symbol, a source name, or nothing. */
static void func_of(const db_event *ev, char *buf, size_t len)
{
    const char *v;
    int n;
    if (attr(ev, "func", &v, &n) || attr(ev, "sym", &v, &n) || attr(ev, "class", &v, &n)) {
        const char *slash = memchr(v, '/', (size_t)n); /* "hrtimer_wakeup/0x0" */
        snprintf(buf, len, ":%.*s", (int)(slash ? slash - v : n), v);
    } else
        buf[0] = 0;
}

/* Writes the normalized text of ev into buf; false if the event is left
 * out of normal forms (source events outside the Argus vocabulary,
 * backtraces, whose frames are addresses). */
bool graph_normalize(graph_state *g, const db_event *ev, char *buf, size_t len)
{
    const char *v;
    int n;
    char peer[DB_NAME_MAX], f[80];
    const char *type = db_evtype_name(ev->type);
    switch (ev->type) {
    case DB_EV_RAW:
    case DB_EV_BACKTRACE: return false;
    case DB_EV_SYSCALL:
        if (attr(ev, "name", &v, &n))
            snprintf(buf, len, "syscall:%.*s", n, v);
        else
            snprintf(buf, len, "syscall:%llu", (unsigned long long)ev->obj);
        return true;
    case DB_EV_WAIT:
        if (attr(ev, "reason", &v, &n))
            snprintf(buf, len, "wait:%.*s", n, v);
        else
            snprintf(buf, len, "wait");
        return true;
    case DB_EV_WAKEUP: /* the peer: the thread woken */
        thread_name(g, ev->obj, peer, sizeof peer);
        snprintf(buf, len, "wakeup:%s", peer);
        return true;
    case DB_EV_MACH_MSG: {
        uint32_t pid;
        if (graph_msg_peer(g, ev, &pid))
            proc_name(g, pid, peer, sizeof peer);
        else
            snprintf(peer, sizeof peer, "?");
        if (!attr(ev, "id", &v, &n)) {
            v = "";
            n = 0;
        }
        snprintf(buf, len, "mach_msg:%s:%.*s:%s", ev->phase == DB_PH_BEGIN ? "send" : "recv", n, v, peer);
        return true;
    }
    case DB_EV_RUNLOOP_OBSERVER:
        if (!attr(ev, "stage", &v, &n)) {
            v = "";
            n = 0;
        }
        snprintf(buf, len, "runloop_observer:%.*s", n, v);
        return true;
    default:
        func_of(ev, f, sizeof f);
        snprintf(buf, len, "%s%s%s", type,
                 ev->phase == DB_PH_BEGIN ? ":begin" : ev->phase == DB_PH_END ? ":end" : "", f);
        return true;
    }
}

/* Adds ev's normalized event to the open node's set (repeats omitted).
 * A syscall's form depends on its number alone: its hash is cached, which
 * spares the formatting for the commonest event of all. */
int graph_sig_add(graph_state *g, graph_open *o, const db_event *ev)
{
    char text[160];
    uint32_t h, seen;
    uint64_t ck = ev->type == DB_EV_SYSCALL && ev->obj < (1u << 20) ? (1ull << 40) | ev->obj : 0;
    if (ck && graph_map_get(&g->norm_cache, ck, &h))
        goto have;
    if (!graph_normalize(g, ev, text, sizeof text))
        return 0;
    h = graph_fnv1a(text, strlen(text));
    if (ck && graph_map_put(&g->norm_cache, ck, h))
        return -1;
    if (!graph_map_get(&g->norms, h, &seen)) {
        if (db_writer_norm(g->w, h, text, g->err) || graph_map_put(&g->norms, h, 1))
            return -1;
    }
have:
    for (uint32_t i = 0; i < o->nsig; i++)
        if (o->sig[i] == h)
            return 0;
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
