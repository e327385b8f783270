/* db/evblock.c -- events stored in blocks: the form of the events table,
 * and its decoder (the encoder: evblock_enc.c).
 *
 * One LMDB value holds a run of consecutive events (by id), up to
 * DB_EVBLOCK_EVENTS of them or two pages of bytes, keyed by the id of the
 * first.  Per-event keys cost LMDB some 20 bytes of key and node header
 * each and a B-tree insert; a block costs one of each per hundreds of
 * events, and lets the encoding share what events repeat:
 *
 *   - strings (event names, attribute keys, comm names, state letters)
 *     are written once per block and referred to by number after that;
 *   - a "shape" (an event name with its attribute keys, in order) too, so
 *     a sched_switch repeats only its values;
 *   - numbers are varints, times deltas against the previous event, the
 *     process against the thread, the node against the previous event's;
 *   - an attribute value that is a canonical decimal or 0x-hex number is
 *     kept as the number, and printed back exactly as it was.
 *
 * Every block stands alone (no dictionary outside it), so reading one
 * event decodes one block, and a damaged block damages only itself.
 *
 * Layout: u8 version, uv n, uv first ts, then n events:
 *   uv shape   (0: a new shape follows: str name, uv type | phase << 5 |
 *              ctx << 7, uv nkeys, str key...)
 *   zz ts - previous ts, uv tid, zz pid - tid, uv cpu + 1 (0: none),
 *   uv zz(node - previous node) << 2 | has_obj | has_val << 1,
 *   [uv obj] [zz val],
 *   one value per key: uv h, by h & 3:
 *     0  a string: h >> 2 is a str's r (0: literal follows)
 *     1  a decimal number h >> 2
 *     2  a 0x-hex number, uv follows
 *     3  the attribute has no '=' (the key is all of it)
 *   str: uv r; r = 0: uv len and the bytes follow; else string r - 1.
 * Strings are numbered in order of first appearance: every literal, name,
 * key and value (a number by its text), until the block has EVB_STR_MAX.
 * Shapes likewise, up to EVB_SHAPES of at most EVB_SHAPE_KEYS keys.
 * (uv: LEB128 varint; zz: zigzag varint.) */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"
#include "evblock_int.h"

void db_evblock_free(db_evblock *b)
{
    free(b->ev);
    free(b->sbuf);
    free(b->text);
    free(b->str);
    free(b->words);
    free(b->off);
    memset(b, 0, sizeof *b);
}

int db_evblock_peek(const void *data, size_t len, size_t *n, uint64_t *first_ts)
{
    rd r = {data, (const unsigned char *)data + len, false};
    if (len < 1 || *r.p++ != EVB_VERSION)
        return -1;
    *n = (size_t)uv_get(&r);
    *first_ts = uv_get(&r);
    return r.bad || *n == 0 || *n > DB_EVBLOCK_EVENTS ? -1 : 0;
}

/* Decoding one block: where a problem stops it (-1 damaged, -2 memory). */
typedef struct dec {
    db_evblock *b;
    rd r;
    size_t ntemp; /* this event's strings past the numbered ones */
    int rc;
} dec;

static void dec_fail(dec *d, int rc)
{
    if (!d->rc)
        d->rc = rc;
}

/* A str: its index in b->str.  A literal is copied into sbuf with a NUL
 * and numbered while the block's table has room, as the encoder did;
 * past that it lives for the current event only.  *numbered: whether
 * later events may refer to it. */
