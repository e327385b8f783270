/* ingest/perfetto/perfetto_map.c -- one Perfetto ftrace event (full FtraceEvent,
 * or a compact_sched switch or waking) as the canonical pairs of the
 * ftrace mapping (ingest/ftrace/ftrace_map_int.h): the keys the kernel's own print format uses,
 * numbers as the kernel prints them, so ingest_ft_event gives the db event
 * a tracefs line or a trace.dat record of the same event gives.  Events
 * whose message the schema subset (perfetto.proto) does not hold are kept
 * raw, with the fields perfetto_other.c reads from their bytes. */
#include <stdio.h>
#include <string.h>

#include "perfetto_int.h"

/* ---- pair values ----
 * inline, so a literal key's strlen folds away (its calls showed in the
 * reading thread: docs/PERFORMANCE.md) */

static inline void kv_s(pf_reader *d, const char *key, const char *s)
{
    if (!s)
        s = "";
    ingest_ft_kv_add(&d->fr, key, s, strlen(s));
}

static inline char *vroom(pf_reader *d)
{
    /* every event has at most a dozen numbers of at most 24 bytes */
    if (d->vlen + 64 > sizeof d->vbuf)
        d->vlen = 0;
    return d->vbuf + d->vlen;
}

static inline void kv_u(pf_reader *d, const char *key, uint64_t v)
{
    char *p = vroom(d);
    size_t n = base_fmt_u64(p, v);
    d->vlen += n;
    ingest_ft_kv_add(&d->fr, key, p, n);
}

static inline void kv_i(pf_reader *d, const char *key, int64_t v)
{
    char *p = vroom(d);
    size_t n = base_fmt_i64(p, v);
    d->vlen += n;
    ingest_ft_kv_add(&d->fr, key, p, n);
}

/* cpu_idle's and cpu_frequency's state=: its text kept from the last
 * event of the kind when the number is the same, as it always is for an
 * idle exit (4294967295, PWR_EVENT_EXIT, whose ten digits base_fmt_u64
 * would print again at every exit).  A short number is printed: that
 * costs less than the test.  Always inlined, as own_wake (gcc made each a
 * call once the held forms came). */
static inline __attribute__((always_inline)) void kv_state(pf_reader *d, int kind, uint64_t v)
{
    if (v < 10000) {
        kv_u(d, "state", v);
        return;
    }
    if (d->state_memo[kind].len == 0 || d->state_memo[kind].v != v) {
        d->state_memo[kind].v = v;
        d->state_memo[kind].len = (uint8_t)base_fmt_u64(d->state_memo[kind].s, v);
    }
    ingest_ft_kv_add(&d->fr, "state", d->state_memo[kind].s, d->state_memo[kind].len);
}

/* %llx, no 0x (task_newtask's clone_flags) */
static void kv_xbare(pf_reader *d, const char *key, uint64_t v)
{
    char *p = vroom(d);
    size_t n = base_fmt_hex(p, v, 1);
    d->vlen += n;
    ingest_ft_kv_add(&d->fr, key, p, n);
}


static void kv_hex(pf_reader *d, const char *key, uint64_t v)
{
    char *p = vroom(d);
    p[0] = '0';
    p[1] = 'x';
    size_t n = 2 + base_fmt_hex(p + 2, v, 1);
    d->vlen += n;
    ingest_ft_kv_add(&d->fr, key, p, n);
}

/* the kernel's dev_t: MAJ,MIN as the block events print it */
static void kv_dev(pf_reader *d, uint64_t dev)
{
    char *p = vroom(d);
    int n = snprintf(p, 48, "%llu,%llu", (unsigned long long)(dev >> 20), (unsigned long long)(dev & 0xfffff));
    d->vlen += (size_t)n;
    ingest_ft_kv_add(&d->fr, "dev", p, (size_t)n);
}

/* s[0, n) without its line ends (a print's buf) */
static void kv_strip(pf_reader *d, const char *key, const char *s, size_t n)
{
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    ingest_ft_kv_add(&d->fr, key, s, n);
}

/* sched_blocked_reason: the kernel function a D-state wait blocked in
 * (Android's own tracepoint), kept raw with its pairs, caller= the
 * address */
