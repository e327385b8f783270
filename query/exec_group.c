/* query/exec_group.c -- `find ... group by F, ... [compute AGG, ...]` and
 * `find ... compute AGG, ...`: the rows find selects (exec_find.c hands
 * each one over), counted and aggregated per value of the group fields,
 * or over all of them.
 *
 * A group is the tuple of its fields' values (a missing one, an event
 * without the attribute, is its own value: null).  Each aggregate reads
 * one field of the row: count counts the rows (count(F): those with F),
 * sum, min, max and avg take F's numbers (rows where F is no number do not
 * count), the percentiles interpolate between order statistics as
 * query/stats.c does (numpy's "linear").  Groups come in the order of
 * their fields' values, or by `order by` (a group field or an
 * aggregate), then `limit`. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query_int.h"

/* a number as a row gives it: sign and magnitude (query_val), held as a
 * long double, exact to 64 bits */
typedef long double num;

typedef struct acc {
    uint64_t n;   /* rows counted */
    num sum, min, max;
    num *v;       /* percentiles: every value */
    size_t nv, cap;
} acc;

typedef struct group {
    size_t key;   /* its values' text in g->keys: fields NUL-separated, "\1" for null */
    uint32_t next; /* index + 1 of another group whose text has the same hash, 0: none */
    query_val *vals; /* per group field, strings pointing into g->keys */
    acc *a;       /* per aggregate */
} group;

struct query_group {
    const query_stmt *st;
    group *v;
    size_t n, cap;
    base_map by_hash; /* a text's hash -> the last group made of that hash (next: the others) */
    char *keys;
    size_t klen, kcap;
    char *scratch; /* the key being looked up */
    size_t slen, scap;
    uint64_t rows;
    bool oom;
};

static bool is_pct(query_agg_fn f) { return f >= QUERY_AGG_P50; }

query_group *query_group_new(const query_stmt *st)
{
    query_group *g = calloc(1, sizeof *g);
    if (g)
        g->st = st;
    return g;
}

static void scratch_add(query_group *g, const char *s, size_t n)
{
    if (!query_grow((void **)&g->scratch, &g->scap, g->slen + n + 1, 1)) {
        g->oom = true;
        return;
    }
    memcpy(g->scratch + g->slen, s, n);
    g->slen += n;
    g->scratch[g->slen++] = '\0';
}

/* the key's text: each value typed (n: number, s: string, \1: null) */
static void key_of(query_group *g, const query_val *vals)
{
    g->slen = 0;
    for (size_t i = 0; i < g->st->ngroup; i++) {
        char b[32];
        if (vals[i].t == QV_NUM) {
            int len = snprintf(b, sizeof b, "n%s%" PRIu64, vals[i].neg ? "-" : "", vals[i].mag);
            scratch_add(g, b, (size_t)len);
        } else if (vals[i].t == QV_STR) {
            if (!query_grow((void **)&g->scratch, &g->scap, g->slen + vals[i].n + 2, 1)) {
                g->oom = true;
                return;
            }
            g->scratch[g->slen++] = 's';
            memcpy(g->scratch + g->slen, vals[i].s, vals[i].n);
            g->slen += vals[i].n;
            g->scratch[g->slen++] = '\0';
        } else
            scratch_add(g, "\1", 1);
    }
}

static size_t key_len(const query_group *g, const group *x)
{
    size_t end = x + 1 < g->v + g->n ? (x + 1)->key : g->klen;
    return end - x->key;
}

/* The group of the key in scratch, made if new (its values copied).  The
 * map is keyed by the text's 64-bit hash; the texts of one hash, which
 * can differ, are chained through next. */
static group *find_group(query_group *g, const query_val *vals)
{
    uint64_t h = query_fnv(QUERY_FNV_SEED, g->scratch, g->slen);
    uint32_t first;
    bool known = base_map_get(&g->by_hash, h, &first);
    for (uint32_t at = known ? first + 1 : 0; at; at = g->v[at - 1].next) {
        group *x = &g->v[at - 1];
        if (key_len(g, x) == g->slen && (!g->slen || memcmp(g->keys + x->key, g->scratch, g->slen) == 0))
            return x; /* (no fields: the one empty key, and memcmp of NULLs is undefined) */
    }
    if (g->n >= UINT32_MAX || !query_grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v) ||
        !query_grow((void **)&g->keys, &g->kcap, g->klen + g->slen, 1))
        return NULL;
    group *x = &g->v[g->n];
    *x = (group){.key = g->klen, .next = known ? first + 1 : 0};
    x->vals = calloc(g->st->ngroup ? g->st->ngroup : 1, sizeof *x->vals);
    x->a = calloc(g->st->naggs, sizeof *x->a);
    if (!x->vals || !x->a || base_map_put(&g->by_hash, h, (uint32_t)g->n)) {
        free(x->vals);
        free(x->a);
        return NULL;
    }
    if (g->slen)
        memcpy(g->keys + g->klen, g->scratch, g->slen);
    g->klen += g->slen;
    for (size_t i = 0; i < g->st->ngroup; i++)
        x->vals[i] = vals[i]; /* strings: pointed into keys when printed (key order) */
    g->n++;
    return x;
}

