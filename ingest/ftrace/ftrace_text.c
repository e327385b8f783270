/* ingest/ftrace/ftrace_text.c -- an ftrace event's text to its canonical pairs
 * (ftrace_map_int.h lists them).  Most events print key=value already; the ones
 * that do not -- raw_syscalls, syscalls:*, workqueue, print, and
 * sched_switch / sched_wakeup as libtraceevent's sched_switch plugin
 * prints them -- are parsed here into the pairs their print format would
 * have named, so the mapping never sees which form a line came in. */
#include <string.h>

#include "ftrace_int.h"

/* trace-cmd's `comm:pid [prio]`: comm may hold ':' and blanks, so find the
 * first ':' that is followed by digits, a blank and `[digits]`. */
typedef struct cpp {
    const char *comm, *pid, *prio, *end; /* end: just after ']' */
    size_t comm_len, pid_len, prio_len;
} cpp;

static bool parse_cpp(const char *s, const char *e, cpp *out)
{
    for (const char *c = s; c < e; c++) {
        if (*c != ':' || c == s)
            continue;
        const char *d = c + 1, *q = d;
        while (q < e && *q >= '0' && *q <= '9')
            q++;
        if (q == d || q + 1 >= e || *q != ' ' || q[1] != '[')
            continue;
        const char *b = q + 2, *b1 = b;
        if (b1 < e && *b1 == '-')
            b1++;
        while (b1 < e && *b1 >= '0' && *b1 <= '9')
            b1++;
        if (b1 == b || b1 >= e || *b1 != ']')
            continue;
        out->comm = s;
        out->comm_len = (size_t)(c - s);
        out->pid = d;
        out->pid_len = (size_t)(q - d);
        out->prio = b;
        out->prio_len = (size_t)(b1 - b);
        out->end = b1 + 1;
        return true;
    }
    return false;
}

static bool add_cpp(ftrace_reader *r, const cpp *c, const char *comm, const char *pid, const char *prio)
{
    return ingest_ft_kv_add(r, comm, c->comm, c->comm_len) && ingest_ft_kv_add(r, pid, c->pid, c->pid_len) &&
           ingest_ft_kv_add(r, prio, c->prio, c->prio_len);
}

/* libtraceevent's sched_switch plugin names the prev_state bits with an
 * old table, "SDTtZXxW", while the kernel (4.14+) prints "SDTtXZPI" for
 * the same bits (tracefs shows rcu_preempt as I where trace-cmd shows W,
 * and exiting leaders as Z where trace-cmd shows X).  Translate so
 * prev_state is the kernel's letter in all forms. */
static char kernel_state_letter(char c)
{
    switch (c) {
    case 'Z':
        return 'X';
    case 'X':
        return 'Z';
    case 'x':
        return 'P';
    case 'W':
        return 'I';
    default:
        return c;
    }
}

/* sched_switch as the plugin prints it:
 * PREV:PID [PRIO] STATE ==> NEXT:PID [PRIO] */
static int switch_plugin(ftrace_reader *r, const char *s, const char *e)
{
    cpp prev, next;
    if (!parse_cpp(s, e, &prev))
        return FTRACE_BAD_FIELDS;
    const char *s0 = ingest_ft_skip_blanks(prev.end, e), *s1 = ingest_ft_word_end(s0, e);
    const char *p = ingest_ft_skip_blanks(s1, e);
    if (s0 == s1 || !ingest_ft_lit(&p, e, "==>"))
        return FTRACE_BAD_FIELDS;
    p = ingest_ft_skip_blanks(p, e);
    if (!parse_cpp(p, e, &next) || ingest_ft_skip_blanks(next.end, e) != e)
        return FTRACE_BAD_FIELDS;
    size_t sl = (size_t)(s1 - s0) < sizeof r->state ? (size_t)(s1 - s0) : sizeof r->state - 1;
    for (size_t i = 0; i < sl; i++)
        r->state[i] = kernel_state_letter(s0[i]);
    r->nkv = 0;
    if (!add_cpp(r, &prev, "prev_comm", "prev_pid", "prev_prio") ||
        !ingest_ft_kv_add(r, "prev_state", r->state, sl) ||
        !add_cpp(r, &next, "next_comm", "next_pid", "next_prio"))
        return FTRACE_BAD_FIELDS;
    return 0;
}

