/* ingest/perfetto/perfetto_other.c -- the FtraceEvents whose message the schema
 * subset (perfetto.proto) does not hold, as canonical pairs all the same.
 *
 * protobuf-c keeps such an event's sub-message as an unknown field of
 * FtraceEvent: raw bytes.  Rather than grow perfetto.proto (and the
 * generated code) by a message per event, its fields are read here by
 * hand, with the numbers, names and types of Perfetto's published schema
 * (perfetto_other_tab.c): one pair a field, keyed by the kernel's format
 * field name (the keys most print formats use), so the event carries the
 * fields a tracefs line of it shows; kept raw, as the ftrace readers keep
 * these events.  A field the table does not name
 * is kept as fN= (N its number), an event it does not list as
 * ftrace_event_N with fN= pairs, so nothing the file says is lost.
 * GenericFtraceEvent, Perfetto's form for an event without a message of
 * its own, carries its name and named fields itself.
 *
 * An event the table gives print formats for (the kernel's TP_printk,
 * perfetto_other_tab.c) is written as the tracefs line the kernel would
 * print for it and that text is read by the text reader's own code
 * (ingest_ft_text_pairs), so its pairs are the ones a tracefs line of the
 * same event gives: the kernel's keys, hex where it prints hex, names where
 * it prints a table's names.  Fields the format does not show, and fields
 * the table does not name, follow as pairs.
 *
 * Values without a print format: varints in decimal (the table says signed or not, and 32 or 64
 * bits), fixed32/fixed64 likewise, strings as they are to their first NUL
 * without a trailing newline (as perfetto_map.c's print), other bytes as
 * text when they read as text, else 0x and their hex (the first
 * PFO_HEX_MAX bytes, then "...").  Numbers are written with base_fmt_u64 /
 * base_fmt_i64, not snprintf: such events are common (rss_stat in an
 * Android trace: docs/PERFORMANCE.md). */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"
#include "perfetto_other_int.h"

#define PFO_HEX_MAX 48    /* bytes of a non-text value shown in hex */
#define PFO_NAME_MAX 255  /* a generic event's name */
#define PFO_LINE_MAX 4096 /* an event's tracefs text: the kernel's trace_seq holds a page */
#define PFO_VALS_MAX 32   /* fields of a message a print format is written from */

/* Every pair's key and value, the name and the text, fit in d->obuf: a
 * key made here is "f" and a number of up to 10 digits (or "field"), a
 * value at most 0x, the hex of PFO_HEX_MAX bytes and "...", r->kv holds
 * FTRACE_KV_MAX pairs (further ones are not added), and the text at most
 * PFO_LINE_MAX bytes and its NUL. */
_Static_assert(PFO_NAME_MAX + 1 + PFO_LINE_MAX + 1 + FTRACE_KV_MAX * (11 + 2 + 2 * PFO_HEX_MAX + 3) <=
                   sizeof(((pf_reader *)0)->obuf),
               "obuf too small for the pairs of one event");

typedef struct pfo {
    pf_reader *d;
    size_t used;       /* of d->obuf */
    const uint8_t *m;  /* the sub-message, for fault offsets */
    pf_other_fault *f;
    bool distinct;     /* its pairs are a plan's whose keys are all different (pfo_plan) */
} pfo;

/* room for n more bytes in d->obuf (see the assertion above) */
static char *room(pfo *o, size_t n)
{
    if (o->used + n > sizeof o->d->obuf)
        return NULL;
    char *p = o->d->obuf + o->used;
    o->used += n;
    return p;
}

static int fault(pfo *o, const uint8_t *at, const char *why)
{
    o->f->at = (size_t)(at - o->m);
    o->f->why = why;
    return -1;
}

/* One field at *p: its number, wire type, and its value (varint and
 * fixed: the number; length-delimited: the bytes).  0 or -1 (fault).
 *
 * This, add_value, add_field and put_arg are always inlined: they are the
 * work of every field, and their calls, each filling or reading a pfo_val
 * through memory, were most of what they cost. */
typedef struct pfo_val {
    uint32_t num;
    int wt;
    uint64_t n;
    const uint8_t *b;
    size_t len;
} pfo_val;

/* A tag's or a value's varint: those of two and three bytes (field
 * numbers past 15, sizes, ids) tested byte by byte first, as the hand
 * decoder's varint_in does, not by the word's shifts or, near the
 * message's end, the loop (ingest_pf_varint, for the rest). */
static inline __attribute__((always_inline)) bool small_varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < e && !(q[0] & 0x80)) {
        *v = q[0];
        *p = q + 1;
        return true;
    }
    if (e - q >= 3) {
        if (!(q[1] & 0x80)) {
            *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
            *p = q + 2;
            return true;
        }
        if (!(q[2] & 0x80)) {
            *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)(q[1] & 0x7f) << 7 | (uint64_t)q[2] << 14;
            *p = q + 3;
            return true;
        }
    }
    return ingest_pf_varint(p, e, v);
}

