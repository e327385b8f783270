/* tests/unit/test_evblock.c -- the events table's blocks (db/evblock.c,
 * db/evblock_enc.c, and db/evfront.c that hands them over): what goes in
 * comes back byte for byte, full blocks say so, damaged blocks are
 * refused; the encoder's shortcuts (the memo, a name's latest shapes)
 * give the bytes of the full encoding.  (The thread index's chunks and
 * the writer's normal forms: test_thrindex.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/db_int.h"
#include "db/evblock_words.h"

/* A deterministic generator of awkward events. */
static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct owned {
    db_event ev;
    char name[32];
    char attrs[8192];
} owned;

/* Values of every kind the encoder tells apart: canonical and not. */
static const char *const values[] = {
    "0", "7", "4124", "18446744073709551615", "4611686018427387903", "4611686018427387904",
    "007", "-1", "0x0", "0x1f", "0xffff888100a3c000", "0x00ff", "0xABC", "0x", "S", "R+", "",
    "bash", "kworker/0:1", "a b c", "=", "x=y", "99999999999999999999",
};
static const char *const keys[] = {"comm", "pid", "prio", "state", "", "next_comm", "func", "raw"};

static void random_event(owned *o, uint64_t id, uint64_t *ts)
{
    memset(o, 0, sizeof *o);
    db_event *ev = &o->ev;
    ev->id = id;
    *ts += rnd() % 3 == 0 ? 0 : rnd() % 100000;
    if (rnd() % 50 == 0)
        *ts -= rnd() % 1000; /* out of order */
    ev->ts = *ts;
    ev->tid = (uint32_t)(rnd() % 5 == 0 ? rnd() : rnd() % 40);
    ev->pid = (uint32_t)(rnd() % 3 == 0 ? ev->tid : rnd());
    ev->cpu = rnd() % 7 == 0 ? DB_CPU_NONE : (uint16_t)(rnd() % 300);
    ev->type = (uint8_t)(rnd() % DB_EV__COUNT);
    ev->phase = (uint8_t)(rnd() % 3);
    ev->ctx = (uint8_t)(rnd() % 4);
    ev->obj = rnd() % 2 ? 0 : rnd() % 2 ? rnd() : rnd() % 1000;
    ev->val = rnd() % 2 ? 0 : (int64_t)rnd();
    ev->node = (uint32_t)(rnd() % 4 == 0 ? 0 : rnd() % 2 ? rnd() : rnd() % 100);
    snprintf(o->name, sizeof o->name, "ev%u", (unsigned)(rnd() % 6));
    ev->name = rnd() % 20 == 0 ? NULL : o->name;
    size_t n = 0, nattrs = rnd() % 10 == 0 ? 70 + rnd() % 10 : rnd() % 9;
    for (size_t i = 0; i < nattrs; i++) {
        int w;
        if (rnd() % 15 == 0) /* no '=' at all */
            w = snprintf(o->attrs + n, sizeof o->attrs - n, "flag%u", (unsigned)(rnd() % 3));
        else if (rnd() % 10 == 0) /* a unique value */
            w = snprintf(o->attrs + n, sizeof o->attrs - n, "%s=msg %llu", keys[rnd() % 8],
                         (unsigned long long)rnd());
        else
            w = snprintf(o->attrs + n, sizeof o->attrs - n, "%s=%s", keys[rnd() % 8],
                         values[rnd() % (sizeof values / sizeof values[0])]);
        n += (size_t)w + 1;
    }
    ev->attrs = o->attrs;
    ev->attrs_len = n;
}

static void assert_same(const db_event *a, const db_event *b)
{
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->ts, b->ts);
    assert_int_equal(a->tid, b->tid);
    assert_int_equal(a->pid, b->pid);
    assert_int_equal(a->cpu, b->cpu);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->ctx, b->ctx);
    assert_int_equal(a->obj, b->obj);
    assert_int_equal(a->val, b->val);
    assert_int_equal(a->node, b->node);
    assert_string_equal(a->name ? a->name : "", b->name);
    assert_int_equal(a->attrs_len, b->attrs_len);
    assert_memory_equal(a->attrs, b->attrs, a->attrs_len);
}

/* Thousands of events through blocks of every fill: each decodes to what
 * went in, attribute text byte for byte. */
