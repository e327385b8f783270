/* ingest/perfetto/perfetto_fast.c -- the hot path of the Perfetto reader's second
 * pass, decoded by hand: a TracePacket's ftrace_events (FtraceEventBundle,
 * its FtraceEvents and their event messages) into the very structs
 * protobuf-c's unpack would give (perfetto.proto's generated
 * types, in the packet's arena), so do_bundle and the mapping read one
 * form whichever decoder made it.
 *
 * Why: protobuf-c's unpack scans every message twice, looks up each field,
 * and allocates and initializes every message, and was the largest part of
 * the reading thread.  An event's messages here are walked once, their
 * fields found by the generated descriptors (so the schema stays
 * declarative: perfetto.proto alone says what a message holds).
 *
 * What it takes on: only what it reads exactly as protobuf-c would.  An
 * event message must be all optional numbers (int32, uint32, int64,
 * uint64) and strings; tags and lengths at most 4 bytes of varint.  An
 * FtraceEvent's fields the schema does not know (the events the subset
 * leaves out, perfetto_other.c) are kept as protobuf-c keeps them, as
 * unknown fields.  Otherwise protobuf-c decides: an FtraceEvent this
 * decoder does not take on is unpacked by protobuf-c alone; a packet
 * with anything else unusual (a wire type that does not match the
 * schema, a bad varint, ftrace_events or compact_sched twice, which
 * protobuf-c merges) is left whole to protobuf-c, which also says what
 * is wrong with a corrupt one.  compact_sched, one message a bundle of
 * packed arrays (and its intern table), is read by the same tables;
 * protobuf-c reads one this decoder does not take on.  The packet's and
 * the bundle's own fields (the structure walked here) are known by their
 * numbers, as perfetto_names.c knows the packet's. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

enum { FAST_NO = 0, FAST_OK = 1, FAST_OOM = -1 };

/* A message's field, as the decoder reads it: what its descriptor says,
 * looked up once per message type instead of once per field read (the
 * descriptor's lookup and tests were a large part of the reading thread,
 * and FtraceEvent's own fields read through them still a noticeable one).
 * The tables are indexed by the whole tag, number and wire type, so a
 * field of the wrong wire type is an FF_NO entry, not a test of every
 * field read. */
enum { FF_NO = 0, FF_STRING, FF_U32, FF_U64, FF_MSG, FF_UNKNOWN, FF_P32, FF_P64, FF_STRINGS };
typedef struct pf_fastf {
    /* of the value and of has_X (numbers); FF_MSG: of the oneof's case;
     * repeated (FF_P32, FF_P64 packed, FF_STRINGS): of the array and its n_X */
    uint16_t offset, has;
    uint8_t kind;         /* FF_NO: protobuf-c reads it */
    uint16_t msg;         /* FF_MSG: its type in the reader's fast_msg */
} pf_fastf;

/* A message type: FtraceEvent (fast_msg[PF_FM_EVENT]), CompactSched
 * (PF_FM_COMPACT), or one of FtraceEvent's event messages. */
enum { PF_FM_EVENT, PF_FM_COMPACT, PF_FM_FIRST_SUB };
typedef struct pf_fastm {
    const ProtobufCMessageDescriptor *desc;
    uint32_t ntags;      /* tab's length: the tags of its field numbers */
    const pf_fastf *tab; /* by tag */
} pf_fastm;

/* a length-delimited field's bytes */
static inline bool bytes(const uint8_t **p, const uint8_t *e, const uint8_t **val, size_t *len)
{
    uint32_t n;
    if (!ingest_pf_short_varint(p, e, &n) || n > (size_t)(e - *p))
        return false;
    *val = *p;
    *len = n;
    *p += n;
    return true;
}

/* A varint of a message ending at e, whose bytes may be read up to re
 * (the packet's end): a value near the end of an event's message, with
 * fewer than 10 bytes left in it, is still read a word at a time (pids
 * and comms' neighbours would otherwise be read byte by byte).  One that
 * runs past e is refused, as protobuf-c refuses it.  Values of one to
 * three bytes (prios, pids, a compact switch's time delta) are read here,
 * bytes tested one by one: they are most of an event's varints of more
 * than a byte, and the word's shifts cost more for them.  Always inlined:
 * with the short paths gcc made it a call. */
