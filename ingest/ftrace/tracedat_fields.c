/* ingest/ftrace/tracedat_fields.c -- a trace.dat record's binary fields to its
 * canonical pairs (ftrace_map_int.h), read with libtraceevent's field
 * descriptions: no printing, no plugins.
 *
 * Each mapped event has a table of columns: the pair's key, the field it
 * comes from (or an older kernel's name for it) and how the kernel's print
 * format writes the value, so a pair's text equals what tracefs and
 * `trace-cmd report` print for it.  Two values come from tables in the
 * event's own print format, not from code here: sched_switch's prev_state
 * letters (__print_flags) and softirq names (__print_symbolic), which
 * differ between kernel versions.
 *
 * What an event id needs is worked out once, on its first record, and
 * kept in a table indexed by event id.  Events without a table, or whose
 * format lacks a field the mapping needs (a kernel this was not written
 * for), are not read here: the caller prints them through their print
 * format and reads that text like tracefs text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace_int.h"
#include "tracelib_int.h"

typedef enum dat_fmt {
    DF_STR,     /* %s (a field that is no string: 0x%llx, as %p) */
    DF_INT,     /* %d / %u by the field's signedness */
    DF_INT03,   /* %03d */
    DF_HEX,     /* 0x%llx: an address (%p) */
    DF_XBARE,   /* %llx */
    DF_FUNC,    /* %ps: the kernel symbol, else 0x%llx */
    DF_SYM,     /* __print_symbolic over the field */
    DF_STATE,   /* sched_switch prev_state letters, from __print_flags */
    DF_HANDLED, /* irq_handler_exit: ret ? "handled" : "unhandled" */
    DF_ARGS,    /* raw_syscalls args[6]: %lx, %lx, ... */
    DF_BUF,     /* a marker's text: newlines become blanks */
} dat_fmt;

typedef struct dat_col {
    const char *key;   /* the canonical pair */
    const char *field; /* the field in the event's format */
    const char *alt;   /* the field's name in older kernels, or NULL */
    dat_fmt fmt;
    bool need; /* without it the event is read from its printed text */
} dat_col;

#define DAT_COLS_MAX 8

