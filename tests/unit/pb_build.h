/* tests/unit/pb_build.h -- a small protobuf writer for the Perfetto
 * reader's unit tests (test_perfetto.c, test_perfetto_other.c): traces and
 * sub-messages built field by field with the field numbers of Perfetto's
 * published schema.  Static inline: each test program has its own copy,
 * and one that leaves a writer unused is not warned. */
#ifndef ARGUSQ_TESTS_PB_BUILD_H
#define ARGUSQ_TESTS_PB_BUILD_H

typedef struct pb {
    unsigned char b[16384];
    size_t n;
} pb;

static inline void pb_raw(pb *p, uint64_t v)
{
    do {
        assert_true(p->n < sizeof p->b);
        p->b[p->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static inline void pb_u(pb *p, unsigned f, uint64_t v) /* varint field */
{
    pb_raw(p, (uint64_t)f << 3);
    pb_raw(p, v);
}

/* int32/int64: two's complement, not zigzag (Perfetto's ftrace protos) */
static inline void pb_i(pb *p, unsigned f, int64_t v) { pb_u(p, f, (uint64_t)v); }

static inline void pb_bytes(pb *p, unsigned f, const void *d, size_t n)
{
    pb_raw(p, (uint64_t)f << 3 | 2);
    pb_raw(p, n);
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static inline void pb_s(pb *p, unsigned f, const char *s) { pb_bytes(p, f, s, strlen(s)); }
static inline void pb_m(pb *p, unsigned f, const pb *m) { pb_bytes(p, f, m->b, m->n); }

#endif
