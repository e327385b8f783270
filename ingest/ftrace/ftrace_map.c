/* ingest/ftrace/ftrace_map.c -- one ftrace event onto the Argus vocabulary
 * (spec, "Linux ftrace mapping"; each handler names the rows it
 * implements).  Scheduler and process events are in ftrace_sched.c.
 *
 * Every handler reads the event's canonical pairs (ftrace_map_int.h), whatever
 * form the event came in, and keeps a fixed set of attributes: the mapped
 * ones first, then the pairs the mapping does not use.  Addresses are
 * normalised to 0x + lowercase hex, so tracefs's hashed `000000001ff35041`
 * and trace-cmd's `0xffff888627d1c6f8` forms index alike. */
#include <stdio.h>
#include <string.h>

#include "ingest/argus/argus_int.h"
#include "ftrace_int.h"


/* ---- syscalls ---- */

/* raw_syscalls give a number; its name is the machine's (NR 240 is futex
 * on 32-bit ARM, mq_open on x86-64: base/base.h), so it is named only when
 * the trace's machine is known, and otherwise kept as the number alone. */
static int syscall_name_attr(ftrace_reader *r, int64_t nr)
{
    if (!r->arch) {
        r->st->unnamed++;
        return 0;
    }
    /* a number the machine's table has not (a newer kernel's, -1 of a
     * syscall that was not one) stays a number, as in a trace whose
     * machine is not known: the two compare alike (query/sysforms.c) */
    const char *s = nr >= 0 ? base_arch_syscall(r->arch, (uint64_t)nr) : NULL;
    return s ? ingest_ft_attr(r, "name", s, strlen(s)) : 0;
}

/* raw_syscalls sys_enter (id, args) / sys_exit (id, ret): syscall
 * begin/end, obj = the number, val = the return value. */
static int map_raw_syscall(ftrace_reader *r, db_event *ev, bool enter)
{
    static const ftrace_key enter_keys[] = {FTRACE_KEY("args"), {NULL, 0}};
    static const ftrace_key exit_keys[] = {FTRACE_KEY("ret"), {NULL, 0}};
    int64_t nr, ret = 0;
    if (!ingest_ft_kv_i64(r, "id", &nr) || (enter ? !ingest_ft_kv_get(r, "args") : !ingest_ft_kv_i64(r, "ret", &ret)))
        return FTRACE_BAD_FIELDS;
    ev->type = DB_EV_SYSCALL;
    ev->phase = enter ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = (uint64_t)nr;
    ev->val = ret;
    if (ingest_ft_attr_i64(r, "nr", nr) < 0 || syscall_name_attr(r, nr) < 0)
        return -1;
    return ingest_ft_attr_same(r, enter ? enter_keys : exit_keys);
}

/* syscalls:sys_enter_<name> (args `fd: 0x3, buf: ...`) / sys_exit_<name>
 * (ret `0x10`): the name is in the event name, the number from the table
 * (obj = UINT64_MAX when the table does not know the name). */
static int map_named_syscall(ftrace_reader *r, const ftrace_line *li, db_event *ev, bool enter)
{
    const char *name = li->name + (enter ? 10 : 9);
    uint32_t nr;
    bool known = ingest_ft_syscall_nr(r, name, &nr);
    const ftrace_kv *v = ingest_ft_kv_get(r, enter ? "args" : "ret");
    if (!v)
        return FTRACE_BAD_FIELDS;
    ev->type = DB_EV_SYSCALL;
    ev->phase = enter ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = known ? nr : UINT64_MAX;
    if (!enter) {
        uint64_t u;
        int64_t sv;
        if (ingest_hex_u64(v->val, v->vlen, &u))
            ev->val = (int64_t)u; /* the kernel's long, two's complement */
        else if (ingest_dec_i64(v->val, v->vlen, &sv))
            ev->val = sv;
        else
            return FTRACE_BAD_FIELDS;
    }
    if (known && ingest_ft_attr_u64(r, "nr", nr) < 0)
        return -1;
    if (ingest_ft_attr(r, "name", name, strlen(name)) < 0)
        return -1;
    if (enter)
        return ingest_ft_attr(r, "args", v->val, v->vlen);
    return ingest_ft_attr_i64(r, "ret", ev->val);
}

