/* query/pool.c -- a sample of normal steps: each step's critical path
 * reduced to its ns per (thread, state), with what ranks it (its score)
 * and what the path comparison asks of it (its period, timeout and
 * waker).
 *
 * normals.c fills one from the archive's own steps and judges the anomaly
 * against it; the JSON hands it out ("normal_sample"), so that argusq.fleet
 * can pool every archive's and give the union back
 * (argusq_session_normals): the same choice of steps (query_pool_choose)
 * and the same statistics then run over the fleet's steps as over one
 * archive's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

/* the index (1-based) of archive in p's list, added if new; 0: none
 * given, UINT32_MAX: out of memory */
static uint32_t archive_of(query_pool *p, const char *archive)
{
    if (!archive)
        return 0;
    for (size_t i = 0; i < p->narchives; i++)
        if (strcmp(p->archives[i], archive) == 0)
            return (uint32_t)i + 1;
    char **v = realloc(p->archives, (p->narchives + 1) * sizeof *v);
    if (!v)
        return UINT32_MAX;
    p->archives = v;
    if (!(v[p->narchives] = strdup(archive)))
        return UINT32_MAX;
    return (uint32_t)++p->narchives;
}

int query_pool_add(query_pool *p, const query_pool_step *step, const query_pool_part *parts, size_t n,
                   const char *archive)
{
    uint32_t a = archive_of(p, archive);
    if (a == UINT32_MAX || !query_grow((void **)&p->steps, &p->scap, p->nsteps + 1, sizeof *p->steps) ||
        !query_grow((void **)&p->parts, &p->pcap, p->nparts + n, sizeof *p->parts))
        return -1;
    query_pool_step *s = &p->steps[p->nsteps++];
    *s = *step;
    s->archive = a;
    s->trace_id = query_fnv(query_fnv(QUERY_FNV_SEED, archive ? archive : "", archive ? strlen(archive) + 1 : 0),
                          s->trace, strnlen(s->trace, sizeof s->trace));
    s->first = p->nparts;
    s->n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < s->n && !(p->parts[s->first + j].state == parts[i].state &&
                             strncmp(p->parts[s->first + j].thread, parts[i].thread, DB_NAME_MAX) == 0))
            j++;
        if (j == s->n) {
            p->parts[s->first + s->n++] = parts[i];
            p->nparts++;
        } else
            p->parts[s->first + j].ns += parts[i].ns;
    }
    return 0;
}

const char *query_pool_archive(const query_pool *p, const query_pool_step *s)
{
    return s->archive ? p->archives[s->archive - 1] : NULL;
}

void query_pool_free(query_pool *p)
{
    for (size_t i = 0; i < p->narchives; i++)
        free(p->archives[i]);
    free(p->archives);
    free(p->steps);
    free(p->parts);
    *p = (query_pool){0};
}

int query_pool_state(const char *name)
{
    for (int s = 0; s < QUERY_CP__COUNT; s++)
        if (strcmp(query_cp_state_name(s), name) == 0)
            return s;
    return -1;
}

/* the order the signature index ranks candidates in (analysis.c): the
 * higher score, one form holding the other; then as given (a fleet's
 * archives in their order, an archive's steps in its own order) */
struct ranked {
    const query_pool_step *s;
    size_t at;
};

static int by_rank(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->s->score != y->s->score)
        return x->s->score > y->s->score ? -1 : 1;
    if (x->s->contained != y->s->contained)
        return x->s->contained ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

size_t query_pool_choose(const query_pool *p, size_t *out)
{
    struct ranked *v = malloc((p->nsteps ? p->nsteps : 1) * sizeof *v);
    if (!v)
        return SIZE_MAX;
    for (size_t i = 0; i < p->nsteps; i++)
        v[i] = (struct ranked){&p->steps[i], i};
    qsort(v, p->nsteps, sizeof *v, by_rank);
    size_t n = 0;
    double group = -1;
    for (size_t i = 0; i < p->nsteps && n < QUERY_NORMALS_MAX; i++) {
        if (v[i].s->score != group && n >= QUERY_STATS_MIN_STEPS)
            break; /* enough of the ones more alike */
        group = v[i].s->score;
        out[n++] = v[i].at;
    }
    free(v);
    return n;
}

void query_pool_json(FILE *f, const query_pool *p, const size_t *which, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        const query_pool_step *s = &p->steps[which ? which[i] : i];
        fputs(i ? ",{\"trace\":" : "{\"trace\":", f);
        query_json_str(f, s->trace, strnlen(s->trace, sizeof s->trace));
        const char *a = query_pool_archive(p, s);
        if (a) { /* a fleet's: the archive it came from */
            fputs(",\"archive\":", f);
            query_json_str(f, a, strlen(a));
        }
        fprintf(f, ",\"node\":%u,\"score\":%.17g,\"contained\":%s,\"period\":%" PRIu64 ",\"timeout\":%s,\"waker\":",
                s->node, s->score, s->contained ? "true" : "false", s->period, s->timeout ? "true" : "false");
        if (s->waker[0])
            query_json_str(f, s->waker, strnlen(s->waker, DB_NAME_MAX));
        else
            fputs("null", f);
        fputs(",\"parts\":[", f);
        for (size_t j = 0; j < s->n; j++) {
            const query_pool_part *q = &p->parts[s->first + j];
            fputs(j ? ",{\"thread\":" : "{\"thread\":", f);
            query_json_str(f, q->thread, strnlen(q->thread, DB_NAME_MAX));
            fprintf(f, ",\"state\":\"%s\",\"ns\":%" PRIu64 "}", query_cp_state_name(q->state), q->ns);
        }
        fputs("]}", f);
    }
    fputc(']', f);
}
