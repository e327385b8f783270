/* tests/unit/test_base.c -- base/'s general tools (base/base.h), on their
 * own: base_copy_short copies exactly n bytes of every length and no
 * byte past them; base_fmt_u64 writes what printf's %llu does; the spare
 * buffers of base_bufstack come back the last given first; and the
 * in-memory sorts (base_sort_merge, base_sort_nearly: chunkq.c's and
 * nodetop.c's): every length to 200 around the merge sort's 16-element
 * pieces and their merges, many ties, stable; the nearly-sorted sort on
 * arrays nearly in order and on shuffled ones (where it may give up);
 * base_grow's doubling and its failure that keeps the array; the radix
 * sort against a stable merge sort, for spans of every digit count.
 * The files written for the user (base/outfile.c): test_outfile.c.
 * The machines' syscall tables (base/arch.c): test_arch.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

/* ---- short copies ---- */

/* base_copy_short (the encoder's copy of a value's, a key's or a name's text)
 * copies exactly n bytes of every length, reading and writing none past
 * them: source and destination are allocations of n bytes, which ASan
 * (the unit tests' build) guards on both sides. */
static void test_bytes_copy(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 40; n++) {
        char *src = malloc(n ? n : 1), *dst = malloc(n ? n : 1);
        assert_non_null(src);
        assert_non_null(dst);
        for (size_t i = 0; i < n; i++) {
            src[i] = (char)('a' + i % 26);
            dst[i] = 0;
        }
        base_copy_short(dst, src, n);
        assert_memory_equal(dst, src, n ? n : 0);
        free(src);
        free(dst);
    }
}

/* ---- numbers in decimal ---- */

/* base_fmt_u64 writes what printf's %llu does: every power of ten and of
 * two and their neighbours (the lengths' edges, the 64-bit loop's and the
 * 32-bit one's), and numbers of every bit length */
static void fmt_u64_is(uint64_t v)
{
    char want[32], got[32];
    int n = snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    size_t m = base_fmt_u64(got, v);
    assert_int_equal(m, (size_t)n);
    assert_memory_equal(got, want, m);
}

static void test_fmt_u64(void **state)
{
    (void)state;
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10)
        for (uint64_t d = 0; d < 3; d++) {
            fmt_u64_is(p + d);
            fmt_u64_is(p - d);
        }
    for (int i = 0; i < 64; i++) {
        uint64_t x = (uint64_t)1 << i;
        fmt_u64_is(x - 1);
        fmt_u64_is(x);
        fmt_u64_is(x + 1);
    }
    fmt_u64_is(UINT64_MAX);
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fmt_u64_is(x >> (i % 64));
    }
}

/* ---- spare byte buffers ---- */

/* The queues' spare buffers: the one given back last comes first, a new
 * one only when none is kept, and a full stack frees what it cannot keep
 * (ASan: nothing leaks, nothing freed twice). */
static void test_bufstack(void **state)
{
    (void)state;
    base_bufstack s;
    base_bufstack_init(&s, 100);
    size_t cap = 1;
    char *a = base_bufstack_take(&s, &cap), *b = base_bufstack_take(&s, &cap);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(cap, 100);
    assert_int_equal(s.n, 0);
    base_bufstack_give(&s, a, 100);
    base_bufstack_give(&s, NULL, 0); /* nothing */
    char *grown = realloc(b, 500);
    assert_non_null(grown);
    base_bufstack_give(&s, grown, 500);
    assert_int_equal(s.n, 2);
    assert_ptr_equal(base_bufstack_take(&s, &cap), grown); /* the last given back, with its own size */
    assert_int_equal(cap, 500);
    assert_ptr_equal(base_bufstack_take(&s, &cap), a);
    assert_int_equal(cap, 100);
    char *c = base_bufstack_take(&s, &cap); /* none kept: a new one */
    assert_non_null(c);
    assert_true(c != a && c != grown);
    base_bufstack_give(&s, a, 100);
    base_bufstack_give(&s, grown, 500);
    base_bufstack_give(&s, c, 100);
    char *more[BASE_BUFSTACK_MAX];
    for (int i = 0; i < BASE_BUFSTACK_MAX; i++)
        more[i] = malloc(10);
    for (int i = 0; i < BASE_BUFSTACK_MAX; i++)
        base_bufstack_give(&s, more[i], 10); /* the last three do not fit: freed */
    assert_int_equal(s.n, BASE_BUFSTACK_MAX);
    base_bufstack_free(&s);
    assert_int_equal(s.n, 0);
}

