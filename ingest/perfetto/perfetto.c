/* ingest/perfetto/perfetto.c -- Perfetto's protobuf traces (Android 10 and later,
 * Linux's newer tracers): `Trace { repeated TracePacket packet = 1; }`,
 * plain or gzip'd, with zlib'd `compressed_packets` inside.  The outer
 * Trace is walked by hand (tag, length) and one TracePacket is decoded at
 * a time, where the read buffer holds it, so the file is never held whole.
 *
 * A packet's ftrace_events, the hot path, are decoded by hand
 * (perfetto_fast.c) into the structs protobuf-c would unpack, through its
 * descriptors of perfetto.proto (the schema stays declarative):
 * protobuf-c's unpack scans each message twice, looks up every field and
 * allocates every message.  The rest, and any packet the hand decoder
 * does not read exactly as protobuf-c would, is protobuf-c's, whose
 * checks make a corrupt file a message, not a read past a buffer.
 *
 * Two passes: the first reads only process_tree and system_info (the
 * names of processes and threads, the kernel, the machine, which Perfetto
 * writes at the start and again at the end) and checks the framing, so
 * that no event is handed on before every thread can be named; the second
 * maps each ftrace event to the canonical pairs of the ftrace mapping
 * (ingest/ftrace/ftrace_map_int.h, perfetto_map.c), as the text and
 * trace.dat readers do, so a sched_switch gives the db event a tracefs
 * line of it gives.  The per-CPU bundles are merged by timestamp, at most
 * PF_HEAP_MAX events held, by the time merge the text readers' reorder
 * window uses too (ingest_int.h: an event earlier than one handed on goes
 * on at that one's time, counted late); a held event is self-contained
 * (pf_item), so that its packet's memory is reused as soon as the packet
 * is decoded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfetto_int.h"

#define PF_HEAP_MAX 65536                 /* events held for the merge of the CPUs */
#define PF_CPU_MAX 4096

/* ---- the merge of the CPUs ----
 *
 * A CPU's events mostly come in time order, but not always: a trace from
 * a ring buffer that wrapped holds a CPU's later seconds before its
 * earlier ones (the Android 11 trace of ../shared is one:
 * docs/PERFORMANCE.md).  So the events held are runs, each in time order
 * (a CPU's events are appended to its current run while they keep the
 * order, and start a new run when they do not), merged by the time merge
 * (ingest_int.h, its runs shape): a heap of the runs by their first
 * event, whose order is that of one heap of every event held (time, then
 * arrival), with the events in arrays (warm) and a heap of a few runs
 * instead of 64K events (that heap's cache misses showed in the
 * process's profile).  The heap compares the runs' first events by the
 * copy of their time and arrival in the run itself (pf_span.run), not in
 * the event, one load further: the loads of the events were much of the
 * merge's cost.  At most PF_HEAP_MAX events are held in all. */

static const pf_item *run_head(const pf_span *r) { return &r->first->q[r->head]; }

static pf_span *run_of(ingest_merge_run *m) { return INGEST_MERGE_OF(m, pf_span, run); }

/* ---- a packet's memory: protobuf-c allocates an unpacked packet's
 * messages, strings and arrays from an arena of the packet's own, freed
 * whole when its last event is handed on (malloc and protobuf-c's free
 * of each part were a large share of the reading thread:
 * docs/PERFORMANCE.md).  Chunks go back to a pool of the reader's, by
 * size class. ---- */

/* A chunk's size is a class's: PF_CHUNK_MIN, then four classes an octave
 * (at most a quarter more than asked), so that a chunk freed is found
 * again by the next packet of about its size.  Why: the pool was one
 * list, taken from only when its first chunk was large enough: most
 * chunks were malloc'd (and as many freed), fresh memory each
 * (docs/PERFORMANCE.md). */
#define PF_CHUNK_MIN ((size_t)4096)

size_t ingest_pf_chunk_class(size_t want, unsigned *cls)
{
    if (want <= PF_CHUNK_MIN) {
        *cls = 0;
        return PF_CHUNK_MIN;
    }
    unsigned b = 63u - (unsigned)__builtin_clzll((unsigned long long)(want - 1)); /* 2^b < want <= 2^(b+1) */
    size_t step = (size_t)1 << (b - 2);
    size_t k = (want - 1) / step + 1; /* 5..8 quarters of 2^b */
    *cls = (b - 12) * 4 + (unsigned)(k - 4);
    return k * step;
}

/* n bytes of the chunks *list (their first: first bytes, or more), a
 * chunk from the pool or malloc'd when the last has no room; NULL: out
 * of memory. */