static void test_roundtrip(void **state)
{
    (void)state;
    enum { N = 6000 };
    owned *evs = calloc(N, sizeof *evs);
    assert_non_null(evs);
    uint64_t ts = 1000;
    for (size_t i = 0; i < N; i++)
        random_event(&evs[i], i + 1, &ts);
    db_evblock_enc *e = db_evblock_enc_new();
    db_evblock b = {0};
    size_t i = 0, blocks = 0;
    while (i < N) {
        db_evblock_enc_reset(e);
        size_t start = i;
        int rc = 0;
        while (i < N && (rc = db_evblock_enc_add(e, &evs[i].ev)) == 0)
            i++;
        assert_true(rc == 0 || rc == 1);
        assert_true(i > start);
        assert_int_equal(db_evblock_enc_count(e), i - start);
        assert_int_equal(db_evblock_enc_first(e), start + 1);
        size_t len;
        const unsigned char *bytes = db_evblock_enc_bytes(e, &len);
        /* a full block is within its two pages unless one event is alone */
        assert_true(len <= DB_EVBLOCK_BYTES + 21 || i - start == 1);
        assert_int_equal(db_evblock_decode(&b, start + 1, bytes, len), 0);
        assert_int_equal(b.n, i - start);
        for (size_t k = start; k < i; k++)
            assert_same(&evs[k].ev, db_evblock_get(&b, k + 1));
        assert_null(db_evblock_get(&b, i + 1));
        assert_null(db_evblock_get(&b, start));
        blocks++;
    }
    assert_true(blocks > 5); /* the test crossed many block boundaries */
    db_evblock_free(&b);
    db_evblock_enc_free(e);
    free(evs);
}

/* The front (db/evfront.c) gives ids in order and hands over blocks that,
 * put one after another, hold every event once: a full block before the
 * event that did not fit, the events so far before the first event out of
 * time order (and only the first), the rest on take. */
static void test_front(void **state)
{
    (void)state;
    enum { N = 5000 };
    owned *evs = calloc(N, sizeof *evs);
    assert_non_null(evs);
    uint64_t ts = 1000;
    const size_t first_back = 2000; /* in time order before it, twice back after */
    for (size_t i = 0; i < N; i++) {
        random_event(&evs[i], 0, &ts);
        evs[i].ev.id = 0; /* the front gives it */
        uint64_t prev = i ? evs[i - 1].ev.ts : 0;
        if (i == first_back || i == 3000)
            evs[i].ev.ts = prev - 5;
        else if (i < first_back && evs[i].ev.ts < prev)
            evs[i].ev.ts = prev;
    }
    db_evfront f = {0};
    db_evblock b = {0};
    uint64_t next = 1; /* the id the next handed-over block must start at */
    size_t handed = 0, backs = 0;
    for (size_t i = 0; i <= N; i++) {
        db_evblk blk;
        int rc;
        if (i < N) {
            db_event ev = evs[i].ev;
            rc = db_evfront_add(&f, &ev, &blk);
            assert_int_equal(ev.id, i + 1);
            evs[i].ev.id = ev.id;
        } else {
            rc = db_evfront_take(&f, &blk);
        }
        assert_true(rc == 0 || rc == 1);
        if (!rc)
            continue;
        assert_int_equal(blk.first, next);
        assert_int_equal(db_evblock_decode(&b, blk.first, blk.bytes, blk.len), 0);
        for (size_t k = 0; k < b.n; k++)
            assert_same(&evs[next - 1 + k].ev, db_evblock_get(&b, next + k));
        next += b.n;
        handed++;
        if (i < N) {
            assert_int_equal(next, i + 1); /* everything before this event */
            backs += i == first_back;
        }
    }
    assert_int_equal(next, N + 1);
    assert_int_equal(backs, 1);
    assert_true(handed > 8);
    db_evblock_free(&b);
    db_evfront_free(&f);
    free(evs);
}

/* Repetitive events (a sched_switch stream) take a few bytes each. */
static void test_compact(void **state)
{
    (void)state;
    db_evblock_enc *e = db_evblock_enc_new();
    char attrs[256];
    size_t n = 0, len = 0;
    for (uint64_t i = 1; i <= 300; i++) {
        int w = snprintf(attrs, sizeof attrs,
                         "prev_comm=worker%c%s=%llu%cprev_prio=120%cprev_state=S%cnext_comm=ui-main%c"
                         "next_pid=%llu%cnext_prio=120",
                         0, "prev_pid", (unsigned long long)(4000 + i % 3), 0, 0, 0, 0,
                         (unsigned long long)(4100 + i % 5), 0);
        db_event ev = {.id = i, .ts = 1000000 + i * 1500, .tid = 4000 + (uint32_t)(i % 3), .pid = 4000,
                       .cpu = (uint16_t)(i % 2), .type = DB_EV_WAIT, .phase = DB_PH_BEGIN,
                       .node = (uint32_t)(100 + i / 4), .name = "sched_switch", .attrs = attrs,
                       .attrs_len = (size_t)w + 1};
        assert_int_equal(db_evblock_enc_add(e, &ev), 0);
        n++;
    }
    db_evblock_enc_bytes(e, &len);
    assert_true(len / n <= 16); /* the text is some 110 bytes an event */
    db_evblock_enc_free(e);
}

