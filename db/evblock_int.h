/* db/evblock_int.h -- the event block format's numbers and varints,
 * shared by the encoder (evblock_enc.c) and the decoder (evblock.c; the
 * layout is described there).  Private to db/. */
#ifndef ARGUSQ_DB_EVBLOCK_INT_H
#define ARGUSQ_DB_EVBLOCK_INT_H

#include <stdbool.h>
#include <stdint.h>

#define EVB_VERSION 1
#define EVB_HEAD_MAX 21 /* version, n, first ts */
#define EVB_STR_SLOTS 8192u /* hash slots of the encoder's string table */
#define EVB_STR_MAX (EVB_STR_SLOTS / 2) /* numbered strings in a block */
#define EVB_SHAPES 128u /* numbered shapes in a block */
#define EVB_SHAPE_KEYS 64u /* a shape with more keys is not numbered */
#define EVB_SHAPE_HEAD 3u /* shape words before the keys: name, tpc, nkeys */

/* ---- varints ---- */

static inline unsigned char *uv_put(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

typedef struct rd {
    const unsigned char *p, *end;
    bool bad;
} rd;

static inline uint64_t uv_get(rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = true;
    return 0;
}

#endif