static void blocked_pairs(pf_reader *d, int64_t pid, uint64_t io_wait, uint64_t caller)
{
    kv_i(d, "pid", pid);
    kv_u(d, "iowait", io_wait);
    kv_hex(d, "caller", caller);
}

/* softirq_entry/exit print the vector's name as action= */
static const char *softirq_name(uint32_t vec)
{
    return vec < INGEST_FT_NSOFTIRQ ? ingest_ft_softirq_names[vec] : "?";
}

/* A switch's and a wakeup's fields go to the mapping as values
 * (ftrace_switch_vals), not as pairs: the commonest events' numbers are
 * not printed here to be looked up and parsed there.  The comms come
 * with their lengths as measured (0: NULL or ""), or FTRACE_LEN_UNKNOWN
 * (not measured: not NULL, and a prev_comm not "").  Set field by field:
 * a compound literal of the struct was built whole and copied. */
static void switch_pairs(pf_reader *d, const char *prev_comm, size_t pcl, int64_t prev_pid, bool have_prio,
                         int64_t prev_prio, int64_t prev_state, const char *next_comm, size_t ncl, int64_t next_pid,
                         int64_t next_prio)
{
    ftrace_switch_vals *v = &d->sw;
    v->prev_comm = pcl ? prev_comm : "<...>";
    v->prev_comm_len = pcl ? pcl : 5;
    v->next_comm = ncl ? next_comm : "";
    v->next_comm_len = ncl;
    v->prev_pid = prev_pid;
    v->prev_prio = prev_prio;
    v->next_pid = next_pid;
    v->next_prio = next_prio;
    v->have_prev_prio = have_prio;
    /* the kernel's number: the mapping reads it with its table (R+ ...) */
    v->prev_state = (uint64_t)prev_state;
    v->have_blocked = false;
    v->blocked = 0;
    d->fr.sw = v;
}

static void wake_pairs(pf_reader *d, const char *comm, size_t cl, int64_t pid, int64_t prio, int64_t target_cpu)
{
    d->wake = (ftrace_wake_vals){
        .comm = cl ? comm : "", .comm_len = cl, .pid = pid, .prio = prio, .target_cpu = target_cpu};
    d->fr.wake = &d->wake;
}

/* An event's name and its length.  Named by a literal (inline, so its
 * strlen folds away, not measured at each event). */
typedef struct pf_name {
    const char *s;
    size_t n;
} pf_name;

static inline void named(pf_name *nm, const char *lit)
{
    nm->s = lit;
    nm->n = strlen(lit);
}

/* binder_transaction's fields as values (ftrace_binder_vals), as a
 * switch's; binder_transaction_received's: its debug_id alone */
static void binder_pairs(pf_reader *d, ftrace_ev_kind *k, pf_name *nm, bool received, int32_t debug_id,
                         int32_t target_node, int32_t to_proc, int32_t to_thread, int32_t reply, uint32_t flags,
                         uint32_t code)
{
    if (received) {
        named(nm, "binder_transaction_received");
        *k = FTRACE_EV_BINDER_RECV;
        d->txn = (ftrace_binder_vals){.transaction = debug_id};
    } else {
        named(nm, "binder_transaction");
        *k = FTRACE_EV_BINDER_TXN;
        d->txn = (ftrace_binder_vals){
            .transaction = debug_id,
            .dest_node = target_node,
            .dest_proc = to_proc,
            .dest_thread = to_thread,
            .reply = reply,
            .flags = flags,
            .code = code,
        };
    }
    d->fr.txn = &d->txn;
}

/* The pairs of a full event; *k and *nm say which.  False: an event
 * the schema subset does not hold. */