static inline __attribute__((always_inline)) bool varint_in(const uint8_t **p, const uint8_t *e, const uint8_t *re,
                                                            uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < e && !(q[0] & 0x80)) {
        *v = q[0];
        *p = q + 1;
        return true;
    }
    if (e - q >= 3) { /* two or three bytes within the message */
        if (!(q[1] & 0x80)) {
            *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
            *p = q + 2;
            return true;
        }
        if (!(q[2] & 0x80)) {
            *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)(q[1] & 0x7f) << 7 | (uint64_t)q[2] << 14;
            *p = q + 3;
            return true;
        }
    }
    if (!ingest_pf_varint(&q, re, v) || q > e)
        return false;
    *p = q;
    return true;
}

/* a field nothing here reads: skipped, as protobuf-c would keep it */
static bool skip(const uint8_t **p, const uint8_t *e, int wt)
{
    uint64_t v;
    const uint8_t *val;
    size_t n;
    switch (wt) {
    case 0:
        return ingest_pf_varint(p, e, &v);
    case 1:
    case 5:
        n = wt == 1 ? 8 : 4;
        if ((size_t)(e - *p) < n)
            return false;
        *p += n;
        return true;
    case 2:
        return bytes(p, e, &val, &n);
    default:
        return false;
    }
}

/* One number or string field, ff, at *p into message m.  FAST_OK,
 * FAST_NO (not one, or corrupt), or FAST_OOM.  Inlined in both loops
 * (gcc made it a call a field). */
static inline __attribute__((always_inline)) int scalar(pf_hold *h, const pf_fastf *ff, char *m, const uint8_t **p, const uint8_t *e,
                         const uint8_t *re)
{
    char *at = m + ff->offset;
    uint64_t v;
    protobuf_c_boolean yes = 1; /* has_X, as protobuf-c's parse_optional_member sets it */
    switch (ff->kind) {
    case FF_U32: {
        if (!varint_in(p, e, re, &v))
            return FAST_NO;
        uint32_t x = (uint32_t)v; /* the low 32 bits, as protobuf-c's parse_uint32 */
        memcpy(at, &x, sizeof x);
        memcpy(m + ff->has, &yes, sizeof yes);
        return FAST_OK;
    }
    case FF_U64:
        if (!varint_in(p, e, re, &v))
            return FAST_NO;
        memcpy(at, &v, sizeof v);
        memcpy(m + ff->has, &yes, sizeof yes);
        return FAST_OK;
    case FF_STRING: {
        const uint8_t *sv;
        size_t n;
        if (!bytes(p, e, &sv, &n))
            return FAST_NO;
        char *c = ingest_pf_alloc(h, n + 1);
        if (!c)
            return FAST_OOM;
        base_copy_short(c, (const char *)sv, n); /* a comm: a few moves, not memcpy's call */
        c[n] = '\0';
        memcpy(at, &c, sizeof c);
        return FAST_OK;
    }
    default:
        return FAST_NO;
    }
}

/* a tag: one byte, most (p < e) */
static inline bool tag(const uint8_t **p, const uint8_t *e, uint32_t *t)
{
    if (!(**p & 0x80)) {
        *t = *(*p)++;
        return true;
    }
    return ingest_pf_short_varint(p, e, t);
}

/* Message m's fields at [p, e) by the table, in any order.  FAST_OK,
 * FAST_NO when protobuf-c must read it, or FAST_OOM.  Always inlined,
 * not a call for each message. */
static inline __attribute__((always_inline)) int table_fields(pf_hold *h, const pf_fastm *fm, ProtobufCMessage *m,
                                                              const uint8_t *p, const uint8_t *e, const uint8_t *re)
{
    while (p < e) {
        uint32_t t;
        if (!tag(&p, e, &t) || t >= fm->ntags)
            return FAST_NO;
        int rc = scalar(h, &fm->tab[t], (char *)m, &p, e, re);
        if (rc != FAST_OK)
            return rc;
    }
    return FAST_OK;
}

/* An event message (sched_switch, cpu_idle, ...) of type fm at [p, e)
 * into *out.  FAST_OK, FAST_NO when protobuf-c must read it, or FAST_OOM. */
