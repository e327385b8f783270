/* base/base.h -- what every stage shares and no stage owns: the machines
 * argusq knows, each with its kernel's syscall table; and the small
 * general tools of memory and order the stages build on (an array that
 * grows, the one hash map (a 64-bit key to a 32-bit value), in-memory sorts,
 * spare buffers, short copies, numbers in decimal) and files written
 * whole (base/outfile.c).
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
#include <stdio.h>
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

/* ---- short copies ---- */
/* Copies n bytes, a short string's (a value's or key's text, a name: the
 * block encoder's, and the readers' attributes) without a call: 1 to 16
 * in two overlapping loads and stores, reading and writing nothing past
 * them; longer by memcpy.  (Two of 16 bytes for 17 to 32 saved the block
 * encoder less than they cost the readers, inlined in every attribute
 * they write.)  Most new values of an event block are short text, once
 * written and numbered by a call to memcpy each (put_bytes, str_add), as
 * was every name the memo keeps; in the readers, the two copies of an
 * attribute (key and value) by memcpy's calls were a noticeable part of a
 * Perfetto ingest's reading thread. */
static inline void base_copy_short(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n)
        memcpy(d, s, n);
}

/* ---- numbers in decimal (base/fmt.c) ----
 * v in decimal at b (room for 20 digits), no NUL; returns the length.
 * One writer of numbers for every stage (readers' attributes, node
 * names, normal forms, result tables): printf's format parsing cost a
 * tenth of a one-shot query and more of an ingest. */
size_t base_fmt_u64(char *b, uint64_t v);
/* v signed, the same way */
size_t base_fmt_i64(char *b, int64_t v);
/* v in lowercase hex at b, no 0x, at least min digits (zero-padded, at
 * most 16); returns the length */
size_t base_fmt_hex(char *b, uint64_t v, int min);

/* ---- spare byte buffers, the last given back first (base/bufstack.c) ----
 * A channel (base_chan, below) passes batches of bytes between two
 * threads in a ring of slots.  A batch takes a buffer from here when it
 * is begun and gives it back once read, so an ingest touches as many
 * buffers as the channel held at its fullest, not the ring's bound (a
 * ring whose slots kept their buffers cycled through all of them), and
 * the buffer filled next is the one read last.  Not locked: the caller
 * holds its own mutex. */
#define BASE_BUFSTACK_MAX 64
typedef struct base_bufstack {
    char *buf[BASE_BUFSTACK_MAX];
    size_t cap[BASE_BUFSTACK_MAX];
    size_t n;    /* buffers kept */
    size_t size; /* a new one's bytes */
} base_bufstack;

void base_bufstack_init(base_bufstack *s, size_t size);
/* The buffer given back last, else a new one of s->size bytes; *cap its
 * bytes.  NULL when out of memory (*cap 0). */
char *base_bufstack_take(base_bufstack *s, size_t *cap);
/* buf (cap bytes, NULL: nothing) kept for the next take; freed when the
 * stack is full. */
void base_bufstack_give(base_bufstack *s, char *buf, size_t cap);
void base_bufstack_free(base_bufstack *s);

/* ---- files written for the user (base/outfile.c) ----
 * A file at a path the user named (export, dump, backup, record's
 * trace.dat), written under a temporary name beside it and renamed over
 * it once whole: a failure or a crash leaves the old file as it was and
 * no part of the new one.  The new file has the mode fopen gives, 0666
 * less the umask, or the old file's mode (and, as far as this process
 * may, its owner); a symbolic link's target is replaced, the link kept.
 * A path that is not a regular file (a FIFO, /dev/stdout) is written in
 * place, as fopen would: there is nothing there to keep.
 *
 *   base_outfile o;
 *   if (base_outfile_open(&o, path, 0, err, errlen)) return -1;
 *   ... write o.f ...
 *   return ok ? base_outfile_commit(&o, err, errlen) : (base_outfile_abort(&o), -1);
 *
 * commit syncs the data (before the rename) and the directory (after),
 * closes, and renames; on failure it removes the temporary file.  abort
 * closes and removes it.  Both free what open allocated.  open and
 * commit return 0, or -1 with the message ("PATH: why", "out of memory")
 * in err (errlen bytes). */
typedef struct base_outfile {
    FILE *f;           /* what to write */
    const char *shown; /* the path as the caller named it, for messages */
    char *path;        /* the file to replace (a link's target) */
    char *tmp;         /* the temporary file; NULL when written in place */
    bool excl;
} base_outfile;
#define BASE_OUTFILE_EXCL 0x1u /* never over an existing file: open fails
                                when path exists, commit when one came meanwhile */