/* ---- interrupts and timers ---- */

/* irq_handler_entry/exit (irq, name / irq, ret); softirq_entry/exit (vec,
 * action): interrupt begin/end, obj = the irq or vector (isolated from
 * the thread by the graph pass, paper/000 1.a). */
static int map_irq(ftrace_reader *r, db_event *ev, bool begin, bool soft)
{
    static const ftrace_key hard_keys[] = {FTRACE_KEY("irq"), FTRACE_KEY("name"), FTRACE_KEY("ret"), {NULL, 0}};
    static const ftrace_key soft_keys[] = {FTRACE_KEY("vec"), FTRACE_KEY("action"), {NULL, 0}};
    uint32_t n;
    if (!ingest_ft_kv_u32(r, soft ? "vec" : "irq", &n))
        return FTRACE_BAD_FIELDS;
    ev->type = DB_EV_INTERRUPT;
    ev->phase = begin ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = n;
    if (soft && ingest_ft_attr(r, "softirq", "1", 1) < 0)
        return -1;
    /* the vector's name where the reader gives the number alone (LTTng's
     * irq_softirq_entry): every trace names softirq/NET_RX alike */
    if (soft && !ingest_ft_kv_get(r, "action") && n < INGEST_FT_NSOFTIRQ &&
        ingest_ft_attr(r, "action", ingest_ft_softirq_names[n], strlen(ingest_ft_softirq_names[n])) < 0)
        return -1;
    return ingest_ft_attr_same(r, soft ? soft_keys : hard_keys);
}

/* hrtimer_start -> timer_arm (deadline = expires), hrtimer_cancel ->
 * timer_cancel, hrtimer_expire_entry/exit -> timer_callout begin/end;
 * obj = the hrtimer address. */
static int map_hrtimer(ftrace_reader *r, db_event *ev, ftrace_ev_kind k)
{
    static const ftrace_key rest[] = {FTRACE_KEY("softexpires"), FTRACE_KEY("now"), {NULL, 0}};
    uint64_t addr;
    if (!ingest_ft_kv_hex(r, "hrtimer", &addr))
        return FTRACE_BAD_FIELDS;
    ev->obj = addr;
    switch (k) {
    case FTRACE_EV_HRTIMER_START:
        ev->type = DB_EV_TIMER_ARM;
        break;
    case FTRACE_EV_HRTIMER_CANCEL:
        ev->type = DB_EV_TIMER_CANCEL;
        break;
    default:
        ev->type = DB_EV_TIMER_CALLOUT;
        ev->phase = k == FTRACE_EV_HRTIMER_EXPIRE_ENTRY ? DB_PH_BEGIN : DB_PH_END;
        break;
    }
    if (ingest_ft_attr_hex(r, "timer", addr) < 0)
        return -1;
    const ftrace_kv *fn = ingest_ft_kv_get(r, "function");
    if (fn && ingest_ft_attr_func(r, fn->val, fn->vlen) < 0)
        return -1;
    if (k == FTRACE_EV_HRTIMER_START && ingest_ft_attr_kv(r, "deadline", "expires") < 0)
        return -1;
    return ingest_ft_attr_same(r, rest);
}

/* ---- workqueues ---- */

/* workqueue_queue_work -> dispatch_enqueue, execute_start/end ->
 * dispatch_invoke begin/end (paper/000 1.c), block = the work struct;
 * activate_work is kept raw (with block and func).  obj = the work. */
