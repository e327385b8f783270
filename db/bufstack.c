/* db/bufstack.c -- spare byte buffers for the ingest's queues (db.h). */
#include <stdlib.h>

#include "db.h"

void db_bufstack_init(db_bufstack *s, size_t size)
{
    s->n = 0;
    s->size = size;
}

char *db_bufstack_take(db_bufstack *s, size_t *cap)
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

void db_bufstack_give(db_bufstack *s, char *buf, size_t cap)
{
    if (!buf)
        return;
    if (s->n == DB_BUFSTACK_MAX) {
        free(buf);
        return;
    }
    s->buf[s->n] = buf;
    s->cap[s->n] = cap;
    s->n++;
}

void db_bufstack_free(db_bufstack *s)
{
    while (s->n)
        free(s->buf[--s->n]);
}
