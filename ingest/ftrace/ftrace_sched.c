/* ingest/ftrace/ftrace_sched.c -- the scheduler and process events: sched_switch,
 * sched_wakeup(_new), sched_waking, and the events that declare or rename
 * threads and processes (task_newtask, sched_process_fork,
 * sched_process_exec, task_rename; requirement 6 of the reader). */
#include <string.h>

#include "ftrace_int.h"

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

/* `trace-cmd report -R` prints prev_state as the kernel's number, whose
 * bits moved in Linux 4.14 (TASK_REPORT); text says no kernel version, so
 * the table is told from the value:
 *   4.14+:  S D T t X Z P I = 0x01 .. 0x80, 0x100 (TASK_REPORT_MAX) preempted
 *   before: S D T t Z X x K W P N n = 1 .. 2048, and TASK_STATE_MAX (1024,
 *           2048 or 4096 by version) alone or added: preempted
 * A value under 0x100 is read with the new table unless it pairs K (128)
 * with another state (130 = D|K, killable); 0x100 alone is the new
 * table's preemption (the old W, waking, is never a switched-out state);
 * anything larger is the old table.  0 is R.  Writes the letters as the
 * kernel would print them ("D|K", "R+"). */
static void state_from_number(uint64_t v, char *out, size_t cap)
{
    static const char *const newt[] = {"S", "D", "T", "t", "X", "Z", "P", "I"};
    static const char *const oldt[] = {"S", "D", "T", "t", "Z", "X", "x", "K", "W", "P", "N", "n"};
    bool old = v > 0x100 || ((v & 0x80) && (v & 0x7f));
    uint64_t preempt = 0;
    if (!old)
        preempt = v & 0x100;
    else { /* the highest bit, from 1024 up -- but D|N (1026) is TASK_IDLE */
        uint64_t top = 1024;
        while (top <= v / 2)
            top <<= 1;
        if (v >= 1024 && !(top == 1024 && (v & 2)))
            preempt = top;
    }
    uint64_t bits = v & ~preempt;
    size_t n = 0;
    out[0] = '\0';
    const char *const *t = old ? oldt : newt;
    size_t nt = old ? sizeof oldt / sizeof *oldt : sizeof newt / sizeof *newt;
    /* appended by hand (every letter is one byte, and n + 3 < cap leaves
     * room for "|X" and the NUL): snprintf here showed in a Perfetto
     * ingest's reading thread (docs/PERFORMANCE.md) */
    for (size_t i = 0; i < nt && n + 3 < cap; i++)
        if (bits & ((uint64_t)1 << i)) {
            if (n)
                out[n++] = '|';
            out[n++] = t[i][0];
        }
    if (n == 0)
        out[n++] = 'R';
    if (preempt && n + 2 < cap)
        out[n++] = '+';
    out[n] = '\0';
}

/* A switch's state (kernel letters) as its attributes (reason=,
 * state=) at out (room for sizeof ftrace_state_memo.attrs: a state of
 * at most 31 letters) and whether it begins a wait: the part of the
 * mapping every switch of the state shares.  Returns the bytes put. */
static size_t state_attrs(const char *state, size_t sl, char *out, bool *wait)
{
    /* R, or any state with the preempted mark: still on the run queue */
    bool runnable = strcmp(state, "R") == 0 || (sl && state[sl - 1] == '+');
    const char *reason = NULL;
    if (!runnable) {
        /* the first state names the wait: D with K (killable) or N
         * (noload) is still uninterruptible, I/O-like */
        reason = state;
        if (state[0] == 'S' && (!state[1] || state[1] == '|'))
            reason = "sleep";
        else if (state[0] == 'D' && (!state[1] || state[1] == '|'))
            reason = "io";
        else if (strcmp(state, "I") == 0)
            reason = "idle";
    }
    char *p = out;
    if (reason)
        p = ingest_ft_put(p, FTRACE_LIT("reason"), reason, strlen(reason));
    p = ingest_ft_put(p, FTRACE_LIT("state"), state, sl);
    *wait = !runnable;
    return (size_t)(p - out);
}

/* Slot m made the memo of state number v. */
static const ftrace_state_memo *__attribute__((noinline)) state_memo_fill(ftrace_state_memo *m, uint64_t v)
{
    char state[32];
    state_from_number(v, state, sizeof state);
    m->num = v;
    m->len = (uint8_t)state_attrs(state, strlen(state), m->attrs, &m->wait);
    return m;
}

