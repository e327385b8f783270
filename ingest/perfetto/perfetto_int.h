/* ingest/perfetto/perfetto_int.h -- the Perfetto reader's entry points
 * and its state, shared by perfetto.c (the stream, the merge of the
 * CPUs), perfetto_map.c (an event's canonical pairs of the ftrace mapping,
 * ingest/ftrace/ftrace_map_int.h) and the other perfetto_*.c.  Not
 * public. */
#ifndef ARGUSQ_INGEST_PERFETTO_INT_H
#define ARGUSQ_INGEST_PERFETTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ingest/ftrace/ftrace_map_int.h"
#include "perfetto.pb-c.h" /* build/gen: protoc-c of perfetto.proto */

/* ---- entry points (perfetto.c) ---- */

/* Do the first len bytes of a file look like a Perfetto trace (a Trace
 * message: field 1 packets whose own fields parse), plain or gzip'd? */
bool ingest_perfetto_sniff(const char *buf, size_t len);

/* Reads the Perfetto trace at path (gzip'd or not) into sink.  Errors:
 * "PATH: byte N: message" (N: the offset of the packet, in the
 * uncompressed stream).  opts->arch: the machine, when the file has no
 * system_info.  Returns 0 or -1. */
int ingest_perfetto_read(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                         char *err, size_t errlen);
/* The same over size bytes in memory (named path in messages): the fuzz
 * harness and the unit tests. */
int ingest_perfetto_read_mem(const char *path, const void *data, size_t size, const ingest_sink *sink,
                             ingest_stats *st, char *err, size_t errlen);

/* ---- the reader's state ---- */

struct pf_reader;
struct pf_blk;

/* A block of a packet's arena (perfetto.c). */
typedef struct pf_chunk {
    struct pf_chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} pf_chunk;

/* An unpacked packet (its memory: the chunks of its arena) and the events
 * still waiting in the heap that point into it: freed when the last one
 * is handed on. */
typedef struct pf_hold {
    pf_chunk *chunks;
    struct pf_reader *d; /* whose pool takes the chunks back */
    size_t hint;         /* the first chunk's size */
    size_t refs;
    /* the held items that read the arena (pf_item_in_arena), and one for
     * the packet's decoding: at 0 its chunks go back to the pool at once,
     * the hold staying for the others' packet and offset (perfetto.c) */
    size_t arena_refs;
    /* the few bytes held events keep beyond their items (a long print's
     * text, an other event's message: PF_KEPT_*), copied out of the
     * arena so that it can go; freed with the hold */
    pf_chunk *keep;
    uint64_t packet, offset; /* the packet's number and offset, for messages */
    struct pf_hold *next;    /* in the reader's free holds (perfetto.c) */
} pf_hold;

/* n bytes of a packet's arena (perfetto.c), and the allocator that gives
 * them to protobuf-c; NULL: out of memory. */
void *ingest_pf_arena_alloc(void *hold, size_t n);
/* n bytes of a hold's keep (NULL: out of memory). */
void *ingest_pf_keep_alloc(pf_hold *h, size_t n);
ProtobufCAllocator ingest_pf_allocator(pf_hold *h);
/* The same, the common case inline (the hand decoder allocates a few
 * times an event). */
static inline void *ingest_pf_alloc(pf_hold *h, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    pf_chunk *c = h->chunks;
    if (c && c->cap - c->used >= n) {
        void *p = c->data + c->used;
        c->used += n;
        return p;
    }
    return ingest_pf_arena_alloc(h, n);
}

/* strlen of a string the arena holds (the hand decoder's, protobuf-c's:
 * each a block of its own), inline: its first 16 bytes as one compare,
 * the first NUL's place the length; a longer one measured on from there.
 * The 16 bytes are readable: a block starts 16-aligned in its chunk and
 * is a multiple of 16 bytes (ingest_pf_alloc), and what follows the NUL
 * does not matter.  Only for arena strings: not for a literal.  A comm
 * is at most 15 bytes, so each event's comms (ingest_pf_names) are
 * measured without a call of strlen. */
static inline size_t ingest_pf_arena_strlen(const char *s)
{
#ifdef __SSE2__
    const __m128i w = _mm_loadu_si128((const __m128i *)(const void *)s);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_setzero_si128()));
    return m ? (size_t)__builtin_ctz(m) : 16 + strlen(s + 16);
