/* base/slots.c -- open addressing from a 64-bit key to the index of an
 * element in the caller's own array (base.h; in db/: the chunks of the
 * thread and object indexes, the top lists' threads): linear probing, at
 * most half full, keys kept in the slots so that growing needs nothing of
 * the caller. */
#include <stdlib.h>

#include "base.h"

static void place(uint64_t *keys, uint32_t *ix, size_t n, uint64_t key, uint32_t v)
{
    size_t i = base_slots_home(key, n);
    while (ix[i])
        i = (i + 1) & (n - 1);
    keys[i] = key;
    ix[i] = v;
}

int base_slots_put(base_slots *s, uint64_t key, uint32_t index)
{
    if ((s->used + 1) * 2 > s->n) {
        size_t n = s->n ? s->n * 2 : 128;
        uint64_t *keys = malloc(n * sizeof *keys);
        uint32_t *ix = calloc(n, sizeof *ix);
        if (!keys || !ix) {
            free(keys);
            free(ix);
            return -1;
        }
        for (size_t i = 0; i < s->n; i++)
            if (s->ix[i])
                place(keys, ix, n, s->key[i], s->ix[i]);
        free(s->key);
        free(s->ix);
        s->key = keys;
        s->ix = ix;
        s->n = n;
    }
    place(s->key, s->ix, s->n, key, index + 1);
    s->used++;
    return 0;
}

void base_slots_free(base_slots *s)
{
    free(s->key);
    free(s->ix);
    *s = (base_slots){0};
}