/* Truncated or altered blocks are refused or decode to something, never
 * read outside the value (ASan watches). */
static void test_damaged(void **state)
{
    (void)state;
    owned *evs = calloc(200, sizeof *evs);
    uint64_t ts = 5;
    db_evblock_enc *e = db_evblock_enc_new();
    size_t n = 0;
    for (size_t i = 0; i < 200; i++) {
        random_event(&evs[i], i + 1, &ts);
        if (db_evblock_enc_add(e, &evs[i].ev))
            break;
        n++;
    }
    size_t len;
    const unsigned char *bytes = db_evblock_enc_bytes(e, &len);
    unsigned char *copy = malloc(len);
    db_evblock b = {0};
    for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
        memcpy(copy, bytes, cut);
        assert_int_not_equal(db_evblock_decode(&b, 1, copy, cut), 0);
    }
    for (int round = 0; round < 2000; round++) {
        memcpy(copy, bytes, len);
        copy[rnd() % len] ^= (unsigned char)(1 + rnd() % 255);
        int rc = db_evblock_decode(&b, 1, copy, len);
        assert_true(rc == 0 || rc == -1);
    }
    assert_int_equal(db_evblock_decode(&b, 1, bytes, len), 0);
    assert_int_equal(b.n, n);
    free(copy);
    db_evblock_free(&b);
    db_evblock_enc_free(e);
    free(evs);
}

/* An event that does not fit is taken back out of the block (rollback):
 * the strings and shape it numbered must be gone from the encoder's
 * tables too, so events added after it (without a reset) that use the
 * same strings number them anew and the block still decodes to what went
 * in.  Many overflows, each followed by small events reusing its text. */
/* Events fed to an encoder with the memo and the latest-shape path and
 * their names' lengths (db_event's name_len) and to one without either
 * (it measures each name), in blocks of at most per_block events (0: as
 * many as fit): the same result, the same bytes, and the blocks decode to what
 * went in (an event whose last NUL was left off decodes with it: it is
 * put back in evs[k].attrs, and compared there).  What each encoder's
 * shortcuts wrote, and the blocks. */
typedef struct enc_hits {
    size_t blocks, memo, shape;   /* the encoder with its shortcuts */
    size_t plain_memo, plain_shape; /* the one without */
} enc_hits;

static enc_hits same_as_plain(owned *evs, size_t n, size_t per_block)
{
    db_evblock_enc *with = db_evblock_enc_new(), *without = db_evblock_enc_new();
    db_evblock_enc_memo(without, false);
    db_evblock b = {0};
    enc_hits h = {0};
    size_t i = 0;
    while (i < n) {
        db_evblock_enc_reset(with);
        db_evblock_enc_reset(without);
        size_t start = i;
        int rc = 0;
        while (i < n && (!per_block || i - start < per_block)) {
            db_event given = evs[i].ev; /* its name's length given, as the ingest pipe's replay gives it */
            given.name_len = given.name ? (uint32_t)strlen(given.name) : 0;
            if ((rc = db_evblock_enc_add(with, &given)))
                break;
            assert_int_equal(db_evblock_enc_add(without, &evs[i].ev), 0);
            i++;
        }
        assert_true(rc == 0 || rc == 1);
        if (rc)
            assert_int_equal(db_evblock_enc_add(without, &evs[i].ev), 1);
        size_t la, lb;
        const unsigned char *a = db_evblock_enc_bytes(with, &la), *bb = db_evblock_enc_bytes(without, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, bb, la);
        assert_int_equal(db_evblock_decode(&b, start + 1, a, la), 0);
        for (size_t k = start; k < i; k++) {
            db_event want = evs[k].ev;
            want.attrs = evs[k].attrs;
            if (want.attrs_len && want.attrs[want.attrs_len - 1])
                evs[k].attrs[want.attrs_len++] = 0;
            assert_same(&want, db_evblock_get(&b, k + 1));
        }
        h.blocks++;
    }
    h.memo = db_evblock_enc_memo_hits(with);
    h.shape = db_evblock_enc_shape_hits(with);
    h.plain_memo = db_evblock_enc_memo_hits(without);
    h.plain_shape = db_evblock_enc_shape_hits(without);
    db_evblock_free(&b);
    db_evblock_enc_free(with);
    db_evblock_enc_free(without);
    return h;
}

/* The memo (events that repeat written as they were before) gives the
 * bytes the full encoding gives: events of a few hot forms and of many
 * (a block's shape table fills), with other times, threads, nodes and
 * objects each, fed to an encoder with the memo and one without. */
