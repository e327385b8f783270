/* ingest/attrs.c -- the buffer an event's attributes ("key=value\0...")
 * are appended to, one per reader, reused from event to event. */
#include <stdlib.h>

#include "ingest_int.h"

char *ingest_attr_reserve(char **ab, size_t alen, size_t *acap, size_t need)
{
    if (alen + need > *acap || !*ab) {
        size_t cap = *acap ? *acap : 65536;
        while (alen + need > cap)
            cap *= 2;
        char *nb = realloc(*ab, cap);
        if (!nb)
            return NULL;
        *ab = nb;
        *acap = cap;
    }
    return *ab + alen;
}
