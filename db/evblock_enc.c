/* db/evblock_enc.c -- the encoder of event blocks (the format, and its
 * decoder: evblock.c).  An event is added to the block being filled:
 * its strings and shape numbered in the block's tables, written whole or
 * by the shortcuts below (its name's latest shapes, the memo of events
 * that repeat), which give the bytes the whole encoding gives. */
#include <stdlib.h>
#include <string.h>

#include "db_int.h"
#include "evblock_int.h"
#include "evblock_words.h"

/* The shapes an event's name remembers, latest first, tried before its
 * keys are hashed (shape_find, put_by_latest_shape): three, as the
 * Android 13 trace's sched_switch has three that come round (a raw one
 * with no reason, a wait with its reason, a wait with its blocked caller
 * too); with two, many of its events were written in full, and a fourth
 * gains nothing. */
#define EVB_NAME_SHAPES 3
#define EVB_MEMO_MAX 512u /* events remembered whole in a block (the memo, below) */
#define EVB_MEMO_SLOTS 1024u /* their hash slots */
/* An event is remembered only in the first EVB_MEMO_PROBE slots from its
 * hash's: the attributes' hash samples long ones (hash_sampled), and
 * events that differ past the samples share it, but a lookup compares at
 * most this many of them, however many such events a block has (not
 * remembering one changes no byte: the memo is a shortcut).  Free in
 * memo_find, where no count of the compares is kept. */
#define EVB_MEMO_PROBE 8u
#define EVB_MEMO_BYTES 65536u /* their names, attributes and encodings */
#define EVB_MEMO_PAD 16u /* memo_buf's bytes past them, and the block's past an event (copy16) */
#define EVB_MEMO_ALEN 1024u /* an event with longer attributes is not remembered */
/* The most bytes an event with a name of nl bytes and na attributes in
 * alen bytes can take: a new shape (1, the name as a literal 11 + nl, tpc
 * and the key count 12), the fixed fields (58), and per attribute its key
 * as a literal (11 + its length) and its value as one (11 + its length);
 * and EVB_MEMO_PAD bytes past them, which memo_add reads (copy16). */
#define EVB_EVENT_ROOM(nl, na, alen) (96 + (nl) + 24 * (na) + (alen) + EVB_MEMO_PAD)

typedef struct enc_str {
    uint64_t head; /* its head_word */
    uint32_t off, len; /* in sbuf */
    uint32_t hash;
    uint32_t shape[EVB_NAME_SHAPES]; /* as an event's name: the latest shapes found for it + 1 (0 none) */
} enc_str;

/* A shape's key as its entries begin, "key=" (len bytes, 1 to 16): its
 * first eight bytes (zeros past them), the mask of those, and its last
 * eight, to match an entry in one or two loads (key_at), which need the
 * text to have the larger of len and 8 bytes left.  need past any text:
 * a longer key (or a big-endian machine), compared byte for byte. */
typedef struct enc_key {
    uint64_t head, mask, tail;
    uint64_t need;
    uint32_t len;
} enc_key;

typedef struct enc_shape {
    uint32_t hash;
    uint32_t at; /* in words: name, tpc, nkeys, keys... (string numbers) */
} enc_shape;

/* An event remembered whole: its name, type word and attributes, and
 * the bytes its shape and its values were written as (see memo_find). */
typedef struct enc_memo {
    uint32_t hash, tpc, off, slot; /* off: in memo_buf, name, NUL, attributes, shape bytes, value bytes */
    uint16_t nl, alen, slen, vlen;
} enc_memo;

/* One "key=value" (or bare "key") of the event being added. */
typedef struct enc_attr {
    const char *key;
    size_t len; /* of the entry */
    size_t klen;
    const char *val; /* after the '='; NULL for a key without one */
    size_t vlen;
} enc_attr;

/* What db_evblock_enc_add finds out about the event once, for the paths
 * that write it (tpc_of and the name's hash were taken three and two
 * times an event). */
typedef struct enc_ev {
    const db_event *ev;
    const char *name, *attrs; /* "" for none */
    size_t nl;
    uint32_t tpc;
    uint32_t nh; /* the name's hash_str */
    uint64_t nhead; /* and head */
} enc_ev;

struct db_evblock_enc {
    unsigned char *buf; /* EVB_HEAD_MAX bytes reserved, then the events */
    size_t len, cap;
    size_t n;
    uint64_t first_id, first_ts, prev_ts;
    uint32_t prev_node;
    char *sbuf; /* the numbered strings' bytes */
    size_t sbuf_len, sbuf_cap;
    enc_str *strs;
    size_t nstrs, strs_cap;
    uint32_t slots[EVB_STR_SLOTS]; /* string number + 1; 0 empty */
    enc_shape *shapes;
    size_t nshapes, shapes_cap;
    uint32_t *words;
    size_t nwords, words_cap;
    enc_key *keys; /* a shape's keys where words has them: keys[at + EVB_SHAPE_HEAD + j] */
    size_t keys_cap;
    uint32_t shape_slots[2 * EVB_SHAPES]; /* shape number + 1 */
    enc_attr *attr; /* the event being added, split once (split_attrs) */
    size_t nattr, attr_cap;
    bool keyed; /* attr's keys and values found (split_keys or same_keys) */
    enc_memo memo[EVB_MEMO_MAX];
    size_t nmemo, memo_len;
    uint16_t memo_slots[EVB_MEMO_SLOTS]; /* memo number + 1; 0 empty */
    unsigned char *memo_buf; /* EVB_MEMO_BYTES + EVB_MEMO_PAD, made on first use */
    bool no_memo;            /* every event written in full: no memo, no put_by_latest_shape */
    size_t memo_hits;        /* events written from the memo */
    size_t shape_hits;       /* events written by put_by_latest_shape */
};

