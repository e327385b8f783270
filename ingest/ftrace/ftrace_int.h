/* ingest/ftrace/ftrace_int.h -- the ftrace family's internals (not
 * public): the readers of tracefs and trace-cmd text (ftrace.c, with its
 * scanners in ftrace_lex.re, systrace pages in ftrace_page.c, names ahead
 * in ftrace_ahead.c) and of trace.dat (tracedat.c, tracedat_fields.c),
 * and the mapping's own helpers.  What the other kernel readers use of the
 * family, the mapping, is in ftrace_map_int.h. */
#ifndef ARGUSQ_INGEST_FTRACE_INT_H
#define ARGUSQ_INGEST_FTRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ftrace_map_int.h"

/* ---- ftrace line scanner (re2c) ---- */

typedef enum ftrace_lex_status {
    FTRACE_LEX_OK = 0,
    FTRACE_LEX_NOMATCH, /* not an ftrace event line at all */
    FTRACE_LEX_BAD_TS,
    FTRACE_LEX_BAD_PID,
    FTRACE_LEX_BAD_CPU,
    FTRACE_LEX_BAD_FLAGS,
} ftrace_lex_status;

ftrace_lex_status ingest_ftrace_lex_line(char *line, ftrace_line *out);
/* 1 if the NUL-terminated line is a trace-cmd/tracefs header that holds
 * no event (cpus=2, version = 6, CPU 0 is empty, CPU:1 [LOST 3 EVENTS]). */
int ingest_ftrace_lex_header(const char *line);

/* Splits NUL-terminated field text into key=value pairs.  `[key=v]` counts
 * as a pair; a bare word after a pair extends that pair's value (a comm
 * with a space); a lone `==>` separates.  Returns the number of pairs, or
 * -1 if the text is not in key=value form (no pair, a bare word before the
 * first pair, or more than max pairs). */
int ingest_ftrace_lex_kv(const char *text, ftrace_kv *kv, int max);

/* ---- the text reader (ftrace.c) ---- */

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
 * `<...>` with no name known.  _new: for the file lb reads (html: a
 * systrace page); NULL when out of memory.  Reads nothing yet. */
ingest_ft_ahead *ingest_ft_ahead_new(const ingest_lines *lb, bool html);
void ingest_ft_ahead_free(ingest_ft_ahead *a);

/* ---- the mapping's attributes (ftrace_fields.c) ---- */

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

/* Append key=value to the current event's attributes (key NUL-terminated).
 * The wrappers measure the key inline: a literal's length is a constant,
 * and strlen of the keys showed in the reading thread of an ftrace ingest
 * (docs/PERFORMANCE.md). */
int ingest_ft_attr_n(ftrace_reader *r, const char *key, size_t kl, const char *val, size_t vlen);
static inline int ingest_ft_attr(ftrace_reader *r, const char *key, const char *val, size_t vlen)
{
    return ingest_ft_attr_n(r, key, strlen(key), val, vlen);
}

/* ---- the thread table (ftrace.c) ---- */

/* Renames process pid (exec); no call if the name is the same. */
int ingest_ft_rename_proc(ftrace_reader *r, uint32_t pid, const char *name, size_t n);
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
    size_t n = 2 + base_fmt_hex(p + kl + 3, v, 1);
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
    return ingest_ft_attr(r, key, b, base_fmt_i64(b, v));
}
static inline int ingest_ft_attr_hex(ftrace_reader *r, const char *key, uint64_t v) /* 0x + lowercase hex */
{
    char b[24] = "0x";
    return ingest_ft_attr(r, key, b, 2 + base_fmt_hex(b + 2, v, 1));
}

/* r->kv / r->nkv from NUL-terminated text. */
void ingest_ft_parse_kv(ftrace_reader *r, const char *text);

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

/* ---- the mapping (ftrace_map.c, ftrace_sched.c, ftrace_binder.c) ---- */

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
