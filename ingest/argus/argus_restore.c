/* ingest/argus/argus_restore.c -- the reading side of argusq's dump extensions
 * to the Argus trace format (docs/ARGUS-DUMP.md); dump/dump.c writes
 * them.  A file whose first record is `dump ...` is a dump:
 *
 *   dump format=F [name="N"] [source="S"] [ingested=T] [events=N]
 *   label "KEY" "VALUE"          the trace's labels   } before any
 *   rule "TEXT"                  its user rules        } declaration or event
 *   TS TID TYPE [begin|end|send|recv] [@KEY=VALUE ...] [KEY=VALUE ...]
 *
 * where TYPE may be `raw`, @name= @cpu= @ctx= @obj= @val= give the event's
 * fields as the archive held them (no key is looked at for them), every
 * other KEY=VALUE is an attribute taken byte for byte (no hex number
 * rewritten), @attr="K=V" an attribute whose key is not a plain word, and
 * strings know \n \t \r \xHH besides \" and \\.
 *
 * The header (dump, label, rule) is read twice: by ingest_dump_head_read
 * before the ingest begins (the trace's format, name, labels and rules
 * must be known before its writer and graph start), then by the reader,
 * which checks it and goes on to the events. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_int.h"

static int bad(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(char *msg, size_t msglen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return -1;
}

static bool is(const char *s, const char *p, size_t n) { return strlen(s) == n && memcmp(s, p, n) == 0; }

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t ingest_argus_dump_text(const argus_val *v, char *dst)
{
    if (v->kind != ARGUS_TK_STR) { /* as written: a dump's 0xAB stays 0xAB */
        memmove(dst, v->p, v->n);
        return v->n;
    }
    size_t o = 0;
    for (size_t i = 0; i < v->n; i++) {
        char c = v->p[i];
        if (c == '\\' && i + 1 < v->n) {
            char e = v->p[i + 1];
            int h1, h2;
            if (e == '"' || e == '\\' || e == 'n' || e == 't' || e == 'r') {
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                i++;
            } else if (e == 'x' && i + 3 < v->n && (h1 = hexval(v->p[i + 2])) >= 0 &&
                       (h2 = hexval(v->p[i + 3])) >= 0 && (h1 | h2)) {
                c = (char)(h1 << 4 | h2);
                i += 3;
            } /* any other backslash is kept, as in version 1 */
        }
        dst[o++] = c;
    }
    return o;
}

/* ---- the header records ---- */

/* `dump format=F ...` after the word `dump`, at p. */
int ingest_argus_dump_record(const char *p, ingest_dump_head *h, char *msg, size_t msglen)
{
    argus_tok t;
    argus_tk k;
    bool have_format = false;
    memset(h, 0, sizeof *h);
    while ((k = ingest_argus_lex(&p, &t)) != ARGUS_TK_END) {
        if (k == ARGUS_TK_ERR)
            return bad(msg, msglen, "bad dump record: %s: %.40s", t.err, t.at);
        if (k != ARGUS_TK_KV)
            return bad(msg, msglen, "bad dump record: unexpected \"%.40s\" (want KEY=VALUE)", t.at);
        char *dst = NULL;
        size_t cap = 0;
        if (is("format", t.key, t.klen)) {
            dst = h->format, cap = sizeof h->format;
            have_format = true;
        } else if (is("name", t.key, t.klen))
            dst = h->name, cap = sizeof h->name;
        else if (is("source", t.key, t.klen))
            dst = h->source, cap = sizeof h->source;
        else if (is("events", t.key, t.klen) || is("ingested", t.key, t.klen)) {
            if (t.v.kind != ARGUS_TK_NUM || t.v.neg)
                return bad(msg, msglen, "bad dump record: %.*s= wants a number", (int)t.klen, t.key);
            if (t.key[0] == 'e') {
                h->events = t.v.num;
                h->have_events = true;
            }
            continue;
        } else
            continue; /* a later argusq's: not needed to read the events */
        if (t.v.n >= cap)
            return bad(msg, msglen, "bad dump record: %.*s= is too long", (int)t.klen, t.key);
        char tmp[512];
        size_t n = ingest_argus_dump_text(&t.v, tmp);
        memcpy(dst, tmp, n);
        dst[n] = '\0';
    }
    if (!have_format)
        return bad(msg, msglen, "bad dump record: missing format= (the dumped trace's format)");
    static const ingest_format known[] = {INGEST_FTRACE_TRACE, INGEST_TRACE_CMD_REPORT, INGEST_ARGUS,
                                          INGEST_TRACE_DAT,    INGEST_SYSTRACE_HTML,    INGEST_CTF,
                                          INGEST_PERF_SCRIPT,  INGEST_PERF_DATA,  INGEST_PERFETTO};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(h->format, ingest_format_name(known[i])) == 0)
            return 0;
    return bad(msg, msglen, "bad dump record: unknown format \"%s\"", h->format);
}