db_evblock_enc *db_evblock_enc_new(void)
{
    db_evblock_enc *e = calloc(1, sizeof *e);
    if (!e || !base_grow((void **)&e->buf, &e->cap, 16384, 1)) {
        free(e);
        return NULL;
    }
    e->len = EVB_HEAD_MAX;
    return e;
}

void db_evblock_enc_free(db_evblock_enc *e)
{
    if (!e)
        return;
    free(e->buf);
    free(e->sbuf);
    free(e->strs);
    free(e->shapes);
    free(e->words);
    free(e->keys);
    free(e->attr);
    free(e->memo_buf);
    free(e);
}

static void rollback(db_evblock_enc *e, size_t len, size_t nstrs, size_t nshapes, size_t nwords, size_t sbuf_len);

void db_evblock_enc_reset(db_evblock_enc *e)
{
    /* the slots the block used, not all 8192: a block of Perfetto events
     * numbers a few hundred strings, and clearing the whole table for
     * each block was a noticeable share of the graph thread */
    if (e->nstrs < EVB_STR_SLOTS / 8)
        rollback(e, EVB_HEAD_MAX, 0, 0, 0, 0);
    else {
        memset(e->slots, 0, sizeof e->slots);
        memset(e->shape_slots, 0, sizeof e->shape_slots);
    }
    for (size_t i = 0; i < e->nmemo; i++)
        e->memo_slots[e->memo[i].slot] = 0;
    e->nmemo = e->memo_len = 0;
    e->len = EVB_HEAD_MAX;
    e->n = 0;
    e->nstrs = e->nshapes = e->nwords = e->sbuf_len = 0;
}

void db_evblock_enc_memo(db_evblock_enc *e, bool on) { e->no_memo = !on; }
size_t db_evblock_enc_memo_hits(const db_evblock_enc *e) { return e->memo_hits; }
size_t db_evblock_enc_shape_hits(const db_evblock_enc *e) { return e->shape_hits; }
size_t db_evblock_enc_count(const db_evblock_enc *e) { return e->n; }
uint64_t db_evblock_enc_first(const db_evblock_enc *e) { return e->first_id; }

/* The writers of an event's bytes: db_evblock_enc_add made room for the
 * largest the event can take (EVB_EVENT_ROOM) before the first, so they
 * check nothing and inline (put_uv, called with its check per number,
 * was a large part of the encoder).  true, for the chains of their callers. */
static inline bool put_uv(db_evblock_enc *e, uint64_t v)
{
    e->len = (size_t)(uv_put(e->buf + e->len, v) - e->buf);
    return true;
}

static inline bool put_bytes(db_evblock_enc *e, const char *s, size_t n)
{
    base_copy_short((char *)e->buf + e->len, s, n);
    e->len += n;
    return true;
}

/* The string's number in this block, or -1 (*slot: where it would go).
 * h and head: its hash_str.  A string of up to eight bytes is its head
 * and length; a longer one's bytes past the head are compared. */
static inline long str_find(const db_evblock_enc *e, const char *s, size_t n, uint32_t h, uint64_t head,
                            uint32_t *slot)
{
    uint32_t i = h & (EVB_STR_SLOTS - 1);
    for (;; i = (i + 1) & (EVB_STR_SLOTS - 1)) {
        uint32_t v = e->slots[i];
        if (!v) {
            *slot = i;
            return -1;
        }
        const enc_str *st = &e->strs[v - 1];
        if (st->hash == h && st->len == n && st->head == head &&
            (n <= 8 || bytes_eq(e->sbuf + st->off + 8, s + 8, n - 8)))
            return (long)(v - 1);
    }
}

/* Room in the string table for one more of n bytes (and the 8 a head
 * word stores, below).  Out of line, with its calls to realloc: in
 * str_add, they had it save and restore six registers for every new
 * string. */
static bool str_grow(db_evblock_enc *e, size_t n)
{
    return base_grow((void **)&e->sbuf, &e->sbuf_cap, e->sbuf_len + n + 8, 1) &&
           base_grow((void **)&e->strs, &e->strs_cap, e->nstrs + 1, sizeof *e->strs);
}

/* Numbers the string just written (as the decoder will), while there is
 * room.  Its number, or UINT32_MAX when the table is full. */
