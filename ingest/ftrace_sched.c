/* ingest/ftrace_sched.c -- the scheduler and process events: sched_switch,
 * sched_wakeup(_new), sched_waking, and the events that declare or rename
 * threads and processes (task_newtask, sched_process_fork,
 * sched_process_exec, task_rename; requirement 6 of the reader). */
#include <string.h>

#include "ftrace.h"

/* clone(2): the new task shares the creator's thread group */
#define CLONE_THREAD_FLAG 0x10000ull
/* TASK_COMM_LEN - 1: exec sets comm to the basename cut to 15 chars */
#define COMM_MAX 15

static int full_comm_kv(ftrace_reader *r, const char *pid_key, const char *comm_key)
{
    uint32_t tid;
    const ftrace_kv *c = ingest_ft_kv_get(r, comm_key);
    if (!c || !ingest_ft_kv_u32(r, pid_key, &tid))
        return 0;
    return ingest_ft_full_comm(r, tid, c->val, c->vlen);
}

/* ---- scheduler ---- */

/* trace-cmd's `comm:pid [prio]`: comm may hold ':' and blanks, so find the
 * first ':' that is followed by digits, a blank and `[digits]`. */
typedef struct cpp {
    const char *comm, *prio, *end; /* end: just after ']' */
    size_t comm_len, prio_len;
    uint32_t pid;
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
        while (b1 < e && *b1 >= '0' && *b1 <= '9')
            b1++;
        if (b1 == b || b1 >= e || *b1 != ']' || !ingest_ft_dec_u32(d, (size_t)(q - d), &out->pid))
            continue;
        out->comm = s;
        out->comm_len = (size_t)(c - s);
        out->prio = b;
        out->prio_len = (size_t)(b1 - b);
        out->end = b1 + 1;
        return true;
    }
    return false;
}

/* libtraceevent's sched_switch plugin names the prev_state bits with an
 * old table, "SDTtZXxW", while the kernel (4.14+) prints "SDTtXZPI" for
 * the same bits (tracefs shows rcu_preempt as I where trace-cmd shows W,
 * and exiting leaders as Z where trace-cmd shows X).  Translate so state=
 * is the kernel's letter in all forms. */
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

/* sched_switch: prev_state other than R / R+ is a wait of prev (the
 * line's task) with reason S sleep, D io, I idle, else the state text;
 * otherwise a preemption, kept raw.  obj = next_pid either way. */