/* `label "KEY" "VALUE"` / `rule "TEXT"` after the word, at p: the strings
 * unescaped into a[0..n) (each malloc'd; n is 2 or 1). */
int ingest_argus_dump_strings(const char *p, const char *what, char **a, int n, char *msg, size_t msglen)
{
    argus_tok t;
    const char *form = n == 2 ? "label \"KEY\" \"VALUE\"" : "rule \"TEXT\"";
    for (int i = 0; i < n; i++)
        a[i] = NULL;
    for (int i = 0; i <= n; i++) {
        argus_tk k = ingest_argus_lex(&p, &t);
        if (k == ARGUS_TK_ERR || (i < n ? k != ARGUS_TK_STR : k != ARGUS_TK_END)) {
            for (int j = 0; j < i; j++)
                free(a[j]);
            if (k == ARGUS_TK_ERR)
                return bad(msg, msglen, "bad %s record: %s (want %s)", what, t.err, form);
            return bad(msg, msglen, "bad %s record (want %s)", what, form);
        }
        if (i == n)
            break;
        if (!(a[i] = malloc(t.v.n + 1))) {
            for (int j = 0; j < i; j++)
                free(a[j]);
            return bad(msg, msglen, "out of memory");
        }
        a[i][ingest_argus_dump_text(&t.v, a[i])] = '\0';
    }
    return 0;
}

static int push(char ***v, size_t n, char *s)
{
    char **p = realloc(*v, (n + 1) * sizeof *p);
    if (!p)
        return -1;
    p[n] = s;
    *v = p;
    return 0;
}

void ingest_dump_head_free(ingest_dump_head *h)
{
    for (size_t i = 0; i < 2 * h->nlabels; i++)
        free(h->labels[i]);
    for (size_t i = 0; i < h->nrules; i++)
        free(h->rules[i]);
    free(h->labels);
    free(h->rules);
    free(h->rule_lines);
    h->labels = h->rules = NULL;
    h->rule_lines = NULL;
    h->nlabels = h->nrules = 0;
}

/* One header line: 1 read (a header record), 0 the header ends here, -1 error. */
static int head_line(const char *line, uint64_t lineno, ingest_dump_head *h, bool *dump, char *msg,
                     size_t msglen)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#')
        return 1;
    argus_tok t;
    if (ingest_argus_lex(&p, &t) != ARGUS_TK_WORD)
        return 0;
    if (!*dump)
        return is("dump", t.v.p, t.v.n) ? (*dump = true, ingest_argus_dump_record(p, h, msg, msglen) < 0 ? -1 : 1)
                                        : 0;
    if (is("label", t.v.p, t.v.n)) {
        char *kv[2];
        if (ingest_argus_dump_strings(p, "label", kv, 2, msg, msglen) < 0)
            return -1;
        if (push(&h->labels, 2 * h->nlabels, kv[0]) < 0 || push(&h->labels, 2 * h->nlabels + 1, kv[1]) < 0) {
            free(kv[0]), free(kv[1]);
            return bad(msg, msglen, "out of memory");
        }
        h->nlabels++;
        return 1;
    }
    if (is("rule", t.v.p, t.v.n)) {
        char *text;
        if (ingest_argus_dump_strings(p, "rule", &text, 1, msg, msglen) < 0)
            return -1;
        uint64_t *ln = realloc(h->rule_lines, (h->nrules + 1) * sizeof *ln);
        if (ln)
            h->rule_lines = ln;
        if (!ln || push(&h->rules, h->nrules, text) < 0) {
            free(text);
            return bad(msg, msglen, "out of memory");
        }
        h->rule_lines[h->nrules++] = lineno;
        return 1;
    }
    return 0;
}

