/* db/db_sort.h -- the writer's in-memory sorts (private to db/): a merge
 * sort (chunkq.c's runs and a run's chunks in key order, nodetop.c's kept
 * nodes by rank, keysort.c's edges of a node far out of order) and an
 * insertion sort for arrays nearly in order (a run's chunks, a node's
 * edges).  qsort makes a call per compare, which for these short keys
 * costs more than the compare; these are always inline, so that the
 * element's size and its compare are constants where they are called: an
 * element moves as a struct assignment does and a compare is a few loads,
 * with no call. */
#ifndef ARGUSQ_DB_SORT_H
#define ARGUSQ_DB_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* "a goes before b" */
typedef bool (*db_sort_less)(const void *a, const void *b);

/* a[0..n) (elements of size bytes) sorted by less, stably (ties in their
 * order); tmp: room for n more.  Insertion sort of pieces of 16, then
 * merges of pieces doubling, between a and tmp; the result ends in a. */
static inline __attribute__((always_inline)) void db_sort_merge(void *a, void *tmp, size_t n, size_t size,
                                                                db_sort_less less)
{
    unsigned char *base = a, x[size];
    for (size_t lo = 0; lo < n; lo += 16) {
        unsigned char *first = base + lo * size, *end = base + (lo + 16 < n ? lo + 16 : n) * size;
        for (unsigned char *p = first + size; p < end; p += size) {
            memcpy(x, p, size);
            unsigned char *q = p;
            for (; q > first && less(x, q - size); q -= size)
                memcpy(q, q - size, size);
            memcpy(q, x, size);
        }
    }
    unsigned char *src = base, *dst = tmp;
    for (size_t w = 16; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            const unsigned char *i = src + lo * size, *m = src + mid * size, *j = m, *h = src + hi * size;
            unsigned char *k = dst + lo * size;
            for (; i < m && j < h; k += size) {
                if (less(j, i)) {
                    memcpy(k, j, size);
                    j += size;
                } else {
                    memcpy(k, i, size);
                    i += size;
                }
            }
            for (; i < m; i += size, k += size)
                memcpy(k, i, size);
            for (; j < h; j += size, k += size)
                memcpy(k, j, size);
        }
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
}

/* a[0..n) sorted as db_sort_merge sorts it, for an array nearly in order
 * (most elements no smaller than the one before, the others not far from
 * their place): an insertion sort of the whole, its work the elements
 * and their moves, no merges.  false when it gave up, past 4n + 64 moves
 * (a[] then in some order of its elements, for the caller's own sort: a
 * far-out-of-order array costs that much more, not the insertion sort's
 * n^2/4; one of 16 elements or fewer is always sorted here). */
static inline __attribute__((always_inline)) bool db_sort_nearly(void *a, size_t n, size_t size, db_sort_less less)
{
    unsigned char *base = a, *end = base + n * size, x[size];
    size_t budget = 4 * n + 64;
    for (unsigned char *p = base + size; p < end; p += size) {
        if (!less(p, p - size))
            continue;
        memcpy(x, p, size);
        unsigned char *q = p;
        do {
            memcpy(q, q - size, size);
            q -= size;
        } while (q > base && less(x, q - size) && --budget);
        memcpy(q, x, size);
        if (!budget)
            return false;
    }
    return true;
}

#endif
