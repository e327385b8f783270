/* ingest/ctf/ctf_map.c -- a CTF event of LTTng's kernel tracer, or of perf's
 * CTF conversion, onto the events the ftrace readers give; an LTTng-UST
 * event onto a raw event of its thread.
 *
 * There is one mapping of kernel events onto the Argus vocabulary
 * (ingest/ftrace/: ftrace_map.c, ftrace_sched.c), fed with an event's
 * canonical pairs in ftrace's naming (ftrace_map_int.h).  This file turns
 * a CTF event's fields into those pairs, so an LTTng trace gives the events, nodes and edges a
 * trace-cmd recording of the same run would:
 *
 *   LTTng                               ftrace
 *   tid, prev_tid, next_tid, old_tid    pid, prev_pid, next_pid, old_pid
 *   sched_process_fork parent_comm,     comm, pid, child_comm, child_pid
 *     parent_tid, child_tid               (child_pid: LTTng's is the tgid)
 *   irq_softirq_* (2.7+), softirq_*     softirq_*
 *   timer_hrtimer_* (2.7+), hrtimer_*   hrtimer_*
 *   syscall_entry_X / syscall_exit_X    syscalls sys_enter_X / sys_exit_X
 *   sys_X / exit_syscall (before 2.6)   the same (exit: the name of the
 *                                       thread's last entry)
 *   lttng_statedump_process_state       kept raw; declares thread tid of
 *                                       process pid (the table at start)
 *   perf's sched:sched_switch ...       sched_switch ... (perf keeps the
 *                                       kernel's field names)
 *
 * Older lttng-modules (2.0, 2.1, still 2.5) declared pointers as plain
 * decimal integers (__field(void *, hrtimer); ctf_integer_hex came
 * later): the fields the mapping reads as addresses (hrtimer, work,
 * function) are given as hex whatever base the trace prefers, as ftrace
 * prints them (a 64-bit one in decimal was refused, a 32-bit one misread
 * as hex digits).  Their field names are today's but for two:
 * sched_wakeup's `success` (kept, unused) and a fork without parent_pid
 * and child_pid (the child is then a process of its own until it says
 * otherwise, as with ftrace's fork).
 *
 * A userspace (LTTng-UST) event, `provider:event` with the fields its
 * application gave, is kept raw under its name on the thread of its
 * vtid context (the process of vpid, the name of procname), which
 * `lttng add-context -u -t vtid -t vpid -t procname` records.  A UST
 * trace without vtid says nothing of whose the event is -- the CPU's
 * task is not looked for (a session may hold no kernel trace, or one
 * on another clock) -- so its events are skipped and counted
 * (ingest_stats.ust_no_tid), for the summary to say why.
 *
 * The task of an event: LTTng records none unless the session added the
 * tid context, so it is the task on the event's CPU (the packet
 * context's cpu_id): the next of the last sched_switch there, and before
 * the first one the prev of that first one (ctf.c finds it first).  perf
 * gives perf_tid, perf_pid and perf_cpu with every event.  The context
 * (hardirq, softirq, thread): perf's common_flags; for LTTng, whether the
 * CPU is between an irq's (softirq's) entry and exit.
 *
 * Memory: a text buffer for the pairs' values, the per-CPU table and the
 * per-thread syscall names, reused for every event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf_int.h"

/* kernel comm: TASK_COMM_LEN */
#define CTF_COMM_MAX 16
/* the largest CPU number believed (more means a damaged packet context) */
#define CTF_CPU_MAX 65536
/* trace_flag_type (include/linux/trace_events.h) */
#define CTF_FLAG_HARDIRQ 0x08
#define CTF_FLAG_SOFTIRQ 0x10
#define CTF_FLAG_NMI 0x40

typedef struct ctf_cpu {
    bool known;
    uint32_t tid;
    char comm[CTF_COMM_MAX + 1];
    uint32_t hard, soft; /* irq and softirq handlers under way */
} ctf_cpu;

typedef struct ctf_sys {
    char name[48];
} ctf_sys;

/* An event class's name in ftrace's naming and its kind, worked out once
 * per class (the class's name string is the key: it lives as long as the
 * trace).  Direct-mapped; a collision only costs working it out again. */