static int event_message(pf_hold *h, const pf_fastm *fm, const uint8_t *p, const uint8_t *e, const uint8_t *re,
                         ProtobufCMessage **out)
{
    ProtobufCMessage *m = ingest_pf_alloc(h, fm->desc->sizeof_message);
    if (!m)
        return FAST_OOM;
    fm->desc->message_init(m);
    int rc = table_fields(h, fm, m, p, e, re);
    if (rc == FAST_OK)
        *out = m;
    return rc;
}

/* An FtraceEvent's fields the schema does not know, kept as protobuf-c
 * keeps them (its parse_member): number, wire type, and the value's
 * bytes (a length-delimited one's with its length in front), copied.
 * More than PF_UNKNOWN_MAX: protobuf-c reads the event. */
#define PF_UNKNOWN_MAX 4
typedef struct pf_unknowns {
    size_t n;
    ProtobufCMessageUnknownField f[PF_UNKNOWN_MAX]; /* data: into the packet, until copied */
} pf_unknowns;

/* the field of tag t, of a number FtraceEvent does not declare, at *p */
static int unknown(pf_unknowns *u, uint32_t t, const uint8_t **p, const uint8_t *e)
{
    const uint8_t *at = *p;
    if (u->n == PF_UNKNOWN_MAX || !skip(p, e, (int)(t & 7)))
        return FAST_NO;
    u->f[u->n++] = (ProtobufCMessageUnknownField){t >> 3, (ProtobufCWireType)(t & 7), (size_t)(*p - at), (uint8_t *)at};
    return FAST_OK;
}

static int keep_unknowns(pf_hold *h, ProtobufCMessage *m, const pf_unknowns *u)
{
    ProtobufCMessageUnknownField *f = ingest_pf_alloc(h, u->n * sizeof *f);
    if (!f)
        return FAST_OOM;
    for (size_t i = 0; i < u->n; i++) {
        f[i] = u->f[i];
        if (!(f[i].data = ingest_pf_alloc(h, f[i].len)))
            return FAST_OOM;
        memcpy(f[i].data, u->f[i].data, f[i].len);
    }
    m->unknown_fields = f;
    m->n_unknown_fields = (unsigned)u->n;
    return FAST_OK;
}

/* One FtraceEvent at [p, e) (re: the packet's end): FAST_OK with *out,
 * FAST_NO when protobuf-c must read it, or FAST_OOM. */
static int ftrace_event(const pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, const uint8_t *re,
                        ArgusqPf__FtraceEvent **out)
{
    static const ArgusqPf__FtraceEvent init = ARGUSQ_PF__FTRACE_EVENT__INIT;
    ArgusqPf__FtraceEvent *ev = ingest_pf_alloc(h, sizeof *ev);
    if (!ev)
        return FAST_OOM;
    *ev = init; /* not a call of argusq_pf__ftrace_event__init */
    /* timestamp (1) and pid (2) lead every event Perfetto writes: read
     * by their one-byte tags, not through the table's lookup and
     * dispatch; a later one replaces them, as below */
    const uint8_t *q = p;
    uint64_t v;
    if (q < e && *q == (1 << 3) && (++q, varint_in(&q, e, re, &v))) {
        ev->has_timestamp = 1;
        ev->timestamp = v;
        p = q;
    }
    if (p < e && *(q = p) == (2 << 3) && (++q, varint_in(&q, e, re, &v))) {
        ev->has_pid = 1;
        ev->pid = (uint32_t)v; /* the low 32 bits, as protobuf-c's parse_uint32 */
        p = q;
    }
    const pf_fastm *fm = &d->fast_msg[PF_FM_EVENT];
    pf_unknowns u;
    u.n = 0;
    while (p < e) {
        uint32_t t;
        if (!tag(&p, e, &t))
            return FAST_NO;
        /* past the table: a number the schema does not declare */
        const pf_fastf *ff = t < fm->ntags ? &fm->tab[t] : NULL;
        int rc;
        if (!ff || ff->kind == FF_UNKNOWN) {
            rc = unknown(&u, t, &p, e);
        } else if (ff->kind == FF_MSG) {
            /* a later member of the oneof replaces an earlier one whole, as in protobuf-c */
            const uint8_t *val;
            size_t n;
            ProtobufCMessage *sub;
            if (!bytes(&p, e, &val, &n))
                return FAST_NO;
            const pf_fastm *sm = &d->fast_msg[ff->msg];
            rc = event_message(h, sm, val, val + n, re, &sub);
            if (rc == FAST_OK) {
                memcpy((char *)ev + ff->offset, &sub, sizeof sub);
                /* the oneof's case: the member's number, as protobuf-c's parse_oneof_member */
                uint32_t num = t >> 3;
                memcpy((char *)ev + ff->has, &num, sizeof num);
            }
        } else {
            rc = scalar(h, ff, (char *)ev, &p, e, re);
        }
        if (rc != FAST_OK)
            return rc;
    }
    if (u.n) {
        int rc = keep_unknowns(h, &ev->base, &u);
        if (rc != FAST_OK)
            return rc;
    }
    *out = ev;
    return FAST_OK;
}