static void *chunks_alloc(pf_reader *d, pf_chunk **list, size_t first, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    pf_chunk *c = *list;
    if (!c || c->cap - c->used < n) {
        size_t want = c ? c->cap * 2 : first;
        if (want < n)
            want = n;
        unsigned cls;
        size_t cap = ingest_pf_chunk_class(want, &cls);
        if (cls < PF_POOL_CLASSES && d->pool[cls]) {
            c = d->pool[cls];
            d->pool[cls] = c->next;
            d->pool_bytes -= cap;
        } else {
            if (!(c = malloc(sizeof *c + cap)))
                return NULL;
            c->cap = cap;
        }
        c->used = 0;
        c->next = *list;
        *list = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

/* the first chunk about fits the unpacked packet (a few times its wire
 * size), so held packets cost what they hold */
void *ingest_pf_arena_alloc(void *ad, size_t n)
{
    pf_hold *h = ad;
    return chunks_alloc(h->d, &h->chunks, h->hint, n);
}

/* a hold's keep: a few long prints' texts or other messages, in the
 * smallest chunks */
void *ingest_pf_keep_alloc(pf_hold *h, size_t n)
{
    return chunks_alloc(h->d, &h->keep, PF_CHUNK_MIN, n);
}

static void arena_free(void *ad, void *p)
{
    (void)ad, (void)p; /* all at once, in hold_unref */
}

ProtobufCAllocator ingest_pf_allocator(pf_hold *h)
{
    ProtobufCAllocator al = {ingest_pf_arena_alloc, arena_free, h};
    return al;
}

/* the chunks *list to the pool (or free) */
static void chunks_release(pf_reader *d, pf_chunk **list)
{
    while (*list) {
        pf_chunk *c = *list;
        *list = c->next;
        unsigned cls;
        ingest_pf_chunk_class(c->cap, &cls);
        if (cls < PF_POOL_CLASSES && d->pool_bytes + c->cap <= PF_POOL_BYTES) {
            c->next = d->pool[cls];
            d->pool[cls] = c;
            d->pool_bytes += c->cap;
        } else {
            free(c);
        }
    }
}

static void arena_release(pf_hold *h) { chunks_release(h->d, &h->chunks); }

/* A hold whose last event is handed on: its chunks to the pool, itself
 * to the reader's free holds, not freed and allocated again a packet; at
 * most one a held event, so the list needs no bound. */
static void __attribute__((noinline)) hold_free(pf_hold *h)
{
    arena_release(h);
    chunks_release(h->d, &h->keep);
    pf_reader *d = h->d;
    h->next = d->holds;
    d->holds = h;
}

/* inline, its call once a packet (gcc made it a call an event).  h is
 * never NULL: every held item has its packet's hold, and it is not tested
 * where gcc could not tell. */
static inline void hold_unref(pf_hold *h)
{
    if (--h->refs == 0)
        hold_free(h);
}

/* One reader of the hold's arena fewer: at the last, its chunks go back
 * to the pool while the hold stays for its items' packet and offset.
 * Why: a packet's arena was kept until its last event was handed on,
 * PF_HEAP_MAX events later, and then read back cold (the emit of a
 * held event, most of it cache misses, showed in the process's profile);
 * now the commonest events hold all they need (pf_item's forms), most
 * packets' arenas are free once decoded, and the next packet decodes
 * into the same, cache-warm chunks. */
static inline void arena_unref(pf_hold *h)
{
    if (--h->arena_refs == 0)
        arena_release(h);
}

/* A run's events are in segments of PF_SEG_MIN events, doubling up to
 * PF_SEG_MAX, chained: appending never copies the run (as one array it
 * was copied whenever it doubled), and segments of every size are reused
 * (up to PF_SEG_POOL of each) rather than freed: each run begins with
 * one of each size below PF_SEG_MAX, and keeping only the largest left
 * aligned_alloc and free to make and drop the small ones for every run. */
#define PF_SEG_MIN 4 /* small: a run per event is possible */
#define PF_SEG_MAX 256
#define PF_SEG_POOL 16
_Static_assert(PF_SEG_MIN << (PF_SEG_CLASSES - 1) == PF_SEG_MAX, "a pool for each segment size");

/* the pool of segments of cap events (a power of two) */
static unsigned seg_class(uint32_t cap) { return (unsigned)__builtin_ctz(cap / PF_SEG_MIN); }

static pf_seg *seg_new(pf_reader *d, uint32_t cap)
{
    unsigned c = seg_class(cap);
    pf_seg *s = d->segs[c];
    if (s) {
        d->segs[c] = s->next;
        d->nsegs[c]--;
    } else if (!(s = aligned_alloc(_Alignof(pf_seg), sizeof *s + cap * sizeof s->q[0]))) {
        return NULL;
    }
    s->next = NULL;
    s->cap = cap;
    return s;
}

static void seg_free(pf_reader *d, pf_seg *s)
{
    unsigned c = seg_class(s->cap);
    if (d->nsegs[c] < PF_SEG_POOL) {
        s->next = d->segs[c];
        d->segs[c] = s;
        d->nsegs[c]++;
    } else {
        free(s);
    }
}

static void run_free(pf_reader *d, pf_span *r)
{
    if (r->cpu < d->ncpus && d->cpus[r->cpu].cur == r)
        d->cpus[r->cpu].cur = NULL;
    while (r->first) {
        pf_seg *s = r->first;
        r->first = s->next;
        seg_free(d, s);
    }
    free(r);
}

/* The task a held switch leaves (its prev), or 0: not a switch.  Only
 * switches away from a task (pid > 0) are kept for blocked_reason, which
 * names a task.  Always inlined: with the item's forms gcc made it a
 * call, twice an event. */
static inline __attribute__((always_inline)) int32_t switch_prev(const pf_item *it)
{
    if (it->form == PF_CSWITCH || it->form == PF_SWITCH_C)
        return (int32_t)it->tid;
    if (it->form == PF_SWITCH)
        return it->sw.prev_pid;
    if (pf_item_full(it->form) && it->ev->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH)
        return it->ev->sched_switch->prev_pid;
    return 0;
}

static int pop_emit(pf_reader *d)
{
    pf_span *r = run_of(ingest_merge_top(&d->merge));
    pf_item it = r->first->q[r->head];
    if (++r->head == r->first->cap && r->len > 1) { /* the rest are in the next segment */
        pf_seg *s = r->first;
        r->first = s->next;
        r->head = 0;
        seg_free(d, s);
    }
    /* the run's next items, written up to PF_HEAP_MAX events ago: fetched
     * now, as a run often stays first for a few events (their loads here
     * and in the heap's compares were most of the merge's time, perf) */
    if (r->len > 1) {
        const char *nx = (const char *)&r->first->q[r->head];
        for (int k = 0; k < 4; k++)
            __builtin_prefetch(nx + 64 * k);
    }
    if (--r->len == 0) {
        run_free(d, r);
        ingest_merge_top_done(&d->merge);
    } else {
        ingest_merge_top_next(&d->merge, run_head(r)->ts, run_head(r)->seq);
    }
    it.ts = ingest_merge_out(&d->merge, it.ts); /* an event earlier than one handed on: at that one's time */
    /* the next event's messages, decoded up to PF_HEAP_MAX events ago, are
     * out of the cache: fetched while this one is mapped (an event's
     * FtraceEvent, event message and strings are one stretch of its
     * packet's arena, or of its hold's keep); most items hold all they
     * need, a kept print's or message's bytes are in the keep */
    if (d->merge.nruns) {
        /* ev and kept.p share their place (the union's first), the kept
         * forms are the last: two tests, not four */
        const pf_item *nh = run_head(run_of(ingest_merge_top(&d->merge)));
        if (nh->form == PF_FULL || nh->form >= PF_KEPT_PRINT) {
            const char *nx = (const char *)nh->ev;
            for (int k = 0; k < 4; k++)
                __builtin_prefetch(nx + 64 * k);
        }
    }
    /* a sched_blocked_reason named its wait (perfetto_blocked.c) */
    int32_t prev = d->blk_on ? switch_prev(&it) : 0;
    uint64_t caller;
    bool blocked = prev > 0 && ingest_pf_blk_take(d->blk, prev, it.seq, &caller);
    int rc = ingest_pf_emit(d, &it, blocked ? &caller : NULL);
    if (pf_item_in_arena(it.form))
        arena_unref(it.hold);
    hold_unref(it.hold);
    return rc;
}

/* a new run of the item's CPU, in the heap; NULL: out of memory */
static pf_span *run_new(pf_reader *d, uint32_t cpu)
{
    if (ingest_merge_run_room(&d->merge) < 0)
        return NULL;
    pf_span *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->cpu = cpu;
    return r;
}

/* The item into its CPU's run. */
static int push_item(pf_reader *d, pf_item *it)
{
    uint64_t off = it->hold->offset; /* for a message after the item's unref */
    if (ingest_merge_full(&d->merge) && pop_emit(d) < 0) {
        hold_unref(it->hold);
        return -1;
    }
    it->seq = ingest_merge_arrive(&d->merge);
    pf_cpu *c = &d->cpus[it->cpu];
    pf_span *r = c->cur;
    bool fresh = !r || !ingest_merge_run_takes(&r->run, it->ts);
    if (fresh && !(r = run_new(d, it->cpu))) {
        hold_unref(it->hold);
        return ingest_pf_fail(d, off, "out of memory");
    }
    if (!r->last || r->tail == r->last->cap) {
        uint32_t cap = !r->last ? PF_SEG_MIN : r->last->cap < PF_SEG_MAX ? 2 * r->last->cap : PF_SEG_MAX;
        pf_seg *s = seg_new(d, cap);
        if (!s) {
            if (fresh)
                free(r);
            hold_unref(it->hold);
            return ingest_pf_fail(d, off, "out of memory");
        }
        if (r->last)
            r->last->next = s;
        else
            r->first = s;
        r->last = s;
        r->tail = 0;
    }
    r->last->q[r->tail++] = *it;
    ingest_merge_run_appended(&r->run, it->ts);
    /* where the run's next items go, last written up to PF_HEAP_MAX
     * events ago: fetched for writing ahead of them */
    if (r->tail + 3 < r->last->cap)
        __builtin_prefetch(&r->last->q[r->tail + 3], 1);
    r->len++;
    if (fresh) { /* appending leaves a run's first event, and its place, as they were */
        r->run.first = (ingest_merge_key){it->ts, it->seq};
        c->cur = r;
        ingest_merge_run_add(&d->merge, &r->run);
    }
    return 0;
}

/* sched_blocked_reason (Android's tracepoint, at the wakeup of a task in
 * D state): where the task blocked.  It is the reason of the wait its last
 * switch began (paper/000 1.b: the wait that ends the node), so it goes on
 * that switch as blocked_caller= while the switch still waits in the heap
 * (one handed on already keeps reason=io only).  The value is the caller
 * field as the file has it: a kernel address, or, from a recorder that
 * symbolizes, an id into kernel_symbols interned data, which this reader
 * does not read (the Android 13 trace of ../shared has ids 1..n and no
 * table).  The held switches are found by task (perfetto_blocked.c).
 *
 * They are kept there only from a trace's first sched_blocked_reason on:
 * many traces have none (the Android 11 trace of ../shared), and adding
 * and taking each switch would be work for nothing.  At the first, the
 * switches held then go in at once, in the order they came (seq), as one
 * by one: the same lists, so the same switch is marked. */
typedef struct pf_held_sw {
    uint64_t seq;
    int32_t prev;
} pf_held_sw;

static int held_sw_cmp(const void *a, const void *b)
{
    uint64_t x = ((const pf_held_sw *)a)->seq, y = ((const pf_held_sw *)b)->seq;
    return x < y ? -1 : x > y;
}

/* the switches held now into d->blk, and every later one as it comes;
 * 0, or -1 out of memory */
static int __attribute__((noinline, cold)) blk_start(pf_reader *d)
{
    d->blk_on = true;
    pf_held_sw *v = malloc((d->merge.held ? d->merge.held : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < d->merge.nruns; i++) {
        pf_span *r = run_of(d->merge.heap[i]);
        size_t k = r->head;
        for (pf_seg *s = r->first; s; s = s->next, k = 0)
            for (; k < (s == r->last ? r->tail : s->cap); k++) {
                int32_t prev = switch_prev(&s->q[k]);
                if (prev > 0)
                    v[n++] = (pf_held_sw){s->q[k].seq, prev};
            }
    }
    qsort(v, n, sizeof *v, held_sw_cmp);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = ingest_pf_blk_held(&d->blk, v[i].prev, v[i].seq);
    free(v);
    return rc;
}

static int blocked_reason(pf_reader *d, const ArgusqPf__SchedBlockedReasonFtraceEvent *b)
{
    if (!d->blk_on && blk_start(d) < 0)
        return -1;
    ingest_pf_blk_reason(d->blk, b->pid, b->caller);
    return 0;
}

/* ---- a bundle: one CPU's events, full and compact, in time order ---- */

static pf_cpu *cpu_state(pf_reader *d, uint32_t cpu)
{
    if (cpu >= d->ncpus) {
        size_t n = cpu + 1;
        pf_cpu *c = realloc(d->cpus, n * sizeof *c);
        if (!c)
            return NULL;
        for (size_t i = d->ncpus; i < n; i++) {
            memset(&c[i], 0, sizeof c[i]);
            c[i].pid = -1;
        }
        d->cpus = c;
        d->ncpus = n;
    }
    return &d->cpus[cpu];
}

static uint8_t flags_ctx(uint32_t f)
{
    if (f & (0x08 | 0x40)) /* TRACE_FLAG_HARDIRQ, NMI */
        return DB_CTX_HARDIRQ;
    return (f & 0x10) ? DB_CTX_SOFTIRQ : DB_CTX_THREAD;
}

/* the task now running on a CPU: a switch's next, else the task of an
 * event the CPU recorded (the compact form's prev and waker, paper/000
 * 1.b needs them to be the task the full form names) */
static void cpu_set(pf_cpu *c, int64_t pid, bool have_prio, int32_t prio, const char *comm)
{
    c->pid = pid;
    c->have_prio = have_prio;
    c->prio = prio;
    c->comm_src = comm;
    c->comm_pending = true;
    c->cid_known = false;
}

/* The CPU's comm, copied from the bundle's memory when it is read (a
 * compact switch's prev) or the bundle ends, not at each cpu_set: full
 * switches come many to a bundle. */
static const char *cpu_comm(pf_cpu *c)
{
    if (c->comm_pending) {
        pf_copy_comm(c->comm, c->comm_src);
        c->comm_pending = false;
    }
    return c->comm;
}

/* The id of the CPU's comm (cpu_comm's: cut to 23 bytes, so an id only
 * when it is not cut), or PF_COMM_NONE; known ahead when the comm given
 * with cpu_set was interned already (a compact switch's next_comm). */
static uint32_t cpu_cid(pf_reader *d, pf_cpu *c)
{
    if (!c->cid_known) {
        const char *s = cpu_comm(c);
        c->cid = ingest_pf_comm_id16(&d->comms, s, strlen(s)); /* comm[24]: 16 bytes readable */
        c->cid_known = true;
    }
    return c->cid;
}

/* The ids of a compact_sched's intern table's comms into d->cs_cid (a
 * bundle's few, interned once each, not at each of the events that name
 * them).  0, or -1 out of memory. */
static int compact_cids(pf_reader *d, const ArgusqPf__CompactSched *cs)
{
    if (cs->n_intern_table > d->cs_cid_cap) {
        size_t cap = cs->n_intern_table < 64 ? 64 : cs->n_intern_table;
        uint32_t *v = realloc(d->cs_cid, cap * sizeof *v);
        if (!v)
            return -1;
        d->cs_cid = v;
        d->cs_cid_cap = cap;
    }
    for (size_t i = 0; i < cs->n_intern_table; i++) {
        const char *s = cs->intern_table[i];
        d->cs_cid[i] = ingest_pf_comm_id16(&d->comms, s, ingest_pf_arena_strlen(s));
    }
    return 0;
}

static int do_bundle(pf_reader *d, pf_hold *h, const ArgusqPf__FtraceEventBundle *b, uint64_t off)
{
    uint32_t cpu = b->has_cpu ? b->cpu : 0;
    if (cpu >= PF_CPU_MAX)
        return ingest_pf_fail(d, off, "packet %llu: cpu %u (at most %d)", (unsigned long long)d->npackets, cpu, PF_CPU_MAX - 1);
    pf_cpu *c = cpu_state(d, cpu);
    if (!c)
        return ingest_pf_fail(d, off, "out of memory");
    if (b->has_lost_events && b->lost_events) { /* the ring buffer overflowed before this bundle */
        d->fr.st->skipped++;
        if (d->fr.sink->skip)
            d->fr.sink->skip(d->fr.sink->ctx);
    }
    const ArgusqPf__CompactSched *cs = b->compact_sched;
    size_t nf = b->n_event, ns = 0, nw = 0;
    if (cs) {
        ns = cs->n_switch_timestamp;
        nw = cs->n_waking_timestamp;
        if (cs->n_switch_prev_state != ns || cs->n_switch_next_pid != ns || cs->n_switch_next_prio != ns ||
            cs->n_switch_next_comm_index != ns || cs->n_waking_pid != nw || cs->n_waking_target_cpu != nw ||
            cs->n_waking_prio != nw || cs->n_waking_comm_index != nw ||
            (cs->n_waking_common_flags != 0 && cs->n_waking_common_flags != nw))
            return ingest_pf_fail(d, off, "packet %llu: compact_sched: its arrays differ in length",
                           (unsigned long long)d->npackets);
        for (size_t j = 0; j < ns; j++)
            if (cs->switch_next_comm_index[j] >= cs->n_intern_table)
                return ingest_pf_fail(d, off, "packet %llu: compact_sched: comm index %u past the intern table",
                               (unsigned long long)d->npackets, cs->switch_next_comm_index[j]);
        for (size_t j = 0; j < nw; j++)
            if (cs->waking_comm_index[j] >= cs->n_intern_table)
                return ingest_pf_fail(d, off, "packet %llu: compact_sched: comm index %u past the intern table",
                               (unsigned long long)d->npackets, cs->waking_comm_index[j]);
        if ((ns || nw) && compact_cids(d, cs) < 0)
            return ingest_pf_fail(d, off, "out of memory");
    }
    size_t i = 0, j = 0, k = 0;
    uint64_t sts = 0, wts = 0; /* the compact arrays' running sums */
    uint64_t snext = ns ? cs->switch_timestamp[0] : 0, wnext = nw ? cs->waking_timestamp[0] : 0;
    while (i < nf || j < ns || k < nw) {
        uint64_t fts = i < nf ? b->event[i]->timestamp : UINT64_MAX;
        uint64_t s = j < ns ? sts + snext : UINT64_MAX, w = k < nw ? wts + wnext : UINT64_MAX;
        pf_item it;
        memset(&it, 0, sizeof it);
        it.hold = h;
        it.cpu = (uint16_t)cpu;
        if (i < nf && fts <= s && fts <= w) {
            const ArgusqPf__FtraceEvent *ev = b->event[i++];
            it.form = PF_FULL;
            it.ev = ev;
            it.ts = fts;
            it.tid = ev->pid;
            it.ctx = ev->has_common_flags ? flags_ctx(ev->common_flags) : DB_CTX_UNKNOWN;
            if (ev->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON &&
                ev->sched_blocked_reason->pid > 0 && blocked_reason(d, ev->sched_blocked_reason) < 0)
                return ingest_pf_fail(d, off, "out of memory");
            if (ev->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH) {
                const ArgusqPf__SchedSwitchFtraceEvent *sw = ev->sched_switch;
                cpu_set(c, sw->next_pid, sw->has_next_prio, sw->next_prio, sw->next_comm);
            } else if (ev->has_pid && c->pid != (int64_t)ev->pid) {
                cpu_set(c, ev->pid, false, 0, NULL);
            }
        } else if (j < ns && s <= w) {
            sts = s;
            it.ts = s;
            it.ctx = DB_CTX_UNKNOWN;
            /* prev: the task the previous switch on this CPU put on it */
            it.tid = c->pid >= 0 ? (uint32_t)c->pid : 0;
            uint32_t ncid = d->cs_cid[cs->switch_next_comm_index[j]], pcid = cpu_cid(d, c);
            const char *next_comm = cs->intern_table[cs->switch_next_comm_index[j]];
            if (ncid != PF_COMM_NONE && pcid != PF_COMM_NONE) { /* self-contained */
                pf_item_switch(&it, PF_SWITCH_C, cs->switch_prev_state[j], c->pid >= 0,
                               c->have_prio ? c->prio : INT32_MIN, pcid, ncid, cs->switch_next_pid[j],
                               cs->switch_next_prio[j]);
            } else {
                it.form = PF_CSWITCH;
                it.prev_state = cs->switch_prev_state[j];
                it.pid = cs->switch_next_pid[j];
                it.prio = cs->switch_next_prio[j];
                it.comm = next_comm;
                pf_prev *pv = ingest_pf_alloc(h, sizeof *pv);
                if (!pv)
                    return ingest_pf_fail(d, off, "out of memory");
                memcpy(pv->comm, cpu_comm(c), sizeof pv->comm);
                pv->prio = c->have_prio ? c->prio : INT32_MIN;
                pv->known = c->pid >= 0;
                it.prev = pv;
            }
            cpu_set(c, cs->switch_next_pid[j], true, cs->switch_next_prio[j], next_comm);
            c->cid = ncid; /* next_comm's, as cpu_cid would find it: an id only when not cut */
            c->cid_known = true;
            j++;
            if (j < ns)
                snext = cs->switch_timestamp[j];
        } else {
            wts = w;
            it.ts = w;
            it.ctx = cs->n_waking_common_flags ? flags_ctx(cs->waking_common_flags[k]) : DB_CTX_UNKNOWN;
            uint32_t cid = d->cs_cid[cs->waking_comm_index[k]];
            if (cid != PF_COMM_NONE) { /* self-contained */
                pf_item_wake(&it, PF_WK_COMPACT, cid, cs->waking_pid[k], cs->waking_prio[k],
                             cs->waking_target_cpu[k]);
            } else {
                it.form = PF_CWAKING;
                it.pid = cs->waking_pid[k];
                it.prio = cs->waking_prio[k];
                it.target_cpu = cs->waking_target_cpu[k];
                it.comm = cs->intern_table[cs->waking_comm_index[k]];
            }
            /* the waker: the task running on this CPU */
            it.tid = c->pid >= 0 ? (uint32_t)c->pid : 0;
            k++;
            if (k < nw)
                wnext = cs->waking_timestamp[k];
        }
        /* names from the fields, before the events that need them */
        if (ingest_pf_names(d, &it, true) < 0)
            return -1;
        if (it.form == PF_FULL) { /* not one of the items' own forms: a copy of its messages, where it can */
            const ArgusqPf__FtraceEvent *kept = ingest_pf_keep_event(h, it.ev);
            if (kept) {
                it.ev = kept;
                it.form = PF_KEPT_FULL;
            }
        }
        h->refs++;
        if (pf_item_in_arena(it.form))
            h->arena_refs++;
        if (push_item(d, &it) < 0)
            return -1;
        int32_t prev = d->blk_on ? switch_prev(&it) : 0;
        if (prev > 0 && ingest_pf_blk_held(&d->blk, prev, it.seq) < 0)
            return ingest_pf_fail(d, off, "out of memory");
    }
    cpu_comm(c); /* the bundle's memory goes with its packet's hold */
    return 0;
}

/* ---- the second pass: packets ---- */

static int events_packet(pf_reader *d, const unsigned char *p, size_t len, uint64_t off, int depth)
{
    if (len == 0) /* an empty packet or Trace: nothing (and p may be NULL) */
        return 0;
    /* a free one, else malloc, not calloc: glibc's calloc bypasses its
     * thread cache, and a packet takes a hold (docs/PERFORMANCE.md) */
    pf_hold *h = d->holds;
    if (h)
        d->holds = h->next;
    else if (!(h = malloc(sizeof *h)))
        return ingest_pf_fail(d, off, "out of memory");
    *h = (pf_hold){0};
    h->d = d;
    h->hint = 4 * len + 1024;
    h->refs = 1; /* ours, until the end of this function */
    h->arena_refs = 1; /* the same */
    h->packet = d->npackets;
    h->offset = off;
    /* by hand where it can (perfetto_fast.c), else protobuf-c */
    pf_fast f;
    int fast = ingest_pf_fast_packet(d, h, p, len, &f);
    if (fast < 0) {
        hold_unref(h);
        return ingest_pf_fail(d, off, "out of memory");
    }
    if (fast == 0) {
        arena_release(h);
        ProtobufCAllocator al = ingest_pf_allocator(h);
        ArgusqPf__TracePacket *pkt = argusq_pf__trace_packet__unpack(&al, len, p);
        if (!pkt) {
            hold_unref(h);
            return ingest_pf_fail(d, off, "packet %llu: corrupt protobuf (bad varint, wire type or a length past the end)",
                                  (unsigned long long)d->npackets);
        }
        f.bundle = pkt->ftrace_events;
        f.has_compressed = pkt->has_compressed_packets;
        f.compressed = pkt->compressed_packets;
    }
    int rc = 0;
    if (f.bundle)
        rc = do_bundle(d, h, f.bundle, off);
    if (rc == 0 && f.has_compressed && depth == 0)
        rc = ingest_pf_compressed(d, &f.compressed, off, depth, events_packet);
    arena_unref(h);
    hold_unref(h);
    return rc;
}

/* The outer Trace: field 1 packets, read one at a time, counted on from
 * d->npackets.  names: the first pass.  0 the end; -1 error. */
static int walk(pf_reader *d, bool names)
{
    for (;;) {
        uint64_t off = d->in_off + d->in_pos, tag, len;
        int got = ingest_pf_in_varint(d, &tag);
        if (got <= 0)
            return got;
        if ((tag >> 3) == 0 || ((tag & 7) != 2 && (tag & 7) != 0))
            return ingest_pf_fail(d, off, "not a Perfetto trace packet (field %llu, wire type %d)",
                           (unsigned long long)(tag >> 3), (int)(tag & 7));
        /* the length (or a varint field's value: none of Trace's is known) */
        got = ingest_pf_in_varint(d, &len);
        if (got < 0)
            return -1;
        if (got == 0)
            return ingest_pf_fail(d, off, "the file ends after a field tag (truncated)");
        if ((tag & 7) == 0)
            continue;
        if ((tag >> 3) != 1) {
            if (ingest_pf_in_bytes(d, NULL, len, off) < 0)
                return -1;
            continue;
        }
        d->npackets++;
        d->fr.st->lines = d->npackets;
        if (len > PF_PACKET_MAX)
            return ingest_pf_fail(d, off, "packet %llu: %llu bytes (more than %zu MiB): corrupt",
                           (unsigned long long)d->npackets, (unsigned long long)len, PF_PACKET_MAX >> 20);
        /* where the read buffer holds the packet whole, it is read there
         * (the copy into d->pkt showed in the reading thread's profile);
         * else copied, the buffer growing with the bytes that came, not
         * with what a length says: a corrupt length costs no more than
         * the file */
        const unsigned char *pk = d->pkt;
        int view = ingest_pf_in_view(d, len, &pk);
        if (view < 0)
            return -1;
        for (uint64_t got = 0; !view && got < len;) {
            if (got == d->pkt_cap) {
                size_t c = d->pkt_cap ? d->pkt_cap * 2 : 65536;
                unsigned char *nb = realloc(d->pkt, c);
                if (!nb)
                    return ingest_pf_fail(d, off, "out of memory");
                d->pkt = nb;
                d->pkt_cap = c;
            }
            uint64_t n = len - got < d->pkt_cap - got ? len - got : d->pkt_cap - got;
            if (ingest_pf_in_bytes(d, d->pkt + got, n, off) < 0) {
                if (strstr(d->fr.err, "runs past the end"))
                    ingest_pf_fail(d, off, "packet %llu: a length of %llu bytes runs past the end of the file "
                                   "(truncated)", (unsigned long long)d->npackets, (unsigned long long)len);
                return -1;
            }
            got += n;
            pk = d->pkt;
        }
        int rc = names ? ingest_pf_names_packet(d, pk, (size_t)len, off, 0) : events_packet(d, pk, (size_t)len, off, 0);
        if (rc < 0)
            return -1;
        if (!names && d->fr.sink->progress)
            d->fr.sink->progress(d->fr.sink->ctx, d->in_off + d->in_pos, d->size);
    }
}

static int rewind_input(pf_reader *d)
{
    d->in_len = d->in_pos = 0;
    d->in_off = 0;
    d->eof = false;
    d->mem_pos = 0;
    d->advised = 0;
    if (d->gz && gzrewind(d->gz) != 0)
        return ingest_pf_fail(d, 0, "cannot read the file again");
    return 0;
}

static int pf_run(pf_reader *d, const ingest_sink *sink, ingest_stats *st, char *err, size_t errlen)
{
    if (ingest_ft_reader_init(&d->fr, d->path, sink, st, err, errlen) < 0)
        return -1;
    d->fr.unit = "packet";
    ingest_merge_init(&d->merge, PF_HEAP_MAX, &st->late);
    d->idle_hash = ingest_ft_comm_hash("<idle>", 6);
    snprintf(st->meta.recorder, sizeof st->meta.recorder, "perfetto");
    d->in = malloc(PF_IN_SIZE);
    int rc = -1;
    if (!d->in || ingest_pf_fast_init(d) < 0 || ingest_pf_other_init(d) < 0) {
        ingest_pf_fail(d, 0, "out of memory");
        goto out;
    }
    /* the first pass: the names */
    if (walk(d, true) < 0)
        goto out;
    if (d->npackets == 0) {
        ingest_pf_fail(d, 0, "no trace packet: an empty Perfetto trace");
        goto out;
    }
    /* no system_info: ingest --arch says the machine, as for text */
    if (!st->meta.arch[0] && d->opts && d->opts->arch)
        d->fr.arch = base_arch_find(d->opts->arch);
    ingest_pf_names_done(d);
    d->npackets = 0;
    if (rewind_input(d) < 0 || walk(d, false) < 0)
        goto out;
    while (d->merge.held)
        if (pop_emit(d) < 0)
            goto out;
    st->meta.cpus = (uint32_t)d->ncpus;
    if (sink->end)
        sink->end(sink->ctx);
    rc = 0;
out:
    for (size_t i = 0; i < d->merge.nruns; i++) {
        pf_span *r = run_of(d->merge.heap[i]);
        size_t k = r->head;
        for (pf_seg *s = r->first; s; s = s->next, k = 0)
            for (; k < (s == r->last ? r->tail : s->cap); k++)
                hold_unref(s->q[k].hold);
        run_free(d, r);
    }
    ingest_merge_free(&d->merge);
    while (d->holds) {
        pf_hold *h = d->holds;
        d->holds = h->next;
        free(h);
    }
    for (unsigned c = 0; c < PF_SEG_CLASSES; c++)
        while (d->segs[c]) {
            pf_seg *s = d->segs[c];
            d->segs[c] = s->next;
            free(s);
        }
    ingest_pf_blk_free(d->blk);
    ingest_pf_comms_free(&d->comms);
    free(d->cs_cid);
    for (unsigned i = 0; i < PF_POOL_CLASSES; i++)
        while (d->pool[i]) {
            pf_chunk *k = d->pool[i];
            d->pool[i] = k->next;
            free(k);
        }
    free(d->in);
    free(d->pkt);
    free(d->cpus);
    free(d->tgids);
    free(d->fast_ev);
    ingest_pf_fast_free(d);
    ingest_pf_other_free(d);
    ingest_ft_reader_free(&d->fr);
    return rc;
}

int ingest_perfetto_read(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                         char *err, size_t errlen)
{
    pf_reader d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.opts = opts;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        ingest_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (S_ISREG(sb.st_mode)) {
        d.size = sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
        d.fd = fd; /* read ahead of gzread (perfetto_wire.c in_fill) */
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    } else {
        d.fd = -1;
    }
    d.gz = gzdopen(fd, "rb"); /* gzclose closes fd */
    if (!d.gz) {
        ingest_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    gzbuffer(d.gz, 1u << 17);
    int rc = pf_run(&d, sink, st, err, errlen);
    gzclose(d.gz);
    return rc;
}

int ingest_perfetto_read_mem(const char *path, const void *data, size_t size, const ingest_sink *sink,
                             ingest_stats *st, char *err, size_t errlen)
{
    pf_reader d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.mem = data;
    d.mem_len = size;
    d.fd = -1;
    d.size = size;
    return pf_run(&d, sink, st, err, errlen);
}
