/* ingest/ftrace.h -- internals shared by the ingest readers (not public).
 *
 *   ingest_lines_*     the streaming line splitter (ingest.c): one large
 *                      buffer, lines split in place, never the whole file
 *   ingest_ftrace_lex_* the re2c scanners of an ftrace text line (ftrace_lex.re)
 *   ingest_ftrace_read the ftrace/trace-cmd text reader (ftrace.c) */
#ifndef ARGUSQ_INGEST_FTRACE_H
#define ARGUSQ_INGEST_FTRACE_H

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../base/base.h"
#include "ingest.h"

/* ---- line splitter ---- */

/* Requirement: a line longer than this is an error (no line is ever copied
 * out of the buffer, so the buffer must hold the longest line whole). */
#define INGEST_LINE_MAX ((size_t)1 << 20)
/* A name (process, thread, symbol, event) longer than this is an error: no
 * real trace has one, so it means a corrupt file.  Shorter names longer
 * than the archive keeps (DB_NAME_MAX) are cut. */
#define INGEST_NAME_MAX 4096

typedef struct ingest_lines {
    FILE *f;
    const char *path;
    char *buf;       /* INGEST_LINE_MAX + 2 bytes: room for '\n' and a NUL */
    size_t cap;      /* bytes of data the buffer may hold */
    size_t len;      /* bytes of data in buf */
    size_t pos;      /* start of the next line */
    bool eof;
    uint64_t lineno; /* number of the line last returned (1-based) */
    /* progress: the sink's callback, called after every fread */
    void (*progress)(void *ctx, uint64_t bytes, uint64_t total);
    void *progress_ctx;
    uint64_t read, size; /* bytes read so far; the file's size (0 unknown) */
} ingest_lines;

int ingest_lines_open(ingest_lines *lb, const char *path, char *err, size_t errlen);
void ingest_lines_close(ingest_lines *lb);
/* Reads more data if the buffer holds no complete line; used once before
 * the first line so that ingest_detect sees the head of the file. */
int ingest_lines_fill(ingest_lines *lb, char *err, size_t errlen);
/* Next line, NUL-terminated in place (its '\n' and a trailing '\r' are
 * overwritten).  The line stays valid until the next call.
 * Returns 1 (a line), 0 (end of file) or -1 (err = "PATH:LINE: ..."). */
int ingest_lines_next(ingest_lines *lb, char **line, size_t *len, char *err, size_t errlen);

/* ---- ftrace line scanner (re2c) ---- */

typedef enum ftrace_lex_status {
    FTRACE_LEX_OK = 0,
    FTRACE_LEX_NOMATCH, /* not an ftrace event line at all */
    FTRACE_LEX_BAD_TS,
    FTRACE_LEX_BAD_PID,
    FTRACE_LEX_BAD_CPU,
    FTRACE_LEX_BAD_FLAGS,
} ftrace_lex_status;

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

ftrace_lex_status ingest_ftrace_lex_line(char *line, ftrace_line *out);
/* 1 if the NUL-terminated line is a trace-cmd/tracefs header that holds
 * no event (cpus=2, version = 6, CPU 0 is empty, CPU:1 [LOST 3 EVENTS]). */
int ingest_ftrace_lex_header(const char *line);

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

/* Splits NUL-terminated field text into key=value pairs.  `[key=v]` counts
 * as a pair; a bare word after a pair extends that pair's value (a comm
 * with a space); a lone `==>` separates.  Returns the number of pairs, or
 * -1 if the text is not in key=value form (no pair, a bare word before the
 * first pair, or more than max pairs). */
int ingest_ftrace_lex_kv(const char *text, ftrace_kv *kv, int max);

/* ---- the reader (ftrace.c: lines and the thread table; ftrace_text.c:
 * an event's text to its canonical pairs; ftrace_fields.c: field helpers
 * and attributes; ftrace_map.c, ftrace_sched.c: canonical pairs -> one
 * db_event) ----
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

/* Reads every remaining line of lb into sink.  html: the file is
 * systrace's HTML page (ftrace_page.c says where its text is). */
int ingest_ftrace_read(ingest_lines *lb, const ingest_sink *sink, const ingest_opts *opts, bool html,
                       ingest_stats *st, char *err, size_t errlen);