/* sched_wakeup(_new) / sched_waking as the plugin prints it:
 * COMM:PID [PRIO] [success=1] CPU:NNN */
static int wakeup_plugin(ftrace_reader *r, const char *s, const char *e)
{
    cpp c;
    if (!parse_cpp(s, e, &c))
        return FTRACE_BAD_FIELDS;
    r->nkv = 0;
    if (!add_cpp(r, &c, "comm", "pid", "prio"))
        return FTRACE_BAD_FIELDS;
    for (const char *cpu = c.end; cpu + 4 <= e; cpu++)
        if (memcmp(cpu, "CPU:", 4) == 0 && !ingest_ft_kv_add(r, "target_cpu", cpu + 4,
                                                             (size_t)(ingest_ft_word_end(cpu, e) - cpu - 4)))
            return FTRACE_BAD_FIELDS;
    return 0;
}

/* raw_syscalls: `NR 33 (b, 1, 0, 0, 7, b)` and `NR 33 = -110` */
static int raw_syscall(ftrace_reader *r, const char *p, const char *e, bool enter)
{
    if (!ingest_ft_lit(&p, e, "NR"))
        return FTRACE_BAD_FIELDS;
    p = ingest_ft_skip_blanks(p, e);
    const char *w = ingest_ft_word_end(p, e);
    r->nkv = 0;
    ingest_ft_kv_add(r, "id", p, (size_t)(w - p));
    p = ingest_ft_skip_blanks(w, e);
    if (enter) {
        if (p == e || *p != '(' || e[-1] != ')')
            return FTRACE_BAD_FIELDS;
        ingest_ft_kv_add(r, "args", p + 1, (size_t)(e - 1 - (p + 1)));
        return 0;
    }
    if (!ingest_ft_lit(&p, e, "="))
        return FTRACE_BAD_FIELDS;
    p = ingest_ft_skip_blanks(p, e);
    ingest_ft_kv_add(r, "ret", p, (size_t)(e - p));
    return 0;
}

/* workqueue: `work struct=ADDR function=F workqueue=W req_cpu=N cpu=N`
 * (queue), `work struct ADDR [function=F]` (activate), `work struct ADDR:
 * function F` (execute_start/end). */
static int work(ftrace_reader *r, const char *p, const char *e)
{
    if (!ingest_ft_lit(&p, e, "work struct") || p == e || (*p != ' ' && *p != '='))
        return FTRACE_BAD_FIELDS;
    p++;
    const char *a = p;
    while (p < e && !ingest_ft_blank(*p) && *p != ':')
        p++;
    const char *a1 = p;
    if (p < e && *p == ':')
        p++;
    p = ingest_ft_skip_blanks(p, e);
    if (p < e && ingest_ft_lit(&p, e, "function ")) { /* execute_start/end */
        p = ingest_ft_skip_blanks(p, e);
        r->nkv = 0;
        ingest_ft_kv_add(r, "work", a, (size_t)(a1 - a));
        ingest_ft_kv_add(r, "function", p, (size_t)(ingest_ft_word_end(p, e) - p));
        return 0;
    }
    /* the rest, if any, is key=value (the text ends at the line's NUL) */
    ingest_ft_parse_kv(r, p);
    if (r->nkv < 0) {
        if (ingest_ft_skip_blanks(p, e) != e)
            return FTRACE_BAD_FIELDS;
        r->nkv = 0;
    }
    if (r->nkv == FTRACE_KV_MAX)
        return FTRACE_BAD_FIELDS;
    memmove(&r->kv[1], &r->kv[0], (size_t)r->nkv * sizeof r->kv[0]);
    r->kv[0] = (ftrace_kv){.key = "work", .klen = 4, .val = a, .vlen = (size_t)(a1 - a)};
    r->nkv++;
    return 0;
}