static num as_num(const query_val *v) { return v->neg ? -(num)v->mag : (num)v->mag; }

static int add_value(acc *a, query_agg_fn fn, num x)
{
    if (!a->n || x < a->min)
        a->min = x;
    if (!a->n || x > a->max)
        a->max = x;
    a->sum += x;
    a->n++;
    if (is_pct(fn)) {
        if (!query_grow((void **)&a->v, &a->cap, a->nv + 1, sizeof *a->v))
            return -1;
        a->v[a->nv++] = x;
    }
    return 0;
}

int query_group_add(query_group *g, const query_row *row)
{
    const query_stmt *st = g->st;
    query_val vals[16];
    size_t ng = st->ngroup < 16 ? st->ngroup : 16;
    for (size_t i = 0; i < ng; i++)
        vals[i] = query_field(&st->group_by[i], row);
    key_of(g, vals);
    group *x = g->oom ? NULL : find_group(g, vals);
    if (!x) {
        g->oom = true;
        return -1;
    }
    g->rows++;
    for (size_t i = 0; i < st->naggs; i++) {
        const query_agg *ag = &st->aggs[i];
        if (!ag->field.name) { /* count */
            x->a[i].n++;
            continue;
        }
        query_val v = query_field(&ag->field, row);
        if (ag->fn == QUERY_AGG_COUNT) {
            x->a[i].n += v.t != QV_NONE;
            continue;
        }
        if (v.t == QV_NUM && add_value(&x->a[i], ag->fn, as_num(&v))) {
            g->oom = true;
            return -1;
        }
    }
    return 0;
}

static int num_cmp(const void *a, const void *b)
{
    num x = *(const num *)a, y = *(const num *)b;
    return (x > y) - (x < y);
}

/* the p-th percentile of sorted v[0 .. n), n >= 1 (stats.c's rule) */
static num percentile(const num *v, size_t n, unsigned p)
{
    size_t h = (n - 1) * p;
    size_t lo = h / 100, rem = h % 100;
    if (rem == 0 || lo + 1 >= n)
        return v[lo];
    return v[lo] + (num)rem * (v[lo + 1] - v[lo]) / 100;
}

/* an aggregate's value; false when it has none (no number in the group) */
static bool value(const query_agg *ag, acc *a, num *out)
{
    static const unsigned pct[] = {50, 90, 95, 99};
    switch (ag->fn) {
    case QUERY_AGG_COUNT: *out = (num)a->n; return true;
    case QUERY_AGG_SUM: *out = a->sum; return true; /* 0 over no number */
    case QUERY_AGG_MIN: *out = a->min; return a->n > 0;
    case QUERY_AGG_MAX: *out = a->max; return a->n > 0;
    case QUERY_AGG_AVG: *out = a->n ? a->sum / (num)a->n : 0; return a->n > 0;
    default:
        if (!a->nv)
            return false;
        *out = percentile(a->v, a->nv, pct[ag->fn - QUERY_AGG_P50]);
        return true;
    }
}

/* ---- order ---- */

static int val_order(const query_val *a, const query_val *b)
{
    if (a->t != b->t) /* null first, then numbers, then strings */
        return a->t == QV_NONE ? -1 : b->t == QV_NONE ? 1 : a->t == QV_NUM ? -1 : 1;
    bool ok;
    return a->t == QV_NONE ? 0 : query_val_cmp(a, b, &ok);
}

struct order_ctx {
    const query_group *g;
    int field; /* the group field ordered by, or -1 */
    int agg;   /* the aggregate ordered by, or -1 */
    bool desc;
};