static void test_memo_same_bytes(void **state)
{
    (void)state;
    enum { N = 20000, T = 300 };
    static owned pool[T], evs[N];
    uint64_t ts = 5000;
    for (size_t t = 0; t < T; t++) {
        random_event(&pool[t], 1, &ts);
        if (t >= 20) /* a name per form: shapes past the table's 128 */
            snprintf(pool[t].name, sizeof pool[t].name, "form%zu", t);
    }
    size_t repeats = 0;
    for (size_t i = 0; i < N; i++) {
        const owned *t = &pool[rnd() % 10 < 7 ? rnd() % 20 : rnd() % T];
        owned *o = &evs[i];
        random_event(o, i + 1, &ts); /* the fixed fields */
        if (rnd() % 30 == 0)
            continue; /* now and then one of its own */
        memcpy(o->name, t->name, sizeof o->name);
        memcpy(o->attrs, t->attrs, t->ev.attrs_len);
        o->ev.name = t->ev.name ? o->name : NULL;
        o->ev.attrs_len = t->ev.attrs_len;
        if (rnd() % 4) { /* else the same attributes with another type, phase or context */
            o->ev.type = t->ev.type;
            o->ev.phase = t->ev.phase;
            o->ev.ctx = t->ev.ctx;
        }
        repeats++;
    }
    enc_hits h = same_as_plain(evs, N, 0);
    assert_true(h.blocks > 20);
    assert_true(repeats > N / 2);
    assert_true(h.memo > N / 4); /* the memo was used */
    assert_int_equal(h.plain_memo, 0);
}

/* Events without attributes that repeat: a memo hit's values, and the
 * values memo_add keeps, are no bytes, which copy16 still copies sixteen
 * of (into the room made for the event, out of the block's or memo_buf's
 * pad; ASan, the unit tests' build, guards their ends), in blocks of 512
 * events: the bytes are the plain encoder's, and the memo served. */
static void test_memo_no_attributes(void **state)
{
    (void)state;
    enum { N = 6000 };
    static owned evs[N];
    uint64_t ts = 5000;
    for (size_t i = 0; i < N; i++) {
        random_event(&evs[i], i + 1, &ts);
        const char *name = i % 3 == 0 ? "cpu_idle" : i % 3 == 1 ? "x" : "sched_wakeup_new";
        snprintf(evs[i].name, sizeof evs[i].name, "%s", name);
        evs[i].ev.name = evs[i].name;
        evs[i].ev.type = 1;
        evs[i].ev.phase = 0;
        evs[i].ev.ctx = 0;
        evs[i].ev.attrs_len = 0;
    }
    enc_hits h = same_as_plain(evs, N, 0);
    assert_true(h.blocks > 2);
    assert_true(h.memo > N / 2);
}

/* The memo hashes long attributes from samples (hash_sampled: their first
 * 32 bytes, middle 16 and last 32), so events that differ only between
 * them share a hash: 40 such forms, 10 rounds of each, with other fields
 * each time.  The bytes are the full encoding's, and the memo serves
 * the forms it keeps, EVB_MEMO_PROBE of a hash. */