/* ---- compact_sched: repeated fields, packed numbers and strings ---- */

/* the varints of a packed field's bytes: those without the top bit (as
 * protobuf-c counts them), 8 at a time: the top bits moved to the bytes'
 * low ones and summed into the top byte by a multiply (without -mpopcnt,
 * __builtin_popcountll is a call of libgcc's) */
static size_t varints(const uint8_t *p, size_t n)
{
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        c += (size_t)((((~w & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56);
    }
    for (; i < n; i++)
        c += !(p[i] & 0x80);
    return c;
}

/* CompactSched at [p, e) (re: the packet's end) into *out, as protobuf-c
 * unpacks it: the elements of each repeated field counted first (into its
 * n_X), the arrays allocated, then filled.  Each packed field once, packed
 * (protobuf-c joins a field given twice, and reads a number given alone):
 * else FAST_NO.  Why: protobuf-c's unpack of the compact bundles costs
 * more than reading them here. */
static int compact_fast(const pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, const uint8_t *re,
                        ArgusqPf__CompactSched **out)
{
    const pf_fastm *fm = &d->fast_msg[PF_FM_COMPACT];
    ArgusqPf__CompactSched *cs = ingest_pf_alloc(h, sizeof *cs);
    if (!cs)
        return FAST_OOM;
    argusq_pf__compact_sched__init(cs);
    char *m = (char *)cs;
    for (const uint8_t *q = p; q < e;) {
        uint32_t t;
        const uint8_t *val;
        size_t n;
        if (!tag(&q, e, &t) || t >= fm->ntags || !bytes(&q, e, &val, &n))
            return FAST_NO;
        const pf_fastf *ff = &fm->tab[t];
        size_t *cnt = (size_t *)(m + ff->has);
        if (ff->kind == FF_STRINGS) {
            (*cnt)++;
        } else if (ff->kind == FF_P32 || ff->kind == FF_P64) {
            if (*cnt || (n && (val[n - 1] & 0x80))) /* twice, or its last varint cut */
                return FAST_NO;
            *cnt = varints(val, n);
        } else {
            return FAST_NO;
        }
    }
    for (unsigned i = 0; i < fm->desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &fm->desc->fields[i];
        size_t *cnt = (size_t *)(m + f->quantifier_offset);
        if (f->label != PROTOBUF_C_LABEL_REPEATED || !*cnt)
            continue;
        size_t size = f->type == PROTOBUF_C_TYPE_STRING ? sizeof(char *)
                      : f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_UINT64 ? 8 : 4;
        void *a = ingest_pf_alloc(h, *cnt * size);
        if (!a)
            return FAST_OOM;
        memcpy(m + f->offset, &a, sizeof a);
        *cnt = 0; /* filled below */
    }
    for (const uint8_t *q = p; q < e;) {
        uint32_t t = 0;
        const uint8_t *val = q;
        size_t n = 0;
        if (!tag(&q, e, &t) || !bytes(&q, e, &val, &n)) /* read above */
            return FAST_NO;
        const pf_fastf *ff = &fm->tab[t];
        size_t *cnt = (size_t *)(m + ff->has);
        char *a;
        memcpy(&a, m + ff->offset, sizeof a);
        if (ff->kind == FF_STRINGS) {
            char *c = ingest_pf_alloc(h, n + 1);
            if (!c)
                return FAST_OOM;
            memcpy(c, val, n);
            c[n] = '\0';
            memcpy(a + sizeof c * (*cnt)++, &c, sizeof c);
            continue;
        }
        for (const uint8_t *v = val; v < val + n;) {
            uint64_t x;
            if (!varint_in(&v, val + n, re, &x)) /* more than 10 bytes */
                return FAST_NO;
            if (ff->kind == FF_P64) {
                memcpy(a + 8 * *cnt, &x, 8);
            } else {
                uint32_t y = (uint32_t)x; /* the low 32 bits, as protobuf-c's parse_uint32 */
                memcpy(a + 4 * *cnt, &y, 4);
            }
            ++*cnt;
        }
    }
    *out = cs;
    return FAST_OK;
}

/* CompactSched at [p, e) into *out: by compact_fast, else protobuf-c.
 * FAST_OK, FAST_NO (corrupt: protobuf-c says so), or FAST_OOM. */
static int compact(const pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, const uint8_t *re,
                   ArgusqPf__CompactSched **out)
{
    int rc = compact_fast(d, h, p, e, re, out);
    if (rc == FAST_NO) {
        ProtobufCAllocator al = ingest_pf_allocator(h);
        *out = argusq_pf__compact_sched__unpack(&al, (size_t)(e - p), p);
        rc = *out ? FAST_OK : FAST_NO;
    }
    return rc;
}

/* The bundle at [p, e) into *out (re: the packet's end). */
static int bundle(pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, const uint8_t *re,
                  ArgusqPf__FtraceEventBundle **out)
{
    ArgusqPf__FtraceEventBundle *b = ingest_pf_alloc(h, sizeof *b);
    if (!b)
        return FAST_OOM;
    argusq_pf__ftrace_event_bundle__init(b);
    size_t n = 0; /* events, in d->fast_ev until the end */
    while (p < e) {
        uint32_t t;
        uint64_t v;
        const uint8_t *val;
        size_t len;
        if (!ingest_pf_short_varint(&p, e, &t) || (t >> 3) == 0)
            return FAST_NO;
        uint32_t num = t >> 3, wt = t & 7;
        if (num == 1 || num == 3) { /* cpu, lost_events */
            if (wt != 0 || !ingest_pf_varint(&p, e, &v))
                return FAST_NO;
            if (num == 1)
                b->has_cpu = 1, b->cpu = (uint32_t)v;
            else
                b->has_lost_events = 1, b->lost_events = (uint32_t)v;
        } else if (num == 2 || num == 4) { /* event, compact_sched */
            if (wt != 2 || !bytes(&p, e, &val, &len))
                return FAST_NO;
            if (num == 4) {
                if (b->compact_sched) /* twice: protobuf-c merges them */
                    return FAST_NO;
                int rc = compact(d, h, val, val + len, re, &b->compact_sched);
                if (rc != FAST_OK)
                    return rc;
                continue;
            }
            if (n == d->fast_cap) {
                size_t cap = n ? 2 * n : 256;
                void *g = realloc(d->fast_ev, cap * sizeof *d->fast_ev);
                if (!g)
                    return FAST_OOM;
                d->fast_ev = g;
                d->fast_cap = cap;
            }
            int rc = ftrace_event(d, h, val, val + len, re, &d->fast_ev[n]);
            if (rc == FAST_OOM)
                return rc;
            if (rc == FAST_NO) {
                ProtobufCAllocator al = ingest_pf_allocator(h);
                if (!(d->fast_ev[n] = argusq_pf__ftrace_event__unpack(&al, len, val)))
                    return FAST_NO;
            }
            n++;
        } else if (!skip(&p, e, (int)wt)) {
            return FAST_NO;
        }
    }
    if (n) {
        if (!(b->event = ingest_pf_alloc(h, n * sizeof *b->event)))
            return FAST_OOM;
        memcpy(b->event, d->fast_ev, n * sizeof *b->event);
        b->n_event = n;
    }
    *out = b;
    return FAST_OK;
}

/* ---- a full event kept past its packet's arena ---- */

const ArgusqPf__FtraceEvent *ingest_pf_keep_event(pf_hold *h, const ArgusqPf__FtraceEvent *e)
{
    if (e->base.n_unknown_fields || e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT__NOT_SET)
        return NULL;
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(&argusq_pf__ftrace_event__descriptor, (unsigned)e->event_case);
    if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
        return NULL;
    const ProtobufCMessage *m;
    memcpy(&m, (const char *)e + f->offset, sizeof m);
    if (!m || m->n_unknown_fields)
        return NULL;
    const ProtobufCMessageDescriptor *md = m->descriptor;
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *g = &md->fields[i];
        if (g->label == PROTOBUF_C_LABEL_REPEATED || g->type == PROTOBUF_C_TYPE_MESSAGE ||
            g->type == PROTOBUF_C_TYPE_BYTES)
            return NULL;
    }
    ArgusqPf__FtraceEvent *ce = ingest_pf_keep_alloc(h, sizeof *ce);
    char *cm = ce ? ingest_pf_keep_alloc(h, md->sizeof_message) : NULL;
    if (!cm)
        return NULL;
    *ce = *e;
    memcpy(cm, m, md->sizeof_message);
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *g = &md->fields[i];
        const char *str;
        if (g->type != PROTOBUF_C_TYPE_STRING || !(memcpy(&str, cm + g->offset, sizeof str), str))
            continue;
        size_t n = strlen(str); /* what the mapping reads of it (kv_s) */
        char *c = ingest_pf_keep_alloc(h, n + 1);
        if (!c)
            return NULL;
        memcpy(c, str, n + 1);
        memcpy(cm + g->offset, &c, sizeof c);
    }
    memcpy((char *)ce + f->offset, &cm, sizeof cm);
    return ce;
}