static inline bool str_add(db_evblock_enc *e, const char *s, size_t n, uint32_t h, uint64_t head, uint32_t slot,
                           uint32_t *num)
{
    *num = UINT32_MAX;
    if (e->nstrs >= EVB_STR_MAX)
        return true;
    if ((e->sbuf_len + n + 8 > e->sbuf_cap || e->nstrs >= e->strs_cap) && !str_grow(e, n))
        return false;
    /* a string of up to eight bytes is its head word, stored whole: it
     * and zeros past it, which the next string writes over, without a
     * call to memcpy for each new value */
    if (EVB_LE && n <= 8)
        memcpy(e->sbuf + e->sbuf_len, &head, 8);
    else
        base_copy_short(e->sbuf + e->sbuf_len, s, n);
    e->strs[e->nstrs] = (enc_str){head, (uint32_t)e->sbuf_len, (uint32_t)n, h, {0}};
    e->sbuf_len += n;
    e->slots[slot] = (uint32_t)++e->nstrs;
    *num = (uint32_t)e->nstrs - 1;
    return true;
}

/* A str: a reference, or the literal (numbered if there is room). */
static bool put_str(db_evblock_enc *e, const char *s, size_t n, uint32_t *num)
{
    uint64_t head;
    uint32_t h = hash_str(s, n, &head), slot;
    long i = str_find(e, s, n, h, head, &slot);
    if (i >= 0) {
        *num = (uint32_t)i;
        return put_uv(e, (uint64_t)i + 1);
    }
    return put_uv(e, 0) && put_uv(e, n) && put_bytes(e, s, n) && str_add(e, s, n, h, head, slot, num);
}

/* Splits the event's attributes ("k=v\0k=v\0...", the last NUL optional)
 * into e->attr once: the shape and the values read the split, not the
 * text again (two memchr calls per attribute for each of up to three
 * passes).  The entries only: where each key ends is found by the shape
 * the event has (same_keys), else by split_keys. */
static bool split_attrs(db_evblock_enc *e, const db_event *ev)
{
    const char *p = ev->attrs, *end = ev->attrs + ev->attrs_len;
    e->nattr = 0;
    e->keyed = false;
    while (p < end) {
        if (!base_grow((void **)&e->attr, &e->attr_cap, e->nattr + 1, sizeof *e->attr))
            return false;
        enc_attr *at = &e->attr[e->nattr++];
        const char *q = memchr(p, 0, (size_t)(end - p));
        if (!q)
            q = end;
        at->key = p;
        at->len = (size_t)(q - p);
        p = q + 1;
    }
    return true;
}

/* An entry's key ends at its first '=' (or it is all key). */
static void split_keys(db_evblock_enc *e)
{
    if (e->keyed)
        return;
    for (size_t j = 0; j < e->nattr; j++) {
        enc_attr *at = &e->attr[j];
        const char *eq = memchr(at->key, '=', at->len);
        at->klen = eq ? (size_t)(eq - at->key) : at->len;
        at->val = eq ? eq + 1 : NULL;
        at->vlen = eq ? at->len - at->klen - 1 : 0;
    }
    e->keyed = true;
}
static uint32_t tpc_of(const db_event *ev)
{
    return (uint32_t)ev->type | (uint32_t)(ev->phase & 3) << 5 | (uint32_t)(ev->ctx & 3) << 7;
}

/* Does the event have the keys of shape words w, in order?  Compared as
 * bytes with the numbered strings, without hashing them.  A shape's key
 * holds no '=' (it is the text before an entry's first), so an entry
 * that begins with it and then has '=' or ends has that key: its split
 * is read off the shape, not found by looking for each entry's '='. */
static bool same_keys(db_evblock_enc *e, const uint32_t *w)
{
    if (e->nattr != w[2])
        return false;
    if (e->keyed) {
        for (size_t j = 0; j < e->nattr; j++) {
            const enc_attr *at = &e->attr[j];
            const enc_str *st = &e->strs[w[EVB_SHAPE_HEAD + j]];
            if (st->len != at->klen || !bytes_eq(e->sbuf + st->off, at->key, at->klen))
                return false;
        }
        return true;
    }
    for (size_t j = 0; j < e->nattr; j++) {
        const enc_attr *at = &e->attr[j];
        const enc_str *st = &e->strs[w[EVB_SHAPE_HEAD + j]];
        if (at->len < st->len || (at->len > st->len && at->key[st->len] != '=') ||
            !bytes_eq(e->sbuf + st->off, at->key, st->len))
            return false;
    }
    for (size_t j = 0; j < e->nattr; j++) {
        enc_attr *at = &e->attr[j];
        at->klen = e->strs[w[EVB_SHAPE_HEAD + j]].len;
        at->val = at->len > at->klen ? at->key + at->klen + 1 : NULL;
        at->vlen = at->len > at->klen ? at->len - at->klen - 1 : 0;
    }
    e->keyed = true;
    return true;
}

/* The matcher of key k (key_at). */
static enc_key key_of(const enc_str *k, const char *sbuf)
{
    enc_key m = {.need = UINT64_MAX / 2};
    size_t len = (size_t)k->len + 1;
    if (!EVB_LE || len > 16)
        return m;
    /* the key's bytes from its head and its last eight (fixed-size copies,
     * not a call to memcpy of its length for each key of each new shape) */
    unsigned char t[16] = {0};
    memcpy(t, &k->head, 8);
    if (k->len > 8)
        memcpy(t + k->len - 8, sbuf + k->off + k->len - 8, 8);
    t[k->len] = '=';
    memcpy(&m.head, t, 8);
    memcpy(&m.tail, t + (len > 8 ? len - 8 : 0), 8);
    m.mask = len >= 8 ? ~0ull : (1ull << 8 * len) - 1;
    m.len = (uint32_t)len;
    m.need = len > 8 ? len : 8;
    return m;
}