static int map_work(ftrace_reader *r, db_event *ev, ftrace_ev_kind k)
{
    static const ftrace_key cpus[] = {FTRACE_KEY("req_cpu"), FTRACE_KEY("cpu"), {NULL, 0}};
    uint64_t addr;
    if (!ingest_ft_kv_hex(r, "work", &addr))
        return FTRACE_BAD_FIELDS;
    ev->obj = addr;
    if (ingest_ft_attr_hex(r, "block", addr) < 0)
        return -1;
    const ftrace_kv *fn = ingest_ft_kv_get(r, "function");
    if (fn && ingest_ft_attr_func(r, fn->val, fn->vlen) < 0)
        return -1;
    if (k == FTRACE_EV_WQ_QUEUE) {
        ev->type = DB_EV_DISPATCH_ENQUEUE;
        if (ingest_ft_attr_kv(r, "queue", "workqueue") < 0)
            return -1;
        return ingest_ft_attr_same(r, cpus);
    }
    if (k != FTRACE_EV_WQ_ACTIVATE) {
        ev->type = DB_EV_DISPATCH_INVOKE;
        ev->phase = k == FTRACE_EV_WQ_START ? DB_PH_BEGIN : DB_PH_END;
    }
    return 0;
}

/* ---- user markers ---- */

/* Is a marker `argus: TYPE ...`?  On true, *rest is the TYPE onwards
 * (possibly empty), without the trailing blanks and the `\n` that some
 * trace-cmd versions print for the newline ending the write. */
static bool marker_argus(const char *p, size_t n, const char **rest, size_t *rest_len)
{
    const char *e = p + n;
    if (!ingest_ft_lit(&p, e, "argus:") || (p < e && !ingest_ft_blank(*p)))
        return false;
    p = ingest_ft_skip_blanks(p, e);
    for (;;) {
        while (e > p && ingest_ft_blank(e[-1]))
            e--;
        if (e - p < 2 || e[-2] != '\\' || e[-1] != 'n')
            break;
        e -= 2;
    }
    *rest = p;
    *rest_len = (size_t)(e - p);
    return true;
}

/* Android's atrace writes its slices to trace_marker: `B|PID|NAME` a
 * slice begins on the writing thread, `E|PID` the innermost one ends,
 * `C|PID|NAME|VALUE` a counter, `S|PID|NAME|COOKIE` / `F|PID|NAME|COOKIE`
 * an async slice.  The event stays raw with its buf=, and gets atrace=
 * the letter, tgid= PID, and slice= NAME without a trailing instance
 * number (counter= and value= for C, cookie= for S/F), so `find events where slice = "Choreographer#doFrame"`
 * finds the node that ran it, whatever reader (text, .dat, Perfetto) it
 * came through.  Other text: nothing more. */
