/* base/bufstack.c -- spare byte buffers for the ingest's queues (base.h). */
#include <stdlib.h>

#include "base.h"

void base_bufstack_init(base_bufstack *s, size_t size)
{
    s->n = 0;
    s->size = size;
}

char *base_bufstack_take(base_bufstack *s, size_t *cap)
{
    if (s->n) {
        s->n--;
        *cap = s->cap[s->n];
        return s->buf[s->n];
    }
    char *b = malloc(s->size);
    *cap = b ? s->size : 0;
    return b;
}

void base_bufstack_give(base_bufstack *s, char *buf, size_t cap)
{
    if (!buf)
        return;
    if (s->n == BASE_BUFSTACK_MAX) {
        free(buf);
        return;
    }
    s->buf[s->n] = buf;
    s->cap[s->n] = cap;
    s->n++;
}

void base_bufstack_free(base_bufstack *s)
{
    while (s->n)
        free(s->buf[--s->n]);
}