/* Does the entry at a + p, of the text a[0, alen), begin with key k and
 * '='?  false also when that is not told here (a longer key, too little
 * text left, a big-endian machine): the caller then compares the bytes.
 * (p is at most alen + 1.) */
static inline bool key_at(const enc_key *k, const char *a, size_t p, size_t alen)
{
    uint64_t x;
    if (p + k->need > alen)
        return false;
    memcpy(&x, a + p, 8);
    if ((x & k->mask) != k->head)
        return false;
    if (k->len <= 8)
        return true;
    memcpy(&x, a + p + k->len - 8, 8);
    return x == k->tail;
}

/* The name's shape v + 1 is its latest (a name's shapes are unique by
 * their words, so which way one is found does not change the number). */
static void shape_seen(enc_str *ns, uint32_t v)
{
    size_t i = 0;
    while (i < EVB_NAME_SHAPES - 1 && ns->shape[i] != v)
        i++;
    for (; i > 0; i--)
        ns->shape[i] = ns->shape[i - 1];
    ns->shape[0] = v;
}

/* The event's shape number when its name and keys are numbered strings
 * and the shape is numbered; else -1 (the event defines it anew).  The
 * latest shapes seen with the event's name are tried first: most events
 * of a name have one shape, or a few that alternate (an Argus syscall's
 * begin and end, a message's send and receipt), and comparing their keys
 * spares hashing each (far fewer keys are hashed and looked up than with
 * the last shape only: docs/PERFORMANCE.md). */
static long shape_find(db_evblock_enc *e, const enc_ev *x)
{
    uint32_t words[EVB_SHAPE_HEAD + EVB_SHAPE_KEYS];
    size_t nw = EVB_SHAPE_HEAD;
    uint32_t slot, h;
    uint64_t head;
    long s = str_find(e, x->name, x->nl, x->nh, x->nhead, &slot);
    if (s < 0)
        return -1;
    enc_str *ns = &e->strs[s];
    for (int k = 0; k < EVB_NAME_SHAPES; k++) {
        uint32_t v = ns->shape[k];
        if (v && v <= e->nshapes) { /* a rollback may have dropped it */
            const uint32_t *w = &e->words[e->shapes[v - 1].at];
            if (w[0] == (uint32_t)s && w[1] == x->tpc && same_keys(e, w)) {
                shape_seen(ns, v);
                return (long)v - 1;
            }
        }
    }
    split_keys(e);
    words[0] = (uint32_t)s;
    words[1] = x->tpc;
    for (size_t j = 0; j < e->nattr; j++) {
        const enc_attr *at = &e->attr[j];
        if (nw == EVB_SHAPE_HEAD + EVB_SHAPE_KEYS)
            return -1;
        h = hash_str(at->key, at->klen, &head);
        if ((s = str_find(e, at->key, at->klen, h, head, &slot)) < 0)
            return -1;
        words[nw++] = (uint32_t)s;
    }
    words[2] = (uint32_t)(nw - EVB_SHAPE_HEAD);
    h = hash_bytes(words, nw * 4);
    for (uint32_t i = h & (2 * EVB_SHAPES - 1);; i = (i + 1) & (2 * EVB_SHAPES - 1)) {
        uint32_t v = e->shape_slots[i];
        if (!v)
            return -1;
        const enc_shape *sh = &e->shapes[v - 1];
        if (sh->hash == h && e->words[sh->at + 2] == words[2] && memcmp(&e->words[sh->at], words, nw * 4) == 0) {
            shape_seen(ns, v);
            return (long)(v - 1);
        }
    }
}

static bool shape_add(db_evblock_enc *e, const uint32_t *words, size_t nw)
{
    if (e->nshapes >= EVB_SHAPES)
        return true; /* a full table: later events define their shape anew */
    if (!base_grow((void **)&e->words, &e->words_cap, e->nwords + nw, sizeof *e->words) ||
        !base_grow((void **)&e->keys, &e->keys_cap, e->nwords + nw, sizeof *e->keys) ||
        !base_grow((void **)&e->shapes, &e->shapes_cap, e->nshapes + 1, sizeof *e->shapes))
        return false;
    uint32_t h = hash_bytes(words, nw * 4);
    memcpy(e->words + e->nwords, words, nw * 4);
    for (size_t j = EVB_SHAPE_HEAD; j < nw; j++)
        e->keys[e->nwords + j] = key_of(&e->strs[words[j]], e->sbuf);
    e->shapes[e->nshapes] = (enc_shape){h, (uint32_t)e->nwords};
    e->nwords += nw;
    uint32_t i = h & (2 * EVB_SHAPES - 1);
    while (e->shape_slots[i])
        i = (i + 1) & (2 * EVB_SHAPES - 1);
    e->shape_slots[i] = (uint32_t)++e->nshapes;
    shape_seen(&e->strs[words[0]], (uint32_t)e->nshapes); /* the name's latest shape */
    return true;
}