#else
    return strlen(s);
#endif
}

/* ---- the comms of held events, interned (perfetto_comms.c) ----
 *
 * A held event names its comms by a 32-bit id here, not by a pointer
 * into its packet's arena, so the arena need not stay until the event is
 * handed on (see pf_item).  Reader-wide, bounded: a comm of more than 15
 * bytes, or one more when the table is full, has no id (the event is then
 * held in its arena form).  Id 0 is "". */
#define PF_COMM_LONGEST 15
#define PF_COMMS_MAX 4096           /* ids */
#define PF_COMMS_SLOTS 8192         /* the hash table's slots: a power of two, twice the ids */
#define PF_COMM_NONE UINT32_MAX     /* no id */
typedef struct pf_comms {
    uint16_t *slot;      /* PF_COMMS_SLOTS ids, 0: free (NULL: none made yet) */
    char (*s)[16];       /* by id: the comm, NUL-padded */
    uint8_t *len;        /* by id: its length */
    uint32_t n;          /* ids given, "" the first */
} pf_comms;

/* The id of the comm whose key is w (its n bytes, zero-padded to 16),
 * a new one if it has none yet; PF_COMM_NONE: the table full, or out of
 * memory.  at: the free slot the lookup ended at. */
uint32_t ingest_pf_comm_add(pf_comms *t, const uint64_t w[2], size_t n, size_t at);
static inline uint64_t pf_comm_hash(const uint64_t w[2])
{
    return (w[0] ^ (w[1] * 0xc2b2ae3d27d4eb4full)) * 0x9e3779b97f4a7c15ull;
}
static inline __attribute__((always_inline)) uint32_t pf_comm_find(pf_comms *t, const uint64_t w[2], size_t n)
{
    if (!t->slot)
        return ingest_pf_comm_add(t, w, n, 0);
    size_t i = (size_t)(pf_comm_hash(w) >> 40) & (PF_COMMS_SLOTS - 1);
    for (;;) {
        uint32_t id = t->slot[i];
        if (!id)
            return ingest_pf_comm_add(t, w, n, i);
        uint64_t e[2];
        memcpy(e, t->s[id], 16);
        if (e[0] == w[0] && e[1] == w[1])
            return id;
        i = (i + 1) & (PF_COMMS_SLOTS - 1);
    }
}
/* The id of comm s[0, n) (its bytes up to a NUL, as strlen would measure
 * them: n), a new one if it has none yet; PF_COMM_NONE: longer than
 * PF_COMM_LONGEST, or the table full.  Any string. */
static inline uint32_t ingest_pf_comm_id(pf_comms *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (n > PF_COMM_LONGEST)
        return PF_COMM_NONE;
    union {
        uint64_t w[2];
        char c[16];
    } k = {{0, 0}};
    base_copy_short(k.c, s, n);
    return pf_comm_find(t, k.w, n);
}
/* The same, of a string whose first 16 bytes can be read (an arena's,
 * as ingest_pf_arena_strlen reads it, or a pf_cpu's comm): its key by
 * two loads and masks, not a copy with its branches and call. */
static inline __attribute__((always_inline)) uint32_t ingest_pf_comm_id16(pf_comms *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (n > PF_COMM_LONGEST)
        return PF_COMM_NONE;
    uint64_t w[2];
    memcpy(w, s, 16);
    w[0] &= n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
    w[1] &= n > 8 ? (1ull << (8 * (n - 8))) - 1 : 0;
    return pf_comm_find(t, w, n);
}
/* id's comm (NUL-terminated) and its length */
static inline const char *ingest_pf_comm_str(const pf_comms *t, uint32_t id) { return id ? t->s[id] : ""; }
static inline size_t ingest_pf_comm_len(const pf_comms *t, uint32_t id) { return id ? t->len[id] : 0; }
void ingest_pf_comms_free(pf_comms *t);

