/* ingest/ftrace_map.c -- one ftrace event onto the Argus vocabulary
 * (spec, "Linux ftrace mapping"; each handler names the rows it
 * implements).  Scheduler and process events are in ftrace_sched.c.
 *
 * Fields come in two texts: tracefs prints every event as key=value, while
 * trace-cmd's plugins print sched_switch and sched_wakeup as
 * `comm:pid [prio] ...`.  Pairs already in key=value form are all kept as
 * attributes (after the mapped ones, which win on a clash); other text is
 * kept whole as raw= next to the keys parsed out of it.  Addresses are
 * normalised to 0x + lowercase hex, so tracefs's hashed `000000001ff35041`
 * and trace-cmd's `0xffff888627d1c6f8` forms index alike. */
#include <stdio.h>
#include <string.h>

#include "argus.h"
#include "ftrace.h"

extern const char *const ingest_syscall_names[];
extern const size_t ingest_syscall_count;

/* ---- syscalls ---- */

static int syscall_name_attr(ftrace_reader *r, int64_t nr)
{
    if (nr >= 0 && (uint64_t)nr < ingest_syscall_count && ingest_syscall_names[nr]) {
        const char *s = ingest_syscall_names[nr];
        return ingest_ft_attr(r, "name", s, strlen(s));
    }
    char b[32];
    int n = snprintf(b, sizeof b, "sys_%lld", (long long)nr);
    return ingest_ft_attr(r, "name", b, (size_t)n);
}

/* raw_syscalls: `NR 33 (b, 1, 0, 0, 7, b)` and `NR 33 = -110` */
static int map_raw_syscall(ftrace_reader *r, const ftrace_line *li, db_event *ev, bool enter)
{
    const char *p = li->fields, *e = li->fields + li->fields_len;
    int64_t nr, ret = 0;
    const char *a0 = NULL, *a1 = NULL;
    if (!ingest_ft_lit(&p, e, "NR"))
        return ingest_ft_bad_fields(r, li);
    p = ingest_ft_skip_blanks(p, e);
    const char *w = ingest_ft_word_end(p, e);
    if (!ingest_ft_dec_i64(p, (size_t)(w - p), &nr))
        return ingest_ft_bad_fields(r, li);
    p = ingest_ft_skip_blanks(w, e);
    if (enter) {
        if (p == e || *p != '(' || e[-1] != ')')
            return ingest_ft_bad_fields(r, li);
        a0 = p + 1;
        a1 = e - 1;
    } else {
        if (!ingest_ft_lit(&p, e, "="))
            return ingest_ft_bad_fields(r, li);
        p = ingest_ft_skip_blanks(p, e);
        if (!ingest_ft_dec_i64(p, (size_t)(e - p), &ret))
            return ingest_ft_bad_fields(r, li);
    }
    ev->type = DB_EV_SYSCALL;
    ev->phase = enter ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = (uint64_t)nr;
    ev->val = ret;
    if (ingest_ft_attr_i64(r, "nr", nr) < 0 || syscall_name_attr(r, nr) < 0)
        return -1;
    if (enter)
        return ingest_ft_attr(r, "args", a0, (size_t)(a1 - a0));
    return ingest_ft_attr_i64(r, "ret", ret);
}

/* syscalls:sys_enter_<name> (`fd: 0x3, buf: ...`) / sys_exit_<name>
 * (`0x10`): the name is in the event name, the number from the table
 * (obj = UINT64_MAX when the table does not know the name). */
static int map_named_syscall(ftrace_reader *r, const ftrace_line *li, db_event *ev, bool enter)
{
    const char *name = li->name + (enter ? 10 : 9);
    uint32_t nr;
    bool known = ingest_ft_syscall_nr(r, name, &nr);
    ev->type = DB_EV_SYSCALL;
    ev->phase = enter ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = known ? nr : UINT64_MAX;
    if (known && ingest_ft_attr_u64(r, "nr", nr) < 0)
        return -1;
    if (ingest_ft_attr(r, "name", name, strlen(name)) < 0)
        return -1;
    if (enter)
        return ingest_ft_attr(r, "args", li->fields, li->fields_len);
    uint64_t v;
    int64_t sv;
    if (ingest_ft_hex_u64(li->fields, li->fields_len, &v))
        ev->val = (int64_t)v; /* the kernel's long, two's complement */
    else if (ingest_ft_dec_i64(li->fields, li->fields_len, &sv))
        ev->val = sv;
    else
        return ingest_ft_bad_fields(r, li);
    return ingest_ft_attr_i64(r, "ret", ev->val);
}