static bool put_shape(db_evblock_enc *e, const enc_ev *x)
{
    long s = shape_find(e, x);
    if (s >= 0)
        return put_uv(e, (uint64_t)s + 1);
    split_keys(e);
    uint32_t words[EVB_SHAPE_HEAD + EVB_SHAPE_KEYS];
    size_t nw = EVB_SHAPE_HEAD, nk = e->nattr;
    if (!put_uv(e, 0) || !put_str(e, x->name, x->nl, &words[0]) || !put_uv(e, x->tpc) || !put_uv(e, nk))
        return false;
    words[1] = x->tpc;
    words[2] = (uint32_t)nk;
    bool numbered = words[0] != UINT32_MAX && nk <= EVB_SHAPE_KEYS;
    for (size_t j = 0; j < e->nattr; j++) {
        uint32_t num;
        if (!put_str(e, e->attr[j].key, e->attr[j].klen, &num))
            return false;
        if (nw < EVB_SHAPE_HEAD + EVB_SHAPE_KEYS)
            words[nw++] = num;
        numbered = numbered && num != UINT32_MAX;
    }
    return !numbered || shape_add(e, words, nw);
}

/* A value not in the block's strings yet (its hash h, its place slot):
 * the number or the literal, numbered as a string all the same. */
static bool put_new_value(db_evblock_enc *e, const char *v, size_t n, uint32_t h, uint64_t head, uint32_t slot)
{
    uint32_t num;
    uint64_t x;
    bool ok;
    if (canon_dec(v, n, head, &x))
        ok = put_uv(e, x << 2 | 1);
    else if (canon_hex(v, n, &x))
        ok = put_uv(e, 2) && put_uv(e, x);
    else
        ok = put_uv(e, 0) && put_uv(e, n) && put_bytes(e, v, n);
    return ok && str_add(e, v, n, h, head, slot, &num);
}

/* A value: a reference to the same text earlier in the block, else a new
 * one.  The reference inline, as most values on the latest-shape path
 * are: put_value whole, too big to inline, cost a call and a frame for
 * each. */
static inline bool put_hashed_value(db_evblock_enc *e, const char *v, size_t n, uint32_t h, uint64_t head)
{
    uint32_t slot;
    long i = str_find(e, v, n, h, head, &slot);
    if (i >= 0)
        return put_uv(e, ((uint64_t)i + 1) << 2);
    return put_new_value(e, v, n, h, head, slot);
}

static inline bool put_value(db_evblock_enc *e, const char *v, size_t n)
{
    uint64_t head;
    uint32_t h = hash_str(v, n, &head);
    return put_hashed_value(e, v, n, h, head);
}

/* Undoes a partly written event: the strings and shapes it numbered.  In a
 * linear-probing table an insertion never moves an older entry, so taking
 * the newest entries out, newest first, leaves the table as it was before
 * them (no rebuild of all 8192 slots for one event that did not fit). */
static void rollback(db_evblock_enc *e, size_t len, size_t nstrs, size_t nshapes, size_t nwords, size_t sbuf_len)
{
    for (size_t k = e->nstrs; k-- > nstrs;) {
        uint32_t i = e->strs[k].hash & (EVB_STR_SLOTS - 1);
        while (e->slots[i] != (uint32_t)k + 1)
            i = (i + 1) & (EVB_STR_SLOTS - 1);
        e->slots[i] = 0;
    }
    for (size_t k = e->nshapes; k-- > nshapes;) {
        uint32_t i = e->shapes[k].hash & (2 * EVB_SHAPES - 1);
        while (e->shape_slots[i] != (uint32_t)k + 1)
            i = (i + 1) & (2 * EVB_SHAPES - 1);
        e->shape_slots[i] = 0;
    }
    e->nstrs = nstrs;
    e->nshapes = nshapes;
    e->nwords = nwords;
    e->sbuf_len = sbuf_len;
    e->len = len;
}

/* The fields every event writes between its shape and its values, at p
 * (past them returned), prev_ts the block's time before the event.
 * Inline in the memo's hit (most events), with the copies on either
 * side, all through one pointer, not as a call between two
 * put_memo_bytes, each reading and storing e->len. */
static inline __attribute__((always_inline)) unsigned char *fixed_put(unsigned char *p, uint64_t prev_ts,
                                                                      const db_event *ev, uint64_t nd)
{
    p = uv_put(p, zz((int64_t)(ev->ts - prev_ts)));
    p = uv_put(p, ev->tid);
    p = uv_put(p, zz((int64_t)ev->pid - (int64_t)ev->tid));
    p = uv_put(p, ev->cpu == DB_CPU_NONE ? 0 : (uint64_t)ev->cpu + 1);
    p = uv_put(p, nd << 2 | (ev->obj != 0) | (uint64_t)(ev->val != 0) << 1);
    if (ev->obj)
        p = uv_put(p, ev->obj);
    if (ev->val)
        p = uv_put(p, zz(ev->val));
    return p;
}

/* fixed_put at the block's end, out of line (the paths that write an
 * event's values one by one). */