#define CTF_NCACHE 256
typedef struct ctf_nentry {
    const char *key;
    bool ust; /* the key's event is LTTng-UST's */
    ftrace_ev_kind k;
    bool old_enter, old_exit, perf, statedump;
    const char *base; /* the name without perf's system */
    char name[160];
} ctf_nentry;

struct ctf_map {
    ctf_nentry ncache[CTF_NCACHE];
    ftrace_reader fr;
    ctf_cpu *cpus; /* indexed by CPU, ncpus of them */
    size_t ncpus;
    ctf_sys *sys; /* the syscall a thread entered (old naming), in the order the threads came */
    size_t scap, sused;
    base_map sys_of; /* tid -> its entry in sys */
    char *txt; /* the current event's values as text */
    size_t tlen, tcap;
    char name[160]; /* the current event's name in ftrace's naming */
    char errbuf[1024];
};

ctf_map *ingest_ctf_map_new(const char *path, const ingest_sink *sink, const ingest_opts *opts,
                            ingest_stats *st, char *err, size_t errlen)
{
    ctf_map *m = calloc(1, sizeof *m);
    if (!m) {
        ingest_errf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    m->tcap = 65536;
    m->txt = malloc(m->tcap);
    if (!m->txt || ingest_ft_reader_init(&m->fr, path, sink, st, err, errlen) < 0) {
        if (!m->txt)
            ingest_errf(err, errlen, "%s: out of memory", path);
        ingest_ctf_map_free(m);
        return NULL;
    }
    m->fr.unit = "event";
    m->fr.arch = opts ? base_arch_find(opts->arch) : NULL;
    return m;
}

void ingest_ctf_map_free(ctf_map *m)
{
    if (!m)
        return;
    ingest_ft_reader_free(&m->fr);
    free(m->cpus);
    free(m->sys);
    base_map_free(&m->sys_of);
    free(m->txt);
    free(m);
}

void ingest_ctf_map_set_arch(ctf_map *m, const base_arch *arch) { m->fr.arch = arch; }

static ctf_cpu *cpu_get(ctf_map *m, uint32_t cpu)
{
    if (cpu >= CTF_CPU_MAX)
        return NULL;
    if (cpu >= m->ncpus) {
        size_t n = m->ncpus ? m->ncpus : 8;
        while (n <= cpu)
            n *= 2;
        ctf_cpu *c = realloc(m->cpus, n * sizeof *c);
        if (!c)
            return NULL;
        memset(c + m->ncpus, 0, (n - m->ncpus) * sizeof *c);
        m->cpus = c;
        m->ncpus = n;
    }
    return &m->cpus[cpu];
}

static void set_comm(ctf_cpu *c, uint32_t tid, const char *s, size_t n)
{
    if (n > CTF_COMM_MAX)
        n = CTF_COMM_MAX;
    memcpy(c->comm, s, n);
    c->comm[n] = '\0';
    c->tid = tid;
    c->known = true;
}

int ingest_ctf_map_seed(ctf_map *m, uint32_t cpu, uint32_t tid, const char *comm, size_t n)
{
    ctf_cpu *c = cpu_get(m, cpu);
    if (!c)
        return -1;
    if (!c->known)
        set_comm(c, tid, comm, n);
    return 0;
}

/* ---- fields ---- */

static const ctf_field *field(const ctf_field *f, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    return NULL;
}

/* An integer field's value (a signed one read as its bits). */
static bool field_u64(const ctf_field *f, size_t n, const char *name, uint64_t *out)
{
    const ctf_field *x = field(f, n, name);
    if (!x || (x->type != CTF_F_UINT && x->type != CTF_F_INT))
        return false;
    *out = x->type == CTF_F_UINT ? x->u : (uint64_t)x->i;
    return true;
}

static bool field_u32(const ctf_field *f, size_t n, const char *name, uint32_t *out)
{
    uint64_t v;
    if (!field_u64(f, n, name, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool field_str(const ctf_field *f, size_t n, const char *name, const char **s, size_t *len)
{
    const ctf_field *x = field(f, n, name);
    if (!x || x->type != CTF_F_STR)
        return false;
    *s = x->s;
    *len = x->slen;
    return true;
}

bool ingest_ctf_prev_task(const ctf_event_in *e, uint32_t *cpu, uint32_t *tid, const char **comm, size_t *n)
{
    if (e->ust)
        return false;
    const char *name = strchr(e->name, ':');
    bool perf = name != NULL;
    name = perf ? name + 1 : e->name;
    if (strcmp(name, "sched_switch") != 0)
        return false;
    int64_t c = e->cpu;
    uint32_t pc;
    if (perf && field_u32(e->pay, e->npay, "perf_cpu", &pc))
        c = pc;
    if (c < 0 || c >= CTF_CPU_MAX)
        return false;
    *cpu = (uint32_t)c;
    return field_u32(e->pay, e->npay, perf ? "prev_pid" : "prev_tid", tid) &&
           field_str(e->pay, e->npay, "prev_comm", comm, n);
}

/* ---- the values as text ---- */

/* Room for need more bytes of text.  The pairs point into the buffer, so
 * it never moves within an event: an event whose text would not fit is
 * refused (its fields are not a kernel event's). */
static char *txt_room(ctf_map *m, size_t need)
{
    if (m->tlen + need > m->tcap)
        return NULL;
    return m->txt + m->tlen;
}

/* The value of f as ftrace prints it: decimal, hex (0x) where the trace
 * prefers it or hex is set; strings as they are (no copy). */
static bool value_text(ctf_map *m, const ctf_field *f, bool hex, const char **v, size_t *vl)
{
    if (f->type == CTF_F_STR) {
        *v = f->s;
        *vl = f->slen;
        return true;
    }
    char *b = txt_room(m, 24);
    if (!b)
        return false;
    size_t n;
    if (f->hex || hex) {
        b[0] = '0';
        b[1] = 'x';
        n = 2 + base_fmt_hex(b + 2, f->type == CTF_F_UINT ? f->u : (uint64_t)f->i, 1);
    } else {
        n = f->type == CTF_F_UINT ? base_fmt_u64(b, f->u) : base_fmt_i64(b, f->i);
    }
    *v = b;
    *vl = n;
    m->tlen += n;
    return true;
}

/* Fields the mapping reads from elsewhere or that say nothing of the
 * event: perf's sample fields, the tracepoint's common header, and
 * LTTng's lengths of sequences (_vtids_length). */
static bool skipped_field(const ctf_field *f, bool perf)
{
    if (f->type == CTF_F_OTHER || f->name[0] == '_')
        return true;
    return perf && (strncmp(f->name, "perf_", 5) == 0 || strncmp(f->name, "common_", 7) == 0);
}

/* Does the mapping of events of kind k read pair `key` as an address
 * (0x and hex, ftrace_map.c)?  Older LTTng gave them in decimal. */
static bool address_key(ftrace_ev_kind k, const char *key)
{
    switch (k) {
    case FTRACE_EV_HRTIMER_START:
    case FTRACE_EV_HRTIMER_CANCEL:
    case FTRACE_EV_HRTIMER_EXPIRE_ENTRY:
    case FTRACE_EV_HRTIMER_EXPIRE_EXIT:
        return strcmp(key, "hrtimer") == 0 || strcmp(key, "function") == 0;
    case FTRACE_EV_WQ_QUEUE:
    case FTRACE_EV_WQ_ACTIVATE:
    case FTRACE_EV_WQ_START:
    case FTRACE_EV_WQ_END:
        return strcmp(key, "work") == 0 || strcmp(key, "function") == 0;
    default:
        return false;
    }
}

/* LTTng's tid is ftrace's pid */
static const char *lttng_key(const char *k)
{
    static const char *const ren[][2] = {{"tid", "pid"},         {"prev_tid", "prev_pid"}, {"next_tid", "next_pid"},
                                         {"old_tid", "old_pid"}, {"parent_comm", "comm"},  {"parent_tid", "pid"},
                                         {"child_tid", "child_pid"}};
    for (size_t i = 0; i < sizeof ren / sizeof ren[0]; i++)
        if (strcmp(k, ren[i][0]) == 0)
            return ren[i][1];
    return k;
}

/* Every payload field as a pair (renamed to ftrace's keys for LTTng's
 * kernel events; perf's and an application's as they are). */
static int pairs_of(ctf_map *m, const ctf_event_in *e, ftrace_ev_kind k, bool perf, bool fork)
{
    ftrace_reader *r = &m->fr;
    for (size_t i = 0; i < e->npay; i++) {
        const ctf_field *f = &e->pay[i];
        if (skipped_field(f, perf))
            continue;
        /* LTTng's fork: child_pid is the tgid, child_tid the thread */
        if (fork && !perf && (strcmp(f->name, "parent_pid") == 0 || strcmp(f->name, "child_pid") == 0))
            continue;
        const char *v;
        size_t vl;
        if (r->nkv == FTRACE_KV_MAX) /* a raw event's first fields are enough */
            break;
        const char *key = perf || e->ust ? f->name : lttng_key(f->name);
        if (!value_text(m, f, address_key(k, key), &v, &vl) || !ingest_ft_kv_add(r, key, v, vl))
            return FTRACE_BAD_FIELDS;
    }
    return 0;
}

/* A syscall entry's arguments as one `args` pair, as ftrace prints them
 * (`fd: 0x3, count: 0x10`): name and value of each integer or string. */
static int args_pair(ctf_map *m, const ctf_event_in *e)
{
    char *start = m->txt + m->tlen;
    for (size_t i = 0; i < e->npay; i++) {
        const ctf_field *f = &e->pay[i];
        if (skipped_field(f, false))
            continue;
        size_t nl = strlen(f->name);
        size_t need = nl + 4 + (f->type == CTF_F_STR ? f->slen + 2 : 24);
        char *b = txt_room(m, need);
        if (!b)
            return FTRACE_BAD_FIELDS;
        size_t n = 0;
        if (b != start)
            b[n++] = ',', b[n++] = ' ';
        memcpy(b + n, f->name, nl);
        n += nl;
        b[n++] = ':';
        b[n++] = ' ';
        if (f->type == CTF_F_STR) {
            b[n++] = '"';
            memcpy(b + n, f->s, f->slen);
            n += f->slen;
            b[n++] = '"';
        } else {
            b[n++] = '0';
            b[n++] = 'x';
            n += base_fmt_hex(b + n, f->type == CTF_F_UINT ? f->u : (uint64_t)f->i, 1);
        }
        m->tlen += n;
    }
    return ingest_ft_kv_add(&m->fr, "args", start, (size_t)(m->txt + m->tlen - start)) ? 0 : FTRACE_BAD_FIELDS;
}

/* ---- the syscall each thread is in (old naming: exit_syscall has no name) ---- */

static ctf_sys *sys_slot(ctf_map *m, uint32_t tid, bool add)
{
    uint32_t i;
    if (base_map_get(&m->sys_of, tid, &i))
        return &m->sys[i];
    if (!add || !base_grow((void **)&m->sys, &m->scap, m->sused + 1, sizeof *m->sys) ||
        base_map_put(&m->sys_of, tid, (uint32_t)m->sused))
        return NULL;
    ctf_sys *s = &m->sys[m->sused++];
    s->name[0] = '\0';
    return s;
}

/* ---- names ---- */

static bool prefixed(const char *s, const char *p, const char **rest)
{
    size_t n = strlen(p);
    if (strncmp(s, p, n) != 0)
        return false;
    *rest = s + n;
    return true;
}

/* The event's name in ftrace's naming, into m->name, and its kind.
 * *sys_enter / *sys_exit: a syscall of the old naming (its name to
 * remember, or to look up). */
static ftrace_ev_kind ftrace_name(ctf_map *m, const char *name, bool perf, bool *old_enter, bool *old_exit)
{
    const char *rest;
    *old_enter = *old_exit = false;
    if (!perf) {
        if (prefixed(name, "syscall_entry_", &rest) || prefixed(name, "compat_syscall_entry_", &rest)) {
            snprintf(m->name, sizeof m->name, "sys_enter_%s", rest);
            return FTRACE_EV_SYSCALLS_ENTER;
        }
        if (prefixed(name, "syscall_exit_", &rest) || prefixed(name, "compat_syscall_exit_", &rest)) {
            snprintf(m->name, sizeof m->name, "sys_exit_%s", rest);
            return FTRACE_EV_SYSCALLS_EXIT;
        }
        if (strcmp(name, "exit_syscall") == 0) {
            *old_exit = true;
            return FTRACE_EV_SYSCALLS_EXIT; /* the caller names it */
        }
        if (prefixed(name, "sys_", &rest) && *rest) {
            snprintf(m->name, sizeof m->name, "sys_enter_%s", rest);
            *old_enter = true;
            return FTRACE_EV_SYSCALLS_ENTER;
        }
        if (prefixed(name, "irq_softirq_", &rest))
            snprintf(m->name, sizeof m->name, "softirq_%s", rest);
        else if (prefixed(name, "timer_hrtimer_", &rest))
            snprintf(m->name, sizeof m->name, "hrtimer_%s", rest);
        else
            snprintf(m->name, sizeof m->name, "%s", name);
    } else {
        snprintf(m->name, sizeof m->name, "%s", name);
    }
    ftrace_ev_kind k = ingest_ftrace_lex_event(m->name);
    /* LTTng's syscalls are named above; perf's syscalls:sys_enter_X come
     * with its own fields (__syscall_nr, fd, ...): kept raw with them */
    if (k == FTRACE_EV_SYSCALLS_ENTER || k == FTRACE_EV_SYSCALLS_EXIT || k == FTRACE_EV_SYS_ENTER ||
        k == FTRACE_EV_SYS_EXIT)
        k = FTRACE_EV_OTHER;
    return k;
}

/* ---- one event ---- */

static int fail(ctf_map *m, uint64_t n, const char *name, const char *msg)
{
    ingest_errf(m->fr.err, m->fr.errlen, "%s: event %llu (%s): %s", m->fr.path, (unsigned long long)n, name, msg);
    return -1;
}

/* The mapping says "PATH:N: message"; say "PATH: event N (NAME): message". */
static int reword(ctf_map *m, uint64_t n, const char *name)
{
    char pre[600];
    int k = snprintf(pre, sizeof pre, "%s:%llu: ", m->fr.path, (unsigned long long)n);
    if (k > 0 && (size_t)k < sizeof pre && strncmp(m->fr.err, pre, (size_t)k) == 0) {
        snprintf(m->errbuf, sizeof m->errbuf, "%s", m->fr.err + k);
        return fail(m, n, name, m->errbuf);
    }
    return -1;
}

/* The cached facts of an event's name: its kind, the name it is stored
 * under, whether perf wrote it ("system:event"). */
static const ctf_nentry *name_of(ctf_map *m, const ctf_event_in *e)
{
    ctf_nentry *ne = &m->ncache[((uintptr_t)e->name >> 4) % CTF_NCACHE];
    if (ne->key != e->name || ne->ust != e->ust) {
        const char *b = strchr(e->name, ':');
        ne->perf = b != NULL && !e->ust; /* perf's "system:event" */
        ne->base = ne->perf ? b + 1 : e->name;
        if (e->ust) { /* an application's: its name whole, raw */
            ne->k = FTRACE_EV_OTHER;
            ne->old_enter = ne->old_exit = false;
            snprintf(ne->name, sizeof ne->name, "%s", e->name);
        } else {
            ne->k = ftrace_name(m, ne->base, ne->perf, &ne->old_enter, &ne->old_exit);
            memcpy(ne->name, m->name, sizeof ne->name);
        }
        ne->statedump = !ne->perf && !e->ust && strcmp(ne->base, "lttng_statedump_process_state") == 0;
        ne->key = e->name;
        ne->ust = e->ust;
    }
    return ne;
}

/* The task: a context tid (perf_tid; UST's vtid), else the CPU's current
 * task.  1 li's tid, tgid and comm set; 0 nothing says which task it is;
 * -1 failed. */
static int task_of(ctf_map *m, const ctf_event_in *e, uint64_t n, const ctf_cpu *c, bool perf, ftrace_ev_kind k,
                   ftrace_line *li)
{
    ftrace_reader *r = &m->fr;
    const ctf_field *ctx = perf ? e->pay : e->ctx;
    size_t nctx = perf ? e->npay : e->nctx;
    uint32_t tid, tgid;
    const char *comm = NULL;
    size_t cl = 0;
    if (e->ust)
        r->st->ust++;
    bool have_tid = field_u32(ctx, nctx, perf ? "perf_tid" : e->ust ? "vtid" : "tid", &tid);
    if (have_tid) {
        if (field_u32(ctx, nctx, perf ? "perf_pid" : e->ust ? "vpid" : "pid", &tgid) && tgid)
            li->has_tgid = true, li->tgid = tgid;
        uint32_t own;
        if (!field_str(ctx, nctx, "procname", &comm, &cl) && c->known && c->tid == tid)
            comm = c->comm, cl = strlen(c->comm);
        /* perf: a sched event's comm and pid of its own task name it
         * (sched_stat_runtime before the task's first switch) */
        else if (!comm && perf && field_u32(e->pay, e->npay, "pid", &own) && own == tid)
            field_str(e->pay, e->npay, "comm", &comm, &cl);
    } else if (e->ust) {
        /* no vtid: whose it is is not known (skipped; the summary says why) */
        r->st->ust_no_tid++;
    } else if (k == FTRACE_EV_SCHED_SWITCH) {
        /* the switch's own prev, whatever came before */
        uint32_t scpu;
        if (!ingest_ctf_prev_task(e, &scpu, &tid, &comm, &cl))
            return fail(m, n, e->name, "a sched_switch without prev_tid and prev_comm");
        have_tid = true;
    } else if (c->known) {
        tid = c->tid;
        comm = c->comm;
        cl = strlen(c->comm);
        have_tid = true;
    }
    if (!have_tid)
        return 0;
    if (!comm || (tid == 0 && !cl)) {
        comm = tid == 0 ? "swapper" : "<...>";
        cl = strlen(comm);
    }
    li->tid = tid;
    li->comm = comm;
    li->comm_len = cl;
    return 1;
}

/* The context it ran in: perf's flags say; LTTng's kernel events are
 * counted into and out of the CPU's handlers. */
static void context_of(ctf_cpu *c, const ctf_event_in *e, bool perf, ftrace_ev_kind k, ftrace_line *li)
{
    uint64_t flags;
    if (perf && field_u64(e->pay, e->npay, "common_flags", &flags))
        li->ctx = (flags & (CTF_FLAG_HARDIRQ | CTF_FLAG_NMI)) ? DB_CTX_HARDIRQ
                  : (flags & CTF_FLAG_SOFTIRQ)                 ? DB_CTX_SOFTIRQ
                                                               : DB_CTX_THREAD;
    else if (perf)
        li->ctx = DB_CTX_UNKNOWN;
    else if (e->ust) /* an application's code: its thread's, never a handler's */
        li->ctx = DB_CTX_THREAD;
    else {
        if (k == FTRACE_EV_IRQ_ENTRY)
            c->hard++;
        else if (k == FTRACE_EV_SOFTIRQ_ENTRY)
            c->soft++;
        li->ctx = c->hard ? DB_CTX_HARDIRQ : c->soft ? DB_CTX_SOFTIRQ : DB_CTX_THREAD;
        if (k == FTRACE_EV_IRQ_EXIT && c->hard)
            c->hard--;
        else if (k == FTRACE_EV_SOFTIRQ_EXIT && c->soft)
            c->soft--;
        else if (k == FTRACE_EV_SCHED_SWITCH) /* never inside a handler: a lost exit */
            c->hard = c->soft = 0;
    }
}

/* The pairs.  An old LTTng's syscall exit names no syscall: the name its
 * entry had on the thread is kept for it, and *k and *evname become the
 * exit's.  0, or -1 failed. */
static int pairs_with_syscalls(ctf_map *m, const ctf_event_in *e, uint64_t n, const ctf_nentry *ne, uint32_t tid,
                               ftrace_ev_kind *k, const char **evname)
{
    ftrace_reader *r = &m->fr;
    m->tlen = 0;
    r->nkv = 0;
    int rc;
    if (*k == FTRACE_EV_SYSCALLS_ENTER) {
        rc = args_pair(m, e);
        if (rc == 0 && ne->old_enter) {
            ctf_sys *s = sys_slot(m, tid, true);
            if (!s)
                return fail(m, n, e->name, "out of memory");
            snprintf(s->name, sizeof s->name, "%s", ne->base + 4);
        }
    } else if (*k == FTRACE_EV_SYSCALLS_EXIT) {
        uint64_t ret;
        if (!field_u64(e->pay, e->npay, "ret", &ret))
            return fail(m, n, e->name, "a syscall exit without ret");
        char *b = txt_room(m, 24);
        b[0] = '0';
        b[1] = 'x';
        size_t bl = 2 + base_fmt_hex(b + 2, ret, 1);
        m->tlen += bl;
        ingest_ft_kv_add(r, "ret", b, bl);
        rc = 0;
        if (ne->old_exit) {
            ctf_sys *s = sys_slot(m, tid, false);
            if (s && s->name[0])
                snprintf(m->name, sizeof m->name, "sys_exit_%s", s->name);
            else
                *k = FTRACE_EV_OTHER, snprintf(m->name, sizeof m->name, "exit_syscall");
            *evname = m->name;
        }
    } else {
        rc = pairs_of(m, e, *k, ne->perf, *k == FTRACE_EV_PROCESS_FORK);
    }
    if (rc != 0)
        return fail(m, n, e->name, "fields too long for a kernel event");
    return 0;
}

/* Declarations this event makes before it: the thread table at the start
 * (LTTng's statedump), a fork's child in its process.  0, or -1. */
static int declarations(ctf_map *m, const ctf_event_in *e, uint64_t n, const ctf_nentry *ne, ftrace_ev_kind k,
                        uint32_t tid)
{
    ftrace_reader *r = &m->fr;
    if (ne->statedump) {
        uint32_t stid, spid;
        const char *sn;
        size_t snl;
        if (field_u32(e->pay, e->npay, "tid", &stid) && field_u32(e->pay, e->npay, "pid", &spid) &&
            field_str(e->pay, e->npay, "name", &sn, &snl) && snl && stid &&
            ingest_ft_set_thread(r, stid, spid ? spid : stid, sn, snl, false) < 0)
            return reword(m, n, e->name);
    } else if (!ne->perf && k == FTRACE_EV_PROCESS_FORK) {
        uint32_t ctid, cpid;
        const char *cc;
        size_t ccl;
        if (field_u32(e->pay, e->npay, "child_tid", &ctid) && field_u32(e->pay, e->npay, "child_pid", &cpid) &&
            field_str(e->pay, e->npay, "child_comm", &cc, &ccl) && ctid != tid) {
            if (ingest_ft_set_thread(r, ctid, cpid ? cpid : ctid, cc, ccl, true) < 0)
                return reword(m, n, e->name);
            r->last_child = ctid;
            r->have_last_child = true;
        }
    }
    return 0;
}

int ingest_ctf_map_event(ctf_map *m, const ctf_event_in *e, uint64_t n)
{
    ftrace_reader *r = &m->fr;
    r->lineno = n;
    r->st->lines++;
    const ctf_nentry *ne = name_of(m, e);
    const char *evname = ne->name;
    bool perf = ne->perf;
    ftrace_ev_kind k = ne->k;

    /* the CPU */
    int64_t cpu = e->cpu;
    uint32_t pc;
    if (perf && field_u32(e->pay, e->npay, "perf_cpu", &pc))
        cpu = pc;
    if (cpu < 0)
        cpu = 0; /* a packet context without cpu_id: one stream for all */
    ctf_cpu *c = cpu_get(m, (uint32_t)cpu);
    if (!c)
        return fail(m, n, e->name, cpu >= CTF_CPU_MAX ? "CPU number too large" : "out of memory");

    ftrace_line li;
    memset(&li, 0, sizeof li);
    int got = task_of(m, e, n, c, perf, k, &li);
    if (got < 0)
        return -1;
    if (!got) {
        /* nothing says which task ran on this CPU yet: not an event of
         * anyone (counted as skipped) */
        r->st->skipped++;
        if (r->sink->skip)
            r->sink->skip(r->sink->ctx);
        return 0;
    }
    uint32_t tid = li.tid;
    context_of(c, e, perf, k, &li);
    if (pairs_with_syscalls(m, e, n, ne, tid, &k, &evname))
        return -1;
    if (ingest_ft_reserve(r, 8) < 0)
        return reword(m, n, e->name);
    if (declarations(m, e, n, ne, k, tid))
        return -1;

    li.cpu = (uint16_t)cpu;
    li.ts = e->ts;
    li.name = (char *)evname;
    li.name_len = strlen(evname);
    li.fields = "";
    int rc = ingest_ft_event(r, &li, k);
    if (rc == FTRACE_BAD_FIELDS) {
        snprintf(m->errbuf, sizeof m->errbuf, "its fields are not those of %s", evname);
        return fail(m, n, e->name, m->errbuf);
    }
    if (rc < 0)
        return reword(m, n, e->name);

    /* after a switch the next task is the CPU's */
    if (k == FTRACE_EV_SCHED_SWITCH) {
        uint32_t next;
        const char *nc;
        size_t ncl;
        if (field_u32(e->pay, e->npay, perf ? "next_pid" : "next_tid", &next) &&
            field_str(e->pay, e->npay, "next_comm", &nc, &ncl))
            set_comm(c, next, nc, ncl);
    }
    return 0;
}