/* A held event's form.  The arena forms read their packet's arena when
 * handed on: PF_FULL (any FtraceEvent, it->ev), PF_CSWITCH and PF_CWAKING
 * (compact_sched's, comms by pointer, a switch's prev in the arena).  The
 * others hold all they need (their comms interned): a full sched_switch
 * (PF_SWITCH), a compact one (PF_SWITCH_C), a wakeup of either form
 * (PF_WAKE, it->wk.kind says which), cpu_idle (PF_IDLE) and
 * cpu_frequency (PF_FREQ), binder_transaction and _received
 * (PF_BINDER), sched_blocked_reason (PF_BLOCKED), a print of at most
 * PF_PRINT_MAX bytes (PF_PRINT, its text in the item), and an event the
 * schema subset leaves out whose message is at most PF_OTHER_MAX bytes
 * (PF_OTHER, its bytes in the item, perfetto_other.c); a longer print
 * or message is copied into its hold's keep (PF_KEPT_PRINT,
 * PF_KEPT_OTHER).  Any other full event is copied there whole where it
 * can be (PF_KEPT_FULL: it->ev and clen as PF_FULL's, ingest_pf_keep_event).
 * The first five
 * of the forms that hold all they need are nearly all of a trace's
 * events in the full form; a compact_sched trace's full events are mostly
 * prints and the others (docs/PERFORMANCE.md). */
enum { PF_FULL, PF_CSWITCH, PF_CWAKING, PF_SWITCH, PF_SWITCH_C, PF_WAKE, PF_IDLE, PF_FREQ, PF_BINDER, PF_BLOCKED, PF_PRINT,
       PF_OTHER, /* the kept ones last (perfetto.c pop_emit) */ PF_KEPT_PRINT, PF_KEPT_OTHER, PF_KEPT_FULL };
/* PF_WAKE's kinds: the full form's events, and compact_sched's waking */
enum { PF_WK_WAKEUP, PF_WK_WAKING, PF_WK_WAKEUP_NEW, PF_WK_COMPACT };
#define PF_PRINT_MAX 31 /* a print's text held in its item, at most */
#define PF_OTHER_MAX 29 /* an other event's message held in its item, at most */
static inline bool pf_item_in_arena(uint8_t form) { return form <= PF_CWAKING; }
/* the forms of it->ev */
static inline bool pf_item_full(uint8_t form) { return form == PF_FULL || form == PF_KEPT_FULL; }

/* A compact switch's prev: the task on its CPU before it, as the CPU's
 * state (pf_cpu) said when the switch was decoded; in the switch's hold. */
typedef struct pf_prev {
    char comm[24]; /* "": none */
    int32_t prio;  /* INT32_MIN: not known */
    bool known;    /* the item's tid is the task on the CPU (not a guess of 0) */
} pf_prev;

/* One event waiting for the merge of the CPUs (up to PF_HEAP_MAX of them:
 * what is the same for a packet's events is in its hold).  64 bytes, a
 * cache line: the merge writes each into its run and reads it back up to
 * PF_HEAP_MAX events later, both cache misses (perf); the fields of one
 * form only share their bytes (96 bytes before, with a switch's
 * blocked_caller, now kept by perfetto_blocked.c).  Most forms hold all
 * their emit reads (see the forms above), so the packet's arena need not
 * wait for them; the arena forms' PF_CSWITCH keeps its prev (pf_prev) in
 * the arena. */
