/* ingest/merge.c -- the time merge (ingest_int.h says what it promises):
 * its arrays, and the calls made once a run or once a read, not once an
 * item (those are inline in ingest_int.h). */
#include <stdlib.h>

#include "ingest_int.h"

void ingest_merge_init(ingest_merge *m, size_t max, uint64_t *late)
{
    memset(m, 0, sizeof *m);
    m->max = max;
    m->late = late;
}

void ingest_merge_free(ingest_merge *m)
{
    free(m->heap);
    free(m->win);
    m->heap = NULL;
    m->win = NULL;
    m->nruns = m->heap_cap = m->nwin = m->head = 0;
}

int ingest_merge_run_room(ingest_merge *m)
{
    if (m->nruns < m->heap_cap)
        return 0;
    size_t cap = m->heap_cap ? m->heap_cap * 2 : 64;
    ingest_merge_run **h = realloc(m->heap, cap * sizeof *h);
    if (!h)
        return -1;
    m->heap = h;
    m->heap_cap = cap;
    return 0;
}

void ingest_merge_run_add(ingest_merge *m, ingest_merge_run *r)
{
    assert(m->nruns < m->heap_cap);
    ingest_merge_run **h = m->heap;
    size_t i = m->nruns++;
    while (i > 0 && ingest_merge_before(&r->first, &h[(i - 1) / 2]->first)) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = r;
}

int ingest_merge_win_init(ingest_merge *m)
{
    m->win = malloc(2 * m->max * sizeof *m->win);
    return m->win ? 0 : -1;
}