/* The block layer's events print positions, not pairs (their kernel print
 * formats, which the .dat reader prints too):
 *   block_bio_queue    MAJ,MIN RWBS SECTOR + NR [COMM]
 *   block_rq_insert    MAJ,MIN RWBS BYTES (CMD) SECTOR + NR IOPRIO [COMM]
 *   block_rq_issue     (the same)
 *   block_rq_complete  MAJ,MIN RWBS (CMD) SECTOR + NR IOPRIO [ERROR]
 * (IOPRIO since Linux 6.x: `be,0,4`; older kernels print none).  The pairs:
 * dev, rwbs, bytes, cmd, sector, nr_sector, ioprio, comm or error. */
/* The word at *w (after blanks) as pair key; *w moves past it.  False
 * when there is no word. */
static bool word_pair(ftrace_reader *r, const char *key, const char **w, const char *e)
{
    const char *s = ingest_ft_skip_blanks(*w, e), *we = ingest_ft_word_end(s, e);
    if (s == we)
        return false;
    ingest_ft_kv_add(r, key, s, (size_t)(we - s));
    *w = we;
    return true;
}

static int block(ftrace_reader *r, const char *name, const char *p, const char *e)
{
    bool complete = strcmp(name, "block_rq_complete") == 0;
    const char *w = ingest_ft_skip_blanks(p, e), *we = ingest_ft_word_end(w, e);
    if (w == we || !memchr(w, ',', (size_t)(we - w)))
        return FTRACE_BAD_FIELDS;
    r->nkv = 0;
    if (!word_pair(r, "dev", &w, e) || !word_pair(r, "rwbs", &w, e))
        return FTRACE_BAD_FIELDS;
    w = ingest_ft_skip_blanks(w, e);
    we = ingest_ft_word_end(w, e);
    if (w < e && *w != '(' && ingest_ft_skip_blanks(we, e) < e && *ingest_ft_skip_blanks(we, e) == '(') {
        ingest_ft_kv_add(r, "bytes", w, (size_t)(we - w)); /* insert, issue */
        w = ingest_ft_skip_blanks(we, e);
    }
    if (w < e && *w == '(') { /* (CMD): may be empty */
        const char *c = memchr(w, ')', (size_t)(e - w));
        if (!c)
            return FTRACE_BAD_FIELDS;
        ingest_ft_kv_add(r, "cmd", w + 1, (size_t)(c - w - 1));
        w = ingest_ft_skip_blanks(c + 1, e);
    }
    if (!word_pair(r, "sector", &w, e))
        return FTRACE_BAD_FIELDS;
    w = ingest_ft_skip_blanks(w, e);
    if (!ingest_ft_lit(&w, e, "+") || !word_pair(r, "nr_sector", &w, e))
        return FTRACE_BAD_FIELDS;
    w = ingest_ft_skip_blanks(w, e);
    if (w < e && *w != '[') {
        word_pair(r, "ioprio", &w, e);
        w = ingest_ft_skip_blanks(w, e);
    }
    if (w < e && *w == '[') {
        const char *c = e;
        while (c > w && c[-1] != ']')
            c--;
        if (c <= w + 1)
            return FTRACE_BAD_FIELDS;
        ingest_ft_kv_add(r, complete ? "error" : "comm", w + 1, (size_t)(c - 1 - w - 1));
    }
    return 0;
}

/* kernel_stack / user_stack: `<stack trace >` (or `<user stack trace>`;
 * a .dat's print format has none), then one `=> FRAME` per line, FRAME a
 * symbol with its address in parentheses (report text) or without (a
 * .dat's print format).  The pair: backtrace = the symbols, one a line
 * (paper vocabulary: a node's backtrace), the same from either form. */