typedef struct pf_item {
    uint64_t ts, seq;
    pf_hold *hold; /* its packet */
    uint32_t tid;  /* the event's task (a compact switch's: its prev_pid) */
    uint16_t cpu;
    uint8_t form, ctx;
    union {
        struct { /* PF_FULL */
            const ArgusqPf__FtraceEvent *ev;
            /* the lengths of a switch's prev_comm [0] and next_comm [1],
             * or a sched_wakeup's or sched_waking's comm [1] (0: NULL),
             * measured as its names were given (ingest_pf_names), for
             * the mapping's values (ftrace_switch_vals) */
            uint32_t clen[2];
        };
        struct {                         /* compact: */
            const char *comm;            /* next_comm, or the woken task's comm */
            int32_t pid, prio;           /* next_pid/next_prio, or the woken task's */
            union {
                int32_t target_cpu; /* PF_CWAKING */
                struct {            /* PF_CSWITCH */
                    int64_t prev_state;
                    const pf_prev *prev;
                };
            };
        };
        struct { /* PF_SWITCH, PF_SWITCH_C */
            int64_t state;      /* prev_state */
            /* PF_SWITCH: prev_pid; PF_SWITCH_C: 1 when the item's tid
             * (its prev) is the task on the CPU, 0 a guess of 0 (pf_prev's known) */
            int32_t prev_pid;
            int32_t prev_prio;  /* INT32_MIN: none */
            uint32_t prev_comm, next_comm; /* ids (pf_comms) */
            int32_t next_pid, next_prio;
        } sw;
        struct { /* PF_WAKE */
            uint32_t comm;     /* its id */
            int32_t pid, prio, target_cpu;
            uint8_t kind;      /* PF_WK_* */
        } wk;
        struct { /* PF_IDLE, PF_FREQ */
            uint32_t state, cpu_id;
        } cpuev;
        struct { /* PF_BINDER */
            int32_t debug_id, target_node, to_proc, to_thread, reply;
            uint32_t code, flags;
            bool received; /* binder_transaction_received: debug_id alone */
        } binder;
        struct { /* PF_BLOCKED */
            uint64_t caller;
            int32_t pid;
            uint32_t io_wait;
        } blocked;
        struct { /* PF_PRINT */
            uint8_t len;
            char buf[PF_PRINT_MAX];
        } print;
        struct { /* PF_OTHER: its FtraceEvent field's number and message */
            uint16_t field;
            uint8_t len;
            uint8_t msg[PF_OTHER_MAX];
        } other;
        struct { /* PF_KEPT_PRINT, PF_KEPT_OTHER: the text or message in the hold's keep */
            const uint8_t *p;
            uint32_t len;
            uint16_t field; /* PF_KEPT_OTHER's */
        } kept;
    };
} pf_item;
_Static_assert(sizeof(pf_item) == 64, "pf_item: one cache line");
_Static_assert(offsetof(pf_item, ev) == offsetof(pf_item, kept.p), "a kept form's bytes where a full one's ev is");

/* A held switch in its own fields (PF_SWITCH, PF_SWITCH_C), and a wakeup
 * (PF_WAKE): the full form's (perfetto_push.c) and the compact one's
 * (perfetto.c do_bundle) are set here, field by field, the values read
 * out first (the union's other forms share the bytes). */
static inline void pf_item_switch(pf_item *it, uint8_t form, int64_t state, int32_t prev_pid, int32_t prev_prio,
                                  uint32_t prev_comm, uint32_t next_comm, int32_t next_pid, int32_t next_prio)
{
    it->form = form;
    it->sw.state = state;
    it->sw.prev_pid = prev_pid;
    it->sw.prev_prio = prev_prio;
    it->sw.prev_comm = prev_comm;
    it->sw.next_comm = next_comm;
    it->sw.next_pid = next_pid;
    it->sw.next_prio = next_prio;
}

static inline void pf_item_wake(pf_item *it, uint8_t kind, uint32_t comm, int32_t pid, int32_t prio, int32_t target_cpu)
{
    it->form = PF_WAKE;
    it->wk.kind = kind;
    it->wk.comm = comm;
    it->wk.pid = pid;
    it->wk.prio = prio;
    it->wk.target_cpu = target_cpu;
}

/* comm (NULL: "") into a pf_cpu's or pf_item's comm, cut as snprintf
 * would cut it, without snprintf (which was a noticeable part of the
 * reading thread); its bytes by a few moves, not memcpy's call. */
static inline void pf_copy_comm(char dst[24], const char *comm)
{
    size_t n = comm ? strnlen(comm, 23) : 0;
    base_copy_short(dst, comm ? comm : "", n);
    dst[n] = '\0';
}

/* n bytes, at most 32, by a few moves, not memcpy's call (an item's
 * print or message) */
static inline void pf_copy_small(void *dst, const void *src, size_t n)
{
    if (n > 16) {
        memcpy(dst, src, 16);
        memcpy((char *)dst + n - 16, (const char *)src + n - 16, 16);
    } else {
        base_copy_short(dst, src, n);
    }
}

/* A stretch of a run's events (perfetto.c): a run is a chain of them,
 * appended to at its last, taken from at its first, never copied. */
typedef struct pf_seg {
    struct pf_seg *next;
    uint32_t cap;
    _Alignas(64) pf_item q[]; /* each item a cache line of its own (aligned_alloc) */
} pf_seg;

