/* ingest/ftrace/ftrace_map_int.h -- the ftrace mapping (not public):
 * what a reader of kernel events fills -- an ftrace_line and the event's
 * canonical pairs -- and calls (ingest_ft_event), and the reader state
 * the mapping works on (ftrace_reader: the thread table, the attributes).
 *
 * The ftrace family's own readers (text, trace.dat; ftrace_int.h) and the
 * other kernel readers (perf/, ctf/, perfetto/) map their events through
 * it, so an event gives the same db_event whichever reader read it. */
#ifndef ARGUSQ_INGEST_FTRACE_MAP_INT_H
#define ARGUSQ_INGEST_FTRACE_MAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "ingest/ingest_int.h"

/* ---- an event as a reader hands it over ---- */

/* Which of the three line forms the prefix had (decides the format name
 * in ingest_detect; the reader itself accepts all three). */
typedef enum ftrace_form {
    FTRACE_FORM_TRACEFS = 0, /* [CPU] FLAGS, or a (TGID) column */
    FTRACE_FORM_REPORT_L,    /* trace-cmd report -l: CPU digits glued to flags */
    FTRACE_FORM_REPORT,      /* trace-cmd report: [CPU], no flags */
} ftrace_form;

/* The syscalls:* tracepoints' own print forms (no event name printed). */
typedef enum ftrace_sys_form {
    FTRACE_SYS_NONE = 0,
    FTRACE_SYS_ENTER, /* sys_NAME(ARGS): name NAME, fields ARGS */
    FTRACE_SYS_EXIT,  /* sys_NAME -> RET: name NAME, fields RET */
} ftrace_sys_form;

typedef struct ftrace_line {
    const char *comm;
    size_t comm_len;
    uint32_t tid;
    bool has_tgid; /* a (TGID) column with a number, not (-------) */
    uint32_t tgid;
    uint16_t cpu;
    const char *flags; /* NULL when the line has no flag column */
    size_t flags_len;
    uint64_t ts; /* nanoseconds */
    char *name;  /* event name, name_len bytes, followed by ':' */
    size_t name_len;
    const char *fields; /* field text, NUL-terminated at the end of the line */
    size_t fields_len;  /* without trailing blanks */
    ftrace_form form;
    uint8_t sys; /* ftrace_sys_form */
    uint8_t ctx; /* db_ctx: from the flag column (the reader sets it) */
    /* ingest_ft_comm_hash of the comm column, when the reader has it
     * already (Perfetto's constant <idle>); 0: the event hashes it */
    uint64_t comm_hash;
} ftrace_line;

/* The hash a task's comm column is known by (FNV-1a): a column seen again
 * is compared by it, not by its text. */
static inline uint64_t ingest_ft_comm_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The events the mapping knows; everything else is FTRACE_EV_OTHER. */
typedef enum ftrace_ev_kind {
    FTRACE_EV_OTHER = 0,
    FTRACE_EV_SYS_ENTER,      /* raw_syscalls:sys_enter */
    FTRACE_EV_SYS_EXIT,       /* raw_syscalls:sys_exit */
    FTRACE_EV_SYSCALLS_ENTER, /* syscalls:sys_enter_<name> */
    FTRACE_EV_SYSCALLS_EXIT,  /* syscalls:sys_exit_<name> */
    FTRACE_EV_SCHED_SWITCH,
    FTRACE_EV_SCHED_WAKEUP,
    FTRACE_EV_SCHED_WAKEUP_NEW,
    FTRACE_EV_SCHED_WAKING,
    FTRACE_EV_PROCESS_FORK,
    FTRACE_EV_PROCESS_EXEC,
    FTRACE_EV_PROCESS_EXIT,
    FTRACE_EV_TASK_NEWTASK,
    FTRACE_EV_TASK_RENAME,
    FTRACE_EV_IRQ_ENTRY,
    FTRACE_EV_IRQ_EXIT,
    FTRACE_EV_SOFTIRQ_ENTRY,
    FTRACE_EV_SOFTIRQ_EXIT,
    FTRACE_EV_SOFTIRQ_RAISE, /* kept raw: a known layout for the .dat reader */
    FTRACE_EV_HRTIMER_START,
    FTRACE_EV_HRTIMER_CANCEL,
    FTRACE_EV_HRTIMER_EXPIRE_ENTRY,
    FTRACE_EV_HRTIMER_EXPIRE_EXIT,
    FTRACE_EV_WQ_QUEUE,
    FTRACE_EV_WQ_ACTIVATE,
    FTRACE_EV_WQ_START,
    FTRACE_EV_WQ_END,
    FTRACE_EV_MARKER, /* tracing_mark_write, print */
    FTRACE_EV_STACK,  /* kernel_stack, user_stack: `<stack trace>` and a
                         `=> frame` line per frame (backtrace=) */
    FTRACE_EV_BLOCK,  /* block_bio_queue, block_rq_insert / issue / complete: kept
                         raw, their positional text made pairs (ftrace_text.c) */
    FTRACE_EV_BINDER_TXN,  /* binder_transaction: a message sent (ftrace_binder.c) */
    FTRACE_EV_BINDER_RECV, /* binder_transaction_received: its receipt */
} ftrace_ev_kind;