/* The lines of ftrace text in a file (ftrace_page.c): each line of lb, or
 * for a systrace HTML page (html), the lines of its trace-data blocks of
 * ftrace and of its legacy linuxPerfData string, unescaped. */
typedef struct ingest_ft_src {
    ingest_lines *lb;
    bool html;
    int state;       /* where the page's last line was */
    bool found;      /* the page held ftrace text */
    uint64_t lineno; /* the file's line the last line came from */
    /* linuxPerfData's text, unescaped: [js_pos, js_len) not handed out;
     * js_open bytes of it after its last newline */
    char *js;
    size_t js_pos, js_len, js_cap, js_open;
} ingest_ft_src;
void ingest_ft_src_init(ingest_ft_src *s, ingest_lines *lb, bool html);
void ingest_ft_src_free(ingest_ft_src *s);
/* The next line, NUL-terminated and writable, valid until the next call:
 * 1, 0 at the end, or -1 (err = "PATH:LINE: ..."). */
int ingest_ft_src_next(ingest_ft_src *s, char **line, size_t *len, char *err, size_t errlen);

/* The names a text trace gives its `<...>` tasks further on
 * (ftrace_ahead.c): the file read once more, when a task first shows as
 * `<...>` with no name known. */
typedef struct ingest_ft_ahead ingest_ft_ahead;
/* For the file lb reads (html: a systrace page); NULL when out of memory.
 * Reads nothing yet. */
ingest_ft_ahead *ingest_ft_ahead_new(const ingest_lines *lb, bool html);
void ingest_ft_ahead_free(ingest_ft_ahead *a);

#define FTRACE_KV_MAX 64
/* An emitter's "these pairs do not make this event" (no message yet: the
 * caller says what the source was). */
#define FTRACE_BAD_FIELDS (-2)

typedef struct ftrace_tent ftrace_tent; /* one slot of the tid table */

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
    ftrace_tent *tab; /* tid -> (pid, comm): open addressing, grows */
    size_t tcap, tused;
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

/* Room for need more bytes after the alen bytes of the attribute buffer
 * *ab (grown, keeping its content, when *acap is too small).  Returns
 * *ab + alen, or NULL when out of memory.  Shared with the Argus reader. */
/* "PATH:LINE: " and the message, into err (the readers' error form). */
int ingest_vfail(char *err, size_t errlen, const char *path, uint64_t line, const char *fmt, va_list ap);
/* A message without a line (whole-file errors). */
void ingest_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A sink stopped the read: keep its message, with "PATH:LINE: " in front
 * unless it names the file already ("PATH:...").  Returns -1. */
int ingest_sink_failed(char *err, size_t errlen, const char *path, uint64_t line);
char *ingest_attr_reserve(char **ab, size_t alen, size_t *acap, size_t need);

/* Attributes written in place after one reservation, for the mappings of
 * the commonest events, not an ingest_ft_attr_n call per attribute:
 * ingest_ft_attrs_room makes room for need more bytes and says where they
 * go (NULL: out of memory, err set), each put appends key=value and returns
 * where the next goes, ingest_ft_attrs_done takes what was put.  Numbers
 * take at most INGEST_FT_NUM_MAX bytes. */
#define INGEST_FT_NUM_MAX 24
int ingest_ft_attr_grow(ftrace_reader *r, size_t need);
static inline char *ingest_ft_attrs_room(ftrace_reader *r, size_t need)
{
    if ((r->alen + need > r->acap || !r->ab) && ingest_ft_attr_grow(r, need) < 0)
        return NULL;
    return r->ab + r->alen;
}
static inline char *ingest_ft_put(char *p, const char *key, size_t kl, const char *val, size_t vlen)
{
    base_copy_short(p, key, kl);
    p[kl] = '=';
    base_copy_short(p + kl + 1, val, vlen);
    p[kl + 1 + vlen] = '\0';
    return p + kl + 1 + vlen + 1;
}
static inline void ingest_ft_attrs_done(ftrace_reader *r, const char *p) { r->alen = (size_t)(p - r->ab); }

/* The kernel's softirq names by vector (softirq_to_name, kernel/softirq.c;
 * show_softirq_name, include/trace/events/irq.h): ftrace prints them as
 * action=, Perfetto and LTTng give the vector alone.  In ftrace_fields.c. */
