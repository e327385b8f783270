/* base/map.c -- the one hash map (base.h): a 64-bit key to a 32-bit value,
 * open addressing with linear probing, at most half full.  A key's home
 * slot is the top bits of its Fibonacci hash, which every bit of the key
 * reaches (keys that differ only in their high bits, such as a device and
 * a sector or a flag above a tid, still spread).  Deletion shifts the
 * later members of the probe run back into the hole, so there are no
 * tombstones and a lookup stops at the first empty slot.  An empty slot
 * is one whose key is 0; the key 0 lives beside the slots (zero). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* at least this many slots, so that the shift stays below 64 */
#define BASE_MAP_MIN 64

static void set(base_map_slot *s, uint64_t key, uint32_t val)
{
    memcpy(s->key, &key, sizeof key);
    s->val = val;
}

/* keys in the slots: all but the key 0 */
static size_t in_slots(const base_map *m) { return m->len - m->zero; }

static void place(base_map *m, uint64_t key, uint32_t val)
{
    assert(key);
    size_t i = base_map_home(m, key);
    while (base_map_key(&m->slot[i]))
        i = (i + 1) & (m->cap - 1);
    set(&m->slot[i], key, val);
}

static int rehash(base_map *m, size_t cap)
{
    base_map n = {.slot = calloc(cap, sizeof *n.slot), .cap = cap, .len = m->len, .shift = 64,
                  .zero = m->zero, .zero_val = m->zero_val};
    if (!n.slot)
        return -1;
    for (size_t c = cap; c > 1; c >>= 1)
        n.shift--;
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t k = base_map_key(&m->slot[i]);
        if (k)
            place(&n, k, m->slot[i].val);
    }
    free(m->slot);
    *m = n;
    return 0;
}

int base_map_reserve(base_map *m, size_t n)
{
    /* twice the keys' slots, in bytes, must fit a size_t */
    if (n > SIZE_MAX / (4 * sizeof *m->slot) - m->len)
        return -1;
    size_t need = (in_slots(m) + n) * 2;
    if (need <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap : BASE_MAP_MIN;
    while (cap < need)
        cap *= 2;
    return rehash(m, cap);
}

int base_map_put(base_map *m, uint64_t key, uint32_t val)
{
    if (!key) {
        m->len += !m->zero;
        m->zero = true;
        m->zero_val = val;
        return 0;
    }
    if ((in_slots(m) + 1) * 2 > m->cap && base_map_reserve(m, 1))
        return -1;
    size_t i = base_map_home(m, key);
    uint64_t k;
    while ((k = base_map_key(&m->slot[i])) && k != key)
        i = (i + 1) & (m->cap - 1);
    if (!k)
        m->len++;
    set(&m->slot[i], key, val);
    assert(in_slots(m) * 2 <= m->cap);
    return 0;
}

bool base_map_del(base_map *m, uint64_t key, uint32_t *val)
{
    if (!key) {
        if (!m->zero)
            return false;
        if (val)
            *val = m->zero_val;
        m->zero = false;
        m->len--;
        return true;
    }
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1, i = base_map_home(m, key);
    uint64_t k;
    while ((k = base_map_key(&m->slot[i])) && k != key)
        i = (i + 1) & mask;
    if (!k)
        return false;
    if (val)
        *val = m->slot[i].val;
    set(&m->slot[i], 0, 0);
    m->len--;
    /* A later member of the run moves into the hole i unless its home lies
     * cyclically in (i, j]: there it would be found before the hole. */
    for (size_t j = (i + 1) & mask; (k = base_map_key(&m->slot[j])); j = (j + 1) & mask) {
        size_t home = base_map_home(m, k);
        bool movable = j > i ? home <= i || home > j : home <= i && home > j;
        if (movable) {
            m->slot[i] = m->slot[j];
            set(&m->slot[j], 0, 0);
            i = j;
        }
    }
    return true;
}

void base_map_clear(base_map *m)
{
    if (m->cap)
        memset(m->slot, 0, m->cap * sizeof *m->slot);
    m->len = 0;
    m->zero = false;
}

void base_map_free(base_map *m)
{
    free(m->slot);
    *m = (base_map){0};
}
