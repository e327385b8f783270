/* base/base.h -- what every stage shares and no stage owns: the machines
 * argusq knows, each with its kernel's syscall table; and the small
 * general tools of memory and order the stages build on (an array that
 * grows, a map from a 64-bit key to an array index, in-memory sorts).
 *
 * A raw syscall event gives a number; its name is the machine's (NR 240 is
 * futex on 32-bit ARM and i386, mq_open on x86-64), so a reader names it
 * only when the trace's machine is known (paper/000 1.b: a syscall is a
 * node's event by name).  The tables are generated at build time from the
 * kernel's headers (base/syscalls.sh). */
#ifndef ARGUSQ_BASE_H
#define ARGUSQ_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the machines, as `ingest --arch` and the messages list them */
#define BASE_ARCH_LIST "x86_64, arm64, arm, i386, riscv64"

typedef struct base_arch base_arch; /* static: never freed */

/* The machine called `machine` ("x86_64", or as uname -m, a trace.dat or
 * a Perfetto trace name it: "amd64", "aarch64", "armv7l", "i686", ...);
 * NULL for NULL, "" or a machine argusq has no table of. */
const base_arch *base_arch_find(const char *machine);
/* Its one name: "x86_64", "arm64", "arm", "i386", "riscv64". */
const char *base_arch_name(const base_arch *a);
/* One past a's highest syscall number. */
size_t base_arch_count(const base_arch *a);
/* The name of syscall nr on a, NULL if a has none of that number. */
const char *base_arch_syscall(const base_arch *a, uint64_t nr);
/* The number of the syscall called name (len bytes) on a: true and *nr,
 * or false if a has none of that name. */
bool base_arch_syscall_nr(const base_arch *a, const char *name, size_t len, uint32_t *nr);

/* ---- an array that grows: room for `need` elements of `size` bytes in
 * *p, whose capacity is *cap elements (doubled, at least 64); false when
 * out of memory, *p as it was ---- */
static inline bool base_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* ---- a 64-bit key to an index of the caller's array (base/slots.c) ---- */
typedef struct base_slots {
    uint64_t *key;
    uint32_t *ix; /* index + 1, 0 for an empty slot */
    size_t n, used;
} base_slots;
/* a key's first slot (n: a power of two) */
static inline size_t base_slots_home(uint64_t key, size_t n)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (n - 1);
}
/* the index, or -1.  Inline: the writer's indexes look up a thread or
 * a thread key per event and per node */
static inline long base_slots_get(const base_slots *s, uint64_t key)
{
    if (!s->n)
        return -1;
    for (size_t i = base_slots_home(key, s->n);; i = (i + 1) & (s->n - 1)) {
        if (!s->ix[i])
            return -1;
        if (s->key[i] == key)
            return (long)s->ix[i] - 1;
    }
}
int base_slots_put(base_slots *s, uint64_t key, uint32_t index); /* 0, -1 out of memory */
void base_slots_free(base_slots *s);


/* ---- in-memory sorts (base.h alone) ----
 * A merge sort and an insertion sort for arrays nearly in order.  qsort
 * makes a call per compare, which for short keys costs more than the
 * compare; these are always inline, so that the element's size and its
 * compare are constants where they are called: an element moves as a
 * struct assignment does and a compare is a few loads, with no call. */
/* "a goes before b" */
typedef bool (*base_sort_less)(const void *a, const void *b);

/* a[0..n) (elements of size bytes) sorted by less, stably (ties in their
 * order); tmp: room for n more.  Insertion sort of pieces of 16, then
 * merges of pieces doubling, between a and tmp; the result ends in a. */
static inline __attribute__((always_inline)) void base_sort_merge(void *a, void *tmp, size_t n, size_t size,
                                                                base_sort_less less)
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

/* a[0..n) sorted as base_sort_merge sorts it, for an array nearly in order
 * (most elements no smaller than the one before, the others not far from
 * their place): an insertion sort of the whole, its work the elements
 * and their moves, no merges.  false when it gave up, past 4n + 64 moves
 * (a[] then in some order of its elements, for the caller's own sort: a
 * far-out-of-order array costs that much more, not the insertion sort's
 * n^2/4; one of 16 elements or fewer is always sorted here). */
static inline __attribute__((always_inline)) bool base_sort_nearly(void *a, size_t n, size_t size, base_sort_less less)
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

/* ---- a stable LSD radix sort by a 32-bit key (db/: the edges of a
 * batch by node, the node records by id) ----
 * The bits a key - lo needs, for keys in [lo, lo + span]; the width of a
 * digit when they are shared out evenly over passes of at most `most`
 * bits (0 when the keys are all the same). */
static inline unsigned base_radix_bits(uint32_t span) { return span ? 32 - (unsigned)__builtin_clz(span) : 0; }
static inline unsigned base_radix_width(unsigned bits, unsigned most)
{
    unsigned passes = (bits + most - 1) / most;
    return passes ? (bits + passes - 1) / passes : 0;
}

/* Sorts n elements of size bytes at src by their uint32_t at key_off,
 * stably (ties in their order), one pass a digit of key - lo (keys in
 * [lo, lo + span]): bits in all (base_radix_bits(span)), width a digit,
 * count 2^width counters; the elements move between src and dst, and the
 * array they end in is returned.  Inline, so that size and key_off are
 * constants where it is called (the copies then are a few moves, as a
 * struct assignment's).  A pass clears and sums only the counters its
 * digits can reach (the last pass's: span's top digit and below), not all
 * 2^width. */
static inline void *base_radix_u32(void *src, void *dst, size_t n, size_t size, size_t key_off, uint32_t lo,
                                 uint32_t span, unsigned bits, unsigned width, uint32_t *count)
{
    uint32_t mask = (uint32_t)(((uint64_t)1 << width) - 1);
    for (unsigned shift = 0; shift < bits; shift += width) {
        const unsigned char *s = src;
        unsigned char *d = dst;
        uint32_t k, top = span >> shift < mask ? span >> shift : mask; /* the largest digit */
        memset(count, 0, ((size_t)top + 1) * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            memcpy(&k, s + i * size + key_off, sizeof k);
            count[(k - lo) >> shift & mask]++;
        }
        for (uint32_t v = 0, at = 0; v <= top; v++) {
            uint32_t c = count[v];
            count[v] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            memcpy(&k, s + i * size + key_off, sizeof k);
            memcpy(d + (size_t)count[(k - lo) >> shift & mask]++ * size, s + i * size, size);
        }
        void *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

#endif
