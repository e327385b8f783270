/* query/likeness.c -- how alike two traces are: the runs of one program.
 *
 * A baseline taken from a set of traces (`diagnose ... against traces
 * where ...`) ranks the counterparts by their own similarity first
 * (paper/004 §Node Comparison).  But a short wait of ui-main has the same
 * normal form in every program that has a ui-main: among counterparts of
 * equal score, the ones from a run of the same program are the normal
 * runs the user means.  Such a run has the threads the anomaly's wait
 * went through: the likeness of a trace is the share of the thread names
 * on the anomaly path (the slice back from the anomaly node, its real
 * threads, not the interrupt, softirq and timer pseudo-threads) that the
 * trace has threads of; of equal shares, the Jaccard index of the two
 * traces' sets of thread names.  That index alone did not do: the kernel
 * threads (kworker/0:1, kcompactd0) that happen to run in a trace
 * outweighed the program's own two or three (lockchain's anomaly found
 * flockchain's normal run); the path alone neither: diskio's path is
 * ui-main and backend, and pipechain has a backend too.  Measured on
 * tests/traces: each of ten workloads' anomaly against the normal runs of
 * all ten finds its own workload's normal run, in either catalog order,
 * where the catalog order alone found another workload's for five. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

typedef struct names {
    char (*v)[DB_NAME_MAX];
    size_t n, cap;
} names;

static int push_name(names *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        void *p = realloc(s->v, cap * sizeof *s->v);
        if (!p)
            return -1;
        s->v = p;
        s->cap = cap;
    }
    snprintf(s->v[s->n++], DB_NAME_MAX, "%.*s", DB_NAME_MAX - 1, name); /* names fill their field */
    return 0;
}

static int add_name(void *ctx, const db_thread *t) { return push_name(ctx, t->name); }

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

static void sort_unique(names *s)
{
    if (s->n < 2) /* none yet: v may be NULL, which qsort may not be given */
        return;
    qsort(s->v, s->n, sizeof *s->v, by_name);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!k || strcmp(s->v[k - 1], s->v[i]) != 0)
            memmove(s->v[k++], s->v[i], DB_NAME_MAX);
    s->n = k;
}

/* the distinct thread names of r's trace, sorted */
static int thread_names(db_reader *r, names *out, db_error *de)
{
    *out = (names){0};
    int rc = db_scan_threads(r, add_name, out, de);
    if (rc) {
        free(out->v);
        *out = (names){0};
        return rc < 0 && de->msg[0] ? -1 : db_fail_oom(de);
    }
    sort_unique(out);
    return 0;
}

/* |a and b| / |a or b| */
static double jaccard(const names *a, const names *b)
{
    size_t i = 0, j = 0, both = 0;
    while (i < a->n && j < b->n) {
        int c = strcmp(a->v[i], b->v[j]);
        both += c == 0;
        i += c <= 0;
        j += c >= 0;
    }
    size_t any = a->n + b->n - both;
    return any ? (double)both / (double)any : 1.0;
}

static bool has(const names *s, const char *name)
{
    return bsearch(name, s->v, s->n, sizeof *s->v, by_name) != NULL;
}

/* |a and b| / |a|: a's names that b has */
static double share(const names *a, const names *b)
{
    size_t both = 0;
    for (size_t i = 0; i < a->n; i++)
        both += has(b, a->v[i]);
    return a->n ? (double)both / (double)a->n : 1.0;
}

struct query_likeness {
    db_archive *archive; /* the traces compared with self's */
    db_reader *names;    /* another archive's reader, for their names; NULL: self's archive */
    db_reader *self;
    names own; /* the path's real threads */
    names all; /* every thread of self's trace */
    struct seen {
        uint32_t trace;
        query_like like;
    } *seen;
    size_t n, cap;
};

query_likeness *query_likeness_new(db_reader *self, const query_path *path, db_archive *archive, db_reader *names,
                                   db_error *de)
{
    query_likeness *l = calloc(1, sizeof *l);
    if (!l) {
        db_fail_oom(de);
        return NULL;
    }
    l->archive = archive;
    l->names = names;
    l->self = self;
    if (thread_names(self, &l->all, de)) {
        free(l);
        return NULL;
    }
    /* the path's threads that the thread table knows (real ones) */
    for (size_t i = 0; i < path->len; i++) {
        const char *t = path->items[i].node.thread;
        if (has(&l->all, t) && push_name(&l->own, t)) {
            query_likeness_free(l);
            db_fail_oom(de);
            return NULL;
        }
    }
    sort_unique(&l->own);
    return l;
}

void query_likeness_free(query_likeness *l)
{
    if (!l)
        return;
    free(l->own.v);
    free(l->all.v);
    free(l->seen);
    free(l);
}

int query_like_cmp(const query_like *a, const query_like *b)
{
    if (a->path != b->path)
        return a->path < b->path ? -1 : 1;
    return (a->whole > b->whole) - (a->whole < b->whole);
}

int query_likeness_of(query_likeness *l, uint32_t trace, query_like *out, db_error *de)
{
    if (!l->names && trace == db_reader_trace(l->self)->id) {
        *out = (query_like){1.0, 1.0};
        return 0;
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->seen[i].trace == trace) {
            *out = l->seen[i].like;
            return 0;
        }
    char name[256];
    int got = db_trace_name(l->names ? l->names : l->self, trace, name, sizeof name, de);
    if (got <= 0) {
        if (got == 0)
            snprintf(de->msg, sizeof de->msg, "trace %u is gone", (unsigned)trace);
        return -1;
    }
    db_reader *r = db_reader_open(l->archive, name, de);
    if (!r)
        return -1;
    names other;
    int rc = thread_names(r, &other, de);
    db_reader_close(r);
    if (rc)
        return -1;
    query_like like = {share(&l->own, &other), jaccard(&l->all, &other)};
    free(other.v);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void *p = realloc(l->seen, cap * sizeof *l->seen);
        if (!p)
            return db_fail_oom(de);
        l->seen = p;
        l->cap = cap;
    }
    l->seen[l->n++] = (struct seen){trace, like};
    *out = like;
    return 0;
}