/* The memo of state number v (its attributes made on first use).  The
 * memo found is a leaf inline, its making a call: with the text's buffer
 * on the stack, the whole was a function called for every switch. */
static inline const ftrace_state_memo *state_memo(ftrace_reader *r, uint64_t v)
{
    ftrace_state_memo *m = &r->smemo[(v * 0x9e3779b97f4a7c15ull) >> 60];
    if (m->len && m->num == v)
        return m;
    return state_memo_fill(m, v);
}

/* A switch's state attributes (st, sl bytes, from state_attrs), the wait
 * it begins, and its next task's attributes: the part of the mapping the
 * pairs and the values share.  Always inlined into both: its call, eight
 * arguments, was a good part of a switch's mapping. */
static inline __attribute__((always_inline)) int switch_state(ftrace_reader *r, db_event *ev, const char *st,
                                                              size_t sl, bool wait, uint32_t next_pid, const char *nc,
                                                              size_t ncl)
{
    ev->obj = next_pid;
    if (wait)
        ev->type = DB_EV_WAIT;
    /* in place: reason, state, next_pid, next_comm */
    char *p = ingest_ft_attrs_room(r, sl + 10 + INGEST_FT_NUM_MAX + 11 + ncl);
    if (!p)
        return -1;
    memcpy(p, st, sl);
    p += sl;
    p = ingest_ft_put_u64(p, FTRACE_LIT("next_pid"), next_pid);
    p = ingest_ft_put(p, FTRACE_LIT("next_comm"), nc, ncl);
    ingest_ft_attrs_done(r, p);
    return 0;
}

/* A prio's text (base_fmt_i64's): up to three digits inline, the
 * kernel's prios (0 to 139; 120 nearly always) a switch's two and a
 * wakeup's one, without their calls of base_fmt_i64 and base_fmt_u64. */
static inline size_t fmt_prio(char *b, int64_t v)
{
    if ((uint64_t)v >= 1000)
        return base_fmt_i64(b, v);
    unsigned u = (unsigned)v;
    if (u >= 100) {
        unsigned lo = u % 100;
        b[0] = (char)('0' + u / 100);
        b[1] = (char)('0' + lo / 10);
        b[2] = (char)('0' + lo % 10);
        return 3;
    }
    if (u >= 10) {
        b[0] = (char)('0' + u / 10);
        b[1] = (char)('0' + u % 10);
        return 2;
    }
    b[0] = (char)('0' + u);
    return 1;
}

/* ingest_ft_map_switch from values (r->sw): what the pairs of the same
 * text give */
static int switch_vals(ftrace_reader *r, db_event *ev, const ftrace_switch_vals *v)
{
    const char *nc = v->next_comm;
    size_t ncl = v->next_comm_len != FTRACE_LEN_UNKNOWN ? v->next_comm_len : strlen(nc);
    size_t pcl = v->prev_comm_len != FTRACE_LEN_UNKNOWN ? v->prev_comm_len : strlen(v->prev_comm);
    if (v->next_pid < 0 || v->next_pid > UINT32_MAX) /* not a u32's digits */
        return FTRACE_BAD_FIELDS;
    uint32_t next_pid = (uint32_t)v->next_pid;
    const ftrace_state_memo *m = state_memo(r, v->prev_state);
    if (ingest_ft_full_comm(r, next_pid, nc, ncl) < 0 ||
        (v->prev_pid >= 0 && v->prev_pid <= UINT32_MAX &&
         ingest_ft_full_comm(r, (uint32_t)v->prev_pid, v->prev_comm, pcl) < 0))
        return -1;
    if (switch_state(r, ev, m->attrs, m->len, m->wait, next_pid, nc, ncl) < 0)
        return -1;
    char *p = ingest_ft_attrs_room(r, 11 + pcl + 4 * (16 + INGEST_FT_NUM_MAX));
    if (!p)
        return -1;
    p = ingest_ft_put(p, FTRACE_LIT("prev_comm"), v->prev_comm, pcl);
    p = ingest_ft_put_num(p, FTRACE_LIT("prev_pid"), base_fmt_i64, v->prev_pid);
    if (v->have_prev_prio)
        p = ingest_ft_put_num(p, FTRACE_LIT("prev_prio"), fmt_prio, v->prev_prio);
    p = ingest_ft_put_num(p, FTRACE_LIT("next_prio"), fmt_prio, v->next_prio);
    if (v->have_blocked)
        p = ingest_ft_put_hex(p, FTRACE_LIT("blocked_caller"), v->blocked);
    ingest_ft_attrs_done(r, p);
    return 0;
}