int base_outfile_open(base_outfile *o, const char *path, unsigned flags, char *err, size_t errlen);
/* The name the data goes under until commit (for a library that opens
 * the file itself by name, as libtracecmd does). */
const char *base_outfile_name(const base_outfile *o);
int base_outfile_commit(base_outfile *o, char *err, size_t errlen);
void base_outfile_abort(base_outfile *o);
/* path's directory (".", "/", or path up to its last '/') into dir (len
 * bytes); returns path's last component. */
const char *base_dir_of(const char *path, char *dir, size_t len);
/* fsync of the directory holding path (a new file's name is in it): 0,
 * -1 with errno set. */
int base_sync_dir_of(const char *path);

/* ---- an array that grows: room for `need` elements of `size` bytes in
 * *p, whose capacity is *cap elements (doubled, at least 64); false when
 * out of memory or when the doubled size would not fit a size_t, *p as
 * it was ---- */
static inline bool base_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    if (need > SIZE_MAX / 2 / size)
        return false;
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

/* ---- the one hash map: a 64-bit key to a 32-bit value (base/map.c) ----
 * Every key is allowed (0 and UINT64_MAX too), and every value.  A caller
 * that keeps a struct per key keeps the structs in its own array (one
 * that grows: base_grow) and maps the key to the index; the map holds no
 * pointer of the caller's, so it may grow while pointers into that array
 * are held.  Open addressing with linear probing, at most half full;
 * deletion by backward shift.  No iteration: the callers walk their own
 * arrays, in the order they filled them, never the map's slots, whose
 * order is the hash's.
 *
 * A slot is 12 bytes: the key, as two 32-bit words, and the value; key 0
 * marks an empty slot, and the key 0 itself is held beside the slots.
 * (Slots of 16 bytes, a word for "full", made the writer's indexes and
 * the graph's maps a third larger, which showed in make bench's peak
 * RSS: docs/PERFORMANCE.md.)
 *
 *   base_map m = {0};                  empty: no memory until the first put
 *   if (base_map_put(&m, key, i)) ...  out of memory
 *   uint32_t v;
 *   if (base_map_get(&m, key, &v)) ...
 *   base_map_free(&m);
 */
typedef struct base_map_slot {
    uint32_t key[2]; /* the key's 8 bytes (base_map_key); 0: an empty slot */
    uint32_t val;
} base_map_slot;
typedef struct base_map {
    base_map_slot *slot;
    size_t cap, len;   /* cap: 0 or a power of two (64 or more); len: the keys held */
    unsigned shift;    /* 64 - log2(cap) */
    bool zero;         /* the key 0 is held, with the value zero_val */
    uint32_t zero_val;
} base_map;

/* a slot's key (0: empty) */
static inline uint64_t base_map_key(const base_map_slot *s)
{
    uint64_t k;
    memcpy(&k, s->key, sizeof k);
    return k;
}
/* a key's first slot (cap not 0): the top bits of its Fibonacci hash */
static inline size_t base_map_home(const base_map *m, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> m->shift);
}
/* key's value into *val: true, or false when key is not there.  Inline:
 * the readers' thread tables and the writer's indexes look up a key per
 * event, the graph several. */
static inline bool base_map_get(const base_map *m, uint64_t key, uint32_t *val)
{
    if (!key) {
        if (m->zero)
            *val = m->zero_val;
        return m->zero;
    }
    if (!m->cap)
        return false;
    for (size_t i = base_map_home(m, key);; i = (i + 1) & (m->cap - 1)) {
        uint64_t k = base_map_key(&m->slot[i]);
        if (!k)
            return false;
        if (k == key) {
            *val = m->slot[i].val;
            return true;
        }
    }
}
/* key -> val, added or replaced: 0, or -1 out of memory (m as it was) */
int base_map_put(base_map *m, uint64_t key, uint32_t val);
/* Room for n more keys: the next n puts of new keys allocate nothing and
 * cannot fail.  0, or -1 out of memory (m as it was). */
int base_map_reserve(base_map *m, size_t n);
/* key taken out: true and its value into *val (val may be NULL), or
 * false when key was not there */
bool base_map_del(base_map *m, uint64_t key, uint32_t *val);
/* every key taken out, the slots kept */
void base_map_clear(base_map *m);
void base_map_free(base_map *m);

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