#define INGEST_FT_NSOFTIRQ 10
extern const char *const ingest_ft_softirq_names[INGEST_FT_NSOFTIRQ];

/* Append key=value to the current event's attributes (key NUL-terminated).
 * The wrappers measure the key inline: a literal's length is a constant,
 * and strlen of the keys was 4% of the reading thread of an ftrace ingest. */
int ingest_ft_attr_n(ftrace_reader *r, const char *key, size_t kl, const char *val, size_t vlen);
static inline int ingest_ft_attr(ftrace_reader *r, const char *key, const char *val, size_t vlen)
{
    return ingest_ft_attr_n(r, key, strlen(key), val, vlen);
}
/* Every pair of r->kv whose key is not yet an attribute. */
int ingest_ft_attr_pairs(ftrace_reader *r);

/* Room in the thread table for n more tids (declarations a reader makes
 * itself, before ingest_ft_event).  0, or -1 with err set.  The test
 * inline: each event makes it once or twice; ingest_ft_tab_grow grows the
 * table. */
int ingest_ft_tab_grow(ftrace_reader *r, size_t n);
static inline int ingest_ft_reserve(ftrace_reader *r, size_t n)
{
    return (r->tused + n) * 2 <= r->tcap ? 0 : ingest_ft_tab_grow(r, n);
}

/* Declares thread tid of process pid named name (and the process before
 * it) if it is new or its pid or name changed.  new_task: a fork/newtask
 * created it, so its comm column has not been seen yet. */
int ingest_ft_set_thread(ftrace_reader *r, uint32_t tid, uint32_t pid, const char *name, size_t n,
                         bool new_task);
/* Renames process pid (exec); no call if the name is the same. */
int ingest_ft_rename_proc(ftrace_reader *r, uint32_t pid, const char *name, size_t n);
/* Restores the full comm of a thread named by a cut -l comm column. */
int ingest_ft_full_comm(ftrace_reader *r, uint32_t tid, const char *comm, size_t n);
/* The name thread tid has so far (declared, or given by a field before
 * it was seen); NULL when none is known but `<...>`.  Valid until the
 * table next grows (ingest_ft_reserve). */
const char *ingest_ft_name_of(ftrace_reader *r, uint32_t tid);
/* The first name the file gives tid on any line (ftrace_ahead.c): *name
 * NULL when none (or r->ahead is NULL).  Reads the file the first time it
 * is asked.  0, or -1 with err set (out of memory). */
int ingest_ft_ahead_name(ftrace_reader *r, uint32_t tid, const char **name);
/* The process of a declared thread; false if tid is not declared. */
bool ingest_ft_pid_of(ftrace_reader *r, uint32_t tid, uint32_t *pid);
/* Syscall number of a name in the x86-64 table (false unless the trace is
 * of an x86-64 machine). */
bool ingest_ft_syscall_nr(ftrace_reader *r, const char *name, uint32_t *nr);

/* ---- field text helpers (ftrace_fields.c) ---- */

static inline bool ingest_ft_blank(char c) { return c == ' ' || c == '\t'; }

static inline const char *ingest_ft_skip_blanks(const char *p, const char *e)
{
    while (p < e && ingest_ft_blank(*p))
        p++;
    return p;
}

static inline const char *ingest_ft_word_end(const char *p, const char *e)
{
    while (p < e && !ingest_ft_blank(*p))
        p++;
    return p;
}

/* Consumes the literal s at *pp. */
static inline bool ingest_ft_lit(const char **pp, const char *e, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(e - *pp) < n || memcmp(*pp, s, n) != 0)
        return false;
    *pp += n;
    return true;
}

/* Numbers as text at b (room for 24 bytes; no NUL), without printf's
 * cost on the per-event path; return the length (unsigned decimal:
 * base_fmt_u64).  hex: lowercase, no 0x, at least min digits (zero-padded). */
size_t ingest_fmt_i64(char *b, int64_t v);
size_t ingest_fmt_i64_03(char *b, int64_t v); /* %03lld: at least three digits, the sign one of them */
size_t ingest_fmt_hex(char *b, uint64_t v, int min);
/* ingest_ft_put of a number, printed in place (FTRACE_LIT("pid"): a
 * literal key and its length) */
