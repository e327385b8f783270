/* ingest/perfetto/perfetto_push.c -- what the Perfetto reader does with an event
 * as it is pushed into the merge of the CPUs (perfetto.c): the names its
 * fields give (a switch's and a wakeup's comms name their tasks ahead of
 * the events that need them), and its own form (perfetto_int.h's pf_item:
 * the commonest events held in their 64 bytes, comms interned,
 * perfetto_comms.c), so that its packet's arena can go back to the pool
 * when the packet is decoded.  perfetto_map.c gives the held event its
 * pairs when it is handed on. */
#include <string.h>

#include "perfetto_int.h"

/* The thread table grows only when asked to (ftrace.c keeps its pointers
 * valid within one event), and names given ahead of a thread's first
 * event add entries of their own: room for each first. */
int ingest_pf_name(pf_reader *d, uint32_t tid, const char *comm, size_t n)
{
    if (ingest_ft_reserve(&d->fr, 1) < 0)
        return -1;
    return ingest_ft_full_comm(&d->fr, tid, comm, n);
}

/* Names tid comm unless the file named it already.  0 or -1. */
static int name_unknown(pf_reader *d, int32_t tid, const char *comm)
{
    if (tid <= 0 || !comm || !comm[0] || ingest_ft_name_of(&d->fr, (uint32_t)tid))
        return 0;
    return ingest_pf_name(d, (uint32_t)tid, comm, ingest_pf_arena_strlen(comm));
}

/* A wakeup of the full form as PF_WAKE, when its comm has an id (always
 * inlined: see kv_state). */
static inline __attribute__((always_inline)) void own_wake(pf_reader *d, pf_item *it, uint8_t kind, const char *comm,
                                                           size_t n, int32_t pid, int32_t prio, int32_t target_cpu)
{
    uint32_t cid = ingest_pf_comm_id16(&d->comms, comm, n);
    if (cid == PF_COMM_NONE)
        return;
    pf_item_wake(it, kind, cid, pid, prio, target_cpu);
}

/* A full sched_switch as PF_SWITCH, when its comms have ids and its
 * prev_prio is not the one the form says none with.  The item's fields
 * are a union: the full form's read out before the form's own are
 * written. */
static void own_switch(pf_reader *d, pf_item *it, const ArgusqPf__SchedSwitchFtraceEvent *s, size_t pcl, size_t ncl)
{
    if (s->has_prev_prio && s->prev_prio == INT32_MIN)
        return;
    uint32_t pc = ingest_pf_comm_id16(&d->comms, s->prev_comm, pcl),
             nc = ingest_pf_comm_id16(&d->comms, s->next_comm, ncl);
    if (pc == PF_COMM_NONE || nc == PF_COMM_NONE)
        return;
    int64_t state = s->prev_state;
    int32_t prev_pid = s->prev_pid, prev_prio = s->has_prev_prio ? s->prev_prio : INT32_MIN, next_pid = s->next_pid,
            next_prio = s->next_prio;
    pf_item_switch(it, PF_SWITCH, state, prev_pid, prev_prio, pc, nc, next_pid, next_prio);
}

/* The full events that name no task, as forms of their own where they
 * fit: most of the Android 13 trace's full events (prints, the events
 * the schema subset leaves out, binder's), so that its packets' arenas
 * too go back to the pool once decoded. */