int ingest_ft_map_switch(ftrace_reader *r, const ftrace_line *li, db_event *ev)
{
    char state[32];
    size_t sl;
    uint32_t next_pid;
    const char *ncomm;
    size_t ncomm_len;
    cpp prev, next;
    bool kv_form = false;

    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *st = ingest_ft_kv_get(r, "prev_state");
    const ftrace_kv *nc = ingest_ft_kv_get(r, "next_comm");
    if (st && nc && ingest_ft_kv_u32(r, "next_pid", &next_pid)) {
        kv_form = true;
        sl = st->vlen < sizeof state ? st->vlen : sizeof state - 1;
        memcpy(state, st->val, sl);
        ncomm = nc->val;
        ncomm_len = nc->vlen;
    } else {
        /* PREV:PID [PRIO] STATE ==> NEXT:PID [PRIO] */
        const char *e = li->fields + li->fields_len;
        if (!parse_cpp(li->fields, e, &prev))
            return ingest_ft_bad_fields(r, li);
        const char *s0 = ingest_ft_skip_blanks(prev.end, e), *s1 = ingest_ft_word_end(s0, e);
        const char *p = ingest_ft_skip_blanks(s1, e);
        if (s0 == s1 || !ingest_ft_lit(&p, e, "==>"))
            return ingest_ft_bad_fields(r, li);
        p = ingest_ft_skip_blanks(p, e);
        if (!parse_cpp(p, e, &next) || ingest_ft_skip_blanks(next.end, e) != e)
            return ingest_ft_bad_fields(r, li);
        sl = (size_t)(s1 - s0) < sizeof state ? (size_t)(s1 - s0) : sizeof state - 1;
        for (size_t i = 0; i < sl; i++)
            state[i] = kernel_state_letter(s0[i]);
        next_pid = next.pid;
        ncomm = next.comm;
        ncomm_len = next.comm_len;
        r->nkv = -1;
    }
    state[sl] = '\0';
    if (ingest_ft_full_comm(r, next_pid, ncomm, ncomm_len) < 0 ||
        (kv_form ? full_comm_kv(r, "prev_pid", "prev_comm")
                 : ingest_ft_full_comm(r, prev.pid, prev.comm, prev.comm_len)) < 0)
        return -1;

    bool runnable = strcmp(state, "R") == 0 || strcmp(state, "R+") == 0;
    ev->obj = next_pid;
    if (!runnable) {
        const char *reason = state;
        if (strcmp(state, "S") == 0)
            reason = "sleep";
        else if (strcmp(state, "D") == 0)
            reason = "io";
        else if (strcmp(state, "I") == 0)
            reason = "idle";
        ev->type = DB_EV_WAIT;
        if (ingest_ft_attr(r, "reason", reason, strlen(reason)) < 0)
            return -1;
    }
    if (ingest_ft_attr(r, "state", state, sl) < 0 || ingest_ft_attr_u64(r, "next_pid", next_pid) < 0 ||
        ingest_ft_attr(r, "next_comm", ncomm, ncomm_len) < 0)
        return -1;
    if (kv_form)
        return ingest_ft_attr_pairs(r);
    if (ingest_ft_attr(r, "raw", li->fields, li->fields_len) < 0 ||
        ingest_ft_attr(r, "prev_comm", prev.comm, prev.comm_len) < 0 ||
        ingest_ft_attr_u64(r, "prev_pid", prev.pid) < 0 ||
        ingest_ft_attr(r, "prev_prio", prev.prio, prev.prio_len) < 0 ||
        ingest_ft_attr(r, "next_prio", next.prio, next.prio_len) < 0)
        return -1;
    return 0;
}

/* sched_wakeup / sched_wakeup_new: a wakeup of the target by the line's
 * task (or the interrupt it runs in), obj = target tid.  sched_waking is
 * the same text but kept raw (the wakeup proper follows it). */
int ingest_ft_map_wakeup(ftrace_reader *r, const ftrace_line *li, db_event *ev, const char *reason)
{
    uint32_t tid;
    const char *comm;
    size_t comm_len;
    cpp c;
    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *kc = ingest_ft_kv_get(r, "comm");
    if (kc && ingest_ft_kv_u32(r, "pid", &tid)) {
        comm = kc->val;
        comm_len = kc->vlen;
    } else {
        /* COMM:PID [PRIO] [success=1] CPU:NNN */
        if (!parse_cpp(li->fields, li->fields + li->fields_len, &c))
            return ingest_ft_bad_fields(r, li);
        tid = c.pid;
        comm = c.comm;
        comm_len = c.comm_len;
        r->nkv = -1;
    }
    if (ingest_ft_full_comm(r, tid, comm, comm_len) < 0)
        return -1;
    if (reason) {
        ev->type = DB_EV_WAKEUP;
        ev->obj = tid;
    }
    if (ingest_ft_attr_u64(r, "tid", tid) < 0 || ingest_ft_attr(r, "comm", comm, comm_len) < 0)
        return -1;
    if (reason && ingest_ft_attr(r, "reason", reason, strlen(reason)) < 0)
        return -1;
    if (r->nkv >= 0)
        return ingest_ft_attr_pairs(r);
    if (ingest_ft_attr(r, "raw", li->fields, li->fields_len) < 0 ||
        ingest_ft_attr(r, "prio", c.prio, c.prio_len) < 0)
        return -1;
    const char *e = li->fields + li->fields_len, *cpu = c.end;
    for (; cpu + 4 <= e; cpu++)
        if (memcmp(cpu, "CPU:", 4) == 0)
            return ingest_ft_attr(r, "target_cpu", cpu + 4, (size_t)(ingest_ft_word_end(cpu, e) - cpu - 4));
    return 0;
}