/* name must be NUL-terminated. */
ftrace_ev_kind ingest_ftrace_lex_event(const char *name);

/* One key=value pair of the field text (spans into the line). */
typedef struct ftrace_kv {
    const char *key, *val;
    size_t klen, vlen;
} ftrace_kv;

/* ---- the canonical pairs (ftrace_text.c: from an event's text;
 * ftrace_map.c, ftrace_sched.c, ftrace_binder.c: the pairs -> one
 * db_event; ftrace.c: the thread table) ----
 *
 * The canonical pairs.  One ftrace event reaches argusq in several forms:
 * tracefs text, `trace-cmd report` text printed with or without
 * libtraceevent's plugins (`bash:4122 [120] CPU:001` or `comm=bash
 * pid=4122 prio=120 target_cpu=001`), and a trace.dat record's binary
 * fields.  Every form is first turned into the same key=value pairs in
 * r->kv -- the keys the kernel's own print format uses, or the field
 * names where it prints none -- and only those pairs are mapped, so an
 * event gives the same db_event and attributes whatever form it came in:
 *
 *   raw_syscalls sys_enter   id args          sys_exit  id ret
 *   syscalls sys_enter_NAME  args             sys_exit_NAME ret
 *   sched_switch             prev_comm prev_pid prev_prio prev_state
 *                            next_comm next_pid next_prio
 *   sched_wakeup(_new), sched_waking   comm pid prio target_cpu
 *   sched_process_fork       comm pid child_comm child_pid
 *   sched_process_exec       filename pid old_pid
 *   task_newtask             pid comm clone_flags oom_score_adj
 *   task_rename              pid oldcomm newcomm oom_score_adj
 *   irq_handler_entry/exit   irq name / irq ret;  softirq_*  vec action
 *   hrtimer_*                hrtimer function expires softexpires now
 *   workqueue_*              work function workqueue req_cpu cpu
 *   print, tracing_mark_write   buf
 *   anything else            the pairs of its text, or raw= the text
 *
 * prev_state is in the kernel's letters (SDTtXZPI), whatever table the
 * source printed with.  The mapping keeps a fixed set of attributes for
 * each mapped event, so a pair one form prints and another does not
 * (hrtimer_start's mode) is not kept. */

/* The names a text trace gives its `<...>` tasks further on
 * (ftrace_ahead.c; ftrace_int.h). */
typedef struct ingest_ft_ahead ingest_ft_ahead;

#define FTRACE_KV_MAX 64
/* An emitter's "these pairs do not make this event" (no message yet: the
 * caller says what the source was). */
#define FTRACE_BAD_FIELDS (-2)

typedef struct ftrace_tent ftrace_tent; /* one entry of the tid table */

/* A switch's or a wakeup's fields as values, from a reader that has them
 * so (Perfetto's messages): the mapping takes them instead of the pairs,
 * which the reader would print and the mapping look up and parse again.
 * Each stands for the pairs of the same name, with the same text: the
 * strings as given ("" none), the numbers printed in decimal. */
/* The comms' lengths come with them when the reader measured them
 * already (Perfetto's full events, naming their tasks as they are
 * decoded), so the mapping need not call strlen for each, else
 * FTRACE_LEN_UNKNOWN: the mapping measures them (a Perfetto compact
 * switch's prev_comm that its emit made from the thread table; its other
 * comms, whose held item has no room for their lengths, are measured at
 * its emit by ingest_pf_arena_strlen, inline, as strlen's calls there
 * spilled registers). */
#define FTRACE_LEN_UNKNOWN SIZE_MAX
typedef struct ftrace_switch_vals {
    const char *prev_comm, *next_comm; /* not NULL */
    size_t prev_comm_len, next_comm_len;
    int64_t prev_pid, prev_prio, next_pid, next_prio;
    bool have_prev_prio;
    uint64_t prev_state; /* the kernel's number */
    bool have_blocked;
    uint64_t blocked; /* blocked_caller: 0x and hex */
} ftrace_switch_vals;

typedef struct ftrace_wake_vals {
    const char *comm; /* not NULL */
    size_t comm_len;
    int64_t pid, prio, target_cpu; /* target_cpu: at least three digits, as %03d */
} ftrace_wake_vals;

/* A binder transaction's fields as values, as a switch's: the pairs
 * binder_transaction(_received) gives (ftrace_binder.c), the numbers
 * printed in decimal, flags and code in 0x and hex (not printed, looked
 * up and parsed again). */