/* ---- in-memory sorts ---- */

/* base_sort_merge and base_sort_nearly: elements of 12 bytes (a key, the
 * order they came in), every n from 0 to 200, against an insertion sort */
typedef struct sort_el {
    uint32_t key, seq, pad;
} sort_el;

static bool el_less(const void *x, const void *y)
{
    return ((const sort_el *)x)->key < ((const sort_el *)y)->key;
}

/* shuffle: random keys (base_sort_nearly gives up, the merge sort then),
 * else keys rising with every 7th dropped back a little or far */
static void sort_check(size_t n, bool nearly, bool shuffle, uint32_t *r, size_t *gave_up)
{
    sort_el a[200], tmp[200], want[200];
    for (size_t i = 0; i < n; i++) {
        *r = *r * 1103515245u + 12345u;
        uint32_t key = shuffle ? (*r >> 16) % (n / 4 + 1) : (uint32_t)i * 2;
        if (!shuffle && i % 7 == 6)
            key -= (*r >> 16) % (i % 14 == 13 ? 2 * (uint32_t)i + 1 : 9);
        a[i] = (sort_el){key, (uint32_t)i, 0xdead};
    }
    for (size_t i = 0; i < n; i++) { /* stable insertion sort */
        sort_el x = a[i];
        size_t j = i;
        for (; j > 0 && x.key < want[j - 1].key; j--)
            want[j] = want[j - 1];
        want[j] = x;
    }
    if (nearly) {
        bool done = base_sort_nearly(a, n, sizeof *a, el_less);
        assert_true(done || n > 16); /* 16 or fewer: always sorted by itself */
        *gave_up += !done;
        if (!done)
            base_sort_merge(a, tmp, n, sizeof *a, el_less);
    } else
        base_sort_merge(a, tmp, n, sizeof *a, el_less);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].key, want[i].key);
        assert_int_equal(a[i].seq, want[i].seq); /* ties in the order they came */
        assert_int_equal(a[i].pad, 0xdead);
    }
}

static void test_sort_merge(void **state)
{
    (void)state;
    uint32_t r = 12345;
    size_t gave_up = 0;
    for (size_t n = 0; n <= 200; n++)
        for (int nearly = 0; nearly < 2; nearly++)
            for (int shuffle = 0; shuffle < 2; shuffle++)
                sort_check(n, nearly, shuffle, &r, &gave_up);
    assert_true(gave_up > 100); /* the shuffled arrays: the merge sort's */
}

/* ---- base_grow ---- */

static void test_grow(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0;
    assert_true(base_grow((void **)&a, &cap, 0, sizeof *a)); /* nothing needed */
    assert_null(a);
    assert_true(base_grow((void **)&a, &cap, 1, sizeof *a));
    assert_int_equal(cap, 64); /* at least 64 */
    for (uint32_t i = 0; i < 64; i++)
        a[i] = i;
    assert_true(base_grow((void **)&a, &cap, 65, sizeof *a));
    assert_int_equal(cap, 128); /* doubled */
    assert_true(base_grow((void **)&a, &cap, 1000, sizeof *a));
    assert_int_equal(cap, 1024); /* doubled until it holds need */
    for (uint32_t i = 0; i < 64; i++)
        assert_int_equal(a[i], i); /* kept */
    uint32_t *was = a;
    assert_true(base_grow((void **)&a, &cap, 1024, sizeof *a));
    assert_ptr_equal(a, was); /* room already */
    /* a size that does not fit (before, the doubled count times the
     * element size wrapped around, and realloc got a small size or 0):
     * false, the array and its capacity as they were */
    assert_false(base_grow((void **)&a, &cap, SIZE_MAX / 4, sizeof *a));
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 1024);
    assert_false(base_grow((void **)&a, &cap, SIZE_MAX / 2 + 1, 1));
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 1024);
    free(a);
}

