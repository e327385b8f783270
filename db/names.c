/* db/names.c -- the writer's copy of its trace's threads and processes.
 *
 * The graph asks for a thread's or a process's name at nearly every
 * wakeup and message it normalizes (graph/normalize.c); read from the
 * archive each time, that was a B-tree search per event.  The writer keeps
 * what it wrote and what it read here, up to DB_NAMES_MAX of each (beyond,
 * a lookup goes to the archive again), so memory stays bounded on a trace
 * of a million short-lived threads. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

#define DB_NAMES_MAX 65536u

void db_names_free(db_names *c)
{
    base_map_free(&c->thr_ix);
    base_map_free(&c->proc_ix);
    free(c->thr);
    free(c->proc);
    *c = (db_names){0};
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

const db_thread *db_names_thread(const db_names *c, uint32_t tid)
{
    uint32_t i;
    return base_map_get(&c->thr_ix, tid, &i) ? &c->thr[i] : NULL;
}

void db_names_set_thread(db_names *c, const db_thread *t)
{
    uint32_t i;
    if (base_map_get(&c->thr_ix, t->tid, &i)) {
        c->thr[i] = *t;
        return;
    }
    if (c->nthr >= DB_NAMES_MAX || grow((void **)&c->thr, &c->thr_cap, c->nthr, sizeof *c->thr) ||
        base_map_put(&c->thr_ix, t->tid, (uint32_t)c->nthr))
        return; /* not kept: the archive answers */
    c->thr[c->nthr++] = *t;
}

const char *db_names_proc(const db_names *c, uint32_t pid)
{
    uint32_t i;
    return base_map_get(&c->proc_ix, pid, &i) ? c->proc[i] : NULL;
}

void db_names_set_proc(db_names *c, uint32_t pid, const char *name, size_t len)
{
    uint32_t i;
    if (!base_map_get(&c->proc_ix, pid, &i)) {
        if (c->nproc >= DB_NAMES_MAX || grow((void **)&c->proc, &c->proc_cap, c->nproc, sizeof *c->proc) ||
            base_map_put(&c->proc_ix, pid, (uint32_t)c->nproc))
            return;
        i = (uint32_t)c->nproc++;
    }
    db_name_copy(c->proc[i], sizeof c->proc[i], name, len);
}

void db_name_copy(char *buf, size_t len, const char *name, size_t n)
{
    if (n > len - 1)
        n = len - 1;
    memcpy(buf, name, n);
    buf[n] = 0;
}

db_thread db_thread_stored(const db_thread *t)
{
    db_thread copy;
    memset(&copy, 0, sizeof copy);
    copy.tid = t->tid;
    copy.pid = t->pid;
    copy.flags = t->flags;
    memcpy(copy.name, t->name, strnlen(t->name, DB_NAME_MAX - 1));
    return copy;
}