typedef struct ftrace_binder_vals {
    int64_t transaction, dest_node, dest_proc, dest_thread, reply;
    uint64_t flags, code;
} ftrace_binder_vals;

/* A switch's prev_state as the kernel's number, and the attributes it
 * gives (reason=, state=; ftrace_sched.c): the same for every switch of
 * that state, so made once (switches are many, and of a handful of
 * states). */
#define FTRACE_STATE_MEMO 16
typedef struct ftrace_state_memo {
    uint64_t num;
    uint8_t len; /* of attrs; 0: the slot is empty */
    bool wait;   /* the state begins a wait (not R, not preempted) */
    char attrs[80];
} ftrace_state_memo;

typedef struct ftrace_reader {
    const char *path;
    const ingest_sink *sink;
    ingest_stats *st;
    char *err;
    size_t errlen;
    uint64_t lineno;  /* the line (text) or record (trace.dat) being read */
    const char *unit; /* "line" or "record", for messages */
    ftrace_tent *tab; /* a tid's pid and comm: tused entries, room for tcap (and as many spare) */
    size_t tcap, tused;
    base_map tids;    /* tid -> its entry in tab; holds tcap without growing */
    char *ab; /* the current event's packed attributes (reused) */
    size_t alen, acap;
    uint32_t last_child; /* child of the last task_newtask */
    bool have_last_child;
    ftrace_kv kv[FTRACE_KV_MAX]; /* the current event's canonical pairs */
    int nkv;                     /* -1: the text is not in key=value form */
    /* the current switch's or wakeup's fields as values instead of pairs
     * (NULL: the pairs); set around one ingest_ft_event */
    const ftrace_switch_vals *sw;
    const ftrace_wake_vals *wake;
    const ftrace_binder_vals *txn; /* a binder transaction's, the same way */
    bool kv_distinct; /* the reader says no key of r->kv is there twice */
    char state[32];              /* prev_state translated to kernel letters */
    ftrace_state_memo smemo[FTRACE_STATE_MEMO]; /* by a hash of the number */
    char sysname[80];            /* sys_enter_NAME of a `sys_NAME(...)` line */
    char frames[8192];           /* a stack event's frames (backtrace=) */
    bool check_order;            /* refuse a thread's time going back (trace.dat) */
    const base_arch *arch;       /* the trace's machine, whose syscall table names
                                    numbers; NULL: not known, numbers stay numbers */
    /* an event line held back for the lines that continue its text */
    bool pending;
    char *pend;
    size_t pend_cap, pend_len;
    ftrace_line pend_li;
    size_t pend_comm, pend_flags, pend_name, pend_fields;
    ftrace_ev_kind pend_kind;
    uint64_t pend_line;
    /* tid -> tgid for lines without a TGID column (a trace.dat recorded by
     * argusq record keeps tracefs's saved_tgids beside it): sorted pairs */
    const uint32_t (*tgids)[2];
    size_t ntgids;
    /* binder transactions sent and not yet received (ftrace_binder.c) */
    struct ingest_binder *binder;
    /* the names the file gives `<...>` tasks further on; NULL: none are
     * looked for (a trace.dat, perf, Perfetto: their tasks have names) */
    ingest_ft_ahead *ahead;
} ftrace_reader;

/* "PATH:LINE: message" into err; returns -1. */
int ingest_ft_fail(ftrace_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The kernel's softirq names by vector (softirq_to_name, kernel/softirq.c;
 * show_softirq_name, include/trace/events/irq.h): ftrace prints them as
 * action=, Perfetto and LTTng give the vector alone.  In ftrace_fields.c. */
#define INGEST_FT_NSOFTIRQ 10
extern const char *const ingest_ft_softirq_names[INGEST_FT_NSOFTIRQ];

/* Every pair of r->kv whose key is not yet an attribute. */
int ingest_ft_attr_pairs(ftrace_reader *r);

/* ---- the thread table (ftrace.c), for readers that declare tasks
 * themselves ---- */

/* Room in the thread table for n more tids (declarations a reader makes
 * itself, before ingest_ft_event).  0, or -1 with err set.  The test
 * inline: each event makes it once or twice; ingest_ft_tab_grow grows the
 * table. */
int ingest_ft_tab_grow(ftrace_reader *r, size_t n);
static inline int ingest_ft_reserve(ftrace_reader *r, size_t n)
{
    return r->tused + n <= r->tcap ? 0 : ingest_ft_tab_grow(r, n);
}

/* Declares thread tid of process pid named name (and the process before
 * it) if it is new or its pid or name changed.  new_task: a fork/newtask
 * created it, so its comm column has not been seen yet. */
int ingest_ft_set_thread(ftrace_reader *r, uint32_t tid, uint32_t pid, const char *name, size_t n,
                         bool new_task);