#define FTRACE_LIT(lit) lit, sizeof(lit) - 1
static inline char *ingest_ft_put_num(char *p, const char *key, size_t kl, size_t (*fmt)(char *, int64_t),
                                      int64_t v)
{
    base_copy_short(p, key, kl);
    p[kl] = '=';
    size_t n = fmt(p + kl + 1, v);
    p[kl + 1 + n] = '\0';
    return p + kl + 1 + n + 1;
}
static inline char *ingest_ft_put_u64(char *p, const char *key, size_t kl, uint64_t v)
{
    base_copy_short(p, key, kl);
    p[kl] = '=';
    size_t n = base_fmt_u64(p + kl + 1, v);
    p[kl + 1 + n] = '\0';
    return p + kl + 1 + n + 1;
}
static inline char *ingest_ft_put_hex(char *p, const char *key, size_t kl, uint64_t v) /* 0x + lowercase hex */
{
    base_copy_short(p, key, kl);
    p[kl] = '=';
    p[kl + 1] = '0';
    p[kl + 2] = 'x';
    size_t n = 2 + ingest_fmt_hex(p + kl + 3, v, 1);
    p[kl + 1 + n] = '\0';
    return p + kl + 1 + n + 1;
}
static inline int ingest_ft_attr_u64(ftrace_reader *r, const char *key, uint64_t v)
{
    char b[24];
    return ingest_ft_attr(r, key, b, base_fmt_u64(b, v));
}
static inline int ingest_ft_attr_i64(ftrace_reader *r, const char *key, int64_t v)
{
    char b[24];
    return ingest_ft_attr(r, key, b, ingest_fmt_i64(b, v));
}
static inline int ingest_ft_attr_hex(ftrace_reader *r, const char *key, uint64_t v) /* 0x + lowercase hex */
{
    char b[24] = "0x";
    return ingest_ft_attr(r, key, b, 2 + ingest_fmt_hex(b + 2, v, 1));
}

/* Numbers over [p, p + n): decimal, and hex with or without 0x.  The
 * decimals inline: the mapping reads a few an event (pids, a state), and
 * two calls each cost more than the parse. */
bool ingest_ft_dec_u64_long(const char *p, size_t n, uint64_t *out); /* 20 digits, checked for overflow */
static inline bool ingest_ft_dec_u64(const char *p, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return false;
    if (n == 20)
        return ingest_ft_dec_u64_long(p, n, out);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) { /* 19 digits cannot overflow: no check per digit */
        unsigned d = (unsigned)(unsigned char)p[i] - '0';
        if (d > 9)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}