static void test_memo_sampled_collisions(void **state)
{
    (void)state;
    enum { FORMS = 40, N = FORMS * 10 };
    static owned evs[N];
    uint64_t ts = 1000;
    for (size_t i = 0; i < N; i++) {
        owned *o = &evs[i];
        random_event(o, i + 1, &ts);
        snprintf(o->name, sizeof o->name, "other");
        o->ev.name = o->name;
        o->ev.type = DB_EV_RAW;
        o->ev.phase = 0;
        o->ev.ctx = 0;
        /* 40 bytes the same, the form's number (bytes 40 to 47), then the
         * same to 120 bytes: the samples are bytes 0-31, 52-67, 88-119 */
        char *a = o->attrs;
        memset(a, 0, 121);
        memcpy(a, "first=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 39);
        snprintf(a + 40, 8, "f=%04u", (unsigned)(i % FORMS));
        memcpy(a + 48, "last=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 71);
        o->ev.attrs = a;
        o->ev.attrs_len = 120;
    }
    enc_hits h = same_as_plain(evs, N, 0);
    /* the memo serves the forms it keeps, and keeps at most 8 of the 40
     * (EVB_MEMO_PROBE) in a block: without that bound it would keep them
     * all, with some 300 hits */
    assert_true(h.memo > 0);
    assert_true(h.memo <= 8 * 10 * h.blocks);
    assert_int_equal(h.plain_memo, 0);
}

/* The memo compares a remembered event's name, NUL and attributes in one
 * memcmp when the event's attributes follow its name and NUL (as the
 * ingest's replay gives them), else the name and the attributes apart:
 * the same event in either layout hits what the other left, an event
 * whose attributes' or name's last byte differs does not, and the bytes
 * are those of an encoder without the memo. */
static void test_memo_contiguous(void **state)
{
    (void)state;
    static const char attrs[] = "prev_comm=bash\0next_pid=42\0";
    static const char other[] = "prev_comm=bash\0next_pid=43\0";
    char joined[64], joined_other[64], joined_name[64], bare[16];
    size_t al = sizeof attrs - 1;
    memcpy(joined, "sw\0", 3); /* name, NUL, attributes */
    memcpy(joined + 3, attrs, al);
    memcpy(joined_other, "sw\0", 3);
    memcpy(joined_other + 3, other, al);
    memcpy(joined_name, "sx\0", 3);
    memcpy(joined_name + 3, attrs, al);
    memcpy(bare, "idle\0", 5); /* no attributes */
    char name_apart[] = "sw", attrs_apart[sizeof attrs];
    memcpy(attrs_apart, attrs, sizeof attrs);
    struct {
        const char *name, *attrs;
        size_t alen;
    } in[] = {
        {joined, joined + 3, al},           {name_apart, attrs_apart, al}, /* numbers, then remembered */
        {joined, joined + 3, al},           {name_apart, attrs_apart, al}, /* hits */
        {joined, joined + 3, al},           {joined_other, joined_other + 3, al}, /* hit, then misses */
        {joined_name, joined_name + 3, al}, {name_apart, attrs_apart, al}, /* miss, hit */
        {bare, NULL, 0},                    {bare, NULL, 0},               /* numbers, remembered */
        {bare, NULL, 0},                                                   /* hit */
    };
    size_t n = sizeof in / sizeof in[0];
    db_evblock_enc *with = db_evblock_enc_new(), *without = db_evblock_enc_new();
    db_evblock_enc_memo(without, false);
    for (size_t i = 0; i < n; i++) {
        db_event ev = {.id = i + 1, .ts = 1000 + i, .tid = 7, .pid = 7, .cpu = 1, .type = 0, .node = 3};
        ev.name = in[i].name;
        ev.name_len = (uint32_t)strlen(in[i].name);
        ev.attrs = in[i].attrs;
        ev.attrs_len = in[i].alen;
        assert_int_equal(db_evblock_enc_add(with, &ev), 0);
        ev.name_len = 0;
        assert_int_equal(db_evblock_enc_add(without, &ev), 0);
    }
    assert_int_equal(db_evblock_enc_memo_hits(with), 5);
    size_t la, lb;
    const unsigned char *a = db_evblock_enc_bytes(with, &la), *b = db_evblock_enc_bytes(without, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    db_evblock_enc_free(with);
    db_evblock_enc_free(without);
}

/* An event the memo misses is written by its name's latest shape, its
 * entries matched with the shape's keys as it reads them: the bytes must
 * be those of the full encoding whatever the entries are.  Events of two
 * names built from one list of keys, each now and then changed the ways
 * that must fail the match or only look like it would: an entry dropped
 * or added, a key a prefix of the shape's or longer, a bare key for a
 * key=value and back, an empty entry, "=v", "k=", a value with '=', the
 * last NUL left off; values from a small set, so most events repeat keys
 * but not whole attributes. */
static void test_latest_shape_same_bytes(void **state)
{
    (void)state;
    enum { N = 12000 };
    static owned evs[N];
    static const char *const ks[] = {"reason", "state", "next_pid", "next_comm", "prev_comm", "pid", "prio"};
    static const char *const vs[] = {"sleep", "S", "R+", "20726", "kworker/u16:0", "0", "120", "", "a=b", "0x1f"};
    uint64_t ts = 100;
    for (size_t i = 0; i < N; i++) {
        owned *o = &evs[i];
        random_event(o, i + 1, &ts); /* the fixed fields */
        snprintf(o->name, sizeof o->name, "%s", rnd() % 2 ? "sched_switch" : "wake");
        o->ev.name = o->name;
        o->ev.type = DB_EV_RAW;
        o->ev.phase = o->ev.ctx = 0;
        size_t n = 0, nk = sizeof ks / sizeof ks[0];
        unsigned change = rnd() % 4 == 0 ? (unsigned)(rnd() % 9) : 99;
        for (size_t k = 0; k < nk; k++) {
            const char *key = ks[k], *v = vs[rnd() % (rnd() % 3 ? 3 : sizeof vs / sizeof vs[0])];
            char kb[32];
            if (change == 0 && k == 3)
                continue; /* one fewer */
            if (change == 1 && k == 5) {
                snprintf(kb, sizeof kb, "%.2s", key); /* a prefix of the key */
                key = kb;
            }
            if (change == 2 && k == 5) {
                snprintf(kb, sizeof kb, "%sx", key); /* the key and more */
                key = kb;
            }
            if (change == 3 && k == 1) /* bare */
                n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "%s", key) + 1;
            else if (change == 4 && k == 2) /* an empty entry before it */
                n += 1 + (size_t)snprintf(o->attrs + n + 1, sizeof o->attrs - n - 1, "%s=%s", key, v) + 1;
            else if (change == 5 && k == 0) /* no key */
                n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "=%s", v) + 1;
            else
                n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "%s=%s", key, v) + 1;
        }
        if (change == 6) /* one more */
            n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "extra=1") + 1;
        if (change == 7 || rnd() % 5 == 0) /* the last NUL left off */
            n--;
        if (change == 8)
            n = 0; /* none */
        o->ev.attrs_len = n;
    }
    enc_hits h = same_as_plain(evs, N, 0);
    assert_true(h.shape > N / 4); /* the shortcut was taken */
    assert_int_equal(h.plain_shape, 0);
}