static uint32_t get_str(dec *d, uint64_t ref, bool *numbered)
{
    db_evblock *b = d->b;
    *numbered = true;
    if (d->rc)
        return 0;
    if (ref > 0) {
        if (ref - 1 >= b->nstrs) {
            dec_fail(d, -1);
            return 0;
        }
        return (uint32_t)(ref - 1);
    }
    uint64_t n = uv_get(&d->r);
    if (d->r.bad || n > (uint64_t)(d->r.end - d->r.p)) {
        dec_fail(d, -1);
        return 0;
    }
    size_t idx = b->nstrs < EVB_STR_MAX ? b->nstrs : b->nstrs + d->ntemp;
    if (!base_grow((void **)&b->sbuf, &b->sbuf_cap, b->sbuf_len + (size_t)n + 1, 1) ||
        !base_grow((void **)&b->str, &b->str_cap, idx + 1, sizeof *b->str)) {
        dec_fail(d, -2);
        return 0;
    }
    b->str[idx] = (db_evblock_str){(uint32_t)b->sbuf_len, (uint32_t)n};
    memcpy(b->sbuf + b->sbuf_len, d->r.p, (size_t)n);
    b->sbuf[b->sbuf_len + n] = 0;
    b->sbuf_len += (size_t)n + 1;
    d->r.p += n;
    if (b->nstrs < EVB_STR_MAX)
        b->nstrs++;
    else {
        d->ntemp++;
        *numbered = false;
    }
    return (uint32_t)idx;
}

/* Room for n (at least 1) more bytes of the events' text; NULL when out
 * of memory (d failed).  One reservation an attribute, not one a piece
 * (key, '=', value, NUL): growing and copying each piece was much of a
 * rebuild's decoding. */
static inline char *text_room(dec *d, size_t n)
{
    db_evblock *b = d->b;
    if (b->text_len + n > b->text_cap && !base_grow((void **)&b->text, &b->text_cap, b->text_len + n, 1)) {
        dec_fail(d, -2);
        return NULL;
    }
    return b->text + b->text_len;
}

