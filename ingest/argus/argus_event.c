/* ingest/argus/argus_event.c -- one Argus event, `TYPE [WORD ...] [KEY=VALUE ...]`,
 * onto a db_event (spec, "Events"): the words and keys each type takes,
 * the keys it requires, the keys that must be numbers, and which key is
 * the event's obj and val (db.h).  Used for the events of an Argus trace
 * (argus.c) and for the `argus:` markers of an ftrace trace (ftrace_map.c),
 * so both are validated and mapped alike.
 *
 * Every KEY=VALUE of the text is kept as an attribute, in line order,
 * unknown keys included: strings unquoted and unescaped, hex numbers as
 * 0x + lowercase hex, everything else as written. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "argus_int.h"

/* how a known key's value is checked */
enum {
    K_ANY = 0, /* any value */
    K_U64,     /* ADDR, PORT, NS, a number: unsigned */
    K_U32,     /* PID, TID */
    K_I64,     /* a signed number (ret=, value=); beyond INT64_MAX wraps */
    K_ADDRS,   /* ADDR,ADDR,... */
    K_STAGE,   /* a run-loop observer stage */
};

/* when a known key is required */
enum { R_NO = 0, R_YES, R_BEGIN };

/* the words a type takes */
enum { W_NONE = 0, W_BEGIN_END, W_SEND_RECV };

#define KEYS_MAX 7

typedef struct kdesc {
    const char *key;
    unsigned char kind, req;
} kdesc;

typedef struct tdesc {
    unsigned char words;
    signed char obj; /* the index in keys of the key that is ev->obj, or -1 */
    signed char val; /* of the key that is ev->val, or -1 */
    kdesc keys[KEYS_MAX];
} tdesc;

/* syscall: nr= or name= is required (checked on its own); ret= is the val
 * of an end only; obj is UINT64_MAX when there is no nr=. */
static const tdesc types[DB_EV__COUNT] = {
    [DB_EV_SYSCALL] = {W_BEGIN_END, 0, 1, {{"nr", K_U64, R_NO}, {"ret", K_I64, R_NO}}},
    [DB_EV_BACKTRACE] = {W_NONE, -1, -1, {{"frames", K_ADDRS, R_YES}}},
    [DB_EV_NSAPP_EVENT] = {W_BEGIN_END, -1, -1, {{"class", K_ANY, R_BEGIN}}},
    [DB_EV_WAIT] = {W_NONE, -1, -1, {{"reason", K_ANY, R_YES}, {"timeout", K_U64, R_NO}}},
    [DB_EV_WAKEUP] = {W_NONE, 0, -1, {{"tid", K_U32, R_YES}}},
    [DB_EV_INTERRUPT] = {W_BEGIN_END, 0, -1, {{"irq", K_U64, R_YES}}},
    [DB_EV_TIMESHARE] = {W_BEGIN_END, -1, -1, {{NULL, 0, 0}}},
    [DB_EV_DISPATCH_ENQUEUE] = {W_NONE, 1, -1,
                                {{"queue", K_U64, R_YES}, {"block", K_U64, R_YES}}},
    [DB_EV_DISPATCH_INVOKE] = {W_BEGIN_END, 1, -1,
                               {{"queue", K_U64, R_NO}, {"block", K_U64, R_BEGIN}, {"func", K_U64, R_NO}}},
    [DB_EV_DISPATCH_MIG_SERVICE] = {W_BEGIN_END, -1, -1, {{NULL, 0, 0}}},
    [DB_EV_RUNLOOP_SUBMIT] = {W_NONE, 1, -1, {{"rl", K_U64, R_YES}, {"block", K_U64, R_YES}}},
    [DB_EV_RUNLOOP_INVOKE] = {W_BEGIN_END, 1, -1,
                              {{"rl", K_U64, R_NO}, {"block", K_U64, R_BEGIN}, {"func", K_U64, R_NO}}},
    [DB_EV_RUNLOOP_OBSERVER] = {W_NONE, -1, -1, {{"stage", K_STAGE, R_YES}}},
    [DB_EV_MACH_MSG] = {W_SEND_RECV, 0, -1,
                        {{"dest", K_U64, R_YES}, {"reply", K_U64, R_NO}, {"kmsg", K_U64, R_NO},
                         {"voucher", K_U64, R_NO}, {"peer", K_U32, R_NO}}},
    [DB_EV_VOUCHER] = {W_NONE, 0, -1, {{"addr", K_U64, R_YES}, {"on_behalf_of", K_U32, R_YES}}},
    [DB_EV_TIMER_ARM] = {W_NONE, 0, -1,
                         {{"timer", K_U64, R_YES}, {"deadline", K_U64, R_YES}, {"func", K_U64, R_NO}}},
    [DB_EV_TIMER_CANCEL] = {W_NONE, 0, -1, {{"timer", K_U64, R_YES}}},
    [DB_EV_TIMER_CALLOUT] = {W_BEGIN_END, 0, -1, {{"timer", K_U64, R_YES}}},
    [DB_EV_FLAG_WRITE] = {W_NONE, 0, 1, {{"addr", K_U64, R_YES}, {"value", K_I64, R_YES}}},
    [DB_EV_FLAG_READ] = {W_NONE, 0, 1, {{"addr", K_U64, R_YES}, {"value", K_I64, R_YES}}},
};