/* ---- interrupts and timers ---- */

/* irq_handler_entry/exit `irq=36 name=..` / `irq=36 ret=handled`;
 * softirq_entry/exit `vec=9 [action=RCU]`: interrupt begin/end, obj = the
 * irq or vector (isolated from the thread by the graph pass). */
static int map_irq(ftrace_reader *r, const ftrace_line *li, db_event *ev, bool begin, bool soft)
{
    uint32_t n;
    ingest_ft_parse_kv(r, li->fields);
    if (!ingest_ft_kv_u32(r, soft ? "vec" : "irq", &n))
        return ingest_ft_bad_fields(r, li);
    ev->type = DB_EV_INTERRUPT;
    ev->phase = begin ? DB_PH_BEGIN : DB_PH_END;
    ev->obj = n;
    if (soft && ingest_ft_attr(r, "softirq", "1", 1) < 0)
        return -1;
    return ingest_ft_attr_pairs(r);
}

/* hrtimer_start -> timer_arm (deadline = expires), hrtimer_cancel ->
 * timer_cancel, hrtimer_expire_entry/exit -> timer_callout begin/end;
 * obj = the hrtimer address. */
static int map_hrtimer(ftrace_reader *r, const ftrace_line *li, db_event *ev, ftrace_ev_kind k)
{
    uint64_t addr;
    ingest_ft_parse_kv(r, li->fields);
    if (!ingest_ft_kv_hex(r, "hrtimer", &addr))
        return ingest_ft_bad_fields(r, li);
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
    return ingest_ft_attr_pairs(r);
}

/* ---- workqueues ---- */

/* `work struct=ADDR ...` (queue), `work struct ADDR ...` (activate),
 * `work struct ADDR: function F` (execute_start/end); rest is what follows
 * the address. */
static bool parse_work(const ftrace_line *li, uint64_t *addr, const char **rest)
{
    const char *p = li->fields, *e = li->fields + li->fields_len;
    if (!ingest_ft_lit(&p, e, "work struct") || p == e || (*p != ' ' && *p != '='))
        return false;
    p++;
    const char *a = p;
    while (p < e && !ingest_ft_blank(*p) && *p != ':')
        p++;
    if (!ingest_ft_hex_u64(a, (size_t)(p - a), addr))
        return false;
    if (p < e && *p == ':')
        p++;
    *rest = ingest_ft_skip_blanks(p, e);
    return true;
}

/* The `function F` / `function=F` after the work address. */
static int attr_work_func(ftrace_reader *r, const char *p, const char *e)
{
    if (!ingest_ft_lit(&p, e, "function") || p == e || (*p != ' ' && *p != '='))
        return 0;
    p = ingest_ft_skip_blanks(p + 1, e);
    return ingest_ft_attr_func(r, p, (size_t)(ingest_ft_word_end(p, e) - p));
}

/* workqueue_queue_work -> dispatch_enqueue, execute_start/end ->
 * dispatch_invoke begin/end, block = the work struct; activate_work is
 * kept raw (with block and func).  obj = the work address. */