/* Restores the full comm of a thread named by a cut -l comm column. */
int ingest_ft_full_comm(ftrace_reader *r, uint32_t tid, const char *comm, size_t n);
/* The name thread tid has so far (declared, or given by a field before
 * it was seen); NULL when none is known but `<...>`.  Valid until the
 * table next grows (ingest_ft_reserve). */
const char *ingest_ft_name_of(ftrace_reader *r, uint32_t tid);

/* ---- the current event's canonical pairs ---- */

/* Lookups in r->kv.  Inline, its compare too: a Perfetto switch looks up ten pairs among its
 * eight, and a call and a memcmp for each pair of the key's length cost
 * more than the lookup.  The same pointer is the same key without a
 * compare: readers that name their pairs with literals (perfetto_map.c)
 * mostly look them up with the same literals, merged by the linker. */
static inline const ftrace_kv *ingest_ft_kv_get_n(const ftrace_reader *r, const char *key, size_t kl)
{
    for (int i = 0; i < r->nkv; i++) {
        const ftrace_kv *kv = &r->kv[i];
        if (kv->klen != kl)
            continue;
        if (kv->key == key)
            return kv;
        size_t j = 0;
        while (j < kl && kv->key[j] == key[j])
            j++;
        if (j == kl)
            return kv;
    }
    return NULL;
}
static inline const ftrace_kv *ingest_ft_kv_get(const ftrace_reader *r, const char *key)
{
    return ingest_ft_kv_get_n(r, key, strlen(key));
}
static inline bool ingest_ft_kv_u32(const ftrace_reader *r, const char *key, uint32_t *out)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv && ingest_dec_u32(kv->val, kv->vlen, out);
}
static inline bool ingest_ft_kv_hex(const ftrace_reader *r, const char *key, uint64_t *out)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv && ingest_hex_u64(kv->val, kv->vlen, out);
}
static inline bool ingest_ft_kv_i64(const ftrace_reader *r, const char *key, int64_t *out)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv && ingest_dec_i64(kv->val, kv->vlen, out);
}
/* "EVENT: cannot parse fields '...'"; returns -1 */
int ingest_ft_bad_fields(ftrace_reader *r, const ftrace_line *li);

/* Appends one canonical pair (key: a string that outlives the event);
 * false when r->kv is full. */
static inline bool ingest_ft_kv_add_n(ftrace_reader *r, const char *key, size_t kl, const char *val, size_t vlen)
{
    /* inline: a Perfetto event adds six pairs or so */
    if (r->nkv < 0)
        r->nkv = 0;
    if (r->nkv == FTRACE_KV_MAX)
        return false;
    ftrace_kv *kv = &r->kv[r->nkv++];
    kv->key = key;
    kv->klen = kl;
    kv->val = val;
    kv->vlen = vlen;
    return true;
}
static inline bool ingest_ft_kv_add(ftrace_reader *r, const char *key, const char *val, size_t vlen)
{
    return ingest_ft_kv_add_n(r, key, strlen(key), val, vlen);
}

/* The canonical pairs of an event from its text (li->fields), into r->kv.
 * Returns 0 or FTRACE_BAD_FIELDS (a mapped event whose text is in no form
 * this reader knows). */
int ingest_ft_text_pairs(ftrace_reader *r, ftrace_ev_kind k, const ftrace_line *li);

/* One event whose canonical pairs are in r->kv: declares its task,
 * checks its thread's time order, maps it and hands it to the sink
 * (ftrace.c).  li->ctx must be set.  Returns 0, -1 (err set) or
 * FTRACE_BAD_FIELDS. */
int ingest_ft_event(ftrace_reader *r, ftrace_line *li, ftrace_ev_kind k);

/* ---- the reader's state outside the line loop (ftrace.c), for every
 * reader that maps through it ---- */

/* Returns 0, or -1 with err set (out of memory). */
int ingest_ft_reader_init(ftrace_reader *r, const char *path, const ingest_sink *sink,
                          ingest_stats *st, char *err, size_t errlen);
void ingest_ft_reader_free(ftrace_reader *r);

/* A text reader of the family (ftrace text, perf script) over lines of
 * lb: *r behind a reorder window *ro (reorder.c), syscall names
 * when opts names the machine.  0, or -1 with err set; either way
 * ingest_ft_text_end ends it.  end: the window handed on when rc is 0,
 * then both freed; 0 or -1. */
int ingest_ft_text_begin(ftrace_reader *r, ingest_reorder **ro, const ingest_lines *lb, const ingest_sink *sink,
                         const ingest_opts *opts, ingest_stats *st, char *err, size_t errlen);
int ingest_ft_text_end(ftrace_reader *r, ingest_reorder *ro, int rc, char *err, size_t errlen);

#endif