/* Events of one CPU held for the merge, in time order. */
typedef struct pf_span {
    pf_seg *first, *last;
    uint32_t head, tail; /* first->q[head]: its first event; last->q[tail]: where the next goes */
    size_t len;
    ingest_merge_run run; /* its last event's time, its first event's keys (ingest_int.h) */
    uint32_t cpu;
} pf_span;

/* run segments' sizes: 4, 8, ... 256 events (perfetto.c) */
#define PF_SEG_CLASSES 7

/* What the compact form leaves implied: the task running on a CPU. */
typedef struct pf_cpu {
    int64_t pid; /* -1: not known yet */
    int32_t prio;
    bool have_prio;
    char comm[24];
    /* the comm given last, in the bundle being read, not yet in comm:
     * only a compact switch reads it, so a full switch followed by
     * another one (or by the bundle's end) is not copied twice
     * (perfetto.c cpu_comm) */
    const char *comm_src;
    bool comm_pending;
    /* comm's id (pf_comms) once asked for (PF_COMM_NONE: none), valid
     * while cid_known (perfetto.c cpu_cid) */
    bool cid_known;
    uint32_t cid;
    struct pf_span *cur; /* its run events are appended to (perfetto.c); NULL: none */
} pf_cpu;

/* the pool of free arena chunks: classes of up to 4 MiB (larger ones
 * are freed), 8 MiB in all */
#define PF_POOL_CLASSES 41
#define PF_POOL_BYTES ((size_t)8 << 20)
/* The size of the arena chunk made for want bytes, and its class (the
 * same for every size the class covers, and for the size itself). */
size_t ingest_pf_chunk_class(size_t want, unsigned *cls);

typedef struct pf_reader {
    ftrace_reader fr; /* the thread table and the mapping (ftrace_map_int.h) */
    const char *path;
    const ingest_opts *opts;   /* NULL: none */
    gzFile gz;                 /* the file, or NULL: mem */
    int fd;                    /* gz's file when a regular one (read ahead), else -1 */
    uint64_t advised;          /* its bytes asked for ahead of gzread, up to here */
    const unsigned char *mem;  /* in memory (fuzzing, tests) */
    size_t mem_len, mem_pos;
    uint64_t size;             /* of the file, for progress */
    unsigned char *in;         /* read buffer */
    size_t in_len, in_pos;
    uint64_t in_off;           /* offset of in[0] in the (uncompressed) stream */
    bool eof;
    unsigned char *pkt;        /* the current packet's bytes */
    size_t pkt_cap;
    uint64_t npackets;
    ingest_merge merge;        /* the merge of the CPUs' runs (perfetto.c) */
    pf_seg *segs[PF_SEG_CLASSES]; /* run segments free for reuse, by size (perfetto.c) */
    pf_hold *holds;               /* holds free for reuse, their chunks released (perfetto.c) */
    size_t nsegs[PF_SEG_CLASSES];
    pf_chunk *pool[PF_POOL_CLASSES]; /* arena chunks free for the next packets, by size class (perfetto.c) */
    size_t pool_bytes;               /* their bytes, at most PF_POOL_BYTES */
    size_t nfree;
    pf_cpu *cpus;
    size_t ncpus;
    uint32_t (*tgids)[2];      /* tid -> tgid from process_tree, sorted */
    size_t ntgids, tgcap;
    char vbuf[2048];           /* the current event's number values */
    char obuf[12288];          /* perfetto_other.c: an event the subset leaves out: its name, keys and values */
    char prev_comm[DB_NAME_MAX]; /* a compact switch's prev_comm found at its emit */
    uint64_t idle_hash;          /* ingest_ft_comm_hash of <idle>, the idle task's comm */
    /* the last cpu_idle's [0] and cpu_frequency's [1] state of five digits
     * or more, and its text (perfetto_map.c) */
    struct {
        uint64_t v;
        uint8_t len; /* 0: none yet */
        char s[24];
    } state_memo[2];
    ftrace_switch_vals sw;       /* the event's fields, when a switch (fr.sw) */
    ftrace_wake_vals wake;       /* or a wakeup (fr.wake) */
    ftrace_binder_vals txn;      /* or a binder transaction (fr.txn) */
    ArgusqPf__FtraceEvent **fast_ev; /* a bundle's events as the hand decoder finds them */
    size_t fast_cap;
    /* the hand decoder's tables (perfetto_fast.c): FtraceEvent's and its
     * event messages' types, their fields by tag in fast_tab */
    struct pf_fastm *fast_msg;
    struct pf_fastf *fast_tab;
    /* perfetto_other.c: the key=value print formats' plans, NULL: none
     * (every print format's text is then written and read) */
    struct pfo_plan *other_plans;
    /* and the table's events by FtraceEvent field number: 1 + the index in
     * pfo_events, 0 none (NULL: searched for) */
    uint16_t *other_ix;
    uint32_t other_top; /* other_ix's length */
    /* and their fields by number: event i's field k is other_keys[other_koff[i] + k]
     * for k below other_koff[i + 1] - other_koff[i] (NULL: searched for) */
    struct pfo_key *other_keys;
    uint32_t *other_koff;
    size_t vlen;
    pf_comms comms;              /* held events' comms, interned */
    uint32_t *cs_cid;            /* a compact_sched's intern table's ids (perfetto.c) */
    size_t cs_cid_cap;
    struct pf_blk *blk;          /* held switches by task, for sched_blocked_reason (NULL: none yet) */
    bool blk_on;                 /* a sched_blocked_reason came: held switches go into blk (perfetto.c) */
} pf_reader;