static int group_cmp(const void *pa, const void *pb, void *pc)
{
    const struct order_ctx *o = pc;
    const group *x = &o->g->v[*(const size_t *)pa], *y = &o->g->v[*(const size_t *)pb];
    int c = 0;
    if (o->agg >= 0) {
        num a = 0, b = 0;
        bool ha = value(&o->g->st->aggs[o->agg], &x->a[o->agg], &a);
        bool hb = value(&o->g->st->aggs[o->agg], &y->a[o->agg], &b);
        c = ha != hb ? (ha ? 1 : -1) : (a > b) - (a < b); /* none below any value */
    } else if (o->field >= 0)
        c = val_order(&x->vals[o->field], &y->vals[o->field]);
    if (o->desc)
        c = -c;
    for (size_t i = 0; !c && i < o->g->st->ngroup; i++) /* then by the fields, ascending */
        c = val_order(&x->vals[i], &y->vals[i]);
    return c;
}

/* ---- output ---- */

/* an aggregate over a field of durations reads as one */
static bool is_duration(const query_stmt *st, const query_agg *ag)
{
    static const char *const durs[] = {"duration", "blocked", "running", "runnable", "span"};
    if (!ag->field.name || ag->fn == QUERY_AGG_COUNT || st->target == QUERY_TARGET_EVENTS)
        return false;
    for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++)
        if (strcasecmp(ag->field.name, durs[i]) == 0)
            return true;
    return false;
}

static void head_of(const query_agg *ag, char *buf, size_t len)
{
    if (ag->field.name)
        snprintf(buf, len, "%s(%s)", query_agg_fn_name(ag->fn), ag->field.name);
    else
        snprintf(buf, len, "%s", query_agg_fn_name(ag->fn));
}

/* a number: an integer when it is one, else with 3 decimals (JSON: 17
 * digits) */
static void fmt_num(char *buf, size_t len, num x, bool json)
{
    if (x == floorl(x) && fabsl(x) < 9.2e18L)
        snprintf(buf, len, "%lld", (long long)x);
    else
        snprintf(buf, len, json ? "%.17Lg" : "%.3Lf", x);
}

static void json_val(FILE *f, const query_val *v)
{
    if (v->t == QV_NUM)
        fprintf(f, "%s%" PRIu64, v->neg ? "-" : "", v->mag);
    else if (v->t == QV_STR)
        query_json_str(f, v->s, v->n);
    else
        fputs("null", f);
}

/* The groups' values point into the keys (their strings were the row's,
 * gone since): each group's string fields are read back from its key. */
static void point_strings(query_group *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const char *k = g->keys + g->v[i].key;
        for (size_t f = 0; f < g->st->ngroup; f++) {
            size_t n = strlen(k);
            if (g->v[i].vals[f].t == QV_STR) {
                g->v[i].vals[f].s = k + 1;
                g->v[i].vals[f].n = n - 1;
            }
            k += n + 1;
        }
    }
}

