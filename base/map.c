/* base/map.c -- the one hash map (base.h): a 64-bit key to a 32-bit value,
 * open addressing with linear probing, at most half full.  A key's home
 * slot is the top bits of its Fibonacci hash, which every bit of the key
 * reaches (keys that differ only in their high bits, such as a device and
 * a sector or a flag above a tid, still spread).  Deletion shifts the
 * later members of the probe run back into the hole, so there are no
 * tombstones and a lookup stops at the first empty slot. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* at least this many slots, so that the shift stays below 64 */
#define BASE_MAP_MIN 64

static void place(base_map *m, uint64_t key, uint32_t val)
{
    size_t i = base_map_home(m, key);
    while (m->slot[i].full)
        i = (i + 1) & (m->cap - 1);
    m->slot[i] = (base_map_slot){key, val, 1};
}

static int rehash(base_map *m, size_t cap)
{
    base_map n = {.slot = calloc(cap, sizeof *n.slot), .cap = cap, .len = m->len, .shift = 64};
    if (!n.slot)
        return -1;
    for (size_t c = cap; c > 1; c >>= 1)
        n.shift--;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].full)
            place(&n, m->slot[i].key, m->slot[i].val);
    free(m->slot);
    *m = n;
    return 0;
}

int base_map_reserve(base_map *m, size_t n)
{
    /* twice the keys' slots, in bytes, must fit a size_t */
    if (n > SIZE_MAX / (4 * sizeof *m->slot) - m->len)
        return -1;
    size_t need = (m->len + n) * 2;
    if (need <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap : BASE_MAP_MIN;
    while (cap < need)
        cap *= 2;
    return rehash(m, cap);
}

int base_map_put(base_map *m, uint64_t key, uint32_t val)
{
    if ((m->len + 1) * 2 > m->cap && base_map_reserve(m, 1))
        return -1;
    size_t i = base_map_home(m, key);
    while (m->slot[i].full && m->slot[i].key != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->slot[i].full)
        m->len++;
    m->slot[i] = (base_map_slot){key, val, 1};
    assert(m->len * 2 <= m->cap);
    return 0;
}

bool base_map_del(base_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1, i = base_map_home(m, key);
    while (m->slot[i].full && m->slot[i].key != key)
        i = (i + 1) & mask;
    if (!m->slot[i].full)
        return false;
    if (val)
        *val = m->slot[i].val;
    m->slot[i].full = 0;
    m->len--;
    /* A later member of the run moves into the hole i unless its home lies
     * cyclically in (i, j]: there it would be found before the hole. */
    for (size_t j = (i + 1) & mask; m->slot[j].full; j = (j + 1) & mask) {
        size_t home = base_map_home(m, m->slot[j].key);
        bool movable = j > i ? home <= i || home > j : home <= i && home > j;
        if (movable) {
            m->slot[i] = m->slot[j];
            m->slot[j].full = 0;
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
}

void base_map_free(base_map *m)
{
    free(m->slot);
    *m = (base_map){0};
}
