/* tests/unit/test_map.c -- base_map (base/map.c), the one hash map, on its
 * own: puts, gets, replacements and deletions against a plain model (an
 * array of every key's value) over many keys and through every growth;
 * backward-shift deletion in runs of keys that share one home slot and in
 * runs that wrap past the last slot; the keys 0 and UINT64_MAX and the
 * value UINT32_MAX; reserve's promise (no allocation for the keys it made
 * room for); clear; and out of memory (a reservation whose bytes no
 * size_t holds fails and leaves the map as it was; the allocator's own
 * refusal is not reached here: ASan aborts on a request that large). */
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

/* Every full slot is reachable: the probe from its key's home meets no
 * empty slot before it, and no key is there twice; len counts them. */
static void check_invariants(const base_map *m)
{
    size_t full = 0;
    assert_true(m->cap == 0 || (m->cap & (m->cap - 1)) == 0);
    assert_true((m->len - m->zero) * 2 <= m->cap || m->cap == 0);
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t k = base_map_key(&m->slot[i]);
        if (!k)
            continue;
        full++;
        for (size_t j = base_map_home(m, k); j != i; j = (j + 1) & (m->cap - 1)) {
            assert_true(base_map_key(&m->slot[j]) != 0);
            assert_true(base_map_key(&m->slot[j]) != k);
        }
    }
    assert_int_equal(full + m->zero, m->len);
}

static void test_empty(void **state)
{
    (void)state;
    base_map m = {0};
    uint32_t v = 7;
    assert_false(base_map_get(&m, 0, &v));
    assert_false(base_map_get(&m, 42, &v));
    assert_false(base_map_del(&m, 42, &v));
    assert_int_equal(v, 7);
    base_map_clear(&m);
    base_map_free(&m);
    base_map_free(&m); /* freed twice: an empty map again */
    assert_null(m.slot);
    assert_int_equal(m.cap, 0);
}

static void test_put_get_replace_del(void **state)
{
    (void)state;
    base_map m = {0};
    uint32_t v;
    assert_int_equal(base_map_put(&m, 5, 50), 0);
    assert_int_equal(base_map_put(&m, 6, 60), 0);
    assert_int_equal(m.len, 2);
    assert_true(base_map_get(&m, 5, &v));
    assert_int_equal(v, 50);
    assert_int_equal(base_map_put(&m, 5, 55), 0); /* replaced, not added */
    assert_int_equal(m.len, 2);
    assert_true(base_map_get(&m, 5, &v));
    assert_int_equal(v, 55);
    assert_true(base_map_del(&m, 5, &v));
    assert_int_equal(v, 55);
    assert_false(base_map_get(&m, 5, &v));
    assert_false(base_map_del(&m, 5, NULL));
    assert_true(base_map_del(&m, 6, NULL));
    assert_int_equal(m.len, 0);
    check_invariants(&m);
    base_map_free(&m);
}

/* The edge keys and values: 0 and all ones are keys like any other (the
 * tables key threads by tid, and tid 0 is the idle task). */
static void test_edge_keys(void **state)
{
    (void)state;
    base_map m = {0};
    uint32_t v;
    assert_int_equal(base_map_put(&m, 0, UINT32_MAX), 0);
    assert_int_equal(base_map_put(&m, UINT64_MAX, 0), 0);
    assert_int_equal(base_map_put(&m, 1, 1), 0);
    assert_true(base_map_get(&m, 0, &v));
    assert_int_equal(v, UINT32_MAX);
    assert_true(base_map_get(&m, UINT64_MAX, &v));
    assert_int_equal(v, 0);
    assert_false(base_map_get(&m, UINT64_MAX - 1, &v));
    assert_true(base_map_del(&m, 0, NULL));
    assert_false(base_map_get(&m, 0, &v));
    assert_true(base_map_get(&m, UINT64_MAX, &v));
    assert_true(base_map_get(&m, 1, &v));
    check_invariants(&m);
    base_map_free(&m);
}

/* keys whose home is h in a map of m->cap slots, found by search */
static size_t keys_homed(const base_map *m, size_t h, uint64_t *out, size_t n)
{
    size_t got = 0;
    for (uint64_t k = 1; got < n && k < 10000000; k++)
        if (base_map_home(m, k) == h)
            out[got++] = k;
    return got;
}

/* Deleting from runs of collisions: every order of deleting a run of six
 * keys of one home, with keys of the next homes mixed in, and runs that
 * wrap from the last slot to the first. */