#define PF_PACKET_MAX ((size_t)256 << 20) /* a packet, or a compressed_packets inflated */
/* the stream's read buffer: 1 MiB, so that a refill asks gzread for at
 * least twice its own buffer (gzbuffer, 128 KiB), which it then reads
 * into ours directly instead of copying through its own (that copy
 * showed in the reading thread's time on a plain file:
 * docs/PERFORMANCE.md) */
#define PF_IN_SIZE ((size_t)1 << 20)

/* ---- perfetto_blocked.c: the held switches a sched_blocked_reason can
 * name, by task ---- */
typedef struct pf_blk pf_blk;
/* A switch away from prev_pid, arrived as seq, is held (*b made on
 * first use).  0, or -1 out of memory. */
int ingest_pf_blk_held(pf_blk **b, int32_t prev_pid, uint64_t seq);
/* A sched_blocked_reason of pid: its newest held switch gets caller. */
void ingest_pf_blk_reason(pf_blk *b, int32_t pid, uint64_t caller);
/* The switch seq of prev_pid is handed on: forgotten.  True when a
 * sched_blocked_reason named its wait's function (*caller). */
bool ingest_pf_blk_take(pf_blk *b, int32_t prev_pid, uint64_t seq, uint64_t *caller);
void ingest_pf_blk_free(pf_blk *b);

/* ---- perfetto_wire.c ---- */

/* "PATH: byte OFF: message" into the reader's err; returns -1. */
int ingest_pf_fail(pf_reader *d, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The stream: 1 a varint read, 0 the end before its first byte, -1 error. */
int ingest_pf_in_varint(pf_reader *d, uint64_t *v);
/* The next n bytes of the stream where they are, in the read buffer
 * (valid until the next read): 1 and *p; 0 when they do not fit in it or
 * the stream ends first (nothing read: read them with ingest_pf_in_bytes);
 * -1 a read error. */
int ingest_pf_in_view(pf_reader *d, uint64_t n, const unsigned char **p);
/* n bytes of the stream into dst (NULL: skipped); at: offset for messages.  0 or -1. */
int ingest_pf_in_bytes(pf_reader *d, unsigned char *dst, uint64_t n, uint64_t at);
/* One field of a buffer at *p: number, wire type, and a length-delimited
 * one's bytes.  False: a bad varint, wire type or length. */
/* A varint of a buffer, at most 10 bytes, as protobuf-c reads one (the
 * bits past 64 dropped); false: cut or unterminated (*p as it was).
 * The one reader of the hand-walked parts (perfetto_wire.c, _fast.c,
 * _other.c); most values are one byte. */
static inline bool ingest_pf_varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < e && !(*q & 0x80)) { /* most values: one byte */
        *v = *q;
        *p = q + 1;
        return true;
    }
    uint64_t x = 0;
    if (e - q >= 10) { /* all ten bytes there: no bound to test a byte (a timestamp's nine) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* up to 8 bytes at once: the 7-bit groups of the bytes up to the
         * first without its top bit, packed by three shifts, not byte by
         * byte (a timestamp is 7 bytes) */
        uint64_t w;
        memcpy(&w, q, 8);
        uint64_t stop = ~w & 0x8080808080808080ull;
        if (stop) {
            unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* through the last byte */
            if (bits < 64)
                w &= (1ull << bits) - 1;
            w &= 0x7f7f7f7f7f7f7f7full;
            w = (w & 0x007f007f007f007full) | (w & 0x7f007f007f007f00ull) >> 1;
            w = (w & 0x00003fff00003fffull) | (w & 0x3fff00003fff0000ull) >> 2;
            w = (w & 0x000000000fffffffull) | (w & 0x0fffffff00000000ull) >> 4;
            *v = w;
            *p = q + bits / 8;
            return true;
        }
#endif
        for (int i = 0; i < 10; i++) {
            uint8_t b = q[i];
            x |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) {
                *v = x;
                *p = q + i + 1;
                return true;
            }
        }
        return false;
    }
    for (int i = 0; i < 10 && q < e; i++) {
        uint8_t b = *q++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            *p = q;
            return true;
        }
    }
    return false;
}