/* ---- processes: the declaration side effects (requirement 6) ---- */

/* task_newtask `pid=4123 comm=ui-main clone_flags=3d0f00`: the child is a
 * thread of the creator's process if CLONE_THREAD is set, else a process
 * of its own.  Kept raw. */
int ingest_ft_map_newtask(ftrace_reader *r, const ftrace_line *li, const db_event *ev)
{
    uint32_t child;
    uint64_t flags;
    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *comm = ingest_ft_kv_get(r, "comm");
    if (!comm || !ingest_ft_kv_u32(r, "pid", &child) || !ingest_ft_kv_hex(r, "clone_flags", &flags))
        return ingest_ft_bad_fields(r, li);
    uint32_t pid = (flags & CLONE_THREAD_FLAG) ? ev->pid : child;
    if (ingest_ft_set_thread(r, child, pid, comm->val, comm->vlen, true) < 0)
        return -1;
    r->last_child = child;
    r->have_last_child = true;
    return ingest_ft_attr_pairs(r);
}

/* sched_process_fork `comm=bash pid=4120 child_comm=bash child_pid=4122`:
 * the wakeup of the child's first run.  The child was declared by the
 * task_newtask just before it, when that event is traced; else it is
 * declared here as a process of its own (fork cannot tell a thread). */
int ingest_ft_map_fork(ftrace_reader *r, const ftrace_line *li, db_event *ev)
{
    uint32_t child;
    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *cc = ingest_ft_kv_get(r, "child_comm");
    if (!cc || !ingest_ft_kv_u32(r, "child_pid", &child))
        return ingest_ft_bad_fields(r, li);
    if (!(r->have_last_child && r->last_child == child) &&
        ingest_ft_set_thread(r, child, child, cc->val, cc->vlen, true) < 0)
        return -1;
    r->have_last_child = false;
    ev->type = DB_EV_WAKEUP;
    ev->obj = child;
    if (ingest_ft_attr_u64(r, "tid", child) < 0 || ingest_ft_attr(r, "reason", "fork", 4) < 0)
        return -1;
    return ingest_ft_attr_pairs(r);
}

/* sched_process_exec `filename=/x/lockchain pid=4122 old_pid=4122`: the
 * process (and its leader, as the kernel does) is renamed to the basename
 * cut to 15 characters.  Kept raw. */
int ingest_ft_map_exec(ftrace_reader *r, const ftrace_line *li)
{
    uint32_t tid, pid;
    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *fn = ingest_ft_kv_get(r, "filename");
    if (!fn || !ingest_ft_kv_u32(r, "pid", &tid))
        return ingest_ft_bad_fields(r, li);
    const char *base = fn->val + fn->vlen;
    while (base > fn->val && base[-1] != '/')
        base--;
    size_t bl = (size_t)(fn->val + fn->vlen - base);
    if (bl > COMM_MAX)
        bl = COMM_MAX;
    if (bl > 0) {
        if (!ingest_ft_pid_of(r, tid, &pid))
            pid = tid;
        if (ingest_ft_set_thread(r, tid, pid, base, bl, false) < 0 ||
            ingest_ft_rename_proc(r, pid, base, bl) < 0)
            return -1;
    }
    return ingest_ft_attr_pairs(r);
}

/* task_rename `pid=4122 oldcomm=bash newcomm=lockchain`: the thread is
 * renamed; a leader's rename renames its process.  Kept raw. */
int ingest_ft_map_rename(ftrace_reader *r, const ftrace_line *li)
{
    uint32_t tid, pid;
    ingest_ft_parse_kv(r, li->fields);
    const ftrace_kv *nc = ingest_ft_kv_get(r, "newcomm");
    if (!nc || !ingest_ft_kv_u32(r, "pid", &tid))
        return ingest_ft_bad_fields(r, li);
    if (!ingest_ft_pid_of(r, tid, &pid))
        pid = tid;
    if (ingest_ft_set_thread(r, tid, pid, nc->val, nc->vlen, false) < 0)
        return -1;
    return ingest_ft_attr_pairs(r);
}
