/* query/sysforms.c -- syscalls compared across machines.
 *
 * A raw syscall is named by its machine's table (base/base.h), so a trace
 * whose machine argusq was not told keeps "syscall:202" where the same run
 * ingested with --arch x86_64 has "syscall:futex".  Two runs of a program
 * compare by what they did (paper/004 §Node Comparison): when one of two
 * traces has a known machine and the other not, the other's numbers are
 * read with the known one's table for the comparison.  Nothing stored is
 * renamed; a number is never named by a guess that outlives the score. */
#include <assert.h>
#include <string.h>

#include "query_int.h"

void query_sysforms_free(query_sysforms *f)
{
    free(f->looked);
    free(f->arch);
    for (size_t i = 0; i < QUERY_SYSFORMS_ARCHES; i++)
        free(f->tab[i].pair);
    *f = (query_sysforms){0};
}

int query_trace_arch(db_reader *r, uint32_t trace, const base_arch **out, db_error *de)
{
    char v[64];
    int got = db_reader_label(r, trace, "arch", v, sizeof v, de);
    if (got < 0)
        return -1;
    *out = got ? base_arch_find(v) : NULL;
    return 0;
}

int query_sysforms_arch(query_sysforms *f, db_reader *r, uint32_t trace, const base_arch **out, db_error *de)
{
    if (trace >= f->cap) {
        size_t n = f->cap ? f->cap : 16;
        while (n <= trace)
            n *= 2;
        uint8_t *l = realloc(f->looked, n);
        if (!l)
            return db_fail_oom(de);
        f->looked = l;
        const base_arch **a = realloc(f->arch, n * sizeof *a);
        if (!a)
            return db_fail_oom(de);
        f->arch = a;
        memset(f->looked + f->cap, 0, n - f->cap);
        f->cap = n;
    }
    if (!f->looked[trace]) {
        if (query_trace_arch(r, trace, &f->arch[trace], de))
            return -1;
        f->looked[trace] = 1;
    }
    *out = f->arch[trace];
    return 0;
}

/* by the first uint32_t: of a signature's hashes, of the pairs below */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* m's (number form, name form) pairs, sorted by the number form's hash */
static const struct query_sysform_tab *table(query_sysforms *f, const base_arch *m)
{
    size_t i = 0;
    while (i < QUERY_SYSFORMS_ARCHES && f->tab[i].arch && f->tab[i].arch != m)
        i++;
    if (i == QUERY_SYSFORMS_ARCHES)
        return NULL;
    struct query_sysform_tab *t = &f->tab[i];
    if (t->arch)
        return t;
    /* at most one pair per number */
    if (!(t->pair = malloc((base_arch_count(m) ? base_arch_count(m) : 1) * sizeof *t->pair)))
        return NULL;
    for (uint64_t nr = 0; nr < base_arch_count(m); nr++)
        t->n += graph_syscall_forms(m, nr, &t->pair[t->n][0], &t->pair[t->n][1]);
    qsort(t->pair, t->n, sizeof *t->pair, cmp_u32);
    t->arch = m;
    return t;
}

/* in with its number forms read as machine m's names, into out (sorted,
 * distinct); false (out untouched) when m's table names none of them */
static bool named(query_sysforms *f, const base_arch *m, const db_sig *in, db_sig *out)
{
    const struct query_sysform_tab *t = table(f, m);
    if (!t)
        return false;
    bool changed = false;
    out->n = 0;
    for (uint32_t i = 0; i < in->n; i++) {
        uint32_t h = in->h[i];
        const uint32_t(*p)[2] = bsearch(&h, t->pair, t->n, sizeof *t->pair, cmp_u32);
        if (p) {
            h = (*p)[1];
            changed = true;
        }
        out->h[out->n++] = h;
    }
    if (!changed)
        return false;
    assert(out->n == in->n && out->n <= DB_SIG_MAX);
    qsort(out->h, out->n, sizeof *out->h, cmp_u32);
    uint32_t k = 0;
    for (uint32_t i = 0; i < out->n; i++)
        if (!k || out->h[k - 1] != out->h[i])
            out->h[k++] = out->h[i];
    out->n = k;
    return true;
}

/* Which of a and b is read with the other's machine: its naming in *x,
 * and 'a' or 'b'; 0 when neither changes. */
static int name_one(query_sysforms *f, const db_sig *a, const base_arch *ma, const db_sig *b, const base_arch *mb,
                    db_sig *x)
{
    if (ma && !mb && named(f, ma, b, x))
        return 'b';
    if (mb && !ma && named(f, mb, a, x))
        return 'a';
    return 0;
}

void query_sysforms_align(query_sysforms *f, db_sig *a, const base_arch *ma, db_sig *b, const base_arch *mb)
{
    db_sig x;
    int which = name_one(f, a, ma, b, mb, &x);
    db_sig *to = which == 'a' ? a : which == 'b' ? b : NULL;
    if (to)
        memcpy(to->h, x.h, (to->n = x.n) * sizeof *x.h);
}

double query_sysforms_similarity(query_sysforms *f, const db_sig *a, const base_arch *ma, const db_sig *b,
                                 const base_arch *mb, bool *contained)
{
    db_sig x;
    int which = name_one(f, a, ma, b, mb, &x);
    if (which == 'a')
        a = &x;
    else if (which == 'b')
        b = &x;
    return graph_similarity(a->h, a->n, b->h, b->n, contained);
}