/* The latest-shape path reads most entries a word at a time: "key=" in
 * one or two loads, a value shorter than sixteen bytes in one or two,
 * near the text's end from its last eight bytes.  Keys of 0 to 20
 * bytes, values of 0 to 17 (bytes past 0x7f among them, which must not
 * look like a NUL), texts of fewer than eight bytes, the last NUL left
 * off, each text in a buffer of its own length (the sanitizer's build
 * sees a load past it): the bytes must be those of the full encoding. */
static void test_short_values_same_bytes(void **state)
{
    (void)state;
    enum { N = 12000, FORMS = 7 };
    static owned evs[N];
    static char *texts[N];
    static const char *const ks[] = {"", "a", "ab", "pid", "prio", "state", "reason", "nr_pid", "next_pid",
                                     "next_comm", "target_cpu", "prev_state_x", "transaction_id",
                                     "blocked_caller", "seven_7", "fifteen_bytes15", "sixteen_bytes_16",
                                     "a_key_of_twenty_byte"};
    static const char *const vs[] = {"", "1", "S", "R+", "120", "\xff", "\x80\x81", "sleep", "2000000",
                                     "7654321", "12345678", "\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "=", "a=b",
                                     "kworker/0", "abcdefghijk", "kworker/u16:0", "fifteen_chars_x",
                                     "sixteen_chars_xy", "seventeen_chars_z"};
    size_t form[FORMS][3], nform[FORMS]; /* "a=..." alone, then every key in threes */
    for (size_t f = 0; f < FORMS; f++) {
        nform[f] = f == 0 ? 1 : 3;
        for (size_t k = 0; k < nform[f]; k++)
            form[f][k] = f == 0 ? 1 : (3 * (f - 1) + k) % (sizeof ks / sizeof ks[0]);
    }
    uint64_t ts = 100;
    for (size_t i = 0; i < N; i++) {
        owned *o = &evs[i];
        random_event(o, i + 1, &ts); /* the fixed fields */
        size_t f = rnd() % FORMS, n = 0;
        snprintf(o->name, sizeof o->name, "form%zu", f);
        o->ev.name = o->name;
        o->ev.type = DB_EV_RAW;
        o->ev.phase = o->ev.ctx = 0;
        for (size_t k = 0; k < nform[f]; k++) {
            const char *v = vs[rnd() % (rnd() % 2 ? 6 : sizeof vs / sizeof vs[0])];
            if (rnd() % 40 == 0) /* now and then a bare key */
                n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "%s", ks[form[f][k]]) + 1;
            else
                n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "%s=%s", ks[form[f][k]], v) + 1;
        }
        if (rnd() % 3 == 0)
            n--; /* the last NUL left off */
        texts[i] = malloc(n ? n : 1);
        assert_non_null(texts[i]);
        memcpy(texts[i], o->attrs, n);
        o->ev.attrs = texts[i];
        o->ev.attrs_len = n;
    }
    assert_true(same_as_plain(evs, N, 0).shape > N / 4); /* the shortcut was taken */
    for (size_t k = 0; k < N; k++)
        free(texts[k]);
}

/* A name's three shapes that come round (as an Android sched_switch's)
 * are all found by the latest-shape path: past each block's first three
 * events, none is written with its keys in full (with two latest shapes,
 * none would be found).  Values unique to each
 * event, so that the memo never has it. */
