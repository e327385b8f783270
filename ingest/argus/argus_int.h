/* ingest/argus/argus_int.h -- internals of the Argus trace format reader
 * (not public).
 *
 *   ingest_argus_lex    the re2c token scanner of an Argus line (argus_lex.re)
 *   ingest_argus_event  one event's text, TYPE onwards, onto a db_event and
 *                       its attributes (argus_event.c); shared by the Argus
 *                       reader and the ftrace mapping's `argus:` markers
 *                       (ftrace/ftrace_map.c)
 *   ingest_argus_read   the Argus trace format reader (argus.c) */
#ifndef ARGUSQ_INGEST_ARGUS_INT_H
#define ARGUSQ_INGEST_ARGUS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest_int.h"

/* ---- tokens ---- */

typedef enum argus_tk {
    ARGUS_TK_END = 0, /* end of the line */
    ARGUS_TK_NUM,     /* 123, 0x1f, -4 */
    ARGUS_TK_STR,     /* "quoted", with \" and \\ escapes */
    ARGUS_TK_WORD,    /* anything else without blanks, '"' or '=' */
    ARGUS_TK_KV,      /* KEY=VALUE, VALUE a number, word or string */
    ARGUS_TK_ERR,     /* a bad token; err says why */
} argus_tk;

typedef struct argus_val {
    argus_tk kind; /* NUM, STR or WORD */
    const char *p; /* the text as written; STR: inside the quotes, escaped */
    size_t n;
    uint64_t num;  /* NUM: the magnitude */
    bool neg, hex; /* NUM: a leading '-'; written with 0x */
} argus_val;

typedef struct argus_tok {
    argus_tk kind;
    const char *at;  /* where the token starts */
    const char *key; /* KV: the key */
    size_t klen;
    argus_val v;     /* NUM, STR, WORD: the token; KV: its value */
    const char *err; /* ERR: what is wrong at `at` */
} argus_tok;

/* The next token of NUL-terminated text at *pp (blanks before it skipped);
 * *pp is left after it.  Tokens must be separated by blanks; a number that
 * does not fit in 64 bits is an error. */
argus_tk ingest_argus_lex(const char **pp, argus_tok *t);

/* A whole number over [p, p + n): decimal or 0x hex, no sign. */
bool ingest_argus_u64(const char *p, size_t n, uint64_t *out);

/* The text of a value: STR unescaped into dst (at most v->n bytes), other
 * kinds as written, except hex numbers, written as 0x + lowercase hex
 * (dst needs v->n + 20 bytes).  Returns the length written. */
size_t ingest_argus_val_text(const argus_val *v, char *dst);

/* ---- one event ---- */

/* The attribute buffer an event's key=value strings are appended to (the
 * reader's own, reused for every event; see ingest_attr_reserve). */
typedef struct argus_attrs {
    char **ab;
    size_t *alen, *acap;
} argus_attrs;

/* The event type at *p (left after it): a db_evtype, `raw` only if raw;
 * -1 with msg = what is wrong. */
int ingest_argus_type(const char **p, bool raw, char *msg, size_t msglen);

/* Maps NUL-terminated text `TYPE [WORD ...] [KEY=VALUE ...]` onto ev
 * (name, type, phase, obj, val; the caller sets ts, tid, pid, cpu, ctx)
 * and appends every KEY=VALUE to the attributes, in line order.  Returns 0,
 * or -1 with msg = what is wrong (without "PATH:LINE: "). */
int ingest_argus_event(const char *text, argus_attrs *at, db_event *ev, char *msg, size_t msglen);

/* ---- argusq's dump extensions (argus_restore.c, docs/ARGUS-DUMP.md) ---- */

/* A value's text as a dump means it: numbers and words as written, strings
 * unescaped with \n \t \r \xHH besides \" and \\ (never longer than
 * v->n; dst may be the token's own text).  Returns the length. */
size_t ingest_argus_dump_text(const argus_val *v, char *dst);

/* The `dump` record's KEY=VALUEs, text after the word `dump`. */
int ingest_argus_dump_record(const char *p, ingest_dump_head *h, char *msg, size_t msglen);

/* The strings of a `label "KEY" "VALUE"` (n = 2) or `rule "TEXT"` (n = 1)
 * record after its word, each malloc'd into a[]. */
int ingest_argus_dump_strings(const char *p, const char *what, char **a, int n, char *msg, size_t msglen);

/* A dump's event, TYPE onwards, onto ev (name, type, phase, obj, val, and
 * cpu and ctx when given; the caller sets ts, tid, pid and the defaults
 * DB_CPU_NONE, DB_CTX_THREAD): `@name=` is copied into name[namecap]. */
int ingest_argus_dump_event(const char *text, argus_attrs *at, db_event *ev, char *name, size_t namecap,
                            char *msg, size_t msglen);

/* ---- the reader ---- */

/* Reads every remaining line of lb (none read yet) into sink. */
int ingest_argus_read(ingest_lines *lb, const ingest_sink *sink, ingest_stats *st, char *err,
                      size_t errlen);

#endif