/* ---- the tables ---- */

/* The field numbers of message type m: those below the returned one. */
static uint32_t fields_top(const ProtobufCMessageDescriptor *m)
{
    uint32_t top = 0;
    for (unsigned k = 0; k < m->n_fields; k++)
        if (m->fields[k].id >= top)
            top = m->fields[k].id + 1;
    return top;
}

/* What the decoder makes of field f (of the wire type its type has): an
 * FtraceEvent's event message is FF_MSG (its msg set by the caller); a
 * field nested deeper, or of a kind not listed, FF_NO. */
static pf_fastf fast_field(const ProtobufCFieldDescriptor *f, bool top)
{
    pf_fastf ff = {.kind = FF_NO};
    if (f->offset > UINT16_MAX || f->quantifier_offset > UINT16_MAX)
        return ff;
    ff.offset = (uint16_t)f->offset;
    ff.has = (uint16_t)f->quantifier_offset;
    bool oneof = f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF;
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && oneof && top)
        ff.kind = FF_MSG;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        if (f->type == PROTOBUF_C_TYPE_STRING)
            ff.kind = FF_STRINGS;
        else if (f->type == PROTOBUF_C_TYPE_INT32 || f->type == PROTOBUF_C_TYPE_UINT32)
            ff.kind = FF_P32;
        else if (f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_UINT64)
            ff.kind = FF_P64;
        return ff;
    }
    if (f->label != PROTOBUF_C_LABEL_OPTIONAL || oneof)
        return ff;
    if (f->type == PROTOBUF_C_TYPE_STRING)
        ff.kind = FF_STRING;
    else if ((f->type == PROTOBUF_C_TYPE_INT32 || f->type == PROTOBUF_C_TYPE_UINT32) && ff.has)
        ff.kind = FF_U32;
    else if ((f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_UINT64) && ff.has)
        ff.kind = FF_U64;
    return ff;
}