static void put_fixed(db_evblock_enc *e, const db_event *ev, uint64_t nd)
{
    e->len = (size_t)(fixed_put(e->buf + e->len, e->prev_ts, ev, nd) - e->buf);
}

#define EVB_FIXED_MAX 58 /* put_fixed's most bytes */

/* ---- the latest shapes of the event's name, read off its text ----
 *
 * An event the memo misses (a good part of an Android trace's: a switch
 * between threads not paired before in the block, a wakeup of another
 * thread; docs/PERFORMANCE.md) mostly has the shape its name had last.
 * Its entries are then matched with that shape's keys and its values
 * written in one pass over its text, instead of splitting it into entries
 * (a memchr call each), matching the keys and then reading the values
 * again. */

/* Writes the values of attributes a[0, alen) by the keys of shape words
 * w (their matchers: keys), as split_attrs, same_keys and put_value
 * would, from key *j and the entry at *p on: 1 done, 0 the entries are
 * not those keys (*j, *p: the first key that did not match, or w[2] when
 * entries are left over, and where its entry starts; the values before
 * are written and numbered), -1 memory.  Most entries are "key=" found
 * by key_at and a value shorter than sixteen bytes read in one or two
 * loads by short_value, which also give its length and head: its bytes
 * are not read again to find its end (entry_end) nor to compare it
 * (str_find), and not at all to hash it when it is shorter than eight
 * (values of 8 to 15 bytes are mostly comms). */
static int put_keyed_values(db_evblock_enc *e, const uint32_t *w, const enc_key *keys, const char *a, size_t alen,
                            uint32_t *jp, size_t *pp)
{
    size_t p = *pp;
    uint32_t j = *jp;
    for (; j < w[2]; j++) {
        size_t v, n;
        uint64_t head;
        if (key_at(&keys[j], a, p, alen))
            v = p + keys[j].len;
        else {
            const enc_str *k = &e->strs[w[EVB_SHAPE_HEAD + j]]; /* again each time: put_value may move strs */
            if (p >= alen || alen - p < k->len || !bytes_eq(e->sbuf + k->off, a + p, k->len))
                break; /* a key holds no NUL: a shorter entry differs within it */
            size_t q = p + k->len;
            if (q == alen || !a[q]) { /* the entry is the key */
                put_uv(e, 3);
                p = q + 1;
                continue;
            }
            if (a[q] != '=')
                break;
            v = q + 1;
        }
        bool ok;
        if (short_value(a, v, alen, &head, &n))
            ok = put_hashed_value(e, a + v, n, hash_short((const unsigned char *)a + v, n, head), head);
        else {
            n = entry_end(a, v, alen) - v;
            ok = put_value(e, a + v, n);
        }
        if (!ok)
            return -1;
        p = v + n + 1;
    }
    *jp = j;
    *pp = p;
    return j == w[2] && p >= alen; /* every key, and no entry left */
}

/* Writes the event (its shape, fixed fields and values) by one of the
 * latest shapes of its name (EVB_NAME_SHAPES): 1 written (*s1: where its
 * fixed fields start, *v0: its values), 0 none fits (nothing written or
 * numbered), -1 memory.  A shape that fails after its first keys hands
 * the values written to the next that begins with the same keys, which
 * goes on from there: the values are the same whatever the shape, and
 * only the shape's number, in front, changes.  An Android print's "E"
 * has the keys of its "B" but the slice's, and the two alternate: many
 * of an Android trace's events were written twice (by the wrong shape
 * first, then again; docs/PERFORMANCE.md). */
static int put_by_latest_shape(db_evblock_enc *e, const enc_ev *x, uint64_t nd, size_t *s1, size_t *v0)
{
    uint32_t slot;
    long s = str_find(e, x->name, x->nl, x->nh, x->nhead, &slot);
    if (s < 0)
        return 0;
    const db_event *ev = x->ev;
    size_t len = e->len, nstrs = e->nstrs, sl = e->sbuf_len, p = 0;
    const uint32_t *was = NULL; /* the shape that failed at key j */
    uint32_t j = 0;
    for (int k = 0; k < EVB_NAME_SHAPES; k++) {
        uint32_t v = e->strs[s].shape[k];
        if (!v || v > e->nshapes) /* a rollback may have dropped it */
            continue;
        const uint32_t *w = &e->words[e->shapes[v - 1].at];
        if (w[0] != (uint32_t)s || w[1] != x->tpc)
            continue;
        if (!base_grow((void **)&e->buf, &e->cap, len + EVB_EVENT_ROOM(x->nl, w[2], ev->attrs_len), 1))
            return -1;
        if (was && (w[2] < j || memcmp(was + EVB_SHAPE_HEAD, w + EVB_SHAPE_HEAD, j * 4) != 0 ||
                    (v < 0x80) != (e->buf[len] < 0x80))) { /* not the same first keys, or number length */
            rollback(e, len, nstrs, e->nshapes, e->nwords, sl); /* values number strings, nothing else */
            was = NULL;
        }
        if (!was) {
            put_uv(e, v);
            *s1 = e->len;
            put_fixed(e, ev, nd);
            *v0 = e->len;
            j = 0;
            p = 0;
        } else
            uv_put(e->buf + len, v); /* the same length */
        int r = put_keyed_values(e, w, &e->keys[e->shapes[v - 1].at + EVB_SHAPE_HEAD], x->attrs, ev->attrs_len,
                                 &j, &p);
        if (r == 1) {
            shape_seen(&e->strs[s], v);
            e->shape_hits++;
            return 1;
        }
        if (r < 0) {
            rollback(e, len, nstrs, e->nshapes, e->nwords, sl);
            return -1;
        }
        was = w;
    }
    if (was)
        rollback(e, len, nstrs, e->nshapes, e->nwords, sl);
    return 0;
}