static int marker_attrs(ftrace_reader *r, const char *buf, size_t blen)
{
    const char *p = buf;
    size_t n = blen;
    while (n && (p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    const char *f[4] = {NULL, NULL, NULL, NULL}; /* PID NAME VALUE/COOKIE */
    size_t fl[4] = {0, 0, 0, 0};
    int nf = 0;
    /* the letters as strchr("BECSF", c) took them, its NUL too, without
     * its call (docs/PERFORMANCE.md) */
    char c0 = n ? p[0] : 'x';
    bool atrace = n >= 1 && (c0 == 'B' || c0 == 'E' || c0 == 'C' || c0 == 'S' || c0 == 'F' || c0 == '\0') &&
                  (n == 1 || p[1] == '|');
    const char *q = p + 1, *e = p + n;
    while (atrace && q < e && *q == '|' && nf < 3) {
        q++;
        /* NAME runs to the end for B (it may hold '|'); C/S/F end it at
         * the last '|' (their value or cookie follows) */
        const char *end = memchr(q, '|', (size_t)(e - q));
        if (nf == 1 && p[0] == 'B')
            end = NULL;
        if (nf == 1 && p[0] != 'B' && end) {
            const char *last = end;
            for (const char *t = end; t && t < e; t = memchr(t + 1, '|', (size_t)(e - t - 1)))
                last = t;
            end = last;
        }
        f[nf] = q;
        fl[nf] = end ? (size_t)(end - q) : (size_t)(e - q);
        q += fl[nf];
        nf++;
    }
    if (atrace && p[0] != 'E' && (nf < 2 || fl[1] == 0))
        atrace = false; /* not atrace's: B, C, S, F name something */
    uint32_t tgid = 0;
    bool has_tgid = atrace && nf >= 1 && ingest_dec_u32(f[0], fl[0], &tgid);
    bool named = atrace && p[0] != 'E';
    /* a trailing number is the instance (`Choreographer#doFrame 191059`,
     * a frame's vsync id): slice= is the name without it, so a slice is
     * found, and compared between runs, by what it is (buf= keeps all) */
    size_t nl = fl[1];
    if (named && p[0] != 'C') {
        size_t d = nl;
        while (d > 0 && f[1][d - 1] >= '0' && f[1][d - 1] <= '9')
            d--;
        if (d < nl && d > 1 && f[1][d - 1] == ' ')
            nl = d - 1;
    }
    /* one reservation for them all, not an ingest_ft_attr call each */
    size_t need = sizeof "buf=" + blen + sizeof "atrace=x" + sizeof "tgid=" + INGEST_FT_NUM_MAX +
                  sizeof "counter=" + nl + sizeof "cookie=" + fl[2];
    char *o = ingest_ft_attrs_room(r, need);
    if (!o)
        return -1;
    o = ingest_ft_put(o, FTRACE_LIT("buf"), buf, blen);
    if (atrace)
        o = ingest_ft_put(o, FTRACE_LIT("atrace"), p, 1);
    if (has_tgid)
        o = ingest_ft_put_u64(o, FTRACE_LIT("tgid"), tgid);
    if (named) {
        bool c = p[0] == 'C';
        o = ingest_ft_put(o, c ? "counter" : "slice", c ? 7 : 5, f[1], nl);
        if (nf >= 3)
            o = ingest_ft_put(o, c ? "value" : "cookie", c ? 5 : 6, f[2], fl[2]);
    }
    ingest_ft_attrs_done(r, o);
    return 0;
}

/* tracing_mark_write / print (buf: the text written).  `argus: TYPE
 * [WORD ...] [KEY=VALUE ...]` is the Argus event it spells (spec, last
 * row of the ftrace mapping), validated and mapped by the Argus reader's
 * own code (argus_event.c), on the event's task, CPU, context and
 * timestamp; a malformed one is an error.  Any other text is kept raw
 * with buf= the text. */
/* `argusq-record: started=T duration=S status=N command=CMD...`, what
 * argusq record writes as its command ends: the recording's own labels
 * (the command last, with its blanks).  The event stays a raw one. */
static void record_marker(ftrace_reader *r, const char *p, size_t n)
{
    static const char tag[] = "argusq-record: ";
    if (n < sizeof tag - 1 || memcmp(p, tag, sizeof tag - 1) != 0)
        return;
    const char *e = p + n;
    p += sizeof tag - 1;
    ingest_meta *m = &r->st->meta;
    while (p < e) {
        const char *eq = memchr(p, '=', (size_t)(e - p));
        if (!eq)
            break;
        size_t klen = (size_t)(eq - p);
        const char *v = eq + 1;
        bool rest = klen == 7 && memcmp(p, "command", 7) == 0;
        const char *ve = rest ? e : memchr(v, ' ', (size_t)(e - v));
        if (!ve)
            ve = e;
        int vlen = (int)(ve - v);
        if (rest)
            snprintf(m->command, sizeof m->command, "%.*s", vlen, v);
        else if (klen == 7 && memcmp(p, "started", 7) == 0)
            snprintf(m->started, sizeof m->started, "%.*s", vlen, v);
        else if (klen == 8 && memcmp(p, "duration", 8) == 0)
            snprintf(m->duration, sizeof m->duration, "%.*s", vlen, v);
        else if (klen == 6 && memcmp(p, "status", 6) == 0)
            snprintf(m->status, sizeof m->status, "%.*s", vlen, v);
        p = ve < e ? ve + 1 : e;
    }
}

static int map_marker(ftrace_reader *r, db_event *ev)
{
    const ftrace_kv *buf = ingest_ft_kv_get(r, "buf");
    if (!buf)
        return FTRACE_BAD_FIELDS;
    const char *rest;
    size_t rest_len;
    if (!marker_argus(buf->val, buf->vlen, &rest, &rest_len)) {
        ev->type = DB_EV_RAW;
        record_marker(r, buf->val, buf->vlen);
        return marker_attrs(r, buf->val, buf->vlen);
    }
    /* the text lies in the reader's own buffer: end it there */
    ((char *)rest)[rest_len] = '\0';
    argus_attrs at = {&r->ab, &r->alen, &r->acap};
    char msg[400];
    if (ingest_argus_event(rest, &at, ev, msg, sizeof msg) < 0)
        return ingest_ft_fail(r, "argus marker: %s", msg);
    return 0;
}

/* ---- dispatch ---- */

int ingest_ft_map(ftrace_reader *r, ftrace_ev_kind k, const ftrace_line *li, db_event *ev)
{
    switch (k) {
    case FTRACE_EV_SYS_ENTER:
    case FTRACE_EV_SYS_EXIT:
        return map_raw_syscall(r, ev, k == FTRACE_EV_SYS_ENTER);
    case FTRACE_EV_SYSCALLS_ENTER:
    case FTRACE_EV_SYSCALLS_EXIT:
        return map_named_syscall(r, li, ev, k == FTRACE_EV_SYSCALLS_ENTER);
    case FTRACE_EV_SCHED_SWITCH:
        return ingest_ft_map_switch(r, ev);
    case FTRACE_EV_SCHED_WAKEUP:
        return ingest_ft_map_wakeup(r, ev, FTRACE_LIT("wakeup"));
    case FTRACE_EV_SCHED_WAKEUP_NEW:
        return ingest_ft_map_wakeup(r, ev, FTRACE_LIT("wakeup_new"));
    case FTRACE_EV_SCHED_WAKING:
        return ingest_ft_map_wakeup(r, ev, NULL, 0);
    case FTRACE_EV_PROCESS_FORK:
        return ingest_ft_map_fork(r, ev);
    case FTRACE_EV_TASK_NEWTASK:
        return ingest_ft_map_newtask(r, ev);
    case FTRACE_EV_PROCESS_EXEC:
        return ingest_ft_map_exec(r);
    case FTRACE_EV_TASK_RENAME:
        return ingest_ft_map_rename(r);
    case FTRACE_EV_IRQ_ENTRY:
    case FTRACE_EV_IRQ_EXIT:
        return map_irq(r, ev, k == FTRACE_EV_IRQ_ENTRY, false);
    case FTRACE_EV_SOFTIRQ_ENTRY:
    case FTRACE_EV_SOFTIRQ_EXIT:
        return map_irq(r, ev, k == FTRACE_EV_SOFTIRQ_ENTRY, true);
    case FTRACE_EV_HRTIMER_START:
    case FTRACE_EV_HRTIMER_CANCEL:
    case FTRACE_EV_HRTIMER_EXPIRE_ENTRY:
    case FTRACE_EV_HRTIMER_EXPIRE_EXIT:
        return map_hrtimer(r, ev, k);
    case FTRACE_EV_WQ_QUEUE:
    case FTRACE_EV_WQ_ACTIVATE:
    case FTRACE_EV_WQ_START:
    case FTRACE_EV_WQ_END:
        return map_work(r, ev, k);
    case FTRACE_EV_MARKER:
        return map_marker(r, ev);
    case FTRACE_EV_BINDER_TXN:
    case FTRACE_EV_BINDER_RECV:
        return ingest_ft_map_binder(r, ev, k == FTRACE_EV_BINDER_RECV);
    case FTRACE_EV_PROCESS_EXIT: /* raw; the thread stays in the table */
    case FTRACE_EV_SOFTIRQ_RAISE:
    case FTRACE_EV_STACK: /* raw, backtrace= its frames */
    case FTRACE_EV_BLOCK: /* raw; the graph pairs a request with its completion */
    case FTRACE_EV_OTHER:
        break;
    }
    /* everything else: raw, with its pairs (or raw= its text) */
    return ingest_ft_attr_pairs(r);
}