/* sched_switch: prev_state other than R / R+ is a wait of prev (the
 * event's task) with reason S sleep, D io, I idle, else the state text;
 * otherwise a preemption, kept raw (paper/000 1.b: a wait ends the node).
 * obj = next_pid either way. */
int ingest_ft_map_switch(ftrace_reader *r, db_event *ev)
{
    if (r->sw)
        return switch_vals(r, ev, r->sw);
    /* blocked_caller: where the wait blocked, from Perfetto's
     * sched_blocked_reason (perfetto.c); no text form has it */
    static const ftrace_key rest[] = {
        FTRACE_KEY("prev_comm"), FTRACE_KEY("prev_pid"), FTRACE_KEY("prev_prio"), FTRACE_KEY("next_prio"),
        FTRACE_KEY("blocked_caller"), {NULL, 0},
    };
    char state[32];
    uint32_t next_pid;
    const ftrace_kv *st = ingest_ft_kv_get(r, "prev_state");
    const ftrace_kv *nc = ingest_ft_kv_get(r, "next_comm");
    if (!st || !nc || !ingest_ft_kv_u32(r, "next_pid", &next_pid))
        return FTRACE_BAD_FIELDS;
    size_t sl = st->vlen < sizeof state ? st->vlen : sizeof state - 1;
    memcpy(state, st->val, sl);
    state[sl] = '\0';
    uint64_t num;
    ftrace_state_memo own;
    const ftrace_state_memo *m = &own;
    if (sl && state[0] >= '0' && state[0] <= '9' && ingest_dec_u64(state, sl, &num))
        m = state_memo(r, num);
    else
        own.len = (uint8_t)state_attrs(state, sl, own.attrs, &own.wait);
    if (ingest_ft_full_comm(r, next_pid, nc->val, nc->vlen) < 0 || full_comm_kv(r, "prev_pid", "prev_comm") < 0 ||
        switch_state(r, ev, m->attrs, m->len, m->wait, next_pid, nc->val, nc->vlen) < 0)
        return -1;
    return ingest_ft_attr_same(r, rest);
}

/* sched_wakeup / sched_wakeup_new: a wakeup of the target by the event's
 * task (or the interrupt it runs in), obj = target tid.  sched_waking is
 * the same pairs but kept raw (the wakeup proper follows it). */
int ingest_ft_map_wakeup(ftrace_reader *r, db_event *ev, const char *reason, size_t rl)
{
    static const ftrace_key rest[] = {FTRACE_KEY("prio"), FTRACE_KEY("target_cpu"), {NULL, 0}};
    const ftrace_wake_vals *v = r->wake; /* the values instead of the pairs */
    uint32_t tid;
    const char *comm;
    size_t cl;
    if (v) {
        if (v->pid < 0 || v->pid > UINT32_MAX) /* not a u32's digits */
            return FTRACE_BAD_FIELDS;
        tid = (uint32_t)v->pid;
        comm = v->comm;
        cl = v->comm_len != FTRACE_LEN_UNKNOWN ? v->comm_len : strlen(comm);
    } else {
        const ftrace_kv *c = ingest_ft_kv_get(r, "comm");
        if (!c || !ingest_ft_kv_u32(r, "pid", &tid))
            return FTRACE_BAD_FIELDS;
        comm = c->val;
        cl = c->vlen;
    }
    if (ingest_ft_full_comm(r, tid, comm, cl) < 0)
        return -1;
    if (reason) {
        ev->type = DB_EV_WAKEUP;
        ev->obj = tid;
    }
    /* in place: tid, comm, reason, and the values' prio and target_cpu */
    char *p = ingest_ft_attrs_room(r, 4 + INGEST_FT_NUM_MAX + 6 + cl + 8 + rl + 2 * (12 + INGEST_FT_NUM_MAX));
    if (!p)
        return -1;
    p = ingest_ft_put_u64(p, FTRACE_LIT("tid"), tid);
    p = ingest_ft_put(p, FTRACE_LIT("comm"), comm, cl);
    if (reason)
        p = ingest_ft_put(p, FTRACE_LIT("reason"), reason, rl);
    if (v) {
        p = ingest_ft_put_num(p, FTRACE_LIT("prio"), fmt_prio, v->prio);
        p = ingest_ft_put_num(p, FTRACE_LIT("target_cpu"), ingest_fmt_i64_03, v->target_cpu);
    }
    ingest_ft_attrs_done(r, p);
    return v ? 0 : ingest_ft_attr_same(r, rest);
}