/* Short copies (keys and values are a few bytes) without memcpy's call. */
static inline char *copy_short(char *p, const char *s, size_t n)
{
    if (n > 16) {
        memcpy(p, s, n);
        return p + n;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = s[i];
    return p + n;
}

static size_t fmt_u64(char *out, uint64_t v, bool hex)
{
    char tmp[24];
    size_t n = 0;
    do {
        unsigned dg = hex ? (unsigned)(v & 15) : (unsigned)(v % 10);
        tmp[n++] = (char)(dg < 10 ? '0' + dg : 'a' + dg - 10);
        v = hex ? v >> 4 : v / 10;
    } while (v);
    size_t k = 0;
    if (hex) {
        out[k++] = '0';
        out[k++] = 'x';
    }
    while (n)
        out[k++] = tmp[--n];
    return k;
}

/* A shape: its words' offset in b->words (name, tpc, nkeys, keys). */
static size_t get_shape(dec *d, size_t *shape_at, size_t *nshapes)
{
    db_evblock *b = d->b;
    uint64_t ref = uv_get(&d->r);
    if (d->r.bad) {
        dec_fail(d, -1);
        return 0;
    }
    if (ref > 0) {
        if (ref - 1 >= *nshapes)
            dec_fail(d, -1);
        return d->rc ? 0 : shape_at[ref - 1];
    }
    bool numbered, all = true;
    uint32_t name = get_str(d, uv_get(&d->r), &numbered);
    all = all && numbered;
    uint64_t tpc = uv_get(&d->r);
    uint64_t nk = uv_get(&d->r);
    if (d->r.bad || nk > (uint64_t)(d->r.end - d->r.p) || (tpc & 31) >= DB_EV__COUNT || tpc >> 9)
        dec_fail(d, -1);
    if (d->rc)
        return 0;
    size_t at = b->nwords;
    if (!base_grow((void **)&b->words, &b->words_cap, at + EVB_SHAPE_HEAD + (size_t)nk, sizeof *b->words)) {
        dec_fail(d, -2);
        return 0;
    }
    b->words[at] = name;
    b->words[at + 1] = (uint32_t)tpc;
    b->words[at + 2] = (uint32_t)nk;
    for (uint64_t k = 0; k < nk && !d->rc; k++) {
        b->words[at + EVB_SHAPE_HEAD + k] = get_str(d, uv_get(&d->r), &numbered);
        all = all && numbered;
    }
    b->nwords = at + EVB_SHAPE_HEAD + (size_t)nk;
    if (all && nk <= EVB_SHAPE_KEYS && *nshapes < EVB_SHAPES)
        shape_at[(*nshapes)++] = at;
    return at;
}

/* A number's text, numbered as the encoder numbered it. */
/* A number value's text num (n bytes) numbered as a string, as the
 * encoder numbered it, while the block's table has room. */
static void number_str(dec *d, const char *num, size_t n)
{
    db_evblock *b = d->b;
    if (b->nstrs >= EVB_STR_MAX)
        return;
    if (!base_grow((void **)&b->sbuf, &b->sbuf_cap, b->sbuf_len + n + 1, 1) ||
        !base_grow((void **)&b->str, &b->str_cap, b->nstrs + 1, sizeof *b->str)) {
        dec_fail(d, -2);
        return;
    }
    b->str[b->nstrs++] = (db_evblock_str){(uint32_t)b->sbuf_len, (uint32_t)n};
    memcpy(b->sbuf + b->sbuf_len, num, n);
    b->sbuf[b->sbuf_len + n] = 0;
    b->sbuf_len += n + 1;
}

/* One attribute into the event's text: the key (string key of the
 * block's table), and its value as the block has it ("key=value\0", or
 * "key\0" for an attribute without '='). */
static void get_entry(dec *d, uint32_t key)
{
    db_evblock *b = d->b;
    uint64_t h = uv_get(&d->r), x;
    const char *v = NULL;
    size_t vl = 0;
    char num[24];
    bool eq = true;
    if (d->r.bad) {
        dec_fail(d, -1);
        return;
    }
    switch (h & 3) {
    case 0: {
        bool numbered;
        uint32_t s = get_str(d, h >> 2, &numbered);
        if (d->rc)
            return;
        v = b->sbuf + b->str[s].off;
        vl = b->str[s].len;
        break;
    }
    case 1:
    case 2:
        x = h >> 2;
        if ((h & 3) == 2) {
            x = uv_get(&d->r);
            if (d->r.bad) {
                dec_fail(d, -1);
                return;
            }
        }
        vl = fmt_u64(num, x, (h & 3) == 2);
        v = num;
        number_str(d, num, vl);
        if (d->rc)
            return;
        break;
    default:
        if (h != 3) {
            dec_fail(d, -1);
            return;
        }
        eq = false;
        break;
    }
    /* the key's place once the value is read: reading it may move sbuf */
    db_evblock_str k = b->str[key];
    char *p = text_room(d, k.len + 1 + vl + 1);
    if (!p)
        return;
    p = copy_short(p, b->sbuf + k.off, k.len);
    if (eq) {
        *p++ = '=';
        p = copy_short(p, v, vl);
    }
    *p++ = '\0';
    b->text_len = (size_t)(p - b->text);
}

int db_evblock_decode(db_evblock *b, uint64_t first_id, const void *data, size_t len)
{
    b->n = 0;
    b->first_id = first_id;
    b->sbuf_len = b->text_len = b->nstrs = b->nwords = 0;
    size_t n;
    uint64_t ts;
    if (db_evblock_peek(data, len, &n, &ts))
        return -1;
    dec d = {b, {data, (const unsigned char *)data + len, false}, 0, 0};
    d.r.p++;
    uv_get(&d.r);
    uv_get(&d.r);
    if (!base_grow((void **)&b->ev, &b->ev_cap, DB_EVBLOCK_EVENTS, sizeof *b->ev) ||
        !base_grow((void **)&b->off, &b->off_cap, 2 * DB_EVBLOCK_EVENTS, sizeof *b->off))
        return -2;
    size_t shape_at[EVB_SHAPES], nshapes = 0;
    uint32_t node = 0;
    /* names and attrs as offsets (off) while the buffers may move;
     * pointers at the end */
    for (size_t i = 0; i < n && !d.rc; i++) {
        db_event *ev = &b->ev[i];
        memset(ev, 0, sizeof *ev);
        ev->id = first_id + i;
        d.ntemp = 0;
        size_t sh = get_shape(&d, shape_at, &nshapes);
        if (d.rc)
            break;
        uint32_t tpc = b->words[sh + 1];
        ev->type = (uint8_t)(tpc & 31);
        ev->phase = (uint8_t)((tpc >> 5) & 3);
        ev->ctx = (uint8_t)((tpc >> 7) & 3);
        ts += (uint64_t)unzz(uv_get(&d.r));
        ev->ts = ts;
        uint64_t tid = uv_get(&d.r);
        ev->tid = (uint32_t)tid;
        ev->pid = (uint32_t)((int64_t)tid + unzz(uv_get(&d.r)));
        uint64_t cpu = uv_get(&d.r);
        ev->cpu = cpu ? (uint16_t)(cpu - 1) : DB_CPU_NONE;
        uint64_t nd = uv_get(&d.r);
        node = (uint32_t)((int64_t)node + unzz(nd >> 2));
        ev->node = node;
        if (nd & 1)
            ev->obj = uv_get(&d.r);
        if (nd & 2)
            ev->val = unzz(uv_get(&d.r));
        if (d.r.bad)
            dec_fail(&d, -1);
        if (d.rc)
            break;
        b->off[2 * i] = b->str[b->words[sh]].off;
        b->off[2 * i + 1] = b->text_len;
        uint32_t nk = b->words[sh + 2];
        for (uint32_t k = 0; k < nk && !d.rc; k++)
            get_entry(&d, b->words[sh + EVB_SHAPE_HEAD + k]);
        ev->attrs_len = b->text_len - b->off[2 * i + 1];
    }
    if (!d.rc && d.r.p != d.r.end)
        dec_fail(&d, -1);
    if (d.rc)
        return d.rc;
    for (size_t i = 0; i < n; i++) {
        b->ev[i].name = b->sbuf + b->off[2 * i];
        b->ev[i].attrs = b->text + b->off[2 * i + 1];
    }
    b->n = n;
    return 0;
}

const db_event *db_evblock_get(const db_evblock *b, uint64_t id)
{
    return b->n && id >= b->first_id && id - b->first_id < b->n ? &b->ev[id - b->first_id] : NULL;
}

int db_cursor_at_or_before(MDB_cursor *c, MDB_val *key, MDB_val *v)
{
    MDB_val want = *key;
    int rc = mdb_cursor_get(c, key, v, MDB_SET_RANGE);
    if (rc == 0 && !(key->mv_size == want.mv_size && memcmp(key->mv_data, want.mv_data, want.mv_size) == 0))
        return mdb_cursor_get(c, key, v, MDB_PREV);
    return rc == MDB_NOTFOUND ? mdb_cursor_get(c, key, v, MDB_LAST) : rc;
}

int db_evblock_load(MDB_txn *txn, MDB_dbi dbi, uint32_t trace, uint64_t id, db_evblock *b, db_error *err)
{
    if (db_evblock_get(b, id))
        return 1;
    unsigned char k[12];
    db_put_be32(k, trace);
    db_put_be64(k + 4, id);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc)
        return db_lmdb_fail(err, rc, "cursor");
    MDB_val key = {12, k}, v;
    /* the block that starts at id, else the one before the next block */
    rc = db_cursor_at_or_before(c, &key, &v);
    int ret = 0;
    if (rc && rc != MDB_NOTFOUND)
        ret = db_lmdb_fail(err, rc, "read");
    else if (rc == 0 && key.mv_size == 12 && memcmp(key.mv_data, k, 4) == 0) {
        uint64_t first = db_get_be64((const unsigned char *)key.mv_data + 4);
        int d = db_evblock_decode(b, first, v.mv_data, v.mv_size);
        if (d == -2)
            ret = db_fail_oom(err);
        else if (d)
            ret = db_fail(err, -1, "damaged block of events from %llu", (unsigned long long)first);
        else
            ret = db_evblock_get(b, id) ? 1 : 0;
    }
    mdb_cursor_close(c);
    return ret;
}
