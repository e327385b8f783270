/* tests/unit/pb_build.h -- a small protobuf writer for the Perfetto
 * reader's unit tests (test_perfetto.c, test_perfetto_order.c,
 * test_perfetto_fast.c, test_perfetto_other.c, test_perfetto_items.c):
 * traces and sub-messages built field by field with the field numbers of
 * Perfetto's published schema, and the messages the tests share.  Static
 * inline: each test program has its own copy, and one that leaves a
 * writer unused is not warned. */
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

/* ---- packed fields, and the Perfetto messages the tests share ---- */

static inline void pb_packed(pb *p, unsigned f, const uint64_t *v, size_t n)
{
    pb m = {.n = 0};
    for (size_t i = 0; i < n; i++)
        pb_raw(&m, v[i]);
    pb_m(p, f, &m);
}

/* Trace.packet (1) holding a TracePacket with ftrace_events (1) = bundle */
static inline void put_bundle(pb *trace, const pb *bundle)
{
    pb pkt = {.n = 0};
    pb_m(&pkt, 1, bundle);
    pb_m(trace, 1, &pkt);
}

/* FtraceEvent {timestamp 1, pid 2, ONEOF-FIELD = msg} into a bundle's event (2) */
static inline void put_event(pb *bundle, uint64_t ts, uint32_t pid, unsigned field, const pb *msg)
{
    pb e = {.n = 0};
    pb_u(&e, 1, ts);
    pb_u(&e, 2, pid);
    pb_m(&e, field, msg);
    pb_m(bundle, 2, &e);
}

/* SchedSwitchFtraceEvent (FtraceEvent field 4) */
static inline void put_switch(pb *bundle, uint64_t ts, const char *pc, uint32_t pp, int64_t state, const char *nc,
                       uint32_t np)
{
    pb s = {.n = 0};
    pb_s(&s, 1, pc);
    pb_u(&s, 2, pp);
    pb_u(&s, 3, 120);
    pb_u(&s, 4, (uint64_t)state);
    pb_s(&s, 5, nc);
    pb_u(&s, 6, np);
    pb_u(&s, 7, 120);
    put_event(bundle, ts, pp, 4, &s);
}

/* SchedWakingFtraceEvent (field 20): waker wakes pid */
static inline void put_waking(pb *bundle, uint64_t ts, uint32_t waker, const char *comm, uint32_t pid, int32_t cpu)
{
    pb w = {.n = 0};
    pb_s(&w, 1, comm);
    pb_u(&w, 2, pid);
    pb_u(&w, 3, 120);
    pb_u(&w, 4, 1);
    pb_u(&w, 5, (uint64_t)cpu);
    put_event(bundle, ts, waker, 20, &w);
}

#endif