static int stack(ftrace_reader *r, const char *p, const char *e)
{
    const char *q = ingest_ft_skip_blanks(p, e);
    if (q < e && *q == '<') {
        const char *h = memchr(q, '>', (size_t)(e - q));
        if (!h)
            return FTRACE_BAD_FIELDS;
        q = h + 1;
    }
    char *b = r->frames;
    size_t n = 0;
    for (; q < e;) {
        const char *eol = memchr(q, '\n', (size_t)(e - q));
        if (!eol)
            eol = e;
        const char *f = ingest_ft_skip_blanks(q, eol);
        if (f < eol) {
            if (!ingest_ft_lit(&f, eol, "=>"))
                return FTRACE_BAD_FIELDS;
            f = ingest_ft_skip_blanks(f, eol);
            const char *fe = eol;
            while (fe > f && ingest_ft_blank(fe[-1]))
                fe--;
            if (fe > f && fe[-1] == ')') { /* ` (ffffffffa8902e5f)` */
                const char *o = fe - 1;
                while (o > f && *o != '(')
                    o--;
                if (o > f && ingest_ft_blank(o[-1]))
                    for (fe = o; fe > f && ingest_ft_blank(fe[-1]);)
                        fe--;
            }
            size_t fl = (size_t)(fe - f);
            if (n + fl + 1 > sizeof r->frames)
                break; /* deeper than any kernel prints: the rest is cut */
            if (n)
                b[n++] = '\n';
            memcpy(b + n, f, fl);
            n += fl;
        }
        q = eol + (eol < e);
    }
    r->nkv = 0;
    ingest_ft_kv_add(r, "backtrace", b, n);
    return 0;
}

int ingest_ft_text_pairs(ftrace_reader *r, ftrace_ev_kind k, const ftrace_line *li)
{
    const char *p = li->fields, *e = li->fields + li->fields_len;
    r->nkv = -1;
    switch (k) {
    case FTRACE_EV_SYS_ENTER:
    case FTRACE_EV_SYS_EXIT:
        return raw_syscall(r, p, e, k == FTRACE_EV_SYS_ENTER);
    case FTRACE_EV_SYSCALLS_ENTER:
        ingest_ft_kv_add(r, "args", p, li->fields_len);
        return 0;
    case FTRACE_EV_SYSCALLS_EXIT:
        ingest_ft_kv_add(r, "ret", p, li->fields_len);
        return 0;
    case FTRACE_EV_SCHED_SWITCH:
        ingest_ft_parse_kv(r, p);
        if (ingest_ft_kv_get(r, "prev_state") && ingest_ft_kv_get(r, "next_pid"))
            return 0;
        return switch_plugin(r, p, e);
    case FTRACE_EV_SCHED_WAKEUP:
    case FTRACE_EV_SCHED_WAKEUP_NEW:
    case FTRACE_EV_SCHED_WAKING:
        ingest_ft_parse_kv(r, p);
        if (ingest_ft_kv_get(r, "comm") && ingest_ft_kv_get(r, "pid"))
            return 0;
        return wakeup_plugin(r, p, e);
    case FTRACE_EV_WQ_QUEUE:
    case FTRACE_EV_WQ_ACTIVATE:
    case FTRACE_EV_WQ_START:
    case FTRACE_EV_WQ_END:
        return work(r, p, e);
    case FTRACE_EV_MARKER:
        /* the print event prints its caller first: `tracing_mark_write: TEXT` */
        if (strcmp(li->name, "print") == 0 && ingest_ft_lit(&p, e, "tracing_mark_write:"))
            p = ingest_ft_skip_blanks(p, e);
        ingest_ft_kv_add(r, "buf", p, (size_t)(e - p));
        return 0;
    case FTRACE_EV_STACK:
        if (stack(r, p, e) == 0)
            return 0;
        r->nkv = -1;
        ingest_ft_parse_kv(r, p);
        if (r->nkv < 0)
            ingest_ft_kv_add(r, "raw", p, li->fields_len);
        return 0;
    case FTRACE_EV_BLOCK:
        if (block(r, li->name, p, e) == 0)
            return 0;
        r->nkv = -1; /* another layout: kept as any other event */
        /* fall through */
    case FTRACE_EV_OTHER:
    case FTRACE_EV_PROCESS_EXIT:
    case FTRACE_EV_SOFTIRQ_RAISE:
        ingest_ft_parse_kv(r, p);
        if (r->nkv < 0)
            ingest_ft_kv_add(r, "raw", p, li->fields_len);
        return 0;
    default: /* the rest print key=value */
        ingest_ft_parse_kv(r, p);
        return r->nkv < 0 ? FTRACE_BAD_FIELDS : 0;
    }
}
