/* ingest/perfetto_fast.c -- the hot path of the Perfetto reader's second
 * pass, decoded by hand: a TracePacket's ftrace_events (FtraceEventBundle,
 * its FtraceEvents and their event messages) into the very structs
 * protobuf-c's unpack would give (ingest/perfetto.proto's generated
 * types, in the packet's arena), so do_bundle and the mapping read one
 * form whichever decoder made it.
 *
 * Why: protobuf-c's unpack was 43% of the reading thread (2,700
 * instructions an event, callgrind, 8 copies of the Android 11 trace):
 * it scans every message twice, looks up each field, and allocates and
 * initializes every message.  An event's messages here are walked once,
 * their fields found by the generated descriptors (so the schema stays
 * declarative: perfetto.proto alone says what a message holds).
 *
 * What it takes on: only what it reads exactly as protobuf-c would.  An
 * event message must be all optional numbers (int32, uint32, int64,
 * uint64) and strings; tags and lengths at most 4 bytes of varint.
 * Otherwise protobuf-c decides: an FtraceEvent with a field the schema
 * does not know (its unknown_fields name the event, perfetto_map.c), or
 * one this decoder does not take on, is unpacked by protobuf-c alone; a
 * packet with anything else unusual (a wire type that does not match the
 * schema, a bad varint, ftrace_events or compact_sched twice, which
 * protobuf-c merges) is left whole to protobuf-c, which also says what is
 * wrong with a corrupt one.  compact_sched, one message a bundle of
 * packed arrays, is protobuf-c's too.  The packet's and the bundle's own
 * fields (the structure walked here) are known by their numbers, as
 * perfetto_names.c knows the packet's. */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

enum { FAST_NO = 0, FAST_OK = 1, FAST_OOM = -1 };

/* A message's field, as message() reads it: what its descriptor says,
 * looked up once per message type instead of once per field read (the
 * descriptor's lookup and tests were 45M of the reading thread's 865M
 * instructions in 287,000 events; FtraceEvent's own fields read through
 * their descriptors were still 30M of 677M). */
enum { FF_NO = 0, FF_STRING, FF_U32, FF_U64, FF_MSG };
typedef struct pf_fastf {
    uint32_t offset, has; /* of the value and of has_X (0: none); FF_MSG: of the oneof's case */
    uint8_t kind;         /* FF_NO: not an optional number or string, nor a oneof's message */
    /* FF_MSG (FtraceEvent's event messages): the message's type, and its
     * fields by number, those below nsub */
    uint32_t nsub;
    const struct pf_fastf *sub;
    const ProtobufCMessageDescriptor *desc;
} pf_fastf;

/* a tag or a length: at most 4 bytes (field numbers and lengths under
 * 2^25 and 2^28, where protobuf-c's 32-bit reading of them agrees).  One
 * and two bytes unrolled: every tag of FtraceEvent's fields 16 to 2047
 * (sched_wakeup's, sched_waking's) and every length from 128 bytes. */
static inline bool short_varint(const uint8_t **p, const uint8_t *e, uint32_t *v)
{
    const uint8_t *q = *p;
    if (q < e && !(*q & 0x80)) { /* most tags and lengths: one byte */
        *v = *q;
        *p = q + 1;
        return true;
    }
    if (e - q >= 2 && !(q[1] & 0x80)) {
        *v = (uint32_t)(q[0] & 0x7f) | (uint32_t)q[1] << 7;
        *p = q + 2;
        return true;
    }
    uint32_t x = 0;
    for (int i = 0; i < 4 && q < e; i++) {
        uint8_t b = *q++;
        x |= (uint32_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            *p = q;
            return true;
        }
    }
    return false;
}

static inline bool tag(const uint8_t **p, const uint8_t *e, uint32_t *num, int *wt)
{
    uint32_t t;
    if (!short_varint(p, e, &t) || (t >> 3) == 0)
        return false;
    *num = t >> 3;
    *wt = (int)(t & 7);
    return true;
}