static bool full_pairs(pf_reader *d, const pf_item *it, ftrace_ev_kind *k, pf_name *nm)
{
    const ArgusqPf__FtraceEvent *e = it->ev;
    switch (e->event_case) {
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_PRINT:
        named(nm, "print");
        *k = FTRACE_EV_MARKER;
        kv_strip(d, "buf", e->print->buf ? e->print->buf : "", e->print->buf ? strlen(e->print->buf) : 0);
        return true;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH: {
        const ArgusqPf__SchedSwitchFtraceEvent *s = e->sched_switch;
        named(nm, "sched_switch");
        *k = FTRACE_EV_SCHED_SWITCH;
        switch_pairs(d, s->prev_comm, it->clen[0], s->prev_pid, s->has_prev_prio, s->prev_prio, s->prev_state,
                     s->next_comm, it->clen[1], s->next_pid, s->next_prio);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_IDLE:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_FREQUENCY: {
        /* the two messages have the same fields; kept raw, as their text is */
        bool idle = e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_IDLE;
        const ArgusqPf__CpuIdleFtraceEvent *s =
            idle ? e->cpu_idle : (const ArgusqPf__CpuIdleFtraceEvent *)e->cpu_frequency;
        if (idle)
            named(nm, "cpu_idle");
        else
            named(nm, "cpu_frequency");
        kv_state(d, idle ? 0 : 1, s->state);
        kv_u(d, "cpu_id", s->cpu_id);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP: {
        const ArgusqPf__SchedWakeupFtraceEvent *s = e->sched_wakeup;
        named(nm, "sched_wakeup");
        *k = FTRACE_EV_SCHED_WAKEUP;
        wake_pairs(d, s->comm, it->clen[1], s->pid, s->prio, s->target_cpu);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW: {
        const ArgusqPf__SchedWakeupNewFtraceEvent *s = e->sched_wakeup_new;
        named(nm, "sched_wakeup_new");
        *k = FTRACE_EV_SCHED_WAKEUP_NEW;
        wake_pairs(d, s->comm, s->comm ? strlen(s->comm) : 0, s->pid, s->prio, s->target_cpu);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKING: {
        const ArgusqPf__SchedWakingFtraceEvent *s = e->sched_waking;
        named(nm, "sched_waking");
        *k = FTRACE_EV_SCHED_WAKING;
        wake_pairs(d, s->comm, it->clen[1], s->pid, s->prio, s->target_cpu);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON: {
        const ArgusqPf__SchedBlockedReasonFtraceEvent *s = e->sched_blocked_reason;
        named(nm, "sched_blocked_reason");
        blocked_pairs(d, s->pid, s->io_wait, s->caller);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK: {
        const ArgusqPf__SchedProcessForkFtraceEvent *s = e->sched_process_fork;
        named(nm, "sched_process_fork");
        *k = FTRACE_EV_PROCESS_FORK;
        kv_s(d, "comm", s->parent_comm);
        kv_i(d, "pid", s->parent_pid);
        kv_s(d, "child_comm", s->child_comm);
        kv_i(d, "child_pid", s->child_pid);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXEC: {
        const ArgusqPf__SchedProcessExecFtraceEvent *s = e->sched_process_exec;
        named(nm, "sched_process_exec");
        *k = FTRACE_EV_PROCESS_EXEC;
        kv_s(d, "filename", s->filename);
        kv_i(d, "pid", s->pid);
        kv_i(d, "old_pid", s->old_pid);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT: {
        const ArgusqPf__SchedProcessExitFtraceEvent *s = e->sched_process_exit;
        named(nm, "sched_process_exit");
        *k = FTRACE_EV_PROCESS_EXIT;
        kv_s(d, "comm", s->comm);
        kv_i(d, "pid", s->pid);
        kv_i(d, "prio", s->prio);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE: {
        const ArgusqPf__SchedProcessFreeFtraceEvent *s = e->sched_process_free;
        named(nm, "sched_process_free");
        kv_s(d, "comm", s->comm);
        kv_i(d, "pid", s->pid);
        kv_i(d, "prio", s->prio);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_TASK_NEWTASK: {
        const ArgusqPf__TaskNewtaskFtraceEvent *s = e->task_newtask;
        named(nm, "task_newtask");
        *k = FTRACE_EV_TASK_NEWTASK;
        kv_i(d, "pid", s->pid);
        kv_s(d, "comm", s->comm);
        kv_xbare(d, "clone_flags", s->clone_flags);
        kv_i(d, "oom_score_adj", s->oom_score_adj);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_TASK_RENAME: {
        const ArgusqPf__TaskRenameFtraceEvent *s = e->task_rename;
        named(nm, "task_rename");
        *k = FTRACE_EV_TASK_RENAME;
        kv_i(d, "pid", s->pid);
        kv_s(d, "oldcomm", s->oldcomm);
        kv_s(d, "newcomm", s->newcomm);
        kv_i(d, "oom_score_adj", s->oom_score_adj);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_IRQ_HANDLER_ENTRY:
        named(nm, "irq_handler_entry");
        *k = FTRACE_EV_IRQ_ENTRY;
        kv_i(d, "irq", e->irq_handler_entry->irq);
        kv_s(d, "name", e->irq_handler_entry->name);
        return true;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_IRQ_HANDLER_EXIT:
        named(nm, "irq_handler_exit");
        *k = FTRACE_EV_IRQ_EXIT;
        kv_i(d, "irq", e->irq_handler_exit->irq);
        kv_s(d, "ret", e->irq_handler_exit->ret ? "handled" : "unhandled");
        return true;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SOFTIRQ_ENTRY:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SOFTIRQ_EXIT: {
        bool entry = e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_SOFTIRQ_ENTRY;
        uint32_t vec = entry ? e->softirq_entry->vec : e->softirq_exit->vec;
        if (entry)
            named(nm, "softirq_entry");
        else
            named(nm, "softirq_exit");
        *k = entry ? FTRACE_EV_SOFTIRQ_ENTRY : FTRACE_EV_SOFTIRQ_EXIT;
        kv_u(d, "vec", vec);
        kv_s(d, "action", softirq_name(vec));
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SYS_ENTER: {
        const ArgusqPf__SysEnterFtraceEvent *s = e->sys_enter;
        named(nm, "sys_enter");
        *k = FTRACE_EV_SYS_ENTER;
        kv_i(d, "id", s->id);
        /* `a, b, c, d, e, f` in hex: what raw_syscalls prints inside its
         * parentheses, the canonical pair of every reader */
        char *p = vroom(d);
        size_t n = 0;
        for (size_t i = 0; i < s->n_args && i < 6 && d->vlen + n + 24 < sizeof d->vbuf; i++) {
            if (i) {
                p[n++] = ',';
                p[n++] = ' ';
            }
            n += base_fmt_hex(p + n, s->args[i], 1);
        }
        d->vlen += n;
        ingest_ft_kv_add(&d->fr, "args", p, n);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SYS_EXIT:
        named(nm, "sys_exit");
        *k = FTRACE_EV_SYS_EXIT;
        kv_i(d, "id", e->sys_exit->id);
        kv_i(d, "ret", e->sys_exit->ret);
        return true;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BLOCK_RQ_ISSUE:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BLOCK_RQ_INSERT: {
        bool issue = e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_BLOCK_RQ_ISSUE;
        /* the two messages have the same fields */
        const ArgusqPf__BlockRqIssueFtraceEvent *s = issue ? e->block_rq_issue
                                                           : (const ArgusqPf__BlockRqIssueFtraceEvent *)e->block_rq_insert;
        if (issue)
            named(nm, "block_rq_issue");
        else
            named(nm, "block_rq_insert");
        *k = FTRACE_EV_BLOCK;
        kv_dev(d, s->dev);
        kv_s(d, "rwbs", s->rwbs);
        kv_u(d, "bytes", s->bytes);
        kv_s(d, "cmd", s->cmd);
        kv_u(d, "sector", s->sector);
        kv_u(d, "nr_sector", s->nr_sector);
        kv_s(d, "comm", s->comm);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BLOCK_RQ_COMPLETE: {
        const ArgusqPf__BlockRqCompleteFtraceEvent *s = e->block_rq_complete;
        named(nm, "block_rq_complete");
        *k = FTRACE_EV_BLOCK;
        kv_dev(d, s->dev);
        kv_s(d, "rwbs", s->rwbs);
        kv_s(d, "cmd", s->cmd);
        kv_u(d, "sector", s->sector);
        kv_u(d, "nr_sector", s->nr_sector);
        kv_i(d, "error", s->errors);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_QUEUE_WORK: {
        const ArgusqPf__WorkqueueQueueWorkFtraceEvent *s = e->workqueue_queue_work;
        named(nm, "workqueue_queue_work");
        *k = FTRACE_EV_WQ_QUEUE;
        kv_hex(d, "work", s->work);
        kv_hex(d, "function", s->function);
        kv_s(d, "workqueue", s->workqueue);
        kv_i(d, "req_cpu", s->req_cpu);
        kv_i(d, "cpu", s->cpu);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_ACTIVATE_WORK:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_EXECUTE_START:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_EXECUTE_END: {
        /* the three messages have the same fields (work, function) */
        const ArgusqPf__WorkqueueExecuteStartFtraceEvent *s;
        if (e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_ACTIVATE_WORK) {
            s = (const ArgusqPf__WorkqueueExecuteStartFtraceEvent *)e->workqueue_activate_work;
            named(nm, "workqueue_activate_work");
            *k = FTRACE_EV_WQ_ACTIVATE;
        } else if (e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_WORKQUEUE_EXECUTE_START) {
            s = e->workqueue_execute_start;
            named(nm, "workqueue_execute_start");
            *k = FTRACE_EV_WQ_START;
        } else {
            s = (const ArgusqPf__WorkqueueExecuteStartFtraceEvent *)e->workqueue_execute_end;
            named(nm, "workqueue_execute_end");
            *k = FTRACE_EV_WQ_END;
        }
        kv_hex(d, "work", s->work);
        kv_hex(d, "function", s->function);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION: {
        const ArgusqPf__BinderTransactionFtraceEvent *s = e->binder_transaction;
        binder_pairs(d, k, nm, false, s->debug_id, s->target_node, s->to_proc, s->to_thread, s->reply, s->flags,
                     s->code);
        return true;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION_RECEIVED:
        binder_pairs(d, k, nm, true, e->binder_transaction_received->debug_id, 0, 0, 0, 0, 0, 0);
        return true;
    default:
        return false;
    }
}

/* "PATH:PACKET: message" from the mapping, as "PATH: byte N: packet K: message" */
static void reword(pf_reader *d, const pf_item *it)
{
    char pre[600], rest[1024];
    int n = snprintf(pre, sizeof pre, "%s:%llu: ", d->path, (unsigned long long)it->hold->packet);
    if (n < 0 || (size_t)n >= sizeof pre || strncmp(d->fr.err, pre, (size_t)n) != 0)
        return;
    snprintf(rest, sizeof rest, "%s", d->fr.err + n);
    snprintf(d->fr.err, d->fr.errlen, "%s: byte %llu: packet %llu: %s", d->path, (unsigned long long)it->hold->offset,
             (unsigned long long)it->hold->packet, rest);
}

/* A compact switch's prev_comm: the next_comm of the switch before it on
 * its CPU (in this bundle or an earlier one).  The first switch of a CPU
 * whose task an earlier event gave by pid alone takes that task's name
 * from what the file said of it so far, now that the events decoded
 * ahead of this one have named their tasks too (process_tree, other
 * switches' and wakings' comm fields), as the full form's prev_comm would
 * say; the idle task is swapper/CPU, as the kernel names it.  A task the
 * trace never showed on that CPU before (the first switch's prev, with
 * no event before it there) stays unknown: `<...>`. */
static const char *compact_prev_comm(pf_reader *d, const pf_item *it, const char *comm, bool known)
{
    if (comm[0])
        return comm;
    if (!known)
        return "<...>";
    /* a copy: the mapping may write the table's name while it reads this */
    const char *n = it->tid == 0 ? NULL : ingest_ft_name_of(&d->fr, it->tid);
    if (it->tid == 0)
        snprintf(d->prev_comm, sizeof d->prev_comm, "swapper/%u", (unsigned)it->cpu);
    else
        snprintf(d->prev_comm, sizeof d->prev_comm, "%s", n ? n : "");
    return d->prev_comm[0] ? d->prev_comm : "<...>";
}

/* The pairs of a held event, by its form; *k and *nm say which event.
 * 1, 0 when it holds no event (counted as skipped), or -1 (err set). */
static inline int item_pairs(pf_reader *d, const pf_item *it, ftrace_ev_kind *k, pf_name *nm)
{
    ftrace_reader *r = &d->fr;
    switch (it->form) {
    case PF_CSWITCH: {
        named(nm, "sched_switch");
        *k = FTRACE_EV_SCHED_SWITCH;
        /* the comms measured here (the item has no room for their
         * lengths) by the arena's inline strlen, not strlen's calls in
         * the mapping */
        const char *pc = compact_prev_comm(d, it, it->prev->comm, it->prev->known);
        /* the item's prev's comm is its pf_prev's first bytes, in the
         * arena; the names compact_prev_comm makes the mapping measures */
        size_t pcl = pc == it->prev->comm ? ingest_pf_arena_strlen(pc) : FTRACE_LEN_UNKNOWN;
        switch_pairs(d, pc, pcl, (int32_t)it->tid, it->prev->prio != INT32_MIN, it->prev->prio, it->prev_state,
                     it->comm, it->comm ? ingest_pf_arena_strlen(it->comm) : 0, it->pid, it->prio);
        return 1;
    }
    case PF_CWAKING:
        named(nm, "sched_waking");
        *k = FTRACE_EV_SCHED_WAKING;
        wake_pairs(d, it->comm, it->comm ? ingest_pf_arena_strlen(it->comm) : 0, it->pid, it->prio, it->target_cpu);
        return 1;
    case PF_SWITCH:
    case PF_SWITCH_C: {
        named(nm, "sched_switch");
        *k = FTRACE_EV_SCHED_SWITCH;
        const pf_comms *t = &d->comms;
        const char *pc = ingest_pf_comm_str(t, it->sw.prev_comm);
        size_t pcl = ingest_pf_comm_len(t, it->sw.prev_comm);
        int64_t prev_pid = it->sw.prev_pid;
        if (it->form == PF_SWITCH_C) { /* as PF_CSWITCH's */
            prev_pid = (int32_t)it->tid;
            const char *c = compact_prev_comm(d, it, pc, it->sw.prev_pid != 0);
            if (c != pc)
                pc = c, pcl = FTRACE_LEN_UNKNOWN;
        }
        switch_pairs(d, pc, pcl, prev_pid, it->sw.prev_prio != INT32_MIN, it->sw.prev_prio, it->sw.state,
                     ingest_pf_comm_str(t, it->sw.next_comm), ingest_pf_comm_len(t, it->sw.next_comm), it->sw.next_pid,
                     it->sw.next_prio);
        r->kv_distinct = it->form == PF_SWITCH; /* as full_pairs' */
        return 1;
    }
    case PF_WAKE: {
#define LIT(s) s, sizeof s - 1 /* a name and its length, written once */
        static const struct {
            const char *name;
            size_t len;
            ftrace_ev_kind k;
        } wk[] = {[PF_WK_WAKEUP] = {LIT("sched_wakeup"), FTRACE_EV_SCHED_WAKEUP},
                  [PF_WK_WAKING] = {LIT("sched_waking"), FTRACE_EV_SCHED_WAKING},
                  [PF_WK_WAKEUP_NEW] = {LIT("sched_wakeup_new"), FTRACE_EV_SCHED_WAKEUP_NEW},
                  [PF_WK_COMPACT] = {LIT("sched_waking"), FTRACE_EV_SCHED_WAKING}};
#undef LIT
        nm->s = wk[it->wk.kind].name;
        nm->n = wk[it->wk.kind].len;
        *k = wk[it->wk.kind].k;
        wake_pairs(d, ingest_pf_comm_str(&d->comms, it->wk.comm), ingest_pf_comm_len(&d->comms, it->wk.comm), it->wk.pid,
                   it->wk.prio, it->wk.target_cpu);
        r->kv_distinct = it->wk.kind != PF_WK_COMPACT; /* as full_pairs' */
        return 1;
    }
    case PF_IDLE:
    case PF_FREQ: {
        bool idle = it->form == PF_IDLE;
        if (idle)
            named(nm, "cpu_idle");
        else
            named(nm, "cpu_frequency");
        kv_state(d, idle ? 0 : 1, it->cpuev.state);
        kv_u(d, "cpu_id", it->cpuev.cpu_id);
        r->kv_distinct = true; /* as full_pairs' */
        return 1;
    }
    case PF_PRINT:
    case PF_KEPT_PRINT:
        named(nm, "print");
        *k = FTRACE_EV_MARKER;
        if (it->form == PF_PRINT)
            kv_strip(d, "buf", it->print.buf, it->print.len);
        else
            kv_strip(d, "buf", (const char *)it->kept.p, it->kept.len);
        r->kv_distinct = true; /* as full_pairs' */
        return 1;
    case PF_BINDER:
        binder_pairs(d, k, nm, it->binder.received, it->binder.debug_id, it->binder.target_node, it->binder.to_proc,
                     it->binder.to_thread, it->binder.reply, it->binder.flags, it->binder.code);
        r->kv_distinct = true;
        return 1;
    case PF_BLOCKED:
        named(nm, "sched_blocked_reason");
        blocked_pairs(d, it->blocked.pid, it->blocked.io_wait, it->blocked.caller);
        r->kv_distinct = true;
        return 1;
    case PF_OTHER:
    case PF_KEPT_OTHER:
        return ingest_pf_other_held(d, it, &nm->s, &nm->n);
    default: /* PF_FULL, PF_KEPT_FULL */
        if (full_pairs(d, it, k, nm)) {
            r->kv_distinct = true; /* each message's pairs have keys of their own */
            return 1;
        }
        /* an event of a message the schema subset does not hold: stored
         * raw, with the pairs of its own bytes (perfetto_other.c), as
         * every reader stores every event; an FtraceEvent with no event
         * at all counts as skipped */
        return ingest_pf_other(d, it, &nm->s, &nm->n);
    }
}

int ingest_pf_emit(pf_reader *d, const pf_item *it, const uint64_t *blocked)
{
    ftrace_reader *r = &d->fr;
    r->nkv = 0;
    r->sw = NULL;
    r->wake = NULL;
    r->txn = NULL;
    r->kv_distinct = false;
    d->vlen = 0;
    r->lineno = it->hold->packet;
    ftrace_ev_kind k = FTRACE_EV_OTHER;
    pf_name nm = {NULL, 0};
    int prc = item_pairs(d, it, &k, &nm);
    if (prc < 0)
        return -1;
    if (prc == 0) {
        r->st->skipped++;
        if (r->sink->skip)
            r->sink->skip(r->sink->ctx);
        return 0;
    }
    if (blocked && r->sw) {
        d->sw.have_blocked = true;
        d->sw.blocked = *blocked;
    } else if (blocked) {
        kv_hex(d, "blocked_caller", *blocked);
    }
    ftrace_line li;
    memset(&li, 0, sizeof li);
    /* the task's name comes from the names the file gives (process_tree,
     * the fields of its events): an event carries none of its own; the
     * idle task is <idle> on every CPU, as ftrace's text names it */
    li.comm = it->tid == 0 ? "<idle>" : "<...>";
    li.comm_len = it->tid == 0 ? 6 : 5;
    /* hashed once, not at each of the idle task's events, which are
     * many in an Android trace */
    li.comm_hash = it->tid == 0 ? d->idle_hash : 0;
    li.tid = it->tid;
    li.cpu = it->cpu;
    li.ts = it->ts;
    li.ctx = it->ctx;
    li.name = (char *)nm.s;
    li.name_len = nm.n;
    li.fields = "";
    int rc = ingest_ft_event(r, &li, k);
    r->sw = NULL;
    r->wake = NULL;
    r->txn = NULL;
    r->kv_distinct = false;
    if (rc == FTRACE_BAD_FIELDS) {
        ingest_errf(r->err, r->errlen, "%s: byte %llu: packet %llu: %s: fields missing or malformed", d->path,
                    (unsigned long long)it->hold->offset, (unsigned long long)it->hold->packet, nm.s);
        return -1;
    }
    if (rc < 0)
        reword(d, it);
    return rc < 0 ? -1 : 0;
}
