/* ingest/ftrace/ftrace_fields.c -- helpers over an event's field text and the
 * attribute buffer of the current event (shared by ftrace_map.c and
 * ftrace_sched.c). */
#include <string.h>

#include "ftrace_int.h"

const char *const ingest_ft_softirq_names[INGEST_FT_NSOFTIRQ] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                                                "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

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
        ingest_hex_u64(slash + 1, (size_t)(v + n - slash - 1), &addr))
        n = (size_t)(slash - v);
    if (n > 2 && v[0] == '0' && v[1] == 'x' && ingest_hex_u64(v, n, &addr))
        return ingest_ft_attr_hex(r, "func", addr);
    return ingest_ft_attr(r, "func", v, n);
}

/* ---- attributes ---- */

int ingest_ft_attr_grow(ftrace_reader *r, size_t need)
{
    return ingest_attr_reserve(&r->ab, r->alen, &r->acap, need) ? 0 : ingest_ft_fail(r, "out of memory (attributes)");
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
