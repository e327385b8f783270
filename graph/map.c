/* graph/map.c -- an open-addressing hash map from u64 keys to u32 values,
 * the only container the graph pass needs (threads by tid, pending arms by
 * timer address, pending enqueues by block).  Linear probing with
 * backward-shift deletion, so there are no tombstones to clean up. */
#include <stdlib.h>

#include "graph_int.h"

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

void graph_map_free(graph_map *m)
{
    free(m->slots);
    *m = (graph_map){0};
}

static int rehash(graph_map *m, size_t cap)
{
    graph_map n = {.slots = calloc(cap, sizeof *n.slots), .cap = cap};
    if (!n.slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used)
            graph_map_put(&n, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    *m = n;
    return 0;
}

int graph_map_put(graph_map *m, uint64_t key, uint32_t val)
{
    if ((m->len + 1) * 4 > m->cap * 3 && rehash(m, m->cap ? m->cap * 2 : 64))
        return -1;
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->slots[i].used && m->slots[i].key != key)
        i = (i + 1) & mask;
    if (!m->slots[i].used)
        m->len++;
    m->slots[i] = (struct graph_map_slot){key, val, 1};
    return 0;
}

bool graph_map_get(const graph_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->slots[i].used) {
        if (m->slots[i].key == key) {
            *val = m->slots[i].val;
            return true;
        }
        i = (i + 1) & mask;
    }
    return false;
}

void graph_map_del(graph_map *m, uint64_t key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->slots[i].used && m->slots[i].key != key)
        i = (i + 1) & mask;
    if (!m->slots[i].used)
        return;
    m->slots[i].used = 0;
    m->len--;
    /* shift later members of the probe run back into the hole */
    for (size_t j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
        size_t home = mix(m->slots[j].key) & mask;
        bool movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            m->slots[i] = m->slots[j];
            m->slots[j].used = 0;
            i = j;
        }
    }
}