static void test_backward_shift(void **state)
{
    (void)state;
    base_map m = {0};
    assert_int_equal(base_map_reserve(&m, 1), 0); /* the smallest map: 64 slots */
    size_t cap = m.cap;
    for (size_t home = 0; home < cap; home += cap / 4 - 1) { /* ... 62 then wraps */
        uint64_t same[6], next[3];
        assert_int_equal(keys_homed(&m, home, same, 6), 6);
        assert_int_equal(keys_homed(&m, (home + 2) & (cap - 1), next, 3), 3);
        for (unsigned perm = 0; perm < 64; perm++) {
            /* put them interleaved, so the next home's keys sit inside the run */
            for (size_t i = 0; i < 6; i++) {
                assert_int_equal(base_map_put(&m, same[i], (uint32_t)i), 0);
                if (i < 3)
                    assert_int_equal(base_map_put(&m, next[i], (uint32_t)(100 + i)), 0);
            }
            assert_int_equal(m.cap, cap); /* no growth: the collisions stay */
            check_invariants(&m);
            /* delete the keys of `same` in an order of perm's bits */
            bool gone[6] = {0};
            for (size_t step = 0; step < 6; step++) {
                size_t i = (perm >> step & 1) ? 5 - step : step;
                while (gone[i])
                    i = (i + 1) % 6;
                uint32_t v;
                assert_true(base_map_del(&m, same[i], &v));
                assert_int_equal(v, i);
                gone[i] = true;
                check_invariants(&m);
                for (size_t j = 0; j < 6; j++)
                    assert_true(base_map_get(&m, same[j], &v) == !gone[j] && (gone[j] || v == j));
                for (size_t j = 0; j < 3; j++) {
                    assert_true(base_map_get(&m, next[j], &v));
                    assert_int_equal(v, 100 + j);
                }
            }
            for (size_t j = 0; j < 3; j++)
                assert_true(base_map_del(&m, next[j], NULL));
            assert_int_equal(m.len, 0);
        }
    }
    base_map_free(&m);
}

/* a small generator of keys, the same every run */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Many keys, through every growth, against a model: keys i * stride of a
 * few strides (consecutive tids, aligned addresses, keys apart in their
 * high bits only), then a random half deleted and put again. */
static void test_many(void **state)
{
    (void)state;
    const size_t n = 50000;
    const uint64_t strides[] = {1, 64, (uint64_t)1 << 32, 0x9e3779b97f4a7c15ull};
    uint32_t *model = malloc(n * sizeof *model); /* value + 1, 0 absent */
    assert_non_null(model);
    for (size_t s = 0; s < sizeof strides / sizeof *strides; s++) {
        base_map m = {0};
        uint64_t r = 88172645463325252ull;
        memset(model, 0, n * sizeof *model);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(base_map_put(&m, i * strides[s], (uint32_t)(i ^ 0x5a5a)), 0);
            model[i] = (uint32_t)(i ^ 0x5a5a) + 1;
        }
        assert_int_equal(m.len, n);
        check_invariants(&m);
        for (size_t round = 0; round < 2 * n; round++) {
            size_t i = (size_t)(next_rand(&r) % n);
            uint32_t v;
            if (model[i]) {
                assert_true(base_map_del(&m, i * strides[s], &v));
                assert_int_equal(v + 1, model[i]);
                model[i] = 0;
            } else {
                assert_false(base_map_get(&m, i * strides[s], &v));
                assert_int_equal(base_map_put(&m, i * strides[s], (uint32_t)round), 0);
                model[i] = (uint32_t)round + 1;
            }
        }
        check_invariants(&m);
        size_t live = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            bool has = base_map_get(&m, i * strides[s], &v);
            assert_true(has == (model[i] != 0));
            if (has) {
                assert_int_equal(v + 1, model[i]);
                live++;
            }
        }
        assert_int_equal(live, m.len);
        base_map_free(&m);
    }
    free(model);
}

/* reserve: room made once, the puts after it do not move the slots */
static void test_reserve_and_clear(void **state)
{
    (void)state;
    base_map m = {0};
    assert_int_equal(base_map_reserve(&m, 1000), 0);
    base_map_slot *slots = m.slot;
    size_t cap = m.cap;
    assert_true(cap >= 2000);
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(base_map_put(&m, k * 7, (uint32_t)k), 0);
    assert_ptr_equal(m.slot, slots);
    assert_int_equal(m.cap, cap);
    assert_int_equal(base_map_reserve(&m, 0), 0);
    assert_ptr_equal(m.slot, slots);
    base_map_clear(&m);
    assert_int_equal(m.len, 0);
    assert_int_equal(m.cap, cap);
    uint32_t v;
    for (uint64_t k = 0; k < 1000; k++)
        assert_false(base_map_get(&m, k * 7, &v));
    assert_int_equal(base_map_put(&m, 7, 1), 0);
    assert_true(base_map_get(&m, 7, &v));
    check_invariants(&m);
    base_map_free(&m);
}

/* Out of memory: a reservation whose slots' bytes no size_t holds fails
 * and leaves the map as it was. */
static void test_out_of_memory(void **state)
{
    (void)state;
    base_map m = {0};
    assert_int_equal(base_map_put(&m, 1, 10), 0);
    base_map before = m;
    assert_int_equal(base_map_reserve(&m, SIZE_MAX), -1);
    assert_int_equal(base_map_reserve(&m, SIZE_MAX / (4 * sizeof(base_map_slot))), -1);
    assert_memory_equal(&m, &before, sizeof m);
    uint32_t v;
    assert_true(base_map_get(&m, 1, &v));
    assert_int_equal(v, 10);
    base_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_put_get_replace_del),
        cmocka_unit_test(test_edge_keys),
        cmocka_unit_test(test_backward_shift),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_reserve_and_clear),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