static const char *const stages[] = {"entry",          "before_timers", "before_sources",
                                     "before_waiting", "after_waiting", "exit"};

static int bad(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(char *msg, size_t msglen, const char *fmt, ...)
{
    if (msg && msglen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msglen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* the text of a token for a message, at most 60 bytes */
#define SHOW(p, n) ((n) > 60 ? 60 : (int)(n)), (p)

/* Is the word p (n bytes) the string s?  A loop, not strncmp: the words
 * are short and each key of an event is compared with every key of its
 * type, so the call cost more than the compare. */
static bool is(const char *s, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == p[i])
        i++;
    return i == n && s[i] == '\0';
}

static bool addr_list(const char *p, size_t n)
{
    const char *e = p + n;
    for (;;) {
        const char *c = memchr(p, ',', (size_t)(e - p));
        const char *w = c ? c : e;
        uint64_t v;
        if (!ingest_argus_u64(p, (size_t)(w - p), &v))
            return false;
        if (!c)
            return true;
        p = c + 1;
    }
}

/* Does v suit a key of kind k?  *num gets a number's value. */
static bool check_value(int k, const argus_val *v, uint64_t *num)
{
    *num = v->num;
    switch (k) {
    case K_U64:
        return v->kind == ARGUS_TK_NUM && !v->neg;
    case K_U32:
        return v->kind == ARGUS_TK_NUM && !v->neg && v->num <= UINT32_MAX;
    case K_I64:
        if (v->kind != ARGUS_TK_NUM || (v->neg && v->num > (uint64_t)INT64_MAX + 1))
            return false;
        if (v->neg)
            *num = 0 - v->num; /* two's complement of the magnitude */
        return true;
    case K_ADDRS:
        return v->kind != ARGUS_TK_STR && addr_list(v->p, v->n);
    case K_STAGE:
        for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
            if (v->kind != ARGUS_TK_NUM && is(stages[i], v->p, v->n))
                return true;
        return false;
    default:
        return true;
    }
}

static const char *want(int k)
{
    switch (k) {
    case K_U32:
        return "a decimal or 0x hex number below 2^32";
    case K_I64:
        return "a decimal or 0x hex number, may be negative";
    case K_ADDRS:
        return "ADDR,ADDR,... of decimal or 0x hex numbers";
    case K_STAGE:
        return "entry, before_timers, before_sources, before_waiting, after_waiting or exit";
    default:
        return "a decimal or 0x hex number";
    }
}

/* key=value onto the attributes */
static int put_attr(argus_attrs *at, const argus_tok *t)
{
    size_t need = t->klen + 1 + t->v.n + 24;
    char *p = ingest_attr_reserve(at->ab, *at->alen, at->acap, need);
    if (!p)
        return -1;
    memcpy(p, t->key, t->klen);
    p[t->klen] = '=';
    size_t n = ingest_argus_val_text(&t->v, p + t->klen + 1);
    p[t->klen + 1 + n] = '\0';
    *at->alen += t->klen + 1 + n + 1;
    return 0;
}

/* The phase word w of a type that takes words d->words. */
static int phase_word(const tdesc *d, const char *tn, const argus_tok *t, db_event *ev, char *msg,
                      size_t msglen)
{
    const char *p = t->v.kind == ARGUS_TK_STR ? t->at : t->v.p;
    size_t n = t->v.kind == ARGUS_TK_STR ? t->v.n + 2 : t->v.n;
    if (d->words == W_NONE || ev->phase != DB_PH_NONE)
        return bad(msg, msglen, "%s: unexpected word \"%.*s\"", tn, SHOW(p, n));
    const char *b = d->words == W_BEGIN_END ? "begin" : "send";
    const char *e = d->words == W_BEGIN_END ? "end" : "recv";
    if (t->v.kind == ARGUS_TK_WORD && is(b, p, n))
        ev->phase = DB_PH_BEGIN;
    else if (t->v.kind == ARGUS_TK_WORD && is(e, p, n))
        ev->phase = DB_PH_END;
    else
        return bad(msg, msglen, "%s: expected %s or %s, not \"%.*s\"", tn, b, e, SHOW(p, n));
    return 0;
}

int ingest_argus_type(const char **p, bool raw, char *msg, size_t msglen)
{
    argus_tok t;
    argus_tk k = ingest_argus_lex(p, &t);
    if (k == ARGUS_TK_ERR)
        return bad(msg, msglen, "%s: %.40s", t.err, t.at);
    if (k == ARGUS_TK_END)
        return bad(msg, msglen, "missing event type");
    int type = k == ARGUS_TK_WORD ? db_evtype_from_name(t.v.p, t.v.n) : -1;
    if (type < 0 || (type == DB_EV_RAW && !raw)) {
        size_t n = strcspn(t.at, " \t");
        return bad(msg, msglen, "unknown event type \"%.*s\"", SHOW(t.at, n));
    }
    return type;
}

int ingest_argus_event(const char *text, argus_attrs *at, db_event *ev, char *msg, size_t msglen)
{
    const char *p = text;
    argus_tok t;
    argus_tk k;
    int type = ingest_argus_type(&p, false, msg, msglen);
    if (type < 0)
        return -1;
    const tdesc *d = &types[type];
    const char *tn = db_evtype_name(type);
    ev->type = (uint8_t)type;
    ev->name = tn;
    ev->phase = DB_PH_NONE;
    ev->obj = type == DB_EV_SYSCALL ? UINT64_MAX : 0;
    ev->val = 0;
    unsigned seen = 0; /* bit i: keys[i] was given */
    bool have_name = false;
    while ((k = ingest_argus_lex(&p, &t)) != ARGUS_TK_END) {
        if (k == ARGUS_TK_ERR)
            return bad(msg, msglen, "%s: %s: %.40s", tn, t.err, t.at);
        if (k != ARGUS_TK_KV) {
            if (phase_word(d, tn, &t, ev, msg, msglen) < 0)
                return -1;
            continue;
        }
        if (t.key[0] == '@')
            return bad(msg, msglen, "%s: %.*s= is a key of argusq dumps (docs/ARGUS-DUMP.md), which begin with a "
                       "dump record", tn, SHOW(t.key, t.klen));
        if (type == DB_EV_SYSCALL && is("name", t.key, t.klen))
            have_name = true;
        for (int i = 0; i < KEYS_MAX && d->keys[i].key; i++) {
            const kdesc *kd = &d->keys[i];
            uint64_t num;
            if (!is(kd->key, t.key, t.klen) || (seen & (1u << i)))
                continue; /* the first of a repeated key is the one used */
            if (!check_value(kd->kind, &t.v, &num)) {
                const char *vp = t.v.kind == ARGUS_TK_STR ? t.v.p - 1 : t.v.p;
                size_t vn = t.v.kind == ARGUS_TK_STR ? t.v.n + 2 : t.v.n;
                return bad(msg, msglen, "%s: bad value for %s=: \"%.*s\" (want %s)", tn, kd->key,
                           SHOW(vp, vn), want(kd->kind));
            }
            seen |= 1u << i;
            if (d->obj == i)
                ev->obj = num;
            if (d->val == i)
                ev->val = (int64_t)num;
        }
        if (put_attr(at, &t) < 0)
            return bad(msg, msglen, "out of memory (attributes)");
    }
    if (d->words != W_NONE && ev->phase == DB_PH_NONE)
        return bad(msg, msglen, "%s: missing %s", tn,
                   d->words == W_BEGIN_END ? "begin or end" : "send or recv");
    for (int i = 0; i < KEYS_MAX && d->keys[i].key; i++) {
        const kdesc *kd = &d->keys[i];
        bool need = kd->req == R_YES || (kd->req == R_BEGIN && ev->phase == DB_PH_BEGIN);
        if (need && !(seen & (1u << i)))
            return bad(msg, msglen, "%s%s: missing key %s=", tn,
                       kd->req == R_BEGIN ? " begin" : "", kd->key);
    }
    if (type == DB_EV_SYSCALL) {
        if (!have_name && !(seen & 1u))
            return bad(msg, msglen, "syscall: missing key name= or nr=");
        if (ev->phase != DB_PH_END)
            ev->val = 0; /* ret= is the result of an end only */
    }
    return 0;
}