static inline bool ingest_ft_dec_u32(const char *p, size_t n, uint32_t *out)
{
    uint64_t v;
    if (!ingest_ft_dec_u64(p, n, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}
bool ingest_ft_dec_i64(const char *p, size_t n, int64_t *out);
bool ingest_ft_hex_u64(const char *p, size_t n, uint64_t *out);

/* r->kv / r->nkv from NUL-terminated text, and lookups in them. */
void ingest_ft_parse_kv(ftrace_reader *r, const char *text);
/* Inline, its compare too: a Perfetto switch looks up ten pairs among its
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
    return kv && ingest_ft_dec_u32(kv->val, kv->vlen, out);
}
static inline bool ingest_ft_kv_hex(const ftrace_reader *r, const char *key, uint64_t *out)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv && ingest_ft_hex_u64(kv->val, kv->vlen, out);
}
static inline bool ingest_ft_kv_i64(const ftrace_reader *r, const char *key, int64_t *out)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv && ingest_ft_dec_i64(kv->val, kv->vlen, out);
}
/* attribute attr = the value of pair key, if there is one */
static inline int ingest_ft_attr_kv(ftrace_reader *r, const char *attr, const char *key)
{
    const ftrace_kv *kv = ingest_ft_kv_get(r, key);
    return kv ? ingest_ft_attr(r, attr, kv->val, kv->vlen) : 0;
}
/* A key with its length, measured by the compiler (FTRACE_KEY("pid")). */
typedef struct ftrace_key {
    const char *s;
    size_t n;
} ftrace_key;
#define FTRACE_KEY(lit) {lit, sizeof(lit) - 1}
/* An attribute for each of the keys (ended by {NULL, 0}) that has a pair,
 * in that order, with the pair's value. */
int ingest_ft_attr_same(ftrace_reader *r, const ftrace_key *keys);
/* func= a function: the symbol, without trace-cmd's /0x.. size suffix; an
 * address when no symbol was known (0x + lowercase hex) */
int ingest_ft_attr_func(ftrace_reader *r, const char *v, size_t n);
/* "EVENT: cannot parse fields '...'"; returns -1 */
int ingest_ft_bad_fields(ftrace_reader *r, const ftrace_line *li);

/* ---- canonical pairs (ftrace_text.c) and the mapping (ftrace_map.c,
 * ftrace_sched.c) ---- */

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

/* Maps the canonical pairs of event li (kind k) onto ev and the
 * attributes, declaring the threads and processes the event creates or
 * renames.  Returns 0, -1 (err set) or FTRACE_BAD_FIELDS. */
int ingest_ft_map(ftrace_reader *r, ftrace_ev_kind k, const ftrace_line *li, db_event *ev);
int ingest_ft_map_switch(ftrace_reader *r, db_event *ev);
/* reason NULL: sched_waking, kept raw; else rl bytes (FTRACE_LIT: a
 * literal's length, not measured at each wakeup) */
int ingest_ft_map_wakeup(ftrace_reader *r, db_event *ev, const char *reason, size_t rl);
int ingest_ft_map_newtask(ftrace_reader *r, const db_event *ev);
int ingest_ft_map_fork(ftrace_reader *r, db_event *ev);
int ingest_ft_map_exec(ftrace_reader *r);
int ingest_ft_map_rename(ftrace_reader *r);
/* binder_transaction / binder_transaction_received (ftrace_binder.c) */
int ingest_ft_map_binder(ftrace_reader *r, db_event *ev, bool received);
void ingest_ft_binder_free(struct ingest_binder *b);

/* One event whose canonical pairs are in r->kv: declares its task,
 * checks its thread's time order, maps it and hands it to the sink
 * (ftrace.c).  li->ctx must be set.  Returns 0, -1 (err set) or
 * FTRACE_BAD_FIELDS. */
int ingest_ft_event(ftrace_reader *r, ftrace_line *li, ftrace_ev_kind k);

/* ---- the reader's state outside the line loop (ftrace.c), for the
 * trace.dat reader, which shares the thread table and the mapping ---- */

/* Returns 0, or -1 with err set (out of memory). */
int ingest_ft_reader_init(ftrace_reader *r, const char *path, const ingest_sink *sink,
                          ingest_stats *st, char *err, size_t errlen);
void ingest_ft_reader_free(ftrace_reader *r);

/* ---- sink calls as bytes (calls.c): the ingest pipe and the reorder
 * window keep calls to make later ---- */

enum { INGEST_C_PROC = 1, INGEST_C_THREAD, INGEST_C_SYMBOL, INGEST_C_EVENT, INGEST_C_SKIP, INGEST_C_PROGRESS };

/* Bytes of a call (tag included), and the call written at q. */
size_t ingest_call_named_size(size_t num, const char *name); /* proc: num 4, symbol: num 8 */
void ingest_call_named_put(char *q, uint8_t tag, const void *num, size_t size, const char *name);
/* An event's call inline, its name copied as a few moves: one an event,
 * where the calls and memcpy's for the name and the db_event cost more
 * than the copy.  The name's length is name_len where the reader gave it
 * (ingest_ft_event: every event of the ftrace family), not measured
 * again by strlen. */
/* an event's call with a name of nl bytes */
static inline size_t ingest_call_event_bytes(const db_event *ev, size_t nl)
{
    return 1 + sizeof *ev + 4 + nl + 1 + ev->attrs_len;
}
static inline size_t ingest_call_event_size(const db_event *ev)
{
    return ingest_call_event_bytes(ev, db_event_name_len(ev));
}
/* size: ingest_call_event_size's, which measured the name already */
static inline void ingest_call_event_put(char *q, const db_event *ev, size_t size)
{
    const char *name = ev->name ? ev->name : "";
    uint32_t nl = (uint32_t)(size - (1 + sizeof *ev + 4 + 1 + ev->attrs_len));
    *q++ = INGEST_C_EVENT;
    memcpy(q, ev, sizeof *ev);
    q += sizeof *ev;
    memcpy(q, &nl, 4);
    q += 4;
    base_copy_short(q, name, nl + 1);
    q += nl + 1;
    if (ev->attrs_len)
        memcpy(q, ev->attrs, ev->attrs_len);
}
#define INGEST_CALL_THREAD_SIZE (1 + sizeof(db_thread))
void ingest_call_thread_put(char *q, const db_thread *t);
#define INGEST_CALL_PROGRESS_SIZE (1 + 16)
void ingest_call_progress_put(char *q, uint64_t done, uint64_t total);
/* Makes the calls of [q, q + len) on s; 0, or -1 with err set. */
int ingest_calls_replay(const char *q, size_t len, const ingest_sink *s, char *err, size_t errlen);

/* ---- the reorder window (reorder.c) ----
 *
 * Per-CPU ring buffers merge into one text with small inversions (and
 * tools append lines of their own: systrace's `0.0: clock_sync`).  The
 * window holds the last INGEST_REORDER_WINDOW events, each with the
 * declarations its line made, and hands them on in time order (stable:
 * equal times keep file order).  An event earlier than one already
 * handed on cannot be put back: it goes on at that event's time, and is
 * counted (st->late); one the window put back in place is counted in
 * st->reordered. */
#define INGEST_REORDER_WINDOW 4096
typedef struct ingest_reorder ingest_reorder;
/* *lineno: the reader's current line, named when back refuses an event.
 * NULL when out of memory. */
ingest_reorder *ingest_reorder_new(const ingest_sink *back, ingest_stats *st, const char *path,
                                   const uint64_t *lineno);
/* The sink the reader calls (valid while ro lives). */
const ingest_sink *ingest_reorder_front(ingest_reorder *ro);
/* Hands on everything held (declarations not followed by their event are
 * dropped: the line that made them failed).  0, or -1 with err set. */
int ingest_reorder_finish(ingest_reorder *ro, char *err, size_t errlen);
void ingest_reorder_free(ingest_reorder *ro);

/* A text reader of the family (ftrace text, perf script) over lines of
 * lb: *r behind a reorder window *ro (reorder.c), syscall names
 * when opts names the machine.  0, or -1 with err set; either way
 * ingest_ft_text_end ends it.  end: the window handed on when rc is 0,
 * then both freed; 0 or -1. */
int ingest_ft_text_begin(ftrace_reader *r, ingest_reorder **ro, const ingest_lines *lb, const ingest_sink *sink,
                         const ingest_opts *opts, ingest_stats *st, char *err, size_t errlen);
int ingest_ft_text_end(ftrace_reader *r, ingest_reorder *ro, int rc, char *err, size_t errlen);

/* ---- the trace.dat reader (tracedat.c) ---- */

/* Reads the trace-cmd binary file at path into sink: every record becomes
 * the event its `trace-cmd report` line becomes, read from the record's
 * fields (tracedat_fields.c), with nanosecond timestamps.  Errors:
 * "PATH: ..." or "PATH: offset N: ..." (N: the record's offset). */
int ingest_tracedat_read(const char *path, const ingest_sink *sink, ingest_stats *st, char *err,
                         size_t errlen);

/* A record's fields to its canonical pairs (tracedat_fields.c). */
struct tep_handle;
struct tep_event;
struct tep_record;
typedef struct dat_fields dat_fields; /* what each event id needs; a value buffer */
struct ingest_tracelib;
dat_fields *ingest_dat_fields_new(struct tep_handle *tep, const struct ingest_tracelib *lib);
void ingest_dat_fields_free(dat_fields *df);
/* The canonical pairs of rec into r->kv (pointing into df, the record, or
 * tep's symbols: valid until the next call); *ev its event, *kind its
 * kind.  Returns 0; 1 when the event is not read from fields (the caller
 * reads its printed text instead); 2 when the record's event id is not in
 * the file's formats; FTRACE_BAD_FIELDS when the record is too short for
 * its fields; -1 out of memory. */
int ingest_dat_pairs(dat_fields *df, ftrace_reader *r, struct tep_record *rec, struct tep_event **ev,
                     ftrace_ev_kind *kind);

#endif