/* ---- the memo: events that repeat ----
 *
 * Most events of a block repeat an earlier one but for their times, ids
 * and nodes: an idle CPU's cpu_idle, the same two threads switching, the
 * same wakeup.  Such an event is written as the earlier one was -- its
 * shape's and its values' bytes -- once that one's were written without
 * numbering anything new: they are then references to strings and a
 * shape numbered already (or literals, when the block's tables are full,
 * which they stay), and the tables only grow until the block ends, so
 * writing the event again would give the same bytes.  Finding it here
 * costs a hash and a compare of its attributes, instead of splitting
 * them, matching the shape's keys, and hashing and looking up every
 * value (much of the block encoder's work: docs/PERFORMANCE.md).  The
 * blocks are byte for byte what they were without the memo. */

static uint32_t memo_hash(const enc_ev *x)
{
    const char *name = x->name;
    size_t nl = x->nl;
    /* the name's first 8 bytes, or all of a shorter one in two loads
     * (tail_word), not a memcpy of nl < 8 ? nl : 8 bytes; the value is
     * the encoder's own, never stored */
    uint64_t w = 0;
    if (nl >= 8)
        memcpy(&w, name, 8);
    else if (nl)
        w = tail_word((const unsigned char *)name, nl);
    /* the attributes' hash_bytes with its long strings' loop inline,
     * not its call for every event and the head word hash_str takes */
    size_t alen = x->ev->attrs_len;
    uint32_t ah = alen > EVB_SAMPLED ? hash_sampled((const unsigned char *)x->attrs, alen)
                  : alen > 16      ? hash_long_inline((const unsigned char *)x->attrs, alen)
                                   : hash_bytes(x->attrs, alen);
    uint64_t h = (uint64_t)ah ^ (w * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)(nl << 9 | x->tpc) << 40);
    h *= 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32);
}

/* Whether a remembered event's name, NUL and attributes at mb are those
 * of x (nl and alen bytes, as the memo's).  The attributes by memcmp:
 * about 100 bytes (a switch's), which memcmp compares faster than
 * bytes_eq.  In an event the ingest's replay gives, they follow its name
 * and NUL (ingest/calls.c), and one memcmp compares all three. */
static inline bool memo_same(const char *mb, const enc_ev *x, size_t nl, size_t alen)
{
    if (x->attrs == x->name + nl + 1 || !alen)
        return memcmp(mb, x->name, nl + 1 + alen) == 0;
    return bytes_eq(mb, x->name, nl) && memcmp(mb + nl + 1, x->attrs, alen) == 0;
}

/* The remembered event with this name, type word and attributes, or NULL
 * (*slot: where it would go). */
static const enc_memo *memo_find(const db_evblock_enc *e, const enc_ev *x, uint32_t h, uint32_t *slot)
{
    size_t nl = x->nl, alen = x->ev->attrs_len;
    for (uint32_t i = h & (EVB_MEMO_SLOTS - 1);; i = (i + 1) & (EVB_MEMO_SLOTS - 1)) {
        uint32_t v = e->memo_slots[i];
        if (!v) {
            *slot = i;
            return NULL;
        }
        const enc_memo *m = &e->memo[v - 1];
        const char *mb = (const char *)e->memo_buf + m->off;
        if (m->hash == h && m->tpc == x->tpc && m->nl == nl && m->alen == alen) {
            if (memo_same(mb, x, nl, alen))
                return m;
        }
    }
}

/* Copies n bytes (a remembered event's shape or values: a shape's
 * number, a few values' references, mostly under 16 bytes) in copies of
 * 16, reading and writing up to 15 bytes past them: between the block
 * and memo_buf, both with EVB_MEMO_PAD bytes more than they hold (the
 * room made for an event, memo_buf's pad); the bytes past are written
 * over or never read, and no call to memcpy is made per hit.  Sixteen
 * are copied when n is 0 too (an event without attributes: no values),
 * into the same room: no test of n before the first copy, which is
 * mostly the only one. */
static inline void copy16(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t i = 0;
    do
        memcpy(d + i, s + i, 16);
    while ((i += 16) < n);
}

/* Remembers the event just written: its shape's bytes at e->buf[s0, s1),
 * its values' at [v0, e->len). */
