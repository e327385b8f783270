/* ingest/ftrace_fields.c -- helpers over an event's field text and the
 * attribute buffer of the current event (shared by ftrace_map.c and
 * ftrace_sched.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace.h"

const char *const ingest_ft_softirq_names[INGEST_FT_NSOFTIRQ] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                                                "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

/* ---- small parsers over [p, p + n) ---- */

bool ingest_ft_dec_u64_long(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool ingest_ft_dec_i64(const char *p, size_t n, int64_t *out)
{
    uint64_t v;
    bool neg = n > 0 && p[0] == '-';
    if (!ingest_ft_dec_u64(p + neg, n - neg, &v) || v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* hex with or without 0x (tracefs prints hashed pointers without it) */
bool ingest_ft_hex_u64(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        n -= 2;
    }
    if (n == 0 || n > 16)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

size_t ingest_fmt_i64(char *b, int64_t v)
{
    if (v >= 0)
        return base_fmt_u64(b, (uint64_t)v);
    b[0] = '-';
    return 1 + base_fmt_u64(b + 1, 0 - (uint64_t)v);
}

size_t ingest_fmt_i64_03(char *b, int64_t v)
{
    /* by hand: snprintf was a twentieth of a Perfetto ingest's reading
     * thread; the sign counts in the width, as in printf */
    if (v >= 0 && v < 1000) {
        /* a CPU's number, all a wakeup's target_cpu ever is: its three
         * digits at once, not through base_fmt_u64 and a padding loop */
        b[0] = (char)('0' + v / 100);
        b[1] = (char)('0' + v / 10 % 10);
        b[2] = (char)('0' + v % 10);
        return 3;
    }
    char t[24];
    size_t n = 0, s = v < 0;
    if (s)
        b[n++] = '-';
    size_t k = base_fmt_u64(t, s ? 0 - (uint64_t)v : (uint64_t)v);
    for (; n + k < 3; n++)
        b[n] = '0';
    memcpy(b + n, t, k);
    return n + k;
}

size_t ingest_fmt_hex(char *b, uint64_t v, int min)
{
    static const char digit[] = "0123456789abcdef";
    char t[16];
    int n = 0;
    do
        t[n++] = digit[v & 15];
    while ((v >>= 4) != 0);
    while (n < min && n < 16)
        t[n++] = '0';
    for (int i = 0; i < n; i++)
        b[i] = t[n - 1 - i];
    return (size_t)n;
}

/* ---- key=value fields ---- */

void ingest_ft_parse_kv(ftrace_reader *r, const char *text)
{
    r->nkv = ingest_ftrace_lex_kv(text, r->kv, FTRACE_KV_MAX);
}

int ingest_ft_attr_n(ftrace_reader *r, const char *key, size_t kl, const char *val, size_t vlen)
{
    size_t need = kl + 1 + vlen + 1;
    char *p = ingest_attr_reserve(&r->ab, r->alen, &r->acap, need);
    if (!p)
        return ingest_ft_fail(r, "out of memory (attributes)");
    base_copy_short(p, key, kl);
    p[kl] = '=';
    base_copy_short(p + kl + 1, val, vlen);
    p[kl + 1 + vlen] = '\0';
    r->alen += need;
    return 0;
}

int ingest_ft_attr_same(ftrace_reader *r, const ftrace_key *keys)
{
    /* ingest_ft_attr_kv with the keys measured by the compiler, not by
     * strlen, and without a byte-wise compare of the pairs whose key
     * shares a prefix; the attributes of up to eight keys are made room
     * for at once and copied here, not by ingest_ft_attr_n's call for
     * each */
    while (keys->s) {
        const ftrace_kv *kv[8];
        const ftrace_key *k[8];
        size_t n = 0, need = 0;
        for (; keys->s && n < 8; keys++) {
            const ftrace_kv *f = ingest_ft_kv_get_n(r, keys->s, keys->n);
            if (f) {
                kv[n] = f;
                k[n++] = keys;
                need += keys->n + 1 + f->vlen + 1;
            }
        }
        if (!n)
            continue;
        char *p = ingest_attr_reserve(&r->ab, r->alen, &r->acap, need);
        if (!p)
            return ingest_ft_fail(r, "out of memory (attributes)");
        for (size_t i = 0; i < n; i++) {
            base_copy_short(p, k[i]->s, k[i]->n);
            p += k[i]->n;
            *p++ = '=';
            base_copy_short(p, kv[i]->val, kv[i]->vlen);
            p += kv[i]->vlen;
            *p++ = '\0';
        }
        r->alen += need;
    }
    return 0;
}

int ingest_ft_bad_fields(ftrace_reader *r, const ftrace_line *li)
{
    return ingest_ft_fail(r, "%s: cannot parse fields '%.*s%s'", li->name,
                          li->fields_len > 80 ? 80 : (int)li->fields_len, li->fields,
                          li->fields_len > 80 ? "..." : "");
}

/* trace-cmd's plugins print a function as `sym/0x0` (symbol/offset), the
 * print format as `sym`: keep the symbol so both forms agree.  Without a
 * symbol both print the address, the plugins with at least 8 digits. */
int ingest_ft_attr_func(ftrace_reader *r, const char *v, size_t n)
{
    uint64_t addr;
    const char *slash = memchr(v, '/', n);
    if (slash && (size_t)(v + n - slash) > 3 && slash[1] == '0' && slash[2] == 'x' &&
        ingest_ft_hex_u64(slash + 1, (size_t)(v + n - slash - 1), &addr))
        n = (size_t)(slash - v);
    if (n > 2 && v[0] == '0' && v[1] == 'x' && ingest_ft_hex_u64(v, n, &addr))
        return ingest_ft_attr_hex(r, "func", addr);
    return ingest_ft_attr(r, "func", v, n);
}

/* ---- attributes ---- */

int ingest_ft_attr_grow(ftrace_reader *r, size_t need)
{
    return ingest_attr_reserve(&r->ab, r->alen, &r->acap, need) ? 0 : ingest_ft_fail(r, "out of memory (attributes)");
}

char *ingest_attr_reserve(char **ab, size_t alen, size_t *acap, size_t need)
{
    if (alen + need > *acap || !*ab) {
        size_t cap = *acap ? *acap : 65536;
        while (alen + need > cap)
            cap *= 2;
        char *nb = realloc(*ab, cap);
        if (!nb)
            return NULL;
        *ab = nb;
        *acap = cap;
    }
    return *ab + alen;
}

static bool attr_has(const ftrace_reader *r, const char *key, size_t kl)
{
    const char *p = r->ab, *end = r->ab + r->alen;
    while (p < end) {
        size_t n = strlen(p);
        if (n > kl && p[kl] == '=' && memcmp(p, key, kl) == 0)
            return true;
        p += n + 1;
    }
    return false;
}

int ingest_ft_attr_pairs(ftrace_reader *r)
{
    if (r->kv_distinct && r->alen == 0) {
        /* no key twice and no attribute yet: every pair, in place (the
         * long way costs a Perfetto cpu_idle's two pairs far more) */
        size_t need = 0;
        for (int i = 0; i < r->nkv; i++)
            need += r->kv[i].klen + 1 + r->kv[i].vlen + 1;
        char *p = ingest_ft_attrs_room(r, need);
        if (!p)
            return -1;
        for (int i = 0; i < r->nkv; i++)
            if (r->kv[i].klen < 64) /* keys of 64 bytes and more are left out, as ever */
                p = ingest_ft_put(p, r->kv[i].key, r->kv[i].klen, r->kv[i].val, r->kv[i].vlen);
        ingest_ft_attrs_done(r, p);
        return 0;
    }
    for (int i = 0; i < r->nkv; i++) {
        const ftrace_kv *kv = &r->kv[i];
        /* keys of 64 bytes and more are left out, as ever */
        if (kv->klen >= 64 || attr_has(r, kv->key, kv->klen))
            continue;
        if (ingest_ft_attr_n(r, kv->key, kv->klen, kv->val, kv->vlen) < 0)
            return -1;
    }
    return 0;
}

int ingest_sink_failed(char *err, size_t errlen, const char *path, uint64_t line)
{
    char pre[600];
    int n = snprintf(pre, sizeof pre, "%s:%llu: ", path, (unsigned long long)line);
    if (n < 0 || (size_t)n >= sizeof pre || errlen == 0)
        return -1;
    size_t pl = (size_t)n, el = strnlen(err, errlen), fl = strlen(path);
    if (el == errlen)
        el = errlen - 1;
    if (el == 0) {
        snprintf(err, errlen, "%sthe sink stopped the read", pre);
        return -1;
    }
    /* a message that names the file already (the ingest pipe's) is kept */
    if ((el > fl && memcmp(err, path, fl) == 0 && err[fl] == ':') || pl >= errlen)
        return -1;
    if (el > errlen - 1 - pl)
        el = errlen - 1 - pl;
    memmove(err + pl, err, el);
    memcpy(err, pre, pl);
    err[pl + el] = '\0';
    return -1;
}

int ingest_vfail(char *err, size_t errlen, const char *path, uint64_t line, const char *fmt, va_list ap)
{
    int n = snprintf(err, errlen, "%s:%llu: ", path, (unsigned long long)line);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}

void ingest_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