/* ---- base_radix_u32 ---- */

typedef struct {
    uint16_t seq;
    uint32_t key;
    uint16_t tail;
} radix_el;

static int radix_cmp(const void *x, const void *y)
{
    const radix_el *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* n elements, keys lo + [0, span], sorted at most `most` bits a pass:
 * the same order as by (key, arrival) */
static void radix_check(size_t n, uint32_t lo, uint32_t span, unsigned most, uint32_t *r)
{
    radix_el *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *want = malloc(n * sizeof *want);
    uint32_t *count = malloc(sizeof *count << most);
    assert_true(a && b && want && count);
    for (size_t i = 0; i < n; i++) {
        *r = *r * 1103515245u + 12345u;
        uint32_t v = *r >> 3;
        /* few distinct keys now and then, for ties; the span's ends always */
        uint32_t off = i == 0 ? span : i == 1 ? 0 : (n > 50 && i % 3 ? v % 7 : v) % ((uint64_t)span + 1);
        a[i] = (radix_el){.seq = (uint16_t)i, .key = lo + off, .tail = (uint16_t)(i * 7)};
    }
    memcpy(want, a, n * sizeof *a);
    qsort(want, n, sizeof *want, radix_cmp);
    unsigned bits = base_radix_bits(span);
    unsigned width = base_radix_width(bits, most);
    assert_true(width <= most);
    radix_el *out = base_radix_u32(a, b, n, sizeof *a, offsetof(radix_el, key), lo, span, bits, width, count);
    assert_true(out == a || out == b);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].key, want[i].key);
        assert_int_equal(out[i].seq, want[i].seq); /* stable */
        assert_int_equal(out[i].tail, want[i].tail);
    }
    free(a);
    free(b);
    free(want);
    free(count);
}

static void test_radix(void **state)
{
    (void)state;
    assert_int_equal(base_radix_bits(0), 0);
    assert_int_equal(base_radix_bits(1), 1);
    assert_int_equal(base_radix_bits(255), 8);
    assert_int_equal(base_radix_bits(256), 9);
    assert_int_equal(base_radix_bits(UINT32_MAX), 32);
    assert_int_equal(base_radix_width(0, 11), 0);
    assert_int_equal(base_radix_width(20, 11), 10); /* two even passes, not 11 + 9 */
    assert_int_equal(base_radix_width(32, 11), 11);
    uint32_t r = 777;
    const uint32_t spans[] = {0, 1, 2, 255, 256, 1000, 65535, 65536, 1u << 20, 123456789, UINT32_MAX};
    const uint32_t los[] = {0, 5, 1u << 31};
    for (size_t s = 0; s < sizeof spans / sizeof *spans; s++)
        for (size_t l = 0; l < sizeof los / sizeof *los; l++) {
            if (spans[s] > UINT32_MAX - los[l])
                continue;
            for (unsigned most = 4; most <= 11; most += 7)
                for (size_t n = 0; n <= 600; n += n < 20 ? 1 : 97)
                    radix_check(n, los[l], spans[s], most, &r);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_copy),
        cmocka_unit_test(test_fmt_u64),
        cmocka_unit_test(test_bufstack),
        cmocka_unit_test(test_sort_merge),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_radix),
    };
    return cmocka_run_group_tests_name("base", tests, NULL, NULL);
}