static inline __attribute__((always_inline)) int field(pfo *o, const uint8_t **p, const uint8_t *e, pfo_val *v)
{
    const uint8_t *at = *p;
    uint64_t tag;
    if (!small_varint(p, e, &tag))
        return fault(o, at, "bad varint");
    if ((tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
        return fault(o, at, "bad field number");
    v->num = (uint32_t)(tag >> 3);
    v->wt = (int)(tag & 7);
    v->n = 0;
    v->b = NULL;
    v->len = 0;
    switch (v->wt) {
    case 0: {
        const uint8_t *vp = *p;
        return small_varint(p, e, &v->n) ? 0 : fault(o, vp, "bad varint");
    }
    case 1:
    case 5: {
        size_t w = v->wt == 1 ? 8 : 4;
        if ((size_t)(e - *p) < w)
            return fault(o, *p, "a fixed-size value past the end");
        for (size_t i = w; i-- > 0;)
            v->n = v->n << 8 | (*p)[i];
        *p += w;
        return 0;
    }
    case 2: {
        const uint8_t *lp = *p;
        uint64_t n;
        if (!ingest_pf_varint(p, e, &n))
            return fault(o, lp, "bad varint");
        if (n > (uint64_t)(e - *p))
            return fault(o, lp, "a length past the end");
        v->b = *p;
        v->len = (size_t)n;
        *p += n;
        return 0;
    }
    default: /* groups (3, 4) are not in Perfetto's protos; 6, 7 are none */
        return fault(o, at, "bad wire type");
    }
}

static void add(pfo *o, const char *key, size_t kl, const char *val, size_t vl)
{
    ingest_ft_kv_add_n(&o->d->fr, key, kl, val, vl); /* add_value checked there is room */
}

/* a number by the kind's signedness and width */
static void add_num(pfo *o, const char *key, size_t kl, pfo_kind k, uint64_t n, bool fixed32)
{
    char *p = room(o, 20);
    if (!p)
        return;
    size_t len;
    if (k == PFO_I32 || (k == PFO_I64 && fixed32)) {
        uint32_t u = (uint32_t)n;
        len = base_fmt_i64(p, u & 0x80000000u ? (int64_t)u - 0x100000000 : (int64_t)u);
    } else if (k == PFO_I64) {
        len = base_fmt_i64(p, n > INT64_MAX ? -(int64_t)(~n) - 1 : (int64_t)n);
    } else {
        len = base_fmt_u64(p, k == PFO_U32 ? (uint32_t)n : n);
    }
    o->used -= 20 - len;
    add(o, key, kl, p, len);
}

/* a string's text: to its first NUL, without trailing newlines */
static size_t text_len(const uint8_t *b, size_t n)
{
    const uint8_t *z = memchr(b, 0, n);
    if (z)
        n = (size_t)(z - b);
    while (n && (b[n - 1] == '\n' || b[n - 1] == '\r'))
        n--;
    return n;
}

static bool reads_as_text(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((b[i] < 0x20 && b[i] != '\t' && b[i] != '\n') || b[i] == 0x7f)
            return false;
    return true;
}

static void add_bytes(pfo *o, const char *key, size_t kl, bool str, const uint8_t *b, size_t n)
{
    if (str || reads_as_text(b, n)) {
        add(o, key, kl, (const char *)b, text_len(b, n));
        return;
    }
    static const char hex[] = "0123456789abcdef";
    size_t shown = n < PFO_HEX_MAX ? n : PFO_HEX_MAX;
    char *p = room(o, 2 + 2 * shown + 3);
    if (!p)
        return;
    size_t len = 0;
    p[len++] = '0';
    p[len++] = 'x';
    for (size_t i = 0; i < shown; i++) {
        p[len++] = hex[b[i] >> 4];
        p[len++] = hex[b[i] & 15];
    }
    if (shown < n) {
        memcpy(p + len, "...", 3);
        len += 3;
    }
    o->used -= 2 + 2 * shown + 3 - len;
    add(o, key, kl, p, len);
}

/* one field's pair; key NULL: fN (always inlined: see field) */
static inline __attribute__((always_inline)) void add_value(pfo *o, const char *key, size_t kl, pfo_kind k,
                                                            const pfo_val *v)
{
    if (o->d->fr.nkv >= FTRACE_KV_MAX) /* full: the rest are left out */
        return;
    char kb[16];
    if (!key) {
        kb[0] = 'f';
        kl = 1 + base_fmt_u64(kb + 1, v->num);
        char *p = room(o, kl);
        if (!p)
            return;
        key = memcpy(p, kb, kl);
    }
    if (v->wt == 2)
        add_bytes(o, key, kl, k == PFO_STR, v->b, v->len);
    else
        add_num(o, key, kl, k, v->n, v->wt == 5);
}

/* The table's event of FtraceEvent field num, NULL none: by the index
 * ingest_pf_other_init made, so that events are not each searched for;
 * searched for when there is no index. */
static const pfo_event *find_event(const pf_reader *d, uint32_t num)
{
    if (d->other_ix)
        return num < d->other_top && d->other_ix[num] ? &pfo_events[d->other_ix[num] - 1] : NULL;
    size_t lo = 0, hi = pfo_nevents;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pfo_events[mid].num == num)
            return &pfo_events[mid];
        if (pfo_events[mid].num < num)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A listed field by its number, its name's length measured once
 * (ingest_pf_other_init), not the event's fields searched and the name
 * found measured by strlen for every field (every field of an event
 * without a print format is looked up so). */
typedef struct pfo_key {
    const char *name; /* NULL: the event lists no field of this number */
    uint8_t len;
    uint8_t kind;     /* pfo_kind */
} pfo_key;

/* one field's pair by the table's name for it, else fN (always
 * inlined: see field) */
static inline __attribute__((always_inline)) void add_field(pfo *o, const pfo_event *ev, const pfo_val *v)
{
    if (ev && o->d->other_keys) {
        size_t i = (size_t)(ev - pfo_events);
        uint32_t at = o->d->other_koff[i], n = o->d->other_koff[i + 1] - at;
        const pfo_key *k = v->num < n ? &o->d->other_keys[at + v->num] : NULL;
        if (k && k->name)
            add_value(o, k->name, k->len, (pfo_kind)k->kind, v);
        else
            add_value(o, NULL, 0, PFO_U64, v);
        return;
    }
    for (size_t i = 0; ev && i < ev->nfields; i++)
        if (ev->fields[i].num == v->num) {
            add_value(o, ev->fields[i].name, strlen(ev->fields[i].name), ev->fields[i].kind, v);
            return;
        }
    add_value(o, NULL, 0, PFO_U64, v);
}

/* ---- the tracefs text of an event, by its print format ---- */

typedef struct line {
    char *p;
    size_t n;
} line;

static bool put(line *l, const char *s, size_t n)
{
    if (n > PFO_LINE_MAX - l->n)
        return false;
    memcpy(l->p + l->n, s, n);
    l->n += n;
    return true;
}

/* s of n bytes, after pad bytes of c to width (a '-' before zeros) */
static bool put_padded(line *l, const char *s, size_t n, unsigned width, bool zero)
{
    if (zero && n && s[0] == '-') {
        if (!put(l, s, 1))
            return false;
        s++;
        n--;
        width = width ? width - 1 : 0;
    }
    for (size_t i = n; i < width; i++)
        if (!put(l, zero ? "0" : " ", 1))
            return false;
    return put(l, s, n);
}

static bool put_hex(line *l, const char *pre, uint64_t v, int min)
{
    char b[16];
    return put(l, pre, strlen(pre)) && put(l, b, base_fmt_hex(b, v, min));
}

/* A printf conversion, as far as the kernel's print formats use it:
 * %[0][width][h|hh|l|ll|z](d|i|u|x|s|p[S|s]). */
typedef struct conv {
    bool zero;
    unsigned width;
    unsigned bits; /* of the argument: 8, 16, 32 or 64 */
    char c;
    char ext;      /* %pS, %ps */
} conv;

static const char *parse_conv(const char *f, conv *c)
{
    *c = (conv){.bits = 32};
    if (*f == '0') {
        c->zero = true;
        f++;
    }
    while (*f >= '0' && *f <= '9' && c->width < 1000)
        c->width = c->width * 10 + (unsigned)(*f++ - '0');
    if (*f == 'h') {
        f++;
        c->bits = 16;
        if (*f == 'h') {
            f++;
            c->bits = 8;
        }
    } else if (*f == 'l' || *f == 'z') {
        c->bits = 64;
        if (*f++ == 'l' && *f == 'l')
            f++;
    }
    if (*f)
        c->c = *f++;
    if (c->c == 'p' && (*f == 'S' || *f == 's'))
        c->ext = *f++;
    return f;
}

/* An argument's text by its conversion and how the kernel shows it.
 * False: the value does not fit the conversion (a string for a number,
 * or the other way round).  Always inlined: see field. */
static inline __attribute__((always_inline)) bool put_arg(line *l, const conv *c, const pfo_arg *a, const pfo_val *v)
{
    bool num = v->wt != 2;
    uint64_t n = v->n;
    if (c->c == 's' && a->show == PFO_AS_IS)
        return !num && put(l, (const char *)v->b, text_len(v->b, v->len));
    if (!num)
        return false;
    switch (a->show) {
    case PFO_SYMBOLIC: /* trace_print_symbols_seq: the name, else 0x%lx */
        if (n < a->nnames)
            return put(l, a->names[n], strlen(a->names[n]));
        return put_hex(l, "0x", n, 1);
    case PFO_CHOICE:
        return put(l, a->names[n != 0], strlen(a->names[n != 0]));
    case PFO_GFP:
        if ((uint32_t)n == 0)
            return put(l, "none", 4);
        return put_hex(l, "0x", (uint32_t)n, 1);
    case PFO_CPUMASK:
        return put_hex(l, "00000000,", (uint32_t)n, 8);
    case PFO_AS_IS:
        break;
    }
    if (c->c == 'p') /* %pS: an address without its symbol; %p: unhashed, 64-bit */
        return c->ext ? put_hex(l, "0x", n, 1) : put_hex(l, "", n, 16);
    if (c->bits < 64)
        n &= ((uint64_t)1 << c->bits) - 1;
    char b[24];
    /* without a width (most), written where it goes, not copied there
     * by put_padded */
    bool there = c->width == 0 && PFO_LINE_MAX - l->n >= sizeof b;
    char *out = there ? l->p + l->n : b;
    size_t bl;
    if (c->c == 'd' || c->c == 'i') {
        int64_t sv;
        if (c->bits < 64)
            sv = n >> (c->bits - 1) ? -(int64_t)(((uint64_t)1 << c->bits) - n) : (int64_t)n;
        else
            sv = n > INT64_MAX ? -(int64_t)(~n) - 1 : (int64_t)n;
        bl = base_fmt_i64(out, sv);
    } else if (c->c == 'u') {
        bl = base_fmt_u64(out, n);
    } else if (c->c == 'x') {
        bl = base_fmt_hex(out, n, 1);
    } else {
        return false;
    }
    if (there) {
        l->n += bl;
        return true;
    }
    return put_padded(l, b, bl, c->width, c->zero);
}

/* A message's fields in order, and where the last of each number below
 * PFO_LAST_TOP is (1 + its index in v; 0: none), not the fields searched
 * for each argument. */
#define PFO_LAST_TOP 32
typedef struct pfo_vals {
    size_t n;
    pfo_val v[PFO_VALS_MAX];
    uint8_t last[PFO_LAST_TOP];
} pfo_vals;

/* the last value of field num (protobuf: the last one counts) */
static const pfo_val *val_of(const pfo_vals *vs, uint32_t num)
{
    if (num < PFO_LAST_TOP)
        return vs->last[num] ? &vs->v[vs->last[num] - 1] : NULL;
    const pfo_val *v = NULL;
    for (size_t i = 0; i < vs->n; i++)
        if (vs->v[i].num == num)
            v = &vs->v[i];
    return v;
}

/* The text of print format pr with the fields in vals.  False: a field it
 * names is not there or does not fit, or the text is too long. */
static bool render(line *l, const pfo_print *pr, const pfo_vals *vs)
{
    size_t ai = 0;
    for (const char *f = pr->fmt; *f;) {
        if (*f != '%' || f[1] == '%') {
            size_t n = f[0] == '%' ? 1 : strcspn(f, "%");
            if (!put(l, f, n))
                return false;
            f += f[0] == '%' ? 2 : n;
            continue;
        }
        conv c;
        f = parse_conv(f + 1, &c);
        if (ai == PFO_ARGS_MAX || pr->args[ai].num == 0)
            return false;
        const pfo_arg *a = &pr->args[ai++];
        const pfo_val *v = val_of(vs, a->num);
        if (!v || !put_arg(l, &c, a, v))
            return false;
    }
    return true;
}

static bool printed(const pfo_print *pr, uint32_t num)
{
    for (size_t i = 0; i < PFO_ARGS_MAX && pr->args[i].num; i++)
        if (pr->args[i].num == num)
            return true;
    return false;
}

/* ---- key=value print formats: the pairs without the text ----
 *
 * Most formats are key=value pairs only (rss_stat's `mm_id=%u curr=%d
 * type=%s size=%ldB`): the text reader's pairs of such a line are each
 * key and the text of its conversion with what follows it up to the
 * blank (`B`), as long as no value holds a blank.  Those pairs are made
 * here from a plan of the format, read once (ingest_pf_other_init), and
 * the line is neither written nor lexed: print_pairs, writing it and
 * reading it with the text reader's own code, was the largest part of
 * the reading thread on a trace of many such events (rss_stat and
 * binder_transaction_alloc_buf).  A format of any other shape (a value
 * without a key, `=>`, `[...]`), an event whose kind the text reader
 * reads otherwise, or a value with a blank (a string, a width's padding)
 * still goes by the text. */
#define PFO_PRINTS_MAX 3 /* an event's forms with a plan; a later one goes by the text */

typedef struct pfo_pair {
    const char *key, *suffix; /* into the format */
    uint8_t klen, slen;
    uint16_t before;          /* bytes of the line before the value: blanks, the key, '=' */
    conv c;
} pfo_pair;

/* the pairs of one print format, pair i of its argument i; n 0: no plan */
typedef struct pfo_plan {
    size_t n;
    pfo_pair p[PFO_ARGS_MAX];
    /* its keys all different: the event's pairs, when they are only the
     * plan's, need no keys_distinct (a noticeable part of the cost of
     * such an event: docs/PERFORMANCE.md) */
    bool distinct;
    uint64_t printed; /* the field numbers below 64 its arguments print, as bits */
} pfo_plan;

static bool key_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool key_char(char c) { return key_start(c) || (c >= '0' && c <= '9'); }

/* The plan of pr, when its format is `key=%c[suffix]` items parted by
 * blanks, every conversion with its argument: the lexer's rules for such
 * a line (ftrace_lex.re's kv) give exactly these pairs. */
static void plan_of(pfo_plan *pl, const pfo_print *pr)
{
    pl->n = 0;
    size_t n = 0;
    for (const char *f = pr->fmt; *f;) {
        const char *b = f;
        if (n > 0) { /* blanks part the items */
            if (*f != ' ' && *f != '\t')
                return;
            while (*f == ' ' || *f == '\t')
                f++;
        }
        const char *k = f;
        if (!key_start(*f))
            return;
        while (key_char(*f))
            f++;
        if (f[0] != '=' || f[1] != '%' || f[2] == '%' || n == PFO_ARGS_MAX || pr->args[n].num == 0 || f - k > 255 ||
            f + 2 - b > UINT16_MAX)
            return;
        pfo_pair *pp = &pl->p[n++];
        pp->key = k;
        pp->klen = (uint8_t)(f - k);
        pp->before = (uint16_t)(f + 1 - b);
        f = parse_conv(f + 2, &pp->c);
        pp->suffix = f;
        while (*f && *f != ' ' && *f != '\t' && *f != '%')
            f++;
        if (*f == '%' || f - pp->suffix > 255)
            return;
        pp->slen = (uint8_t)(f - pp->suffix);
    }
    pl->n = n;
    pl->distinct = true;
    pl->printed = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            if (pl->p[j].klen == pl->p[i].klen && memcmp(pl->p[j].key, pl->p[i].key, pl->p[i].klen) == 0)
                pl->distinct = false;
        if (pr->args[i].num < 64)
            pl->printed |= (uint64_t)1 << pr->args[i].num;
    }
}

/* d->other_keys: each event's fields by number, to its highest (a
 * field's number, a name longer than 255: not indexed, all searched for) */
static int keys_init(pf_reader *d)
{
    d->other_koff = calloc(pfo_nevents + 1, sizeof *d->other_koff);
    if (!d->other_koff)
        return -1;
    size_t total = 0;
    for (size_t i = 0; i < pfo_nevents; i++) {
        uint32_t top = 0;
        for (size_t j = 0; j < pfo_events[i].nfields; j++) {
            const pfo_field *fd = &pfo_events[i].fields[j];
            if (fd->num > 1024 || strlen(fd->name) > UINT8_MAX)
                return 0; /* not in this table: left to the search */
            if (fd->num >= top)
                top = fd->num + 1;
        }
        d->other_koff[i] = (uint32_t)total;
        total += top;
    }
    d->other_koff[pfo_nevents] = (uint32_t)total;
    d->other_keys = calloc(total ? total : 1, sizeof *d->other_keys);
    if (!d->other_keys)
        return -1;
    for (size_t i = 0; i < pfo_nevents; i++)
        for (size_t j = pfo_events[i].nfields; j-- > 0;) { /* the first of a number twice, as the search */
            const pfo_field *fd = &pfo_events[i].fields[j];
            d->other_keys[d->other_koff[i] + fd->num] =
                (pfo_key){fd->name, (uint8_t)strlen(fd->name), (uint8_t)fd->kind};
        }
    return 0;
}

int ingest_pf_other_init(pf_reader *d)
{
    uint32_t top = 0;
    for (size_t i = 0; i < pfo_nevents; i++)
        if (pfo_events[i].num >= top)
            top = pfo_events[i].num + 1;
    d->other_plans = calloc(pfo_nevents * PFO_PRINTS_MAX, sizeof *d->other_plans);
    d->other_ix = calloc(top, sizeof *d->other_ix);
    if (!d->other_plans || !d->other_ix) {
        ingest_pf_other_free(d);
        return -1;
    }
    d->other_top = top;
    for (size_t i = 0; i < pfo_nevents && i < UINT16_MAX - 1; i++) /* the table is sorted, each number once */
        d->other_ix[pfo_events[i].num] = (uint16_t)(i + 1);
    if (keys_init(d) < 0) {
        ingest_pf_other_free(d);
        return -1;
    }
    for (size_t i = 0; i < pfo_nevents; i++) {
        /* the kinds whose text the text reader reads as key=value (else raw=) */
        ftrace_ev_kind k = ingest_ftrace_lex_event(pfo_events[i].name);
        if (k != FTRACE_EV_OTHER && k != FTRACE_EV_SOFTIRQ_RAISE)
            continue;
        for (size_t j = 0; j < pfo_events[i].nprints && j < PFO_PRINTS_MAX; j++)
            plan_of(&d->other_plans[i * PFO_PRINTS_MAX + j], &pfo_events[i].prints[j]);
    }
    return 0;
}

void ingest_pf_other_free(pf_reader *d)
{
    free(d->other_plans);
    free(d->other_ix);
    free(d->other_keys);
    free(d->other_koff);
    d->other_plans = NULL;
    d->other_ix = NULL;
    d->other_keys = NULL;
    d->other_koff = NULL;
    d->other_top = 0;
}

/* The pairs of print format pr by its plan, their values in buf (room
 * for PFO_LINE_MAX): 1; 0 when the format does not fit the message (as
 * render: a field it names missing or of another kind, or a line longer
 * than PFO_LINE_MAX); -1 when the line must be read (a value with a
 * blank). */
static int plan_pairs(pfo *o, const pfo_plan *pl, const pfo_print *pr, const pfo_vals *vs, char *buf)
{
    ftrace_reader *r = &o->d->fr;
    int nkv = r->nkv; /* as it was, unless the pairs are made */
    line l = {buf, 0};
    size_t len = 0; /* of the line */
    int rc = 1;
    r->nkv = 0; /* as the text reader's pairs of the line */
    for (size_t i = 0; i < pl->n && rc > 0; i++) {
        const pfo_pair *pp = &pl->p[i];
        const pfo_arg *a = &pr->args[i];
        const pfo_val *v = val_of(vs, a->num);
        size_t at = l.n;
        /* a blank only from a string, a name, or a width's padding (a
         * number's digits and hex have none, the suffix none by its plan) */
        bool text = (v && v->wt == 2) || a->show == PFO_SYMBOLIC || a->show == PFO_CHOICE || pp->c.width > 0;
        if (!v || !put_arg(&l, &pp->c, a, v) || !put(&l, pp->suffix, pp->slen))
            rc = 0;
        else if (text && (memchr(buf + at, ' ', l.n - at) || memchr(buf + at, '\t', l.n - at)))
            rc = -1;
        else
            ingest_ft_kv_add_n(r, pp->key, pp->klen, buf + at, l.n - at);
        len += pp->before + (l.n - at);
    }
    if (rc > 0 && len > PFO_LINE_MAX)
        rc = 0;
    if (rc <= 0) {
        r->nkv = nkv;
        return rc;
    }
    o->used -= PFO_LINE_MAX + 1 - l.n; /* the rest of the room back */
    return 1;
}

/* the fields of vals that print format pr does not show, after its
 * pairs; pl: pr's plan, whose bits say it for a number below 64 without
 * a search of pr's arguments for each, NULL: none */
static void unprinted(pfo *o, const pfo_event *ev, const pfo_print *pr, const pfo_plan *pl, const pfo_vals *vs)
{
    for (size_t j = 0; j < vs->n; j++) {
        uint32_t num = vs->v[j].num;
        if (!(pl && num < 64 ? (pl->printed >> num) & 1 : printed(pr, num)))
            add_field(o, ev, &vs->v[j]);
    }
}

/* The pairs of the tracefs text of an event with print formats: 1, or 0
 * when none fits the message (its pairs are then by field name), -1 a
 * fault. */
static int print_pairs(pfo *o, const pfo_event *ev, const uint8_t *p, const uint8_t *e)
{
    pfo_vals vs;
    vs.n = 0;
    memset(vs.last, 0, sizeof vs.last);
    while (p < e) {
        if (vs.n == PFO_VALS_MAX)
            return 0;
        pfo_val *v = &vs.v[vs.n];
        if (field(o, &p, e, v) < 0)
            return -1;
        if (v->num < PFO_LAST_TOP)
            vs.last[v->num] = (uint8_t)(vs.n + 1);
        vs.n++;
    }
    char *buf = room(o, PFO_LINE_MAX + 1);
    if (!buf)
        return 0;
    const pfo_plan *plans = o->d->other_plans ? &o->d->other_plans[(size_t)(ev - pfo_events) * PFO_PRINTS_MAX] : NULL;
    for (size_t i = 0; i < ev->nprints; i++) {
        if (plans && i < PFO_PRINTS_MAX && plans[i].n) {
            int rc = plan_pairs(o, &plans[i], &ev->prints[i], &vs, buf);
            if (rc == 0)
                continue;
            if (rc > 0) {
                unprinted(o, ev, &ev->prints[i], &plans[i], &vs);
                o->distinct = plans[i].distinct && o->d->fr.nkv == (int)plans[i].n; /* no field after them */
                return 1;
            }
        }
        line l = {buf, 0};
        if (!render(&l, &ev->prints[i], &vs))
            continue;
        /* as the text reader's line: without the blanks around */
        size_t s = 0, n = l.n;
        while (s < n && (buf[s] == ' ' || buf[s] == '\t'))
            s++;
        while (n > s && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
            n--;
        buf[n] = '\0';
        o->used -= PFO_LINE_MAX - n; /* the rest of the room back */
        ftrace_line li;
        memset(&li, 0, sizeof li);
        li.name = (char *)ev->name;
        li.name_len = strlen(ev->name);
        li.fields = buf + s;
        li.fields_len = n - s;
        if (ingest_ft_text_pairs(&o->d->fr, ingest_ftrace_lex_event(ev->name), &li) != 0 || o->d->fr.nkv < 0)
            o->d->fr.nkv = 0; /* not reached: the kinds of these events take any text */
        unprinted(o, ev, &ev->prints[i], NULL, &vs);
        return 1;
    }
    o->used -= PFO_LINE_MAX + 1;
    return 0;
}

/* The fields of a message the table lists (ev NULL: none, all fN). */
static int listed(pfo *o, const pfo_event *ev, const uint8_t *p, const uint8_t *e)
{
    if (ev && ev->nprints) {
        int rc = print_pairs(o, ev, p, e);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    while (p < e) {
        pfo_val v;
        if (field(o, &p, e, &v) < 0)
            return -1;
        add_field(o, ev, &v);
    }
    return 0;
}

/* GenericFtraceEvent (generic.proto): event_name 1, repeated field 2 of
 * Field {name 1; str_value 3 | int_value 4 | uint_value 5}. */
static int generic(pfo *o, const uint8_t *p, const uint8_t *e, const char **name, size_t *name_len)
{
    while (p < e) {
        const uint8_t *at = p;
        pfo_val v;
        if (field(o, &p, e, &v) < 0)
            return -1;
        if (v.num == 1 && v.wt == 2) {
            size_t n = text_len(v.b, v.len);
            if (n > PFO_NAME_MAX)
                return fault(o, at, "an event name too long");
            if (n == 0)
                continue;
            char *s = room(o, n + 1);
            if (!s) /* only a name given again and again: the first stays */
                continue;
            memcpy(s, v.b, n);
            s[n] = '\0';
            *name = s;
            *name_len = n;
        } else if (v.num == 2 && v.wt == 2) {
            const uint8_t *q = v.b, *qe = v.b + v.len;
            const char *key = "field";
            size_t kl = 5;
            pfo_val val = {.wt = 2, .b = v.b, .len = 0}; /* no value: empty */
            pfo_kind k = PFO_STR;
            while (q < qe) {
                pfo_val w;
                if (field(o, &q, qe, &w) < 0)
                    return -1;
                if (w.num == 1 && w.wt == 2 && text_len(w.b, w.len)) {
                    key = (const char *)w.b;
                    kl = text_len(w.b, w.len);
                } else if (w.num >= 3 && w.num <= 5) {
                    val = w;
                    k = w.num == 3 ? PFO_STR : w.num == 4 ? PFO_I64 : PFO_U64;
                }
            }
            add_value(o, key, kl, k, &val);
        } else {
            add_value(o, NULL, 0, PFO_U64, &v);
        }
    }
    return 0;
}

static int other_pairs(pfo *o, uint32_t event_field, const uint8_t *msg, size_t len, const char **name,
                       size_t *name_len)
{
    const pfo_event *ev = find_event(o->d, event_field);
    if (ev) {
        *name = ev->name;
        *name_len = ev->name_len;
    } else {
        /* "ftrace_event_" and at most 10 digits */
        char *s = room(o, 24);
        memcpy(s, "ftrace_event_", 13);
        *name_len = 13 + base_fmt_u64(s + 13, event_field);
        s[*name_len] = '\0';
        *name = s;
    }
    const uint8_t *e = msg + len;
    if (event_field == PFO_GENERIC)
        return generic(o, msg, e, name, name_len);
    return listed(o, ev, msg, e);
}

/* No key of the pairs twice, and none holding '=' (only a generic
 * event's keys, its own field names, may): ingest_ft_attr_pairs may then
 * write them all at once (r->kv_distinct), as its search of the
 * attributes written so far for each key (one found is left out) cannot
 * find one: a match needs the same key, or an '=' in one (no pair holds a
 * NUL: text is cut at its first).  That search, a strlen of each
 * attribute, costs far more than this test. */
static bool keys_distinct(const ftrace_reader *r, bool generic)
{
    for (int i = 0; i < r->nkv; i++) {
        const ftrace_kv *a = &r->kv[i];
        if (generic && memchr(a->key, '=', a->klen))
            return false;
        for (int j = 0; j < i; j++) {
            const ftrace_kv *b = &r->kv[j];
            if (b->klen == a->klen && (a->klen == 0 || b->key[0] == a->key[0]) && memcmp(b->key, a->key, a->klen) == 0)
                return false;
        }
    }
    return true;
}

int ingest_pf_other_pairs(pf_reader *d, uint32_t event_field, const uint8_t *msg, size_t len, const char **name,
                          size_t *name_len, pf_other_fault *f)
{
    pfo o = {d, 0, msg, f, false};
    int rc = other_pairs(&o, event_field, msg, len, name, name_len);
    if (rc == 0)
        d->fr.kv_distinct = o.distinct || keys_distinct(&d->fr, event_field == PFO_GENERIC);
    return rc;
}

/* An other event's message's pairs: 1, or -1 with err naming the file,
 * the packet and byte, the event and what is wrong. */
static int other_msg(pf_reader *d, const pf_item *it, uint32_t field, const uint8_t *p, size_t n, const char **name,
                     size_t *name_len)
{
    pf_other_fault f = {0, "a length past the end"};
    if (ingest_pf_other_pairs(d, field, p, n, name, name_len, &f) == 0)
        return 1;
    ingest_errf(d->fr.err, d->fr.errlen, "%s: byte %llu: packet %llu: %s (FtraceEvent field %u): %s at byte %zu of its %llu",
                d->path, (unsigned long long)it->hold->offset, (unsigned long long)it->hold->packet, *name,
                (unsigned)field, f.why, f.at, (unsigned long long)n);
    return -1;
}

/* The unknown field of e that is its event: the first length-delimited
 * one of number 3 or more (FtraceEvent's fields from 3 on are its
 * oneof); NULL: none.  Its message: *msg, *n after the length protobuf-c
 * keeps in front of its bytes (checked by its unpack), or *msg NULL when
 * that length is not the rest's (*n: the length read, 0 none). */
static const ProtobufCMessageUnknownField *other_field(const ArgusqPf__FtraceEvent *e, const uint8_t **msg, uint64_t *n)
{
    for (unsigned i = 0; i < e->base.n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *u = &e->base.unknown_fields[i];
        if (u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED || u->tag < 3)
            continue;
        const uint8_t *p = u->data, *end = u->data + u->len;
        *n = 0;
        *msg = ingest_pf_varint(&p, end, n) && *n == (uint64_t)(end - p) ? p : NULL;
        return u;
    }
    return NULL;
}

/* Never inlined: with link-time optimization it went into
 * ingest_pf_emit (perfetto_map.c), which then saved and restored the
 * registers this path needs for every event, a switch or waking too, and
 * was too large to go into pop_emit itself. */
__attribute__((noinline)) int ingest_pf_other(pf_reader *d, const pf_item *it, const char **name, size_t *name_len)
{
    const uint8_t *msg;
    uint64_t n;
    const ProtobufCMessageUnknownField *u = other_field(it->ev, &msg, &n);
    if (!u)
        return 0;
    if (msg)
        return other_msg(d, it, u->tag, msg, (size_t)n, name, name_len);
    ingest_errf(d->fr.err, d->fr.errlen, "%s: byte %llu: packet %llu: ftrace event (FtraceEvent field %u): a length past the end at byte 0 of its %llu",
                d->path, (unsigned long long)it->hold->offset, (unsigned long long)it->hold->packet, (unsigned)u->tag,
                (unsigned long long)n);
    return -1;
}

__attribute__((noinline)) int ingest_pf_other_held(pf_reader *d, const pf_item *it, const char **name, size_t *name_len)
{
    if (it->form == PF_KEPT_OTHER)
        return other_msg(d, it, it->kept.field, it->kept.p, it->kept.len, name, name_len);
    return other_msg(d, it, it->other.field, it->other.msg, it->other.len, name, name_len);
}

void ingest_pf_other_own(pf_item *it)
{
    const uint8_t *msg;
    uint64_t n;
    const ProtobufCMessageUnknownField *u = other_field(it->ev, &msg, &n);
    if (!u || !msg || u->tag > UINT16_MAX || n > UINT32_MAX)
        return;
    uint16_t field = (uint16_t)u->tag;
    if (n > PF_OTHER_MAX) {
        uint8_t *k = ingest_pf_keep_alloc(it->hold, (size_t)n);
        if (!k)
            return;
        memcpy(k, msg, (size_t)n);
        it->form = PF_KEPT_OTHER;
        it->kept.p = k;
        it->kept.len = (uint32_t)n;
        it->kept.field = field;
        return;
    }
    it->form = PF_OTHER; /* over the union's ev: msg is the arena's */
    it->other.field = field;
    it->other.len = (uint8_t)n;
    pf_copy_small(it->other.msg, msg, (size_t)n);
}