/* a length-delimited field's bytes */
static inline bool bytes(const uint8_t **p, const uint8_t *e, const uint8_t **val, size_t *len)
{
    uint32_t n;
    if (!short_varint(p, e, &n) || n > (size_t)(e - *p))
        return false;
    *val = *p;
    *len = n;
    *p += n;
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

/* The fields at [p, e) of message m, whose fields are f[0 .. nf): an
 * FtraceEvent (its event message read in turn, into an m of its own) or
 * an event message (sched_switch, cpu_idle, ...).  FAST_OK, FAST_NO when
 * protobuf-c must read it, or FAST_OOM. */
static int message(pf_hold *h, ProtobufCMessage *m, const pf_fastf *f, uint32_t nf, const uint8_t *p,
                   const uint8_t *e)
{
    while (p < e) {
        uint32_t num;
        int wt;
        if (!tag(&p, e, &num, &wt) || num >= nf)
            return FAST_NO;
        const pf_fastf *ff = &f[num];
        char *at = (char *)m + ff->offset;
        uint64_t v;
        switch (ff->kind) {
        case FF_STRING: {
            const uint8_t *sv;
            size_t n;
            if (wt != 2 || !bytes(&p, e, &sv, &n))
                return FAST_NO;
            char *c = ingest_pf_alloc(h, n + 1);
            if (!c)
                return FAST_OOM;
            ingest_ft_copy_short(c, (const char *)sv, n); /* a comm: a few moves, not memcpy's call */
            c[n] = '\0';
            memcpy(at, &c, sizeof c);
            break;
        }
        case FF_U32: {
            if (wt != 0 || !ingest_pf_varint(&p, e, &v))
                return FAST_NO;
            uint32_t x = (uint32_t)v; /* the low 32 bits, as protobuf-c's parse_uint32 */
            memcpy(at, &x, sizeof x);
            break;
        }
        case FF_U64:
            if (wt != 0 || !ingest_pf_varint(&p, e, &v))
                return FAST_NO;
            memcpy(at, &v, sizeof v);
            break;
        case FF_MSG: {
            /* a later member of the oneof replaces an earlier one whole, as in protobuf-c */
            const uint8_t *val;
            size_t n;
            if (wt != 2 || !bytes(&p, e, &val, &n))
                return FAST_NO;
            ProtobufCMessage *sub = ingest_pf_alloc(h, ff->desc->sizeof_message);
            if (!sub)
                return FAST_OOM;
            ff->desc->message_init(sub);
            int rc = message(h, sub, ff->sub, ff->nsub, val, val + n);
            if (rc != FAST_OK)
                return rc;
            memcpy(at, &sub, sizeof sub);
            /* the oneof's case: the member's number, as protobuf-c's parse_oneof_member */
            memcpy((char *)m + ff->has, &num, sizeof num);
            continue;
        }
        default:
            return FAST_NO;
        }
        if (ff->has) { /* has_X, as protobuf-c's parse_optional_member sets it */
            protobuf_c_boolean yes = 1;
            memcpy((char *)m + ff->has, &yes, sizeof yes);
        }
    }
    return FAST_OK;
}

/* One FtraceEvent at [p, e): FAST_OK with *out, FAST_NO when protobuf-c
 * must read it, or FAST_OOM. */
static int ftrace_event(pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, ArgusqPf__FtraceEvent **out)
{
    ArgusqPf__FtraceEvent *ev = ingest_pf_alloc(h, sizeof *ev);
    if (!ev)
        return FAST_OOM;
    argusq_pf__ftrace_event__init(ev);
    int rc = message(h, &ev->base, d->evtab, PF_EVFIELDS, p, e);
    if (rc == FAST_OK)
        *out = ev;
    return rc;
}

/* The bundle at [p, e) into *out. */
static int bundle(pf_reader *d, pf_hold *h, const uint8_t *p, const uint8_t *e, ArgusqPf__FtraceEventBundle **out)
{
    ArgusqPf__FtraceEventBundle *b = ingest_pf_alloc(h, sizeof *b);
    if (!b)
        return FAST_OOM;
    argusq_pf__ftrace_event_bundle__init(b);
    size_t n = 0; /* events, in d->fast_ev until the end */
    while (p < e) {
        uint32_t num;
        int wt;
        uint64_t v;
        const uint8_t *val;
        size_t len;
        if (!tag(&p, e, &num, &wt))
            return FAST_NO;
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
                ProtobufCAllocator al = ingest_pf_allocator(h);
                if (b->compact_sched) /* twice: protobuf-c merges them */
                    return FAST_NO;
                if (!(b->compact_sched = argusq_pf__compact_sched__unpack(&al, len, val)))
                    return FAST_NO;
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
            int rc = ftrace_event(d, h, val, val + len, &d->fast_ev[n]);
            if (rc == FAST_OOM)
                return rc;
            if (rc == FAST_NO) {
                ProtobufCAllocator al = ingest_pf_allocator(h);
                if (!(d->fast_ev[n] = argusq_pf__ftrace_event__unpack(&al, len, val)))
                    return FAST_NO;
            }
            n++;
        } else if (!skip(&p, e, wt)) {
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

/* What message() makes of a field. */
static pf_fastf fast_field(const ProtobufCFieldDescriptor *f)
{
    pf_fastf ff = {.offset = f->offset, .has = f->quantifier_offset, .kind = FF_NO};
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        ff.kind = FF_MSG; /* an event message: only FtraceEvent's are read (ingest_pf_fast_init) */
    if (f->label != PROTOBUF_C_LABEL_OPTIONAL || (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return ff;
    if (f->type == PROTOBUF_C_TYPE_STRING)
        ff.kind = FF_STRING;
    else if (f->type == PROTOBUF_C_TYPE_INT32 || f->type == PROTOBUF_C_TYPE_UINT32)
        ff.kind = FF_U32;
    else if (f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_UINT64)
        ff.kind = FF_U64;
    return ff;
}

/* The field numbers of message type m: those below the returned one. */
static uint32_t fields_top(const ProtobufCMessageDescriptor *m)
{
    uint32_t top = 0;
    for (unsigned k = 0; k < m->n_fields; k++)
        if (m->fields[k].id >= top)
            top = m->fields[k].id + 1;
    return top;
}

int ingest_pf_fast_init(pf_reader *d)
{
    /* FtraceEvent's fields (PF_EVFIELDS), then each event message's */
    const ProtobufCMessageDescriptor *desc = &argusq_pf__ftrace_event__descriptor;
    size_t total = PF_EVFIELDS;
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (desc->fields[i].id < PF_EVFIELDS && desc->fields[i].type == PROTOBUF_C_TYPE_MESSAGE)
            total += fields_top(desc->fields[i].descriptor);
    if (!(d->fast_tab = calloc(total, sizeof *d->fast_tab)))
        return ingest_pf_fail(d, 0, "out of memory");
    d->evtab = d->fast_tab;
    pf_fastf *t = d->fast_tab + PF_EVFIELDS;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->id >= PF_EVFIELDS)
            continue;
        pf_fastf *ff = &d->fast_tab[f->id];
        *ff = fast_field(f);
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const ProtobufCMessageDescriptor *m = f->descriptor;
        ff->desc = m;
        ff->sub = t;
        ff->nsub = fields_top(m);
        for (unsigned k = 0; k < m->n_fields; k++) {
            t[m->fields[k].id] = fast_field(&m->fields[k]);
            if (t[m->fields[k].id].kind == FF_MSG) /* a message inside an event's: protobuf-c reads it */
                t[m->fields[k].id].kind = FF_NO;
        }
        t += ff->nsub;
    }
    return 0;
}

void ingest_pf_fast_free(pf_reader *d)
{
    free(d->fast_tab);
    d->fast_tab = NULL;
    d->evtab = NULL;
}

int ingest_pf_fast_packet(pf_reader *d, pf_hold *h, const uint8_t *p, size_t len, pf_fast *out)
{
    const uint8_t *e = p + len;
    const uint8_t *bp = NULL;
    size_t blen = 0;
    memset(out, 0, sizeof *out);
    while (p < e) {
        uint32_t num;
        int wt;
        const uint8_t *val;
        size_t n;
        if (!tag(&p, e, &num, &wt))
            return FAST_NO;
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
        return bundle(d, h, bp, bp + blen, &out->bundle);
    return FAST_OK;
}