static int map_work(ftrace_reader *r, const ftrace_line *li, db_event *ev, ftrace_ev_kind k)
{
    uint64_t addr;
    const char *rest, *e = li->fields + li->fields_len;
    if (!parse_work(li, &addr, &rest))
        return ingest_ft_bad_fields(r, li);
    ev->obj = addr;
    if (ingest_ft_attr_hex(r, "block", addr) < 0)
        return -1;
    if (k == FTRACE_EV_WQ_QUEUE) {
        ev->type = DB_EV_DISPATCH_ENQUEUE;
        ingest_ft_parse_kv(r, rest);
        const ftrace_kv *fn = ingest_ft_kv_get(r, "function");
        if ((fn && ingest_ft_attr_func(r, fn->val, fn->vlen) < 0) || ingest_ft_attr_kv(r, "queue", "workqueue") < 0)
            return -1;
        if (r->nkv >= 0)
            return ingest_ft_attr_pairs(r);
        return ingest_ft_attr(r, "raw", li->fields, li->fields_len);
    }
    if (k != FTRACE_EV_WQ_ACTIVATE) {
        ev->type = DB_EV_DISPATCH_INVOKE;
        ev->phase = k == FTRACE_EV_WQ_START ? DB_PH_BEGIN : DB_PH_END;
    }
    if (attr_work_func(r, rest, e) < 0)
        return -1;
    return ingest_ft_attr(r, "raw", li->fields, li->fields_len);
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

/* tracing_mark_write / print.  trace-cmd prints the print event as
 * `tracing_mark_write: TEXT`.  `argus: TYPE [WORD ...] [KEY=VALUE ...]`
 * is the Argus event it spells (spec, last row of the ftrace mapping),
 * validated and mapped by the Argus reader's own code (argus_event.c), on
 * the line's task, CPU, context and timestamp; a malformed one is an
 * error.  Any other text is kept raw with buf= the text. */
static int map_marker(ftrace_reader *r, const ftrace_line *li, db_event *ev)
{
    const char *p = li->fields, *e = li->fields + li->fields_len;
    if (strcmp(li->name, "print") == 0 && ingest_ft_lit(&p, e, "tracing_mark_write:"))
        p = ingest_ft_skip_blanks(p, e);
    const char *rest;
    size_t rest_len;
    if (!marker_argus(p, (size_t)(e - p), &rest, &rest_len)) {
        ev->type = DB_EV_RAW;
        return ingest_ft_attr(r, "buf", p, (size_t)(e - p));
    }
    /* the fields lie in the reader's own line: end the text there */
    ((char *)rest)[rest_len] = '\0';
    argus_attrs at = {&r->ab, &r->alen, &r->acap};
    char msg[400];
    if (ingest_argus_event(rest, &at, ev, msg, sizeof msg) < 0)
        return ingest_ft_fail(r, "argus marker: %s", msg);
    return 0;
}

/* ---- dispatch ---- */

int ingest_ft_map(ftrace_reader *r, ftrace_line *li, db_event *ev)
{
    ftrace_ev_kind k = ingest_ftrace_lex_event(li->name);
    switch (k) {
    case FTRACE_EV_SYS_ENTER:
        return map_raw_syscall(r, li, ev, true);
    case FTRACE_EV_SYS_EXIT:
        return map_raw_syscall(r, li, ev, false);
    case FTRACE_EV_SYSCALLS_ENTER:
        return map_named_syscall(r, li, ev, true);
    case FTRACE_EV_SYSCALLS_EXIT:
        return map_named_syscall(r, li, ev, false);
    case FTRACE_EV_SCHED_SWITCH:
        return ingest_ft_map_switch(r, li, ev);
    case FTRACE_EV_SCHED_WAKEUP:
        return ingest_ft_map_wakeup(r, li, ev, "wakeup");
    case FTRACE_EV_SCHED_WAKEUP_NEW:
        return ingest_ft_map_wakeup(r, li, ev, "wakeup_new");
    case FTRACE_EV_SCHED_WAKING:
        return ingest_ft_map_wakeup(r, li, ev, NULL);
    case FTRACE_EV_PROCESS_FORK:
        return ingest_ft_map_fork(r, li, ev);
    case FTRACE_EV_TASK_NEWTASK:
        return ingest_ft_map_newtask(r, li, ev);
    case FTRACE_EV_PROCESS_EXEC:
        return ingest_ft_map_exec(r, li);
    case FTRACE_EV_TASK_RENAME:
        return ingest_ft_map_rename(r, li);
    case FTRACE_EV_IRQ_ENTRY:
    case FTRACE_EV_IRQ_EXIT:
        return map_irq(r, li, ev, k == FTRACE_EV_IRQ_ENTRY, false);
    case FTRACE_EV_SOFTIRQ_ENTRY:
    case FTRACE_EV_SOFTIRQ_EXIT:
        return map_irq(r, li, ev, k == FTRACE_EV_SOFTIRQ_ENTRY, true);
    case FTRACE_EV_HRTIMER_START:
    case FTRACE_EV_HRTIMER_CANCEL:
    case FTRACE_EV_HRTIMER_EXPIRE_ENTRY:
    case FTRACE_EV_HRTIMER_EXPIRE_EXIT:
        return map_hrtimer(r, li, ev, k);
    case FTRACE_EV_WQ_QUEUE:
    case FTRACE_EV_WQ_ACTIVATE:
    case FTRACE_EV_WQ_START:
    case FTRACE_EV_WQ_END:
        return map_work(r, li, ev, k);
    case FTRACE_EV_MARKER:
        return map_marker(r, li, ev);
    case FTRACE_EV_PROCESS_EXIT: /* raw; the thread stays in the table */
    case FTRACE_EV_OTHER:
        break;
    }
    /* everything else: raw, with its pairs or its text */
    ingest_ft_parse_kv(r, li->fields);
    return ingest_ft_attr_rest(r, li);
}