/* the wire type of the fields fast_field takes on */
static uint32_t fast_wire(uint8_t kind) { return kind == FF_U32 || kind == FF_U64 ? 0 : 2; }

/* message type desc's table at t (its tags, fields_top * 8): each field
 * at the tag of its number and wire type; top (FtraceEvent): the numbers
 * it does not declare FF_UNKNOWN, in the wire types protobuf-c keeps */
static void fast_table(pf_fastf *t, const ProtobufCMessageDescriptor *desc, bool top)
{
    uint32_t ntags = fields_top(desc) * 8;
    if (top)
        for (uint32_t k = 8; k < ntags; k++)
            if ((k & 7) == 0 || (k & 7) == 1 || (k & 7) == 2 || (k & 7) == 5)
                t[k].kind = FF_UNKNOWN;
    for (unsigned k = 0; k < desc->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[k];
        for (uint32_t wt = 0; wt < 8; wt++)
            t[f->id * 8 + wt].kind = FF_NO; /* declared: a wire type but its own is protobuf-c's */
        pf_fastf ff = fast_field(f, top);
        t[f->id * 8 + fast_wire(ff.kind)] = ff;
    }
}

int ingest_pf_fast_init(pf_reader *d)
{
    /* FtraceEvent, CompactSched, then each of FtraceEvent's event messages */
    const ProtobufCMessageDescriptor *desc = &argusq_pf__ftrace_event__descriptor,
                                     *cdesc = &argusq_pf__compact_sched__descriptor;
    size_t nmsg = PF_FM_FIRST_SUB, total = (fields_top(desc) + fields_top(cdesc)) * 8;
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (fast_field(&desc->fields[i], true).kind == FF_MSG) {
            nmsg++;
            total += fields_top(desc->fields[i].descriptor) * 8;
        }
    d->fast_msg = calloc(nmsg, sizeof *d->fast_msg);
    d->fast_tab = calloc(total, sizeof *d->fast_tab);
    if (!d->fast_msg || !d->fast_tab)
        return ingest_pf_fail(d, 0, "out of memory");
    pf_fastm *m = d->fast_msg;
    pf_fastf *t = d->fast_tab;
    *m = (pf_fastm){desc, fields_top(desc) * 8, t};
    fast_table(t, desc, true);
    t += m->ntags;
    m++;
    *m = (pf_fastm){cdesc, fields_top(cdesc) * 8, t};
    fast_table(t, cdesc, false);
    t += m->ntags;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (fast_field(f, true).kind != FF_MSG)
            continue;
        m++;
        *m = (pf_fastm){f->descriptor, fields_top(f->descriptor) * 8, t};
        fast_table(t, f->descriptor, false);
        t += m->ntags;
        d->fast_tab[f->id * 8 + 2].msg = (uint16_t)(m - d->fast_msg);
    }
    return 0;
}