static void own_other_kinds(pf_item *it)
{
    const ArgusqPf__FtraceEvent *e = it->ev;
    switch (e->event_case) {
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_PRINT: {
        const char *b = e->print->buf ? e->print->buf : "";
        size_t n = strlen(b);
        if (n > PF_PRINT_MAX) {
            uint8_t *k = n <= UINT32_MAX ? ingest_pf_keep_alloc(it->hold, n) : NULL;
            if (!k)
                return;
            memcpy(k, b, n);
            it->form = PF_KEPT_PRINT;
            it->kept.p = k;
            it->kept.len = (uint32_t)n;
            return;
        }
        it->form = PF_PRINT; /* over the union's ev: b is the arena's */
        it->print.len = (uint8_t)n;
        pf_copy_small(it->print.buf, b, n);
        return;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION: {
        ArgusqPf__BinderTransactionFtraceEvent s = *e->binder_transaction;
        it->form = PF_BINDER;
        it->binder.received = false;
        it->binder.debug_id = s.debug_id;
        it->binder.target_node = s.target_node;
        it->binder.to_proc = s.to_proc;
        it->binder.to_thread = s.to_thread;
        it->binder.reply = s.reply;
        it->binder.code = s.code;
        it->binder.flags = s.flags;
        return;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION_RECEIVED: {
        int32_t id = e->binder_transaction_received->debug_id;
        memset(&it->binder, 0, sizeof it->binder);
        it->form = PF_BINDER;
        it->binder.received = true;
        it->binder.debug_id = id;
        return;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON: {
        ArgusqPf__SchedBlockedReasonFtraceEvent s = *e->sched_blocked_reason;
        it->form = PF_BLOCKED;
        it->blocked.pid = s.pid;
        it->blocked.io_wait = s.io_wait;
        it->blocked.caller = s.caller;
        return;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT__NOT_SET:
        ingest_pf_other_own(it);
        return;
    default:
        return;
    }
}

/* Names pid by its interned comm (pid <= 0: nothing).  0 or -1. */
static int name_by_id(pf_reader *d, int32_t pid, uint32_t cid)
{
    if (pid <= 0)
        return 0;
    return ingest_pf_name(d, (uint32_t)pid, ingest_pf_comm_str(&d->comms, cid), ingest_pf_comm_len(&d->comms, cid));
}

int ingest_pf_names(pf_reader *d, pf_item *it, bool own)
{
    if (it->form == PF_CSWITCH || it->form == PF_CWAKING)
        return it->pid > 0 && it->comm ? ingest_pf_name(d, (uint32_t)it->pid, it->comm, ingest_pf_arena_strlen(it->comm)) : 0;
    /* compact ones held self-contained (perfetto.c do_bundle): the same,
     * their comm by id (every compact comm is a string, "" too) */
    if (it->form == PF_SWITCH_C)
        return name_by_id(d, it->sw.next_pid, it->sw.next_comm);
    if (it->form == PF_WAKE)
        return name_by_id(d, it->wk.pid, it->wk.comm);
    const ArgusqPf__FtraceEvent *e = it->ev;
    const char *c = NULL;
    int32_t pid = 0;
    int rc;
    uint8_t kind = PF_WK_WAKEUP;
    const ArgusqPf__SchedWakeupFtraceEvent *wk; /* sched_waking's, sched_wakeup_new's the same */
    switch (e->event_case) {
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_SWITCH: {
        const ArgusqPf__SchedSwitchFtraceEvent *s = e->sched_switch;
        const char *pc = s->prev_comm, *nc = s->next_comm;
        size_t pcl = pc ? ingest_pf_arena_strlen(pc) : 0, ncl = nc ? ingest_pf_arena_strlen(nc) : 0;
        if (s->prev_pid > 0 && pc && ingest_pf_name(d, (uint32_t)s->prev_pid, pc, pcl) < 0)
            return -1;
        if (s->next_pid > 0 && nc && ingest_pf_name(d, (uint32_t)s->next_pid, nc, ncl) < 0)
            return -1;
        it->clen[0] = (uint32_t)pcl;
        it->clen[1] = (uint32_t)ncl;
        if (own)
            own_switch(d, it, s, pcl, ncl);
        return 0;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP:
        wk = e->sched_wakeup;
        break;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKING:
        wk = (const ArgusqPf__SchedWakeupFtraceEvent *)e->sched_waking;
        kind = PF_WK_WAKING;
        break;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_IDLE:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_FREQUENCY: {
        if (!own)
            return 0;
        bool idle = e->event_case == ARGUSQ_PF__FTRACE_EVENT__EVENT_CPU_IDLE;
        const ArgusqPf__CpuIdleFtraceEvent *s =
            idle ? e->cpu_idle : (const ArgusqPf__CpuIdleFtraceEvent *)e->cpu_frequency;
        uint32_t state = s->state, cpu_id = s->cpu_id;
        it->form = idle ? PF_IDLE : PF_FREQ;
        it->cpuev.state = state;
        it->cpuev.cpu_id = cpu_id;
        return 0;
    }
    /* the comm fields of a task's birth and death name it only when
     * nothing else did: decoding runs ahead of the merge (and a CPU's
     * bundles ahead of another's), so an exit's comm, the name after any
     * exec, must not replace the name the task's earlier events had */
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_EXIT:
        return name_unknown(d, e->sched_process_exit->pid, e->sched_process_exit->comm);
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_FREE:
        return name_unknown(d, e->sched_process_free->pid, e->sched_process_free->comm);
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_WAKEUP_NEW: {
        const ArgusqPf__SchedWakeupNewFtraceEvent *s = e->sched_wakeup_new;
        rc = name_unknown(d, s->pid, s->comm);
        if (rc == 0 && own) /* its comm measured here: name_unknown's is not kept */
            own_wake(d, it, PF_WK_WAKEUP_NEW, s->comm, s->comm ? ingest_pf_arena_strlen(s->comm) : 0, s->pid, s->prio,
                     s->target_cpu);
        return rc;
    }
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_TASK_NEWTASK:
        return name_unknown(d, e->task_newtask->pid, e->task_newtask->comm);
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_PRINT:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_BINDER_TRANSACTION_RECEIVED:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_BLOCKED_REASON:
    case ARGUSQ_PF__FTRACE_EVENT__EVENT__NOT_SET:
        if (own)
            own_other_kinds(it);
        return 0;
    case ARGUSQ_PF__FTRACE_EVENT__EVENT_SCHED_PROCESS_FORK:
        return name_unknown(d, e->sched_process_fork->parent_pid, e->sched_process_fork->parent_comm) < 0
                   ? -1
                   : name_unknown(d, e->sched_process_fork->child_pid, e->sched_process_fork->child_comm);
    default:
        return 0;
    }
    /* sched_wakeup, sched_waking */
    c = wk->comm;
    pid = wk->pid;
    size_t cl = c ? ingest_pf_arena_strlen(c) : 0;
    it->clen[1] = (uint32_t)cl;
    if (pid > 0 && c && ingest_pf_name(d, (uint32_t)pid, c, cl) < 0)
        return -1;
    if (own)
        own_wake(d, it, kind, c, cl, wk->pid, wk->prio, wk->target_cpu);
    return 0;
}