static const dat_col c_switch[] = {
    {"prev_comm", "prev_comm", NULL, DF_STR, true},   {"prev_pid", "prev_pid", NULL, DF_INT, true},
    {"prev_prio", "prev_prio", NULL, DF_INT, false},  {"prev_state", "prev_state", NULL, DF_STATE, true},
    {"next_comm", "next_comm", NULL, DF_STR, true},   {"next_pid", "next_pid", NULL, DF_INT, true},
    {"next_prio", "next_prio", NULL, DF_INT, false},  {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_wakeup[] = {
    {"comm", "comm", NULL, DF_STR, true},           {"pid", "pid", NULL, DF_INT, true},
    {"prio", "prio", NULL, DF_INT, false},          {"target_cpu", "target_cpu", NULL, DF_INT03, false},
    {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_fork[] = {
    {"comm", "parent_comm", NULL, DF_STR, true},    {"pid", "parent_pid", NULL, DF_INT, true},
    {"child_comm", "child_comm", NULL, DF_STR, true}, {"child_pid", "child_pid", NULL, DF_INT, true},
    {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_exec[] = {
    {"filename", "filename", NULL, DF_STR, true},   {"pid", "pid", NULL, DF_INT, true},
    {"old_pid", "old_pid", NULL, DF_INT, false},    {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_newtask[] = {
    {"pid", "pid", NULL, DF_INT, true},             {"comm", "comm", NULL, DF_STR, true},
    {"clone_flags", "clone_flags", NULL, DF_XBARE, true}, {"oom_score_adj", "oom_score_adj", NULL, DF_INT, false},
    {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_rename[] = {
    {"pid", "pid", NULL, DF_INT, true},             {"oldcomm", "oldcomm", NULL, DF_STR, false},
    {"newcomm", "newcomm", NULL, DF_STR, true},     {"oom_score_adj", "oom_score_adj", NULL, DF_INT, false},
    {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_irq_entry[] = {
    {"irq", "irq", NULL, DF_INT, true}, {"name", "name", NULL, DF_STR, false}, {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_irq_exit[] = {
    {"irq", "irq", NULL, DF_INT, true}, {"ret", "ret", NULL, DF_HANDLED, false}, {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_softirq[] = {
    {"vec", "vec", NULL, DF_INT, true}, {"action", "vec", NULL, DF_SYM, false}, {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_hrtimer[] = {
    {"hrtimer", "hrtimer", "timer", DF_HEX, true},  {"function", "function", NULL, DF_FUNC, false},
    {"expires", "expires", NULL, DF_INT, false},    {"softexpires", "softexpires", NULL, DF_INT, false},
    {"now", "now", NULL, DF_INT, false},            {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_work[] = {
    {"work", "work", NULL, DF_HEX, true},           {"function", "function", NULL, DF_FUNC, false},
    {"workqueue", "workqueue", NULL, DF_STR, false}, {"req_cpu", "req_cpu", NULL, DF_INT, false},
    {"cpu", "cpu", NULL, DF_INT, false},            {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_sys_enter[] = {
    {"id", "id", NULL, DF_INT, true}, {"args", "args", NULL, DF_ARGS, true}, {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_sys_exit[] = {
    {"id", "id", NULL, DF_INT, true}, {"ret", "ret", NULL, DF_INT, true}, {NULL, NULL, NULL, DF_STR, false}};
static const dat_col c_marker[] = {
    {"buf", "buf", "bpf_string", DF_BUF, true}, {NULL, NULL, NULL, DF_STR, false}};

static const dat_col *cols_of(ftrace_ev_kind k)
{
    switch (k) {
    case FTRACE_EV_SCHED_SWITCH:
        return c_switch;
    case FTRACE_EV_SCHED_WAKEUP:
    case FTRACE_EV_SCHED_WAKEUP_NEW:
    case FTRACE_EV_SCHED_WAKING:
        return c_wakeup;
    case FTRACE_EV_PROCESS_FORK:
        return c_fork;
    case FTRACE_EV_PROCESS_EXEC:
        return c_exec;
    case FTRACE_EV_TASK_NEWTASK:
        return c_newtask;
    case FTRACE_EV_TASK_RENAME:
        return c_rename;
    case FTRACE_EV_IRQ_ENTRY:
        return c_irq_entry;
    case FTRACE_EV_IRQ_EXIT:
        return c_irq_exit;
    case FTRACE_EV_SOFTIRQ_ENTRY:
    case FTRACE_EV_SOFTIRQ_EXIT:
    case FTRACE_EV_SOFTIRQ_RAISE:
        return c_softirq;
    case FTRACE_EV_HRTIMER_START:
    case FTRACE_EV_HRTIMER_CANCEL:
    case FTRACE_EV_HRTIMER_EXPIRE_ENTRY:
    case FTRACE_EV_HRTIMER_EXPIRE_EXIT:
        return c_hrtimer;
    case FTRACE_EV_WQ_QUEUE:
    case FTRACE_EV_WQ_ACTIVATE:
    case FTRACE_EV_WQ_START:
    case FTRACE_EV_WQ_END:
        return c_work;
    case FTRACE_EV_SYS_ENTER:
        return c_sys_enter;
    case FTRACE_EV_SYS_EXIT:
        return c_sys_exit;
    case FTRACE_EV_MARKER:
        return c_marker;
    default: /* syscalls:* are read field by field; the rest is printed */
        return NULL;
    }
}

/* What one event id needs, worked out on its first record. */
typedef struct dat_evinfo {
    struct tep_event *ev; /* NULL: no such event id */
    bool seen;
    bool direct; /* read from fields (else from its printed text) */
    ftrace_ev_kind kind;
    const dat_col *cols;
    struct tep_format_field *f[DAT_COLS_MAX];  /* NULL: the field is absent */
    struct tep_print_flag_sym *tab[DAT_COLS_MAX]; /* DF_SYM / DF_STATE tables */
    struct tep_format_field *sc_nr;            /* syscalls:*: __syscall_nr */
} dat_evinfo;

/* tep_find_function bisects every symbol of the kernel; a trace calls
 * few functions (timer callbacks, work functions) very often */
#define DAT_FUNC_CACHE 256

struct dat_fields {
    struct tep_handle *tep;
    const ingest_tracelib *lib;
    dat_evinfo *info; /* indexed by event id */
    size_t ninfo;
    struct {
        unsigned long long addr;
        const char *name; /* tep's; NULL: no symbol (or an empty slot) */
        bool used;
    } fn[DAT_FUNC_CACHE];
    char *vbuf; /* the current record's formatted values */
    size_t vcap, vlen;
};

dat_fields *ingest_dat_fields_new(struct tep_handle *tep, const ingest_tracelib *lib)
{
    dat_fields *df = calloc(1, sizeof *df);
    if (df) {
        df->tep = tep;
        df->lib = lib;
    }
    return df;
}

void ingest_dat_fields_free(dat_fields *df)
{
    if (!df)
        return;
    free(df->info);
    free(df->vbuf);
    free(df);
}

/* ---- the print format's tables ---- */

static bool arg_has_field(const struct tep_print_arg *a, const char *name)
{
    if (!a)
        return false;
    switch (a->type) {
    case TEP_PRINT_FIELD:
        return a->field.name && strcmp(a->field.name, name) == 0;
    case TEP_PRINT_OP:
        return arg_has_field(a->op.left, name) || arg_has_field(a->op.right, name);
    case TEP_PRINT_TYPE:
        return arg_has_field(a->typecast.item, name);
    default:
        return false;
    }
}

/* The __print_flags (want TEP_PRINT_FLAGS) or __print_symbolic table over
 * field name anywhere in the argument tree a (and its siblings). */
static struct tep_print_flag_sym *find_table(const struct tep_print_arg *a, const char *name,
                                             enum tep_print_arg_type want)
{
    for (; a; a = a->next) {
        struct tep_print_flag_sym *t = NULL;
        switch (a->type) {
        case TEP_PRINT_FLAGS:
            if (want == TEP_PRINT_FLAGS && arg_has_field(a->flags.field, name))
                return a->flags.flags;
            break;
        case TEP_PRINT_SYMBOL:
            if (want == TEP_PRINT_SYMBOL && arg_has_field(a->symbol.field, name))
                return a->symbol.symbols;
            break;
        case TEP_PRINT_OP:
            if (!(t = find_table(a->op.left, name, want)))
                t = find_table(a->op.right, name, want);
            break;
        case TEP_PRINT_TYPE:
            t = find_table(a->typecast.item, name, want);
            break;
        default:
            break;
        }
        if (t)
            return t;
    }
    return NULL;
}

static bool sym_value(const struct tep_print_flag_sym *s, unsigned long long *v)
{
    char *end;
    if (!s->value || !s->str)
        return false;
    *v = strtoull(s->value, &end, 0);
    return end != s->value && *end == '\0';
}

static dat_evinfo *info_of(dat_fields *df, int eid)
{
    if (eid < 0 || eid > 65535) /* common_type is 16 bits */
        return NULL;
    size_t id = (size_t)eid;
    if (id >= df->ninfo) {
        size_t n = df->ninfo ? df->ninfo : 64;
        while (n <= id)
            n *= 2;
        dat_evinfo *p = realloc(df->info, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + df->ninfo, 0, (n - df->ninfo) * sizeof *p);
        df->info = p;
        df->ninfo = n;
    }
    dat_evinfo *in = &df->info[id];
    if (in->seen)
        return in;
    in->seen = true;
    struct tep_event *ev = in->ev = df->lib->tep_find_event(df->tep, eid);
    if (!ev)
        return in;
    in->kind = ingest_ftrace_lex_event(ev->name);
    if (in->kind == FTRACE_EV_SYSCALLS_ENTER || in->kind == FTRACE_EV_SYSCALLS_EXIT) {
        in->sc_nr = df->lib->tep_find_field(ev, "__syscall_nr");
        in->direct = in->sc_nr && (in->kind == FTRACE_EV_SYSCALLS_ENTER || df->lib->tep_find_field(ev, "ret"));
        return in;
    }
    in->cols = cols_of(in->kind);
    in->direct = in->cols != NULL;
    for (int i = 0; in->cols && in->cols[i].key; i++) {
        const dat_col *c = &in->cols[i];
        in->f[i] = df->lib->tep_find_field(ev, c->field);
        if (!in->f[i] && c->alt)
            in->f[i] = df->lib->tep_find_field(ev, c->alt);
        if (in->f[i] && c->fmt == DF_SYM)
            in->tab[i] = find_table(ev->print_fmt.args, in->f[i]->name, TEP_PRINT_SYMBOL);
        if (in->f[i] && c->fmt == DF_STATE)
            in->tab[i] = find_table(ev->print_fmt.args, in->f[i]->name, TEP_PRINT_FLAGS);
        if (!in->f[i] && c->need)
            in->direct = false;
    }
    return in;
}

/* ---- values ---- */

typedef struct rec_view {
    const unsigned char *data;
    size_t size;
} rec_view;

static bool field_num(const dat_fields *df, const rec_view *rv, const struct tep_format_field *f, size_t off,
                      int size, unsigned long long *out)
{
    if (size <= 0 || size > 8 || off + (size_t)size > rv->size)
        return false;
    unsigned long long v = df->lib->tep_read_number(df->tep, rv->data + off, size);
    /* sign-extend what the kernel declared signed, as %d and (long) do */
    if ((f->flags & TEP_FIELD_IS_SIGNED) && size < 8 && (v >> (size * 8 - 1)) & 1)
        v |= ~0ull << (size * 8);
    *out = v;
    return true;
}

/* A string field: char[N], __data_loc / __rel_loc char[], or a flexible
 * char[] running to the end of the record. */
static bool field_str(const dat_fields *df, const rec_view *rv, const struct tep_format_field *f, const char **p,
                      size_t *n)
{
    size_t off = (size_t)f->offset, len;
    if (f->flags & TEP_FIELD_IS_DYNAMIC) {
        unsigned long long loc;
        if (!field_num(df, rv, f, off, f->size, &loc))
            return false;
        len = (size_t)(loc >> 16) & 0xffff;
        off = (size_t)(loc & 0xffff);
        if (f->flags & TEP_FIELD_IS_RELATIVE)
            off += (size_t)f->offset + (size_t)f->size;
    } else if (f->size == 0) {
        len = off <= rv->size ? rv->size - off : 0;
    } else {
        len = (size_t)f->size;
    }
    if (off > rv->size || len > rv->size - off)
        return false;
    *p = (const char *)rv->data + off;
    *n = strnlen(*p, len);
    return true;
}

/* Room for n more bytes of values; reserved before a record's values are
 * written, so pointers into vbuf stay valid while r->kv is filled. */
static bool reserve(dat_fields *df, size_t n)
{
    if (df->vcap >= n)
        return true;
    size_t cap = df->vcap ? df->vcap : 4096;
    while (cap < n)
        cap *= 2;
    char *p = realloc(df->vbuf, cap);
    if (!p)
        return false;
    df->vbuf = p;
    df->vcap = cap;
    return true;
}

/* A number into vbuf (room reserved by the caller) as the print format
 * writes it: %lld / %llu (base 10, signed or not), %llx (16), 0x%llx
 * (prefix "0x"), %03d (min 3); returns the text. */
static const char *vnum(dat_fields *df, size_t *n, unsigned long long v, int base, bool sign,
                        const char *prefix, int min)
{
    char *p = df->vbuf + df->vlen, *q = p;
    while (*prefix)
        *q++ = *prefix++;
    if (base == 16) {
        q += base_fmt_hex(q, v, min);
    } else {
        char t[24];
        size_t k = sign ? base_fmt_i64(t, (int64_t)v) : base_fmt_u64(t, v);
        size_t neg = t[0] == '-';
        if (neg)
            *q++ = '-';
        for (size_t z = k; (int)z < min; z++) /* the width counts the sign */
            *q++ = '0';
        memcpy(q, t + neg, k - neg);
        q += k - neg;
    }
    *q = '\0';
    *n = (size_t)(q - p);
    df->vlen += *n + 1;
    return p;
}

/* kernel letters for a prev_state value with the print format's table:
 * `state & (MAX-1) ? __print_flags(state & (MAX-1), "|", ...) : "R"`, then
 * "+" for a bit above the table (TASK_REPORT_MAX: preempted).  MAX is
 * the bit above the table's highest flag in every kernel since 4.14; older
 * tables leave gaps, so any bit above the highest flag counts as the "+". */
static const char *state_text(dat_fields *df, const struct tep_print_flag_sym *tab, unsigned long long v,
                              size_t *n)
{
    static const char *const dflt[] = {"S", "D", "T", "t", "X", "Z", "P", "I"}; /* 4.14+ */
    unsigned long long top = 0, bits[16];
    const char *str[16];
    int nt = 0;
    for (const struct tep_print_flag_sym *s = tab; s && nt < 16; s = s->next) {
        unsigned long long fv;
        if (sym_value(s, &fv) && fv) {
            bits[nt] = fv;
            str[nt++] = s->str;
            if (fv > top)
                top = fv;
        }
    }
    if (!nt)
        for (; nt < 8; nt++) {
            bits[nt] = 1ull << nt;
            str[nt] = dflt[nt];
            top = bits[nt];
        }
    unsigned long long mask = (top << 1) - 1, named = v & mask;
    char *p = df->vbuf + df->vlen, *q = p;
    if (!named) {
        *q++ = 'R';
    } else {
        for (int i = 0; i < nt; i++) {
            if ((named & bits[i]) != bits[i])
                continue;
            if (q != p)
                *q++ = '|';
            size_t l = strlen(str[i]);
            if (l > 8)
                l = 8;
            memcpy(q, str[i], l);
            q += l;
            named &= ~bits[i];
        }
        if (named) { /* bits the table does not name, as libtraceevent prints them */
            if (q != p)
                *q++ = '|';
            *q++ = '0';
            *q++ = 'x';
            q += base_fmt_hex(q, named, 1);
        }
    }
    if (v & ~mask)
        *q++ = '+';
    *q = '\0';
    *n = (size_t)(q - p);
    df->vlen += *n + 1;
    return p;
}

/* One column's value; false: the pair is left out. */
static bool col_value(dat_fields *df, const rec_view *rv, const dat_col *c, const struct tep_format_field *f,
                      const struct tep_print_flag_sym *tab, const char **val, size_t *n)
{
    unsigned long long v;
    if (c->fmt == DF_STR && (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)))
        return field_str(df, rv, f, val, n);
    if (c->fmt == DF_BUF) {
        const char *s;
        size_t l;
        if (!field_str(df, rv, f, &s, &l))
            return false;
        while (l && (s[l - 1] == '\n' || s[l - 1] == '\r'))
            l--;
        char *p = df->vbuf + df->vlen;
        for (size_t i = 0; i < l; i++)
            p[i] = s[i] == '\r' ? ' ' : s[i];
        p[l] = '\0';
        df->vlen += l + 1;
        *val = p;
        *n = l;
        return true;
    }
    if (c->fmt == DF_ARGS) {
        int each = f->elementsize ? (int)f->elementsize : 8, count = f->arraylen ? (int)f->arraylen : 6;
        char *p = df->vbuf + df->vlen, *q = p;
        for (int i = 0; i < count && i < 6; i++) {
            if (!field_num(df, rv, f, (size_t)f->offset + (size_t)(i * each), each, &v))
                return false;
            if (each < 8)
                v &= (1ull << (each * 8)) - 1; /* %lx of an unsigned long */
            if (i) {
                *q++ = ',';
                *q++ = ' ';
            }
            q += base_fmt_hex(q, v, 1);
        }
        *q = '\0';
        *val = p;
        *n = (size_t)(q - p);
        df->vlen += *n + 1;
        return true;
    }
    if (!field_num(df, rv, f, (size_t)f->offset, f->size, &v))
        return false;
    switch (c->fmt) {
    case DF_INT:
        *val = vnum(df, n, v, 10, (f->flags & TEP_FIELD_IS_SIGNED) != 0, "", 1);
        return true;
    case DF_INT03:
        *val = vnum(df, n, v, 10, true, "", 3);
        return true;
    case DF_XBARE:
        *val = vnum(df, n, v, 16, false, "", 1);
        return true;
    case DF_FUNC: {
        size_t slot = (size_t)((v >> 4) * 0x9e3779b97f4a7c15ull >> 56) % DAT_FUNC_CACHE;
        if (!df->fn[slot].used || df->fn[slot].addr != v) {
            df->fn[slot].addr = v;
            df->fn[slot].name = df->lib->tep_find_function(df->tep, v);
            df->fn[slot].used = true;
        }
        const char *fn = df->fn[slot].name;
        if (fn) {
            *val = fn;
            *n = strlen(fn);
            return true;
        }
        *val = vnum(df, n, v, 16, false, "0x", 1);
        return true;
    }
    case DF_SYM:
        for (const struct tep_print_flag_sym *s = tab; s; s = s->next) {
            unsigned long long sv;
            if (sym_value(s, &sv) && sv == v) {
                *val = s->str;
                *n = strlen(s->str);
                return true;
            }
        }
        return false;
    case DF_STATE:
        *val = state_text(df, tab, v, n);
        return true;
    case DF_HANDLED:
        *val = v ? "handled" : "unhandled";
        *n = strlen(*val);
        return true;
    default: /* DF_HEX, and DF_STR of a pointer field */
        *val = vnum(df, n, v, 16, false, "0x", 1);
        return true;
    }
}

/* syscalls:sys_enter_NAME: every argument as the kernel's generated print
 * format has it, `NAME: 0x%08lx, ...` of (unsigned long)(arg);
 * sys_exit_NAME: ret as `0x%lx`. */
static int syscall_pairs(dat_fields *df, ftrace_reader *r, const dat_evinfo *in, struct tep_event *ev,
                         const rec_view *rv)
{
    unsigned long long v;
    if (in->kind == FTRACE_EV_SYSCALLS_EXIT) {
        struct tep_format_field *f = df->lib->tep_find_field(ev, "ret");
        size_t n;
        if (!f || !field_num(df, rv, f, (size_t)f->offset, f->size, &v))
            return FTRACE_BAD_FIELDS;
        const char *p = vnum(df, &n, v, 16, false, "0x", 1);
        ingest_ft_kv_add(r, "ret", p, n);
        return 0;
    }
    char *p = df->vbuf + df->vlen, *q = p;
    for (struct tep_format_field *f = ev->format.fields; f; f = f->next) {
        if (f == in->sc_nr)
            continue;
        if (!field_num(df, rv, f, (size_t)f->offset, f->size, &v))
            return FTRACE_BAD_FIELDS;
        if (df->vcap - (size_t)(q - df->vbuf) < strlen(f->name) + 40)
            return FTRACE_BAD_FIELDS; /* more arguments than any syscall has */
        if (q != p) {
            *q++ = ',';
            *q++ = ' ';
        }
        size_t nl = strlen(f->name);
        memcpy(q, f->name, nl);
        memcpy(q + nl, ": 0x", 4);
        q += nl + 4;
        q += base_fmt_hex(q, v, 8);
    }
    *q = '\0';
    df->vlen += (size_t)(q - p) + 1;
    ingest_ft_kv_add(r, "args", p, (size_t)(q - p));
    return 0;
}

int ingest_dat_pairs(dat_fields *df, ftrace_reader *r, struct tep_record *rec, struct tep_event **evp,
                     ftrace_ev_kind *kind)
{
    dat_evinfo *in = info_of(df, df->lib->tep_data_type(df->tep, rec));
    if (!in)
        return -1;
    *evp = in->ev;
    if (!in->ev)
        return 2;
    struct tep_event *ev = in->ev;
    *kind = in->kind;
    if (!in->direct)
        return 1;
    rec_view rv = {rec->data, rec->size > 0 ? (size_t)rec->size : 0};
    /* every value is at most the record's bytes or a number's digits */
    if (!reserve(df, rv.size * 2 + 2048))
        return -1;
    df->vlen = 0;
    r->nkv = 0;
    if (in->sc_nr)
        return syscall_pairs(df, r, in, ev, &rv);
    for (int i = 0; in->cols[i].key; i++) {
        const char *val;
        size_t n;
        if (in->f[i] && col_value(df, &rv, &in->cols[i], in->f[i], in->tab[i], &val, &n))
            ingest_ft_kv_add(r, in->cols[i].key, val, n);
    }
    return 0;
}