void ingest_pf_fast_free(pf_reader *d)
{
    free(d->fast_tab);
    free(d->fast_msg);
    d->fast_tab = NULL;
    d->fast_msg = NULL;
}

int ingest_pf_fast_packet(pf_reader *d, pf_hold *h, const uint8_t *p, size_t len, pf_fast *out)
{
    const uint8_t *e = p + len;
    const uint8_t *bp = NULL;
    size_t blen = 0;
    memset(out, 0, sizeof *out);
    while (p < e) {
        uint32_t t;
        const uint8_t *val;
        size_t n;
        if (!ingest_pf_short_varint(&p, e, &t) || (t >> 3) == 0)
            return FAST_NO;
        uint32_t num = t >> 3;
        int wt = (int)(t & 7);
        switch (num) {
        case 1: /* ftrace_events: twice, protobuf-c merges them */
            if (wt != 2 || bp || !bytes(&p, e, &bp, &blen))
                return FAST_NO;
            break;
        case 2:  /* process_tree, system_info: the first pass read them with */
        case 45: /* protobuf-c (perfetto_names.c), so they are sound */
            if (wt != 2 || !bytes(&p, e, &val, &n))
                return FAST_NO;
            break;
        case 8: /* timestamp */
            if (wt != 0 || !skip(&p, e, wt))
                return FAST_NO;
            break;
        case 50: /* compressed_packets: the last one, as protobuf-c */
            if (wt != 2 || !bytes(&p, e, &val, &n))
                return FAST_NO;
            out->has_compressed = true;
            out->compressed.data = n ? (uint8_t *)val : NULL; /* protobuf-c's empty bytes */
            out->compressed.len = n;
            break;
        default:
            if (!skip(&p, e, wt))
                return FAST_NO;
        }
    }
    if (bp)
        return bundle(d, h, bp, bp + blen, e, &out->bundle);
    return FAST_OK;
}