static void test_three_shapes_come_round(void **state)
{
    (void)state;
    enum { N = 3000 };
    static owned evs[N];
    static const char *const forms[] = {"state=%zu", "reason=%zu", "reason=%zu"};
    uint64_t ts = 100;
    for (size_t i = 0; i < N; i++) {
        owned *o = &evs[i];
        random_event(o, i + 1, &ts);
        snprintf(o->name, sizeof o->name, "sched_switch");
        o->ev.name = o->name;
        o->ev.type = DB_EV_RAW;
        o->ev.phase = o->ev.ctx = 0;
        size_t n = (size_t)snprintf(o->attrs, sizeof o->attrs, forms[i % 3], i) + 1;
        n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "next_pid=%zu", i) + 1;
        if (i % 3 == 2)
            n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "blocked_caller=0x%zx", i) + 1;
        o->ev.attrs_len = n;
    }
    db_evblock_enc *e = db_evblock_enc_new();
    db_evblock b = {0};
    size_t i = 0, blocks = 0;
    while (i < N) {
        db_evblock_enc_reset(e);
        size_t start = i;
        while (i < N && db_evblock_enc_add(e, &evs[i].ev) == 0)
            i++;
        size_t len;
        const unsigned char *bytes = db_evblock_enc_bytes(e, &len);
        assert_int_equal(db_evblock_decode(&b, start + 1, bytes, len), 0);
        for (size_t k = start; k < i; k++)
            assert_same(&evs[k].ev, db_evblock_get(&b, k + 1));
        blocks++;
    }
    assert_true(blocks > 3);
    assert_int_equal(db_evblock_enc_memo_hits(e), 0);
    /* (an event that did not fit counts too, before the next block's three) */
    assert_true(db_evblock_enc_shape_hits(e) >= N - 3 * blocks);
    db_evblock_free(&b);
    db_evblock_enc_free(e);
}

/* An atrace print's shapes: "B" is "E" and a slice, "C" is "E" and a
 * counter and its value. */
static void print_event(owned *o, uint64_t id, uint64_t *ts, char kind, size_t u)
{
    random_event(o, id, ts);
    snprintf(o->name, sizeof o->name, "print");
    o->ev.name = o->name;
    o->ev.type = DB_EV_RAW;
    o->ev.phase = o->ev.ctx = 0;
    size_t n = (size_t)snprintf(o->attrs, sizeof o->attrs, "buf=%c|%zu", kind, u) + 1;
    n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "atrace=%c", kind) + 1;
    n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "tgid=%zu", u % 7) + 1;
    if (kind == 'B')
        n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "slice=s%zu", u) + 1;
    if (kind == 'C') {
        n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "counter=c%zu", u % 3) + 1;
        n += (size_t)snprintf(o->attrs + n, sizeof o->attrs - n, "value=%zu", u) + 1;
    }
    o->ev.attrs_len = n;
}

/* A shape that fails after its first keys hands the values written to
 * the next of the name's latest shapes that begins with the same keys
 * (an "E" tried as a "B" goes on as an "E"): the bytes are those of the
 * full encoding.  Also in a block whose shape table is full, the name's
 * shapes numbered 1 and 128 (a number one byte long and one two bytes
 * long: the one written is not written over), and a third not
 * numbered. */
static void test_prefix_shapes_go_on(void **state)
{
    (void)state;
    enum { N = 6000, M = 300 };
    static owned evs[N];
    static const char kinds[] = "BEBEBEBECE";
    uint64_t ts = 100;
    for (size_t i = 0; i < N; i++)
        print_event(&evs[i], i + 1, &ts, kinds[rnd() % 10], i);
    assert_true(same_as_plain(evs, N, 0).shape > N * 3 / 4);

    /* one block: "E" shape 1, 126 others, "B" shape 128, then all three */
    for (size_t i = 0; i < M; i++) {
        owned *o = &evs[i];
        if (i == 0 || i == 127 || i > 127)
            print_event(o, i + 1, &ts, i == 0 ? 'E' : i == 127 ? 'B' : kinds[rnd() % 10], i);
        else {
            random_event(o, i + 1, &ts);
            snprintf(o->name, sizeof o->name, "other%zu", i);
            o->ev.name = o->name;
            o->ev.attrs_len = (size_t)snprintf(o->attrs, sizeof o->attrs, "k=%zu", i) + 1;
        }
    }
    assert_true(same_as_plain(evs, M, M).shape > (M - 128) / 2);
}

/* A value that is a canonical decimal is kept as its number, written
 * last in its event as a varint of (number << 2 | 1); any other as its
 * text.  The encoder reads up to eight digits at once (canon_dec_head):
 * every length, every digit, and the near misses around them. */