/* A tag or a length of the hand decoder (perfetto_fast.c): at most 4
 * bytes (field numbers and lengths under 2^25 and 2^28, where
 * protobuf-c's 32-bit reading of them agrees); false: cut, or longer.  One
 * byte first (most tags); else, with 4 bytes there, the 7-bit groups up
 * to the first byte without its top bit, packed by two shifts, not read
 * byte by byte: Perfetto's writer (protozero) leaves room for a nested
 * message's length and writes it padded to 4 bytes, so every event
 * message's length is 4. */
static inline bool ingest_pf_short_varint(const uint8_t **p, const uint8_t *e, uint32_t *v)
{
    const uint8_t *q = *p;
    if (q < e && !(*q & 0x80)) {
        *v = *q;
        *p = q + 1;
        return true;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (e - q >= 4) {
        uint32_t w;
        memcpy(&w, q, 4);
        /* protozero's padding of a length under 128 (an event
         * message's): its 7 bits, then 0x80 0x80 0x00, tested at once,
         * before the shifts below */
        if ((w & 0xffffff80u) == 0x00808080u) {
            *v = w & 0x7f;
            *p = q + 4;
            return true;
        }
        uint32_t stop = ~w & 0x80808080u;
        if (!stop)
            return false;
        unsigned bits = (unsigned)__builtin_ctz(stop) + 1; /* through the last byte */
        w &= (uint32_t)((1ull << bits) - 1) & 0x7f7f7f7fu;
        w = (w & 0x007f007fu) | (w & 0x7f007f00u) >> 1;
        w = (w & 0x00003fffu) | (w & 0x3fff0000u) >> 2;
        *v = w;
        *p = q + bits / 8;
        return true;
    }
#endif
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

bool ingest_pf_buf_field(const unsigned char **p, const unsigned char *e, uint32_t *num, int *wt,
                         const unsigned char **val, size_t *vlen);
/* One TracePacket's bytes (len 0: an empty one, p may be NULL).  0 or -1. */
typedef int (*pf_packet_fn)(pf_reader *d, const unsigned char *p, size_t len, uint64_t off, int depth);
/* compressed_packets: inflated (at most PF_PACKET_MAX), and each packet
 * inside handed to fn at depth + 1.  off: the outer packet's, for
 * messages.  0 or -1. */
int ingest_pf_compressed(pf_reader *d, const ProtobufCBinaryData *in, uint64_t off, int depth, pf_packet_fn fn);

/* ---- perfetto_fast.c: the second pass's hand decoder ---- */

/* What a packet holds for the second pass. */
typedef struct pf_fast {
    ArgusqPf__FtraceEventBundle *bundle; /* NULL: none */
    bool has_compressed;
    ProtobufCBinaryData compressed; /* into the packet's bytes */
} pf_fast;
/* The packet [p, p + len) decoded by hand, its messages in h's arena, as
 * protobuf-c would unpack them: 1; 0 when protobuf-c must unpack it (the
 * arena may hold a part: release it); -1 out of memory. */
int ingest_pf_fast_packet(pf_reader *d, pf_hold *h, const uint8_t *p, size_t len, pf_fast *out);
/* A copy of event e in h's keep (ingest_pf_keep_alloc): its FtraceEvent,
 * its event message and that message's strings; NULL when it holds more
 * (unknown fields, a field of another kind) or the keep has no room. */
const ArgusqPf__FtraceEvent *ingest_pf_keep_event(pf_hold *h, const ArgusqPf__FtraceEvent *e);
/* The decoder's tables, before the first packet.  0, or -1 out of
 * memory; ingest_pf_fast_free frees them. */
int ingest_pf_fast_init(pf_reader *d);
void ingest_pf_fast_free(pf_reader *d);

/* ---- perfetto_names.c: the first pass ---- */

/* A packet's process_tree and system_info (and those of its
 * compressed_packets, at depth 0).  0 or -1. */
int ingest_pf_names_packet(pf_reader *d, const unsigned char *p, size_t len, uint64_t off, int depth);
/* After the first pass: the tid -> tgid table for the mapping. */
void ingest_pf_names_done(pf_reader *d);

/* ---- perfetto_push.c: an event as it is pushed into the merge ---- */

/* Names thread tid before it is seen (ingest_ft_full_comm, with room in
 * the thread table first).  0 or -1. */
int ingest_pf_name(pf_reader *d, uint32_t tid, const char *comm, size_t n);
/* Names the tasks an event's fields name (ingest_ft_full_comm), when it is
 * decoded, ahead of the events that need them; a full event's comms'
 * lengths into it->clen.  own: a full event held as a form of its own
 * where it fits (PF_SWITCH, PF_WAKE, PF_IDLE, PF_FREQ; in the same
 * dispatch on its kind, not a call of its own after this one), else it
 * stays PF_FULL.  0 or -1. */
int ingest_pf_names(pf_reader *d, pf_item *it, bool own);

/* ---- perfetto_map.c: an event as it is handed on ---- */

/* Hands one event on: its canonical pairs, then ingest_ft_event; blocked:
 * a switch's blocked_caller (NULL: none).  0 or -1. */
int ingest_pf_emit(pf_reader *d, const pf_item *it, const uint64_t *blocked);

/* ---- perfetto_other.c: the events the schema subset leaves out ---- */

/* Where a sub-message is corrupt: the byte of it, and what is wrong. */
typedef struct pf_other_fault {
    size_t at;
    const char *why;
} pf_other_fault;

/* The canonical pairs of an FtraceEvent's event field event_field (its
 * number in ftrace_event.proto), whose sub-message is msg: one pair per
 * field, by Perfetto's published schema (perfetto_other_tab.c), fN= for
 * a field it does not name; *name the event's name (generic: the one it
 * carries; unlisted: ftrace_event_N), *name_len its length (not measured
 * again).  Values (and keys and names it makes) are in d->obuf, valid
 * until the next call.  0, or -1 when msg is corrupt (*f says where). */
int ingest_pf_other_pairs(pf_reader *d, uint32_t event_field, const uint8_t *msg, size_t len, const char **name,
                          size_t *name_len, pf_other_fault *f);
/* An FtraceEvent of none of the subset's messages (it->ev): its event,
 * kept by protobuf-c as an unknown field, by ingest_pf_other_pairs.
 * 1 (pairs, *name and *name_len set), 0 (it holds no event), -1 (corrupt:
 * err set, naming the file and byte). */
int ingest_pf_other(pf_reader *d, const pf_item *it, const char **name, size_t *name_len);
/* The same of a PF_OTHER or PF_KEPT_OTHER item: 1 or -1. */
int ingest_pf_other_held(pf_reader *d, const pf_item *it, const char **name, size_t *name_len);
/* A PF_FULL item of such an event as PF_OTHER, or PF_KEPT_OTHER, when
 * its length is sound (else it stays full, for ingest_pf_other to say
 * what is wrong, or that it holds no event), and the keep has room. */
void ingest_pf_other_own(pf_item *it);
/* The plans of the print formats that are key=value pairs only, read
 * once before the first event (without them every event with a print
 * format is written as text and read back, to the same pairs).  0, or
 * -1 out of memory; ingest_pf_other_free frees them. */
int ingest_pf_other_init(pf_reader *d);
void ingest_pf_other_free(pf_reader *d);

#endif