int ingest_dump_head_read(const char *path, ingest_dump_head *h, char *err, size_t errlen)
{
    ingest_lines lb;
    memset(h, 0, sizeof *h);
    if (ingest_lines_open(&lb, path, err, errlen) < 0)
        return -1;
    bool dump = false;
    int rc = 0;
    for (;;) {
        char *line;
        size_t len;
        int n = ingest_lines_next(&lb, &line, &len, err, errlen);
        if (n <= 0) {
            rc = n;
            break;
        }
        if (lb.lineno == 1) {
            if (strcmp(line, "#argus-trace 1") != 0)
                break; /* not ours to judge: the reader says what is wrong */
            continue;
        }
        char msg[400];
        int got = head_line(line, lb.lineno, h, &dump, msg, sizeof msg);
        if (got < 0) {
            ingest_dump_head_free(h);
            ingest_errf(err, errlen, "%s:%llu: %s", path, (unsigned long long)lb.lineno, msg);
            rc = -1;
            break;
        }
        if (got == 0)
            break;
    }
    ingest_lines_close(&lb);
    if (rc < 0)
        return -1;
    if (!dump)
        ingest_dump_head_free(h);
    return dump ? 1 : 0;
}

/* ---- events ---- */

const char *ingest_argus_ctx_name(int ctx)
{
    static const char *const names[] = {[DB_CTX_THREAD] = "thread", [DB_CTX_HARDIRQ] = "hardirq",
                                        [DB_CTX_SOFTIRQ] = "softirq", [DB_CTX_UNKNOWN] = "unknown"};
    return ctx >= DB_CTX_THREAD && ctx <= DB_CTX_UNKNOWN ? names[ctx] : "unknown";
}

static bool u64_of(const argus_tok *t, uint64_t max, uint64_t *out)
{
    if (t->v.kind != ARGUS_TK_NUM || t->v.neg || t->v.num > max)
        return false;
    *out = t->v.num;
    return true;
}