int query_group_print(query_group *g, query_session *s, query_error *err)
{
    const query_stmt *st = g->st;
    /* compute without group by: one row, also over no rows (count 0) */
    if (!g->oom && st->ngroup == 0 && g->n == 0) {
        key_of(g, NULL);
        if (!find_group(g, NULL))
            g->oom = true;
    }
    if (g->oom)
        return query_fail(err, NULL, "out of memory");
    point_strings(g);
    size_t *order = malloc((g->n ? g->n : 1) * sizeof *order);
    if (!order)
        return query_fail(err, NULL, "out of memory");
    for (size_t i = 0; i < g->n; i++) {
        order[i] = i;
        for (size_t a = 0; a < st->naggs; a++)
            if (g->v[i].a[a].nv > 1)
                qsort(g->v[i].a[a].v, g->v[i].a[a].nv, sizeof(num), num_cmp);
    }
    struct order_ctx oc = {g, -1, st->has_order ? st->order_agg : -1, st->has_order && st->order_desc};
    for (size_t i = 0; st->has_order && st->order_agg < 0 && i < st->ngroup; i++)
        if (strcasecmp(st->group_by[i].name, st->order_by.name) == 0)
            oc.field = (int)i;
    qsort_r(order, g->n, sizeof *order, group_cmp, &oc);
    size_t k = st->has_limit && st->limit < g->n ? (size_t)st->limit : g->n;
    char heads_buf[64][48];
    const char *heads[64];
    size_t ncols = 0;
    for (size_t i = 0; i < st->ngroup && ncols < 64; i++)
        heads[ncols++] = st->group_by[i].name;
    for (size_t i = 0; i < st->naggs && ncols < 64; i++) {
        head_of(&st->aggs[i], heads_buf[ncols], sizeof heads_buf[ncols]);
        heads[ncols] = heads_buf[ncols];
        ncols++;
    }
    FILE *f = s->out;
    int rc = 0;
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"groups\":[", f);
        for (size_t r = 0; r < k; r++) {
            group *x = &g->v[order[r]];
            fputs(r ? ",{" : "{", f);
            size_t c = 0;
            for (; c < st->ngroup; c++) {
                fputs(c ? "," : "", f);
                query_json_str(f, heads[c], strlen(heads[c]));
                fputc(':', f);
                json_val(f, &x->vals[c]);
            }
            for (size_t a = 0; a < st->naggs; a++, c++) {
                num v;
                char b[64];
                fputs(c ? "," : "", f);
                query_json_str(f, heads[c], strlen(heads[c]));
                fputc(':', f);
                if (value(&st->aggs[a], &x->a[a], &v)) {
                    fmt_num(b, sizeof b, v, true);
                    fputs(b, f);
                } else
                    fputs("null", f);
            }
            fputc('}', f);
        }
        /* rows: how many rows the where clause kept; groups: how many
         * there are (the list holds the first `limit`) */
        fprintf(f, "],\"group_by\":[");
        for (size_t i = 0; i < st->ngroup; i++) {
            fputs(i ? "," : "", f);
            query_json_str(f, st->group_by[i].name, strlen(st->group_by[i].name));
        }
        fputs("],\"aggregates\":[", f);
        for (size_t i = 0; i < st->naggs; i++) {
            fputs(i ? "," : "", f);
            query_json_str(f, heads[st->ngroup + i], strlen(heads[st->ngroup + i]));
        }
        fprintf(f, "],\"rows\":%" PRIu64 ",\"groups_total\":%zu}\n", g->rows, g->n);
    } else {
        query_table t;
        query_table_init(&t, s->format, (int)ncols, heads);
        for (size_t r = 0; r < k; r++) {
            group *x = &g->v[order[r]];
            for (size_t c = 0; c < st->ngroup; c++) {
                const query_val *v = &x->vals[c];
                if (v->t == QV_NUM)
                    query_table_cell(&t, "%s%" PRIu64, v->neg ? "-" : "", v->mag);
                else if (v->t == QV_STR)
                    query_table_cell(&t, "%.*s", (int)v->n, v->s);
                else
                    query_table_str(&t, t.csv ? "" : "-");
            }
            for (size_t a = 0; a < st->naggs; a++) {
                num v;
                char b[64];
                if (!value(&st->aggs[a], &x->a[a], &v))
                    query_table_str(&t, t.csv ? "" : "-");
                else if (is_duration(st, &st->aggs[a]) && v >= 0 && !t.csv)
                    query_table_dur(&t, (uint64_t)(v + 0.5L), false);
                else {
                    fmt_num(b, sizeof b, v, t.csv);
                    query_table_str(&t, b);
                }
            }
        }
        query_table_show(s, &t);
        if (s->format == QUERY_FMT_TABLE)
            fprintf(f, "%zu group%s of %" PRIu64 " row%s%s\n", g->n, g->n == 1 ? "" : "s", g->rows,
                    g->rows == 1 ? "" : "s", k < g->n ? ", the first shown (limit)" : "");
        if (t.oom)
            rc = query_fail(err, NULL, "out of memory");
        query_table_free(&t);
    }
    free(order);
    return rc;
}

void query_group_free(query_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++) {
        for (size_t a = 0; a < g->st->naggs; a++)
            free(g->v[i].a[a].v);
        free(g->v[i].a);
        free(g->v[i].vals);
    }
    free(g->v);
    base_map_free(&g->by_hash);
    free(g->keys);
    free(g->scratch);
    free(g);
}

/* The statement's fields exist for its target, its aggregates' too; the
 * order is by a group field or an aggregate; no picture. */
int query_group_check(const query_stmt *st, query_session *s, query_error *err)
{
    if (query_view_format(s->format))
        return query_fail(err, &st->group_pos, "group by and compute give a table: --format table, json or csv");
    if (st->ngroup > 16)
        return query_fail(err, &st->group_by[16].pos, "group by takes at most 16 fields");
    for (size_t i = 0; i < st->ngroup; i++)
        if (query_check_field(&st->group_by[i], st->target, err))
            return -1;
    for (size_t i = 0; i < st->naggs; i++)
        if (st->aggs[i].field.name && query_check_field(&st->aggs[i].field, st->target, err))
            return -1;
    if (st->has_order && st->order_agg < 0) {
        for (size_t i = 0; i < st->ngroup; i++)
            if (strcasecmp(st->group_by[i].name, st->order_by.name) == 0)
                return 0;
        return query_fail(err, &st->order_by.pos,
                          "order by %s: a group holds many rows; order by a group field or an aggregate "
                          "(count, sum(%s), ...)",
                          st->order_by.name, st->order_by.name);
    }
    return 0;
}