static void memo_add(db_evblock_enc *e, uint32_t slot, uint32_t h, const enc_ev *x, size_t s0, size_t s1, size_t v0)
{
    const db_event *ev = x->ev;
    size_t nl = x->nl;
    size_t slen = s1 - s0, vlen = e->len - v0, need = nl + 1 + ev->attrs_len + slen + vlen;
    if (((slot - h) & (EVB_MEMO_SLOTS - 1)) >= EVB_MEMO_PROBE || e->nmemo == EVB_MEMO_MAX || nl > 255 ||
        ev->attrs_len > EVB_MEMO_ALEN || slen > 0xffff || vlen > 0xffff || e->memo_len + need > EVB_MEMO_BYTES)
        return;
    if (!e->memo_buf && !(e->memo_buf = malloc(EVB_MEMO_BYTES + EVB_MEMO_PAD)))
        return; /* no memo: every event is written in full */
    unsigned char *p = e->memo_buf + e->memo_len;
    base_copy_short((char *)p, x->name, nl + 1); /* its NUL too: memo_same */
    if (ev->attrs_len)
        memcpy(p + nl + 1, ev->attrs, ev->attrs_len);
    copy16(p + nl + 1 + ev->attrs_len, e->buf + s0, slen); /* then the values, over its bytes past it */
    copy16(p + nl + 1 + ev->attrs_len + slen, e->buf + v0, vlen);
    e->memo[e->nmemo] = (enc_memo){h, x->tpc, (uint32_t)e->memo_len, slot, (uint16_t)nl, (uint16_t)ev->attrs_len,
                                   (uint16_t)slen, (uint16_t)vlen};
    e->memo_slots[slot] = (uint16_t)++e->nmemo;
    e->memo_len += need;
}


int db_evblock_enc_add(db_evblock_enc *e, const db_event *ev)
{
    if (e->n >= DB_EVBLOCK_EVENTS)
        return 1;
    size_t len = e->len;
    if (e->n == 0) {
        e->first_id = ev->id;
        e->first_ts = e->prev_ts = ev->ts;
        e->prev_node = 0;
    }
    uint64_t nd = zz((int64_t)ev->node - (int64_t)e->prev_node);
    enc_ev x = {.ev = ev, .name = ev->name ? ev->name : "", .attrs = ev->attrs_len ? ev->attrs : "", .tpc = tpc_of(ev)};
    x.nl = db_event_name_len(ev);
    uint32_t mslot = 0, mh = memo_hash(&x);
    const enc_memo *m = e->no_memo ? NULL : memo_find(e, &x, mh, &mslot);
    if (m) {
        if (!base_grow((void **)&e->buf, &e->cap, e->len + m->slen + m->vlen + EVB_FIXED_MAX + EVB_MEMO_PAD, 1))
            return -1;
        const unsigned char *mb = e->memo_buf + m->off + m->nl + 1 + m->alen;
        e->memo_hits++;
        unsigned char *p = e->buf + e->len;
        copy16(p, mb, m->slen);
        p = fixed_put(p + m->slen, e->prev_ts, ev, nd);
        copy16(p, mb + m->slen, m->vlen);
        e->len = (size_t)(p + m->vlen - e->buf);
        if (e->n > 0 && e->len > DB_EVBLOCK_BYTES) { /* full: the event starts the next block */
            e->len = len;
            return 1;
        }
    } else {
        size_t nstrs = e->nstrs, nshapes = e->nshapes, nwords = e->nwords, sl = e->sbuf_len, s1 = 0, v0 = 0;
        x.nh = hash_str(x.name, x.nl, &x.nhead);
        int by = e->no_memo ? 0 : put_by_latest_shape(e, &x, nd, &s1, &v0);
        bool ok = by == 1;
        if (by == 0) { /* the plain path */
            if (!split_attrs(e, ev) ||
                !base_grow((void **)&e->buf, &e->cap, e->len + EVB_EVENT_ROOM(x.nl, e->nattr, ev->attrs_len), 1))
                return -1; /* nothing written yet */
            ok = put_shape(e, &x);
            s1 = e->len;
            if (ok) {
                put_fixed(e, ev, nd);
                v0 = e->len;
            }
            for (size_t j = 0; ok && j < e->nattr; j++)
                ok = e->attr[j].val ? put_value(e, e->attr[j].val, e->attr[j].vlen) : put_uv(e, 3);
        }
        if (!ok) {
            rollback(e, len, nstrs, nshapes, nwords, sl);
            return -1;
        }
        if (e->n > 0 && e->len > DB_EVBLOCK_BYTES) { /* full: the event starts the next block */
            rollback(e, len, nstrs, nshapes, nwords, sl);
            return 1;
        }
        if (e->nstrs == nstrs && e->nshapes == nshapes && !e->no_memo)
            memo_add(e, mslot, mh, &x, len, s1, v0);
    }
    e->prev_ts = ev->ts;
    e->prev_node = ev->node;
    e->n++;
    return 0;
}

const unsigned char *db_evblock_enc_bytes(db_evblock_enc *e, size_t *len)
{
    unsigned char head[EVB_HEAD_MAX], *p = head;
    *p++ = EVB_VERSION;
    p = uv_put(p, e->n);
    p = uv_put(p, e->first_ts);
    size_t hl = (size_t)(p - head);
    unsigned char *start = e->buf + EVB_HEAD_MAX - hl;
    memcpy(start, head, hl);
    *len = e->len - (EVB_HEAD_MAX - hl);
    return start;
}