/* ---- processes: the declaration side effects (requirement 6) ---- */

/* task_newtask `pid=4123 comm=ui-main clone_flags=3d0f00`: the child is a
 * thread of the creator's process if CLONE_THREAD is set, else a process
 * of its own.  Kept raw. */
int ingest_ft_map_newtask(ftrace_reader *r, const db_event *ev)
{
    static const ftrace_key keys[] = {
        FTRACE_KEY("pid"), FTRACE_KEY("comm"), FTRACE_KEY("clone_flags"), FTRACE_KEY("oom_score_adj"), {NULL, 0},
    };
    uint32_t child;
    uint64_t flags;
    const ftrace_kv *comm = ingest_ft_kv_get(r, "comm");
    if (!comm || !ingest_ft_kv_u32(r, "pid", &child) || !ingest_ft_kv_hex(r, "clone_flags", &flags))
        return FTRACE_BAD_FIELDS;
    uint32_t pid = (flags & CLONE_THREAD_FLAG) ? ev->pid : child;
    /* a task never creates itself: a line that says so (damaged) declares
     * nothing, and its own task keeps the process its line gave it */
    if (child != ev->tid && ingest_ft_set_thread(r, child, pid, comm->val, comm->vlen, true) < 0)
        return -1;
    r->last_child = child;
    r->have_last_child = true;
    return ingest_ft_attr_same(r, keys);
}

/* sched_process_fork `comm=bash pid=4120 child_comm=bash child_pid=4122`:
 * the wakeup of the child's first run.  The child was declared by the
 * task_newtask just before it, when that event is traced; else it is
 * declared here as a process of its own (fork cannot tell a thread). */
int ingest_ft_map_fork(ftrace_reader *r, db_event *ev)
{
    static const ftrace_key keys[] = {
        FTRACE_KEY("comm"), FTRACE_KEY("pid"), FTRACE_KEY("child_comm"), FTRACE_KEY("child_pid"), {NULL, 0},
    };
    uint32_t child;
    const ftrace_kv *cc = ingest_ft_kv_get(r, "child_comm");
    if (!cc || !ingest_ft_kv_u32(r, "child_pid", &child))
        return FTRACE_BAD_FIELDS;
    if (!(r->have_last_child && r->last_child == child) && child != ev->tid &&
        ingest_ft_set_thread(r, child, child, cc->val, cc->vlen, true) < 0)
        return -1;
    r->have_last_child = false;
    ev->type = DB_EV_WAKEUP;
    ev->obj = child;
    if (ingest_ft_attr_u64(r, "tid", child) < 0 || ingest_ft_attr(r, "reason", "fork", 4) < 0)
        return -1;
    return ingest_ft_attr_same(r, keys);
}

/* sched_process_exec `filename=/x/lockchain pid=4122 old_pid=4122`: the
 * process (and its leader, as the kernel does) is renamed to the basename
 * cut to 15 characters.  Kept raw. */
int ingest_ft_map_exec(ftrace_reader *r)
{
    static const ftrace_key keys[] = {FTRACE_KEY("filename"), FTRACE_KEY("pid"), FTRACE_KEY("old_pid"), {NULL, 0}};
    uint32_t tid, pid;
    const ftrace_kv *fn = ingest_ft_kv_get(r, "filename");
    if (!fn || !ingest_ft_kv_u32(r, "pid", &tid))
        return FTRACE_BAD_FIELDS;
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
    return ingest_ft_attr_same(r, keys);
}

/* task_rename `pid=4122 oldcomm=bash newcomm=lockchain`: the thread is
 * renamed; a leader's rename renames its process.  Kept raw. */
int ingest_ft_map_rename(ftrace_reader *r)
{
    static const ftrace_key keys[] = {
        FTRACE_KEY("pid"), FTRACE_KEY("oldcomm"), FTRACE_KEY("newcomm"), FTRACE_KEY("oom_score_adj"), {NULL, 0},
    };
    uint32_t tid, pid;
    const ftrace_kv *nc = ingest_ft_kv_get(r, "newcomm");
    if (!nc || !ingest_ft_kv_u32(r, "pid", &tid))
        return FTRACE_BAD_FIELDS;
    if (!ingest_ft_pid_of(r, tid, &pid))
        pid = tid;
    if (ingest_ft_set_thread(r, tid, pid, nc->val, nc->vlen, false) < 0)
        return -1;
    return ingest_ft_attr_same(r, keys);
}