static int dump_key(const argus_tok *t, argus_attrs *at, db_event *ev, char *name, size_t namecap,
                    char *msg, size_t msglen)
{
    const char *k = t->key + 1;
    size_t kn = t->klen - 1;
    uint64_t v;
    if (is("name", k, kn)) {
        if (t->v.n >= namecap)
            return bad(msg, msglen, "@name= is too long (at most %zu bytes)", namecap - 1);
        name[ingest_argus_dump_text(&t->v, name)] = '\0';
        ev->name = name;
    } else if (is("cpu", k, kn)) {
        if (!u64_of(t, DB_CPU_NONE - 1, &v))
            return bad(msg, msglen, "bad value for @cpu=: \"%.*s\" (want a number below %u)",
                       t->v.n > 40 ? 40 : (int)t->v.n, t->v.p, DB_CPU_NONE);
        ev->cpu = (uint16_t)v;
    } else if (is("ctx", k, kn)) {
        int i = DB_CTX_THREAD;
        while (i <= DB_CTX_UNKNOWN && !(t->v.kind == ARGUS_TK_WORD && is(ingest_argus_ctx_name(i), t->v.p, t->v.n)))
            i++;
        if (i > DB_CTX_UNKNOWN)
            return bad(msg, msglen, "bad value for @ctx=: \"%.*s\" (want thread, hardirq, softirq or unknown)",
                       t->v.n > 40 ? 40 : (int)t->v.n, t->v.p);
        ev->ctx = (uint8_t)i;
    } else if (is("obj", k, kn)) {
        if (!u64_of(t, UINT64_MAX, &v))
            return bad(msg, msglen, "bad value for @obj=: \"%.*s\" (want a number)",
                       t->v.n > 40 ? 40 : (int)t->v.n, t->v.p);
        ev->obj = v;
    } else if (is("val", k, kn)) {
        if (t->v.kind != ARGUS_TK_NUM || (t->v.neg ? t->v.num > (uint64_t)INT64_MAX + 1 : t->v.num > INT64_MAX))
            return bad(msg, msglen, "bad value for @val=: \"%.*s\" (want a signed 64-bit number)",
                       t->v.n > 40 ? 40 : (int)t->v.n, t->v.p);
        ev->val = t->v.neg ? (int64_t)(0 - t->v.num) : (int64_t)t->v.num;
    } else if (is("attr", k, kn)) {
        char *p = ingest_attr_reserve(at->ab, *at->alen, at->acap, t->v.n + 1);
        if (!p)
            return bad(msg, msglen, "out of memory (attributes)");
        size_t n = ingest_argus_dump_text(&t->v, p);
        p[n] = '\0';
        *at->alen += n + 1;
    } else
        return bad(msg, msglen, "unknown dump key @%.*s= (want @name, @cpu, @ctx, @obj, @val or @attr)",
                   kn > 40 ? 40 : (int)kn, k);
    return 0;
}

int ingest_argus_dump_event(const char *text, argus_attrs *at, db_event *ev, char *name, size_t namecap,
                            char *msg, size_t msglen)
{
    const char *p = text;
    argus_tok t;
    argus_tk k;
    int type = ingest_argus_type(&p, true, msg, msglen);
    if (type < 0)
        return -1;
    const char *tn = db_evtype_name(type);
    ev->type = (uint8_t)type;
    ev->name = tn;
    ev->phase = DB_PH_NONE;
    ev->obj = 0;
    ev->val = 0;
    while ((k = ingest_argus_lex(&p, &t)) != ARGUS_TK_END) {
        if (k == ARGUS_TK_ERR)
            return bad(msg, msglen, "%s: %s: %.40s", tn, t.err, t.at);
        if (k == ARGUS_TK_WORD && ev->phase == DB_PH_NONE &&
            (is("begin", t.v.p, t.v.n) || is("send", t.v.p, t.v.n)))
            ev->phase = DB_PH_BEGIN;
        else if (k == ARGUS_TK_WORD && ev->phase == DB_PH_NONE &&
                 (is("end", t.v.p, t.v.n) || is("recv", t.v.p, t.v.n)))
            ev->phase = DB_PH_END;
        else if (k != ARGUS_TK_KV) {
            size_t n = strcspn(t.at, " \t");
            return bad(msg, msglen, "%s: unexpected \"%.*s\"", tn, n > 60 ? 60 : (int)n, t.at);
        } else if (t.key[0] == '@') {
            if (dump_key(&t, at, ev, name, namecap, msg, msglen) < 0)
                return -1;
        } else {
            char *a = ingest_attr_reserve(at->ab, *at->alen, at->acap, t.klen + t.v.n + 2);
            if (!a)
                return bad(msg, msglen, "out of memory (attributes)");
            memcpy(a, t.key, t.klen);
            a[t.klen] = '=';
            size_t n = ingest_argus_dump_text(&t.v, a + t.klen + 1);
            a[t.klen + 1 + n] = '\0';
            *at->alen += t.klen + n + 2;
        }
    }
    return 0;
}