static void test_decimal_values(void **state)
{
    (void)state;
    static const char *const dec[] = {"0", "7", "90", "305", "1234567", "12345678", "99999999", "10000000",
                                      "98765432", "123456789", "100000000000000000"};
    static const char *const other[] = {"007", "00", "0000", "12a4", "1:2", "9/", "/9", "-1", "1 ", " 1",
                                        "1234567:", "12345\xb0", "\xb9", "12345678901234567890", "a"};
    db_evblock_enc *e = db_evblock_enc_new();
    db_evblock b = {0};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0] + sizeof other / sizeof other[0]; i++) {
        bool is_dec = i < sizeof dec / sizeof dec[0];
        const char *v = is_dec ? dec[i] : other[i - sizeof dec / sizeof dec[0]];
        owned o = {0};
        snprintf(o.name, sizeof o.name, "counter");
        size_t n = (size_t)snprintf(o.attrs, sizeof o.attrs, "v=%s", v);
        o.ev = (db_event){.id = 1, .ts = 5, .tid = 1, .pid = 1, .type = DB_EV_RAW, .name = o.name,
                          .attrs = o.attrs, .attrs_len = n + 1};
        db_evblock_enc_reset(e);
        assert_int_equal(db_evblock_enc_add(e, &o.ev), 0);
        size_t len;
        const unsigned char *bytes = db_evblock_enc_bytes(e, &len);
        unsigned char want[32], *p = want;
        if (is_dec) {
            uint64_t x = strtoull(v, NULL, 10) << 2 | 1;
            for (; x >= 0x80; x >>= 7)
                *p++ = (unsigned char)(x | 0x80);
            *p++ = (unsigned char)x;
        } else {
            memcpy(p, v, strlen(v));
            p += strlen(v);
        }
        size_t wl = (size_t)(p - want);
        assert_true(len > wl);
        assert_memory_equal(bytes + len - wl, want, wl);
        assert_int_equal(db_evblock_decode(&b, 1, bytes, len), 0);
        assert_same(&o.ev, db_evblock_get(&b, 1));
    }
    db_evblock_free(&b);
    db_evblock_enc_free(e);
}

static void test_rollback_keeps_tables(void **state)
{
    (void)state;
    enum { N = 400 };
    static owned evs[N];
    db_evblock_enc *e = db_evblock_enc_new();
    db_evblock b = {0};
    uint64_t ts = 1000;
    int overflows = 0;
    for (int round = 0; round < 8; round++) {
        db_evblock_enc_reset(e);
        size_t n = 0, id = 1;
        for (;;) { /* fill with events of unique strings until one does not fit */
            owned *o = &evs[n];
            memset(o, 0, sizeof *o);
            snprintf(o->name, sizeof o->name, "ev%d", round);
            size_t len = 0;
            for (int k = 0; k < 40; k++)
                len += (size_t)snprintf(o->attrs + len, sizeof o->attrs - len, "key%zu_%d=uniq-%d-%zu-%d-0123456789",
                                        n % 3, k, round, n, k) + 1;
            o->ev = (db_event){.id = id, .ts = ts += 10, .tid = 7, .pid = 7, .type = DB_EV_RAW, .name = o->name,
                               .attrs = o->attrs, .attrs_len = len};
            int rc = db_evblock_enc_add(e, &o->ev);
            assert_true(rc == 0 || rc == 1);
            if (rc == 1)
                break;
            n++, id++;
            assert_true(n < N - 4);
        }
        overflows++;
        /* small events with strings of the one taken back: its key and value */
        const owned *gone = &evs[n];
        for (int k = 0; k < 3; k++) {
            owned *o = &evs[n + (size_t)k];
            if (k > 0)
                memset(o, 0, sizeof *o);
            char kv[128];
            snprintf(kv, sizeof kv, "%s", k == 0 ? gone->attrs : "key0_0=uniq-x");
            memset(o->attrs, 0, sizeof o->attrs);
            size_t len = (size_t)snprintf(o->attrs, sizeof o->attrs, "%s", kv) + 1;
            snprintf(o->name, sizeof o->name, "ev%d", round);
            o->ev = (db_event){.id = id, .ts = ts += 10, .tid = 7, .pid = 7, .type = DB_EV_RAW, .name = o->name,
                               .attrs = o->attrs, .attrs_len = len};
            assert_int_equal(db_evblock_enc_add(e, &o->ev), 0);
            id++;
        }
        size_t total = n + 3, len;
        const unsigned char *bytes = db_evblock_enc_bytes(e, &len);
        assert_int_equal(db_evblock_decode(&b, 1, bytes, len), 0);
        assert_int_equal(b.n, total);
        for (size_t k = 0; k < total; k++)
            assert_same(&evs[k].ev, db_evblock_get(&b, k + 1));
    }
    assert_int_equal(overflows, 8);
    db_evblock_free(&b);
    db_evblock_enc_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_front),
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_rollback_keeps_tables), cmocka_unit_test(test_memo_same_bytes), cmocka_unit_test(test_memo_contiguous), cmocka_unit_test(test_memo_no_attributes), cmocka_unit_test(test_memo_sampled_collisions),
        cmocka_unit_test(test_latest_shape_same_bytes),
        cmocka_unit_test(test_short_values_same_bytes),
        cmocka_unit_test(test_three_shapes_come_round),
        cmocka_unit_test(test_prefix_shapes_go_on),
        cmocka_unit_test(test_decimal_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