/* ---- a channel of byte batches between two threads (base/chan.c) ----
 * One producer fills a batch of bytes and hands it over; one consumer
 * takes the batches in order and gives each back once read.  The ingest
 * runs two of them: the reader's thread to the graph's (ingest/pipe.c)
 * and the graph's to the writer's (db/wqueue.c).
 *
 * Bound: nb batches of `size` bytes, all allocated by init, so that a
 * full channel is nb * size bytes whatever the trace's length and no
 * batch is allocated while the threads run (buffers allocated as the
 * queue filled, among the writer's own allocations, made a rebuild's
 * peak RSS grow with the trace: docs/PERFORMANCE.md).  A buffer given
 * back is the next one filled (base_bufstack), so an ingest touches only
 * as many as the channel held at its fullest, not all nb: a buffer
 * allocated but never written costs no memory.  One item larger than a
 * batch grows the batch it goes in, which keeps its size afterwards.
 *
 * Ownership: the channel owns every buffer.  The producer writes only
 * `fill`, without the lock, and hands it over whole; the consumer reads
 * the batch take returns until it gives it back; base_chan_free frees
 * them all, wherever they are.
 *
 * Ends: the producer closes (the consumer then takes what is queued, and
 * NULL after it); either side may abort: the producer's waits return at
 * once and its batches are dropped, the consumer's take returns NULL
 * while batches may still be queued.  Errors and what a batch holds are
 * the two users' own. */
#define BASE_CHAN_MAX 32 /* batches at most */

typedef struct base_chan_batch {
    char *buf;
    size_t len, cap; /* bytes written, bytes of buf */
} base_chan_batch;

/* The producer's look before each of its waits, and as it hands over a
 * batch (under the channel's lock): the longest it may then wait, in ms,
 * before it is called again; 0 for as long as it takes. */
typedef unsigned (*base_chan_waiting)(void *ctx);

/* fill is written for every item, so the struct holding a base_chan keeps
 * what its consumer reads for every item away from it (fill's neighbours
 * there are the producer's own fields); the rest, which both ends touch
 * once a batch, is behind a pointer, so that base.h needs no pthread.h
 * (whose time.h would declare clock and time in every file). */
typedef struct base_chan {
    base_chan_batch fill;       /* the producer's, never locked */
    struct base_chan_ring *ring; /* the lock, the queued batches, spare buffers (chan.c) */
} base_chan;

/* nb batches (1 .. BASE_CHAN_MAX) of size bytes; waiting may be NULL.
 * 0, or -1 when out of memory or out of threads' resources (nothing is
 * left to free then). */
int base_chan_init(base_chan *c, size_t nb, size_t size, base_chan_waiting waiting, void *ctx);
/* Frees the buffers and the lock; both threads are done with c. */
void base_chan_free(base_chan *c);

/* -- the producer -- */
/* n bytes at the end of fill, handing fill over first when they do not
 * fit (and it holds anything), growing it when they still do not (an
 * item larger than a batch); NULL when out of memory.  The common case,
 * room in fill, is base_chan_room's, inline. */
char *base_chan_room_more(base_chan *c, size_t n);
static inline char *base_chan_room(base_chan *c, size_t n)
{
    base_chan_batch *b = &c->fill;
    if (b->len + n > b->cap)
        return base_chan_room_more(c, n);
    char *q = b->buf + b->len;
    b->len += n;
    return q;
}
/* Queues fill (even empty) and makes a free buffer fill, waiting while
 * all nb are queued.  false when the channel was aborted: fill is then
 * emptied instead, its bytes dropped. */
bool base_chan_hand_over(base_chan *c);
/* Hands fill over, if it holds anything, and waits until the consumer
 * has given back every batch (so that whatever they asked of it is
 * done); false when the channel was aborted. */
bool base_chan_drain(base_chan *c);
/* Hands fill over, if it holds anything, and hands over no more: the
 * consumer's take returns NULL once it has taken the rest. */
void base_chan_close(base_chan *c);

/* -- the consumer -- */
/* The next batch, waiting for one; NULL once the channel is closed and
 * empty, or aborted.  Read it, then give it back. */
const base_chan_batch *base_chan_take(base_chan *c);
void base_chan_give(base_chan *c);

/* -- either side -- */
/* Stops the channel: the producer waits no more and its batches are
 * dropped, the consumer takes no more (what was queued is dropped). */
void base_chan_abort(base_chan *c);

#endif
