/* bench/gen_argus.c -- a synthetic Argus trace (#argus-trace 1) for `make bench`.
 *
 *   gen_argus N OUT [SEED]      N events (exactly), written to OUT ("-": stdout)
 *
 * A discrete-event simulation of a desktop: ~200 processes and ~1000
 * threads.  WindowServer sends input events to the apps (mach_msg); each
 * app's event thread receives them, sets a flag and wakes the app's main
 * thread (a run loop with observers and run-loop timers); the main thread
 * handles the input (nsapp_event), enqueues dispatch blocks to the app's
 * worker threads, and makes synchronous IPC to daemons (send with a reply
 * port, wait, recv of the reply).  Daemons receive on a service port and
 * serve either on the listener (dispatch_mig_service) or on dispatch
 * workers (dispatch_enqueue/invoke, vouchers), with disk I/O waits ended
 * by interrupts on the idle cpus.  Background threads sleep on timers
 * (timer_arm, callouts on kernel thread_call threads, some cancelled and
 * re-armed); syscalls everywhere, with timer-tick interrupts, timeshare
 * maintenance and backtraces inside them.  App workers hand results back
 * to the main run loop (runloop_submit/invoke).
 *
 * Events come out in global time order (a heap of pending lines keyed by
 * time, flushed up to the time of the next simulation step), each thread's
 * in non-decreasing time, every wakeup after its target's wait.  The
 * output is a function of N and SEED only.  Memory is bounded by the
 * number of threads and queued messages, not by N. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (splitmix64 seeded xorshift64*) ---- */

static uint64_t rng_s;

static uint64_t rnd(void)
{
    rng_s ^= rng_s >> 12;
    rng_s ^= rng_s << 25;
    rng_s ^= rng_s >> 27;
    return rng_s * 0x2545F4914F6CDD1Dull;
}

/* uniform in [lo, hi] */
static uint64_t urange(uint64_t lo, uint64_t hi) { return lo + rnd() % (hi - lo + 1); }

/* true with probability p */
static int chance(double p) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0) < p; }

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);
    if (!p) {
        fprintf(stderr, "gen_argus: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- output: pending lines in a heap keyed by (ts, seq) ---- */

#define LINE_MAX_ 240

typedef struct oline {
    uint64_t ts, seq;
    int len;
    char s[LINE_MAX_];
} oline;

static oline *pool;
static uint32_t *ofree, nfree, pcap;
static uint32_t *oheap, on;
static uint64_t oseq, written, target_n;
static FILE *out;

static int oless(uint32_t a, uint32_t b)
{
    return pool[a].ts < pool[b].ts || (pool[a].ts == pool[b].ts && pool[a].seq < pool[b].seq);
}

static void opush(uint32_t i)
{
    size_t k = on++;
    while (k > 0) {
        size_t p = (k - 1) / 2;
        if (!oless(i, oheap[p]))
            break;
        oheap[k] = oheap[p];
        k = p;
    }
    oheap[k] = i;
}

static uint32_t opop(void)
{
    uint32_t top = oheap[0], last = oheap[--on];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= on)
            break;
        if (c + 1 < on && oless(oheap[c + 1], oheap[c]))
            c++;
        if (!oless(oheap[c], last))
            break;
        oheap[k] = oheap[c];
        k = c;
    }
    if (on)
        oheap[k] = last;
    return top;
}

static void ogrow(void)
{
    uint32_t ncap = pcap ? pcap * 2 : 4096;
    pool = realloc(pool, (size_t)ncap * sizeof *pool);
    ofree = realloc(ofree, (size_t)ncap * sizeof *ofree);
    oheap = realloc(oheap, (size_t)ncap * sizeof *oheap);
    if (!pool || !ofree || !oheap) {
        fprintf(stderr, "gen_argus: out of memory\n");
        exit(2);
    }
    for (uint32_t i = ncap; i > pcap; i--)
        ofree[nfree++] = i - 1;
    pcap = ncap;
}

static uint32_t cur_tid; /* the thread the next emit() is about */

static void emit(uint64_t ts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(uint64_t ts, const char *fmt, ...)
{
    if (!nfree)
        ogrow();
    uint32_t i = ofree[--nfree];
    oline *l = &pool[i];
    int n = snprintf(l->s, LINE_MAX_, "%" PRIu64 " %u ", ts, cur_tid);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(l->s + n, LINE_MAX_ - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= LINE_MAX_ - 1)
        n = LINE_MAX_ - 2;
    l->s[n++] = '\n';
    l->len = n;
    l->ts = ts;
    l->seq = oseq++;
    opush(i);
}

/* Writes the pending lines with ts <= t, stopping at target_n events. */
static void flush_upto(uint64_t t)
{
    while (on && written < target_n && pool[oheap[0]].ts <= t) {
        uint32_t i = opop();
        fwrite(pool[i].s, 1, (size_t)pool[i].len, out);
        written++;
        ofree[nfree++] = i;
    }
}

/* ---- the world ---- */

typedef struct item { /* a message, a dispatch block, a run-loop block, an input event */
    uint64_t avail;    /* time it became available (the consumer's clock moves past it) */
    uint64_t kmsg, reply, block;
    uint32_t id, from; /* msgh_id; the sending thread's index */
} item;

typedef struct fifo {
    item *v;
    uint32_t head, n, cap;
} fifo;

static void fpush(fifo *f, item it)
{
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? f->cap * 2 : 16;
        item *v = xcalloc(cap, sizeof *v);
        for (uint32_t i = 0; i < f->n; i++)
            v[i] = f->v[(f->head + i) % f->cap];
        free(f->v);
        f->v = v;
        f->head = 0;
        f->cap = cap;
    }
    f->v[(f->head + f->n++) % f->cap] = it;
}

static item fpop(fifo *f)
{
    item it = f->v[f->head];
    f->head = (f->head + 1) % f->cap;
    f->n--;
    return it;
}

enum { P_KERNEL, P_WS, P_DAEMON, P_APP };
enum { R_KCALL, R_KIDLE, R_WS, R_MAIN, R_EVT, R_WORKER, R_BG, R_LISTEN };
enum { W_NONE, W_RUNLOOP, W_REPLY, W_SEM, W_IO, W_TIMER, W_MSG };
enum { PH_START, PH_WOKEN, PH_REPLY, PH_IO };

typedef struct proc {
    uint32_t pid;
    int kind, mig;
    char name[48];
    uint32_t t0, nt;     /* its threads: indices t0 .. t0+nt-1 */
    uint32_t main_t, evt_t, w0, nw;
    uint64_t port;       /* service port (daemon) or event port (app) */
    uint64_t dq, rl, flag, func;
    int64_t flagval;
    fifo msgs, work, rlq, input;
} proc;

typedef struct thr {
    uint32_t tid, proc;
    int role, phase, wait_on;
    uint64_t block_ts, last;  /* ts of its latest wait; of its latest event */
    uint64_t timer, reply_port;
    uint32_t timer_gen;
    int timer_armed, timer_fired;
    item cur;                 /* the work item under way (across an I/O wait) */
    item rep;                 /* the reply it waits for (W_REPLY), or received */
    uint32_t peer_pid;
} thr;

static proc *procs;
static uint32_t nprocs;
static thr *thrs;
static uint32_t nthrs;
static uint32_t *daemons, ndaemons, *apps, napps;
static uint32_t kcall0, nkcall, kidle0, nkidle;
static uint64_t kmsg_seq, block_seq, voucher_seq;

/* ---- the simulation's agenda: thread steps, timer expiries, I/O completions ---- */

enum { A_STEP, A_TIMER, A_IO };

typedef struct agent {
    uint64_t t, seq;
    uint32_t kind, idx, gen;
} agent;

static agent *ah;
static size_t an, acap;
static uint64_t aseq;

static int aless(const agent *a, const agent *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }

static void apush(uint64_t t, uint32_t kind, uint32_t idx, uint32_t gen)
{
    if (an == acap) {
        acap = acap ? acap * 2 : 1024;
        ah = realloc(ah, acap * sizeof *ah);
        if (!ah) {
            fprintf(stderr, "gen_argus: out of memory\n");
            exit(2);
        }
    }
    agent x = {t, aseq++, kind, idx, gen};
    size_t k = an++;
    while (k > 0) {
        size_t p = (k - 1) / 2;
        if (!aless(&x, &ah[p]))
            break;
        ah[k] = ah[p];
        k = p;
    }
    ah[k] = x;
}

static agent apop(void)
{
    agent top = ah[0], last = ah[--an];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= an)
            break;
        if (c + 1 < an && aless(&ah[c + 1], &ah[c]))
            c++;
        if (!aless(&ah[c], &last))
            break;
        ah[k] = ah[c];
        k = c;
    }
    if (an)
        ah[k] = last;
    return top;
}

/* ---- event helpers ---- */

static uint64_t mx(uint64_t a, uint64_t b) { return a > b ? a : b; }

static const struct {
    const char *name;
    int nr;
} sysc[] = {
    {"read", 3},          {"write", 4},        {"open", 5},         {"close", 6},
    {"ioctl", 54},        {"mmap", 197},       {"munmap", 73},      {"stat64", 338},
    {"fstat64", 339},     {"pread", 153},      {"pwrite", 154},     {"getattrlist", 220},
    {"kevent_id", 375},   {"workq_kernreturn", 368}, {"bsdthread_ctl", 478},
    {"psynch_mutexwait", 301}, {"psynch_mutexdrop", 302}, {"proc_info", 336},
    {"csops", 169},       {"select", 93},      {"getentropy", 500}, {"madvise", 75},
};
#define NSYSC (sizeof sysc / sizeof sysc[0])

/* Some noise inside a running thread: a timer-tick interrupt, timeshare
 * maintenance, a backtrace sample. */
static void noise(thr *t, uint64_t *c)
{
    if (chance(0.03)) {
        int irq = chance(0.7) ? 0 : (int)urange(40, 63);
        emit(*c += urange(1, 4000), "interrupt begin irq=%d", irq);
        emit(*c += urange(1000, 6000), "interrupt end irq=%d", irq);
    }
    if (chance(0.004)) {
        emit(*c += urange(1, 2000), "timeshare begin");
        emit(*c += urange(1000, 4000), "timeshare end");
    }
    if (chance(0.02))
        emit(*c += urange(100, 2000), "backtrace frames=0x%" PRIx64 ",0x%" PRIx64 ",0x7fff2f19e000",
             procs[t->proc].func + urange(0, 64) * 16, (uint64_t)0x7fff2c1e4000ull + urange(0, 255) * 16);
}

static void sys(thr *t, uint64_t *c)
{
    int s = (int)(rnd() % NSYSC);
    emit(*c += urange(500, 8000), "syscall begin name=%s nr=%d", sysc[s].name, sysc[s].nr);
    noise(t, c);
    *c += chance(0.05) ? urange(50000, 900000) : urange(800, 30000);
    emit(*c, "syscall end name=%s nr=%d ret=%d", sysc[s].name, sysc[s].nr,
         chance(0.04) ? -(int)urange(1, 60) : (int)urange(0, 4096));
}

static void syscalls(thr *t, uint64_t *c, int lo, int hi)
{
    for (int k = (int)urange((uint64_t)lo, (uint64_t)hi); k > 0; k--)
        sys(t, c);
}

/* The thread blocks here (a `wait`), until a waker whose wait kind is w. */
static void block(thr *t, uint64_t c, const char *reason, int w, int phase)
{
    emit(c, "wait reason=%s", reason);
    t->block_ts = c;
    t->last = c;
    t->wait_on = w;
    t->phase = phase;
}

/* The current thread (cur_tid) wakes x at *c, if x waits on w. */
static int wake(uint64_t *c, thr *x, int w, const char *reason)
{
    if (x->wait_on != w)
        return 0;
    *c = mx(*c + urange(200, 2000), x->block_ts + 1);
    emit(*c, "wakeup tid=%u reason=%s", x->tid, reason);
    x->wait_on = W_NONE;
    apush(*c + urange(3000, 40000), A_STEP, (uint32_t)(x - thrs), 0);
    return 1;
}

/* The thread continues running at c + gap. */
static void later(thr *t, uint64_t c, uint64_t gap)
{
    t->last = c;
    apush(c + gap, A_STEP, (uint32_t)(t - thrs), 0);
}

static void arm_timer(thr *t, uint64_t *c, uint64_t delay)
{
    t->timer_gen++;
    t->timer_armed = 1;
    t->timer_fired = 0;
    *c += urange(500, 3000);
    emit(*c, "timer_arm timer=0x%" PRIx64 " deadline=%" PRIu64 " func=0x%" PRIx64, t->timer, *c + delay,
         procs[t->proc].func + 0x40);
    apush(*c + delay, A_TIMER, (uint32_t)(t - thrs), t->timer_gen);
}

static void cancel_timer(thr *t, uint64_t *c)
{
    emit(*c += urange(500, 3000), "timer_cancel timer=0x%" PRIx64, t->timer);
    t->timer_gen++;
    t->timer_armed = 0;
}

static uint64_t new_kmsg(void) { return 0xffffff80aa000000ull + (kmsg_seq++ % 65536) * 0x100; }

static uint64_t new_block(const proc *p)
{
    return 0x600000c00000ull + ((uint64_t)p->pid << 24) + (block_seq++ % 4096) * 0x40;
}

/* Apps talk to a few daemons much more than to the others. */
static proc *pick_daemon(void)
{
    double r = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
    return &procs[daemons[(uint32_t)(r * r * ndaemons)]];
}

/* A synchronous request: send to daemon d with this thread's reply port,
 * wake the daemon's listener, and wait for the reply (phase PH_REPLY). */
static void request(thr *t, uint64_t *c, proc *d)
{
    item m = {0};
    m.kmsg = new_kmsg();
    m.reply = t->reply_port;
    m.id = (uint32_t)urange(1, 80) + (d->pid % 50) * 100;
    m.from = (uint32_t)(t - thrs);
    *c += urange(1000, 10000);
    m.avail = *c;
    emit(*c, "mach_msg send dest=0x%" PRIx64 " reply=0x%" PRIx64 " id=%u kmsg=0x%" PRIx64 " peer=%u",
         d->port, m.reply, m.id, m.kmsg, d->pid);
    fpush(&d->msgs, m);
    wake(c, &thrs[d->main_t], W_MSG, "mach_msg");
    t->peer_pid = d->pid;
    block(t, *c += urange(300, 2000), "mach_msg", W_REPLY, PH_REPLY);
}

/* The reply to m, sent by the current thread (a daemon's) at *c. */
static void reply(proc *d, uint64_t *c, const item *m)
{
    thr *cl = &thrs[m->from];
    item r = {0};
    r.kmsg = new_kmsg();
    r.id = m->id + 100;
    emit(*c += urange(1000, 8000), "mach_msg send dest=0x%" PRIx64 " reply=0 id=%u kmsg=0x%" PRIx64 " peer=%u",
         m->reply, r.id, r.kmsg, procs[cl->proc].pid);
    r.avail = *c;
    r.reply = m->reply;
    cl->rep = r;
    cl->peer_pid = d->pid;
    wake(c, cl, W_REPLY, "mach_msg");
}

static void recv_reply(thr *t, uint64_t *c)
{
    *c = mx(*c, t->rep.avail + 1);
    emit(*c += urange(500, 3000), "mach_msg recv dest=0x%" PRIx64 " reply=0 id=%u kmsg=0x%" PRIx64 " peer=%u",
         t->rep.reply, t->rep.id, t->rep.kmsg, t->peer_pid);
}

static void enqueue(proc *p, uint64_t *c)
{
    item w = {0};
    w.block = new_block(p);
    w.id = (uint32_t)urange(0, 31);
    emit(*c += urange(500, 4000), "dispatch_enqueue queue=0x%" PRIx64 " block=0x%" PRIx64, p->dq, w.block);
    w.avail = *c;
    fpush(&p->work, w);
    for (uint32_t i = 0; i < p->nw; i++)
        if (wake(c, &thrs[p->w0 + i], W_SEM, "semaphore"))
            break;
}

/* ---- the roles ---- */

static void main_idle(thr *t, uint64_t c);

static void main_handle(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    if (t->timer_armed && !t->timer_fired)
        cancel_timer(t, &c);
    if (t->timer_fired) { /* a run-loop timer fired: its callout */
        t->timer_fired = 0;
        emit(c += urange(500, 3000), "runloop_observer stage=before_timers");
        syscalls(t, &c, 1, 3);
    }
    for (int k = 0; k < 3 && p->rlq.n; k++) {
        item b = fpop(&p->rlq);
        c = mx(c, b.avail + 1);
        emit(c += urange(500, 3000), "runloop_invoke begin rl=0x%" PRIx64 " block=0x%" PRIx64 " func=0x%" PRIx64,
             p->rl, b.block, p->func + b.id * 0x20);
        syscalls(t, &c, 1, 2);
        emit(c += urange(500, 3000), "runloop_invoke end rl=0x%" PRIx64 " block=0x%" PRIx64, p->rl, b.block);
    }
    if (p->input.n) {
        item in = fpop(&p->input);
        c = mx(c, in.avail + 1);
        emit(c += urange(500, 3000), "flag_read addr=0x%" PRIx64 " value=%" PRId64, p->flag, p->flagval);
        p->flagval = 0;
        emit(c += urange(200, 1000), "flag_write addr=0x%" PRIx64 " value=0", p->flag);
        t->cur = in;
        emit(c += urange(500, 3000), "nsapp_event begin class=%u", in.id);
        syscalls(t, &c, 1, 4);
        if (chance(0.35))
            enqueue(p, &c);
        if (chance(0.3)) {
            request(t, &c, pick_daemon());
            return;
        }
        emit(c += urange(500, 3000), "nsapp_event end class=%u", in.id);
    }
    main_idle(t, c);
}

static void main_idle(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    emit(c += urange(500, 3000), "runloop_observer stage=before_sources");
    if (p->rlq.n || p->input.n) {
        later(t, c, urange(1000, 5000));
        t->phase = PH_WOKEN;
        return;
    }
    emit(c += urange(500, 3000), "runloop_observer stage=before_waiting");
    if (chance(0.3))
        arm_timer(t, &c, urange(2000000, 50000000));
    block(t, c += urange(500, 3000), "mach_msg", W_RUNLOOP, PH_WOKEN);
}

static void step_main(thr *t, uint64_t c)
{
    switch (t->phase) {
    case PH_START:
        emit(c, "runloop_observer stage=entry");
        main_idle(t, c);
        break;
    case PH_WOKEN:
        emit(c, "runloop_observer stage=after_waiting");
        main_handle(t, c);
        break;
    case PH_REPLY:
        recv_reply(t, &c);
        syscalls(t, &c, 0, 2);
        emit(c += urange(500, 3000), "nsapp_event end class=%u", t->cur.id);
        main_idle(t, c);
        break;
    }
}

static void step_evt(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    for (int k = 0; k < 3 && p->msgs.n; k++) {
        item m = fpop(&p->msgs);
        c = mx(c, m.avail + 1);
        emit(c += urange(500, 3000), "mach_msg recv dest=0x%" PRIx64 " reply=0 id=%u kmsg=0x%" PRIx64 " peer=%u",
             p->port, m.id, m.kmsg, procs[thrs[m.from].proc].pid);
        emit(c += urange(300, 2000), "flag_read addr=0x%" PRIx64 " value=%" PRId64, p->flag, p->flagval);
        item in = {0};
        in.id = m.id;
        in.avail = c;
        fpush(&p->input, in);
        if (p->flagval == 0) {
            p->flagval = 1;
            emit(c += urange(300, 2000), "flag_write addr=0x%" PRIx64 " value=1", p->flag);
        }
        wake(&c, &thrs[p->main_t], W_RUNLOOP, "runloop");
    }
    if (p->msgs.n)
        later(t, c, urange(1000, 5000));
    else
        block(t, c + urange(500, 3000), "mach_msg", W_MSG, PH_WOKEN);
}

/* The end of a work item: a daemon replies, an app may hand a result to
 * its main run loop. */
static void work_done(thr *t, uint64_t *c)
{
    proc *p = &procs[t->proc];
    if (p->kind == P_DAEMON && t->cur.reply) {
        reply(p, c, &t->cur);
    } else if (p->kind == P_APP && chance(0.4)) {
        item b = {0};
        b.block = new_block(p);
        b.id = (uint32_t)urange(0, 31);
        emit(*c += urange(500, 3000), "runloop_submit rl=0x%" PRIx64 " block=0x%" PRIx64, p->rl, b.block);
        b.avail = *c;
        fpush(&p->rlq, b);
        wake(c, &thrs[p->main_t], W_RUNLOOP, "runloop");
    }
    emit(*c += urange(500, 3000), "dispatch_invoke end queue=0x%" PRIx64 " block=0x%" PRIx64, p->dq, t->cur.block);
}

static void step_worker(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    if (t->phase == PH_IO) {
        emit(c, "syscall end name=pread nr=153 ret=%d", (int)urange(512, 65536));
        work_done(t, &c);
    }
    for (int k = 0; k < 3 && p->work.n; k++) {
        t->cur = fpop(&p->work);
        c = mx(c, t->cur.avail + 1);
        emit(c += urange(500, 3000), "dispatch_invoke begin queue=0x%" PRIx64 " block=0x%" PRIx64 " func=0x%" PRIx64,
             p->dq, t->cur.block, p->func + t->cur.id * 0x20);
        if (p->kind == P_DAEMON && t->cur.reply && chance(0.5))
            emit(c += urange(300, 2000), "voucher addr=0x%" PRIx64 " on_behalf_of=%u",
                 (uint64_t)0xffffff80bb000000ull + (voucher_seq++ % 4096) * 0x80, procs[thrs[t->cur.from].proc].pid);
        syscalls(t, &c, 1, 3);
        if (chance(0.2)) { /* disk I/O: the completion interrupt wakes it */
            emit(c += urange(500, 3000), "syscall begin name=pread nr=153");
            block(t, c += urange(1000, 5000), "io", W_IO, PH_IO);
            apush(c + urange(80000, 4000000), A_IO, (uint32_t)(t - thrs), 0);
            return;
        }
        work_done(t, &c);
    }
    if (p->work.n)
        later(t, c, urange(1000, 5000));
    else
        block(t, c + urange(500, 3000), "semaphore", W_SEM, PH_WOKEN);
}

static void step_listen(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    for (int k = 0; k < 4 && p->msgs.n; k++) {
        item m = fpop(&p->msgs);
        c = mx(c, m.avail + 1);
        uint32_t cpid = procs[thrs[m.from].proc].pid;
        emit(c += urange(500, 3000),
             "mach_msg recv dest=0x%" PRIx64 " reply=0x%" PRIx64 " id=%u kmsg=0x%" PRIx64 " peer=%u", p->port,
             m.reply, m.id, m.kmsg, cpid);
        if (p->mig) { /* served on the listener, inside dispatch_mig_service */
            emit(c += urange(300, 2000), "dispatch_mig_service begin");
            syscalls(t, &c, 1, 3);
            reply(p, &c, &m);
            emit(c += urange(300, 2000), "dispatch_mig_service end");
        } else {
            item w = m;
            w.block = new_block(p);
            emit(c += urange(500, 3000), "dispatch_enqueue queue=0x%" PRIx64 " block=0x%" PRIx64, p->dq, w.block);
            w.avail = c;
            fpush(&p->work, w);
            for (uint32_t i = 0; i < p->nw; i++)
                if (wake(&c, &thrs[p->w0 + i], W_SEM, "semaphore"))
                    break;
        }
    }
    if (p->msgs.n)
        later(t, c, urange(1000, 5000));
    else
        block(t, c + urange(500, 3000), "mach_msg", W_MSG, PH_WOKEN);
}

/* Background threads: periodic timers, syscalls, file I/O, requests. */
static void bg_sleep(thr *t, uint64_t c)
{
    arm_timer(t, &c, urange(10000000, 400000000));
    if (chance(0.1)) { /* rescheduled: cancel and arm again */
        cancel_timer(t, &c);
        arm_timer(t, &c, urange(5000000, 300000000));
    }
    block(t, c += urange(500, 3000), "timer", W_TIMER, PH_WOKEN);
}

static void step_bg(thr *t, uint64_t c)
{
    proc *p = &procs[t->proc];
    switch (t->phase) {
    case PH_START:
        bg_sleep(t, c + urange(0, 100000000));
        return;
    case PH_WOKEN:
        t->timer_armed = 0;
        syscalls(t, &c, 2, 6);
        if (p->kind == P_APP && chance(0.25))
            enqueue(p, &c);
        if (chance(0.3)) {
            request(t, &c, pick_daemon());
            return;
        }
        break;
    case PH_REPLY:
        recv_reply(t, &c);
        syscalls(t, &c, 0, 2);
        break;
    }
    bg_sleep(t, c);
}

/* WindowServer: input events to the apps, a few of them much more than others. */
static void step_ws(thr *t, uint64_t c)
{
    if (t->phase != PH_START) {
        t->timer_armed = 0;
        syscalls(t, &c, 0, 1);
        double r = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
        proc *a = &procs[apps[(uint32_t)(r * r * r * napps)]];
        item m = {0};
        m.kmsg = new_kmsg();
        m.id = (uint32_t)urange(1, 12);
        m.from = (uint32_t)(t - thrs);
        emit(c += urange(1000, 5000), "mach_msg send dest=0x%" PRIx64 " reply=0 id=%u kmsg=0x%" PRIx64 " peer=%u",
             a->port, m.id, m.kmsg, a->pid);
        m.avail = c;
        fpush(&a->msgs, m);
        wake(&c, &thrs[a->evt_t], W_MSG, "mach_msg");
    }
    arm_timer(t, &c, urange(300000, 3000000));
    block(t, c += urange(500, 3000), "timer", W_TIMER, PH_WOKEN);
}

/* ---- timer callouts and I/O completions, on kernel threads ---- */

static void on_timer(agent a)
{
    thr *o = &thrs[a.idx];
    if (o->timer_gen != a.gen || !o->timer_armed)
        return; /* cancelled */
    thr *k = &thrs[kcall0];
    for (uint32_t i = 1; i < nkcall; i++)
        if (thrs[kcall0 + i].last < k->last)
            k = &thrs[kcall0 + i];
    cur_tid = k->tid;
    uint64_t c = mx(a.t, k->last + 1);
    emit(c, "timer_callout begin timer=0x%" PRIx64, o->timer);
    o->timer_fired = 1;
    o->timer_armed = 0;
    if (!wake(&c, o, W_TIMER, "timer"))
        wake(&c, o, W_RUNLOOP, "timer");
    emit(c += urange(1000, 5000), "timer_callout end timer=0x%" PRIx64, o->timer);
    emit(c += urange(500, 2000), "wait reason=thread_call");
    k->last = c;
}

static void on_io(agent a)
{
    thr *o = &thrs[a.idx];
    thr *k = &thrs[kidle0 + (uint32_t)(rnd() % nkidle)];
    cur_tid = k->tid;
    uint64_t c = mx(a.t, k->last + 1);
    emit(c, "interrupt begin irq=58");
    wake(&c, o, W_IO, "io");
    emit(c += urange(1000, 5000), "interrupt end irq=58");
    k->last = c;
}

/* ---- setup ---- */

static const char *const app_names[] = {
    "Safari", "Mail", "Xcode", "Finder", "Terminal", "TextEdit", "Preview", "Notes", "Calendar",
    "Messages", "Music", "Photos", "Pages", "Keynote", "Numbers", "Slack", "Zoom", "Chrome",
    "Firefox", "Spotify", "Reminders", "Maps", "Books", "Podcasts", "Contacts", "FaceTime", "News",
    "Stocks", "Weather", "Activity Monitor", "Console", "System Settings", "App Store", "Discord",
};
static const char *const daemon_names[] = {
    "launchservicesd", "cfprefsd", "mds", "mds_stores", "fontd", "coreaudiod", "distnoted",
    "notifyd", "configd", "opendirectoryd", "securityd", "trustd", "syslogd", "mDNSResponder",
    "bluetoothd", "powerd", "logd", "coreservicesd", "diskarbitrationd", "usbd", "lsd", "tccd",
    "nsurlsessiond", "cloudd", "bird", "sharingd", "locationd", "airportd",
};
#define NAPP_NAMES (sizeof app_names / sizeof app_names[0])
#define NDAEMONS (sizeof daemon_names / sizeof daemon_names[0])
#define NAPPS 170

static uint32_t next_tid = 1000;

static uint32_t add_thread(uint32_t pi, int role)
{
    thr *t = &thrs[nthrs];
    memset(t, 0, sizeof *t);
    t->proc = pi;
    t->role = role;
    t->tid = procs[pi].kind == P_KERNEL ? 100 + nthrs : next_tid++;
    t->timer = 0xffffff8033300000ull + (uint64_t)nthrs * 0x80;
    t->reply_port = 0xffffff8022200000ull + (uint64_t)nthrs * 0x100;
    if (procs[pi].nt == 0)
        procs[pi].t0 = nthrs;
    procs[pi].nt++;
    return nthrs++;
}

static uint32_t add_proc(int kind, uint32_t pid, const char *name)
{
    proc *p = &procs[nprocs];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->pid = pid;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->port = 0xffffff8011100000ull + (uint64_t)nprocs * 0x1000;
    p->dq = 0x7fff80000000ull + (uint64_t)nprocs * 0x100;
    p->rl = 0x600001f00000ull + (uint64_t)nprocs * 0x1000;
    p->flag = 0x7fff8f200000ull + (uint64_t)nprocs * 0x10;
    p->func = 0x100000000ull + (uint64_t)nprocs * 0x100000;
    return nprocs++;
}

static void setup(void)
{
    procs = xcalloc(2 + NDAEMONS + NAPPS, sizeof *procs);
    thrs = xcalloc(16 + 8 * (NDAEMONS + NAPPS), sizeof *thrs);
    daemons = xcalloc(NDAEMONS, sizeof *daemons);
    apps = xcalloc(NAPPS, sizeof *apps);

    uint32_t k = add_proc(P_KERNEL, 0, "kernel_task");
    nkcall = 4;
    kcall0 = nthrs;
    for (uint32_t i = 0; i < nkcall; i++)
        add_thread(k, R_KCALL);
    nkidle = 2;
    kidle0 = nthrs;
    for (uint32_t i = 0; i < nkidle; i++)
        add_thread(k, R_KIDLE);

    uint32_t ws = add_proc(P_WS, 88, "WindowServer");
    procs[ws].main_t = add_thread(ws, R_WS);

    for (uint32_t i = 0; i < NDAEMONS; i++) {
        uint32_t d = add_proc(P_DAEMON, 100 + i * 3, daemon_names[i]);
        proc *p = &procs[d];
        p->mig = i % 3 == 1;
        p->main_t = add_thread(d, R_LISTEN);
        p->nw = p->mig ? 1 : (uint32_t)urange(2, 4);
        p->w0 = nthrs;
        for (uint32_t w = 0; w < p->nw; w++)
            add_thread(d, R_WORKER);
        add_thread(d, R_BG);
        daemons[ndaemons++] = d;
    }
    for (uint32_t i = 0; i < NAPPS; i++) {
        char name[48];
        if (i < NAPP_NAMES)
            snprintf(name, sizeof name, "%s", app_names[i]);
        else
            snprintf(name, sizeof name, "%s Helper %u", app_names[i % NAPP_NAMES], (unsigned)(i / NAPP_NAMES));
        uint32_t a = add_proc(P_APP, 300 + i * 7, name);
        proc *p = &procs[a];
        p->main_t = add_thread(a, R_MAIN);
        p->evt_t = add_thread(a, R_EVT);
        p->nw = (uint32_t)urange(1, 5);
        p->w0 = nthrs;
        for (uint32_t w = 0; w < p->nw; w++)
            add_thread(a, R_WORKER);
        add_thread(a, R_BG);
        apps[napps++] = a;
    }
}

static void thread_name(const thr *t, char *buf, size_t n)
{
    const proc *p = &procs[t->proc];
    switch (t->role) {
    case R_KCALL: snprintf(buf, n, "thread_call"); break;
    case R_KIDLE: snprintf(buf, n, "idle/%u", (unsigned)(t - thrs) - kidle0); break;
    case R_WS: snprintf(buf, n, "ws.main"); break;
    case R_MAIN: snprintf(buf, n, "main"); break;
    case R_EVT: snprintf(buf, n, "com.apple.NSEventThread"); break;
    case R_WORKER:
        snprintf(buf, n, "com.apple.root.%s-qos", ((t - thrs) % 3) == 0 ? "user-initiated" : "default");
        break;
    case R_LISTEN: snprintf(buf, n, "com.apple.%s.listener", p->name); break;
    case R_BG: snprintf(buf, n, "%s.bg.%u", p->name, p->pid); break;
    }
    for (char *s = buf; *s; s++)
        if (*s == ' ')
            *s = '-';
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: gen_argus N OUT [SEED]\n");
        return 2;
    }
    target_n = strtoull(argv[1], NULL, 10);
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 20240601;
    rng_s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (!rng_s)
        rng_s = 1;
    out = strcmp(argv[2], "-") ? fopen(argv[2], "w") : stdout;
    if (!out) {
        perror(argv[2]);
        return 2;
    }
    static char obuf[1 << 20];
    setvbuf(out, obuf, _IOFBF, sizeof obuf);

    setup();
    fprintf(out, "#argus-trace 1\n# bench/gen_argus %" PRIu64 " events, seed %" PRIu64
                 ": %u processes, %u threads\n", target_n, seed, nprocs, nthrs);
    for (uint32_t i = 0; i < nprocs; i++) {
        proc *p = &procs[i];
        fprintf(out, "proc %u \"%s\"\n", p->pid, p->name);
        for (uint32_t j = 0; j < p->nt; j++) {
            thr *t = &thrs[p->t0 + j];
            char name[96];
            thread_name(t, name, sizeof name);
            fprintf(out, "thread %u %u \"%s\"%s%s\n", p->pid, t->tid, name, t->role == R_MAIN ? " main" : "",
                    t->role == R_MAIN || t->role == R_EVT || t->role == R_WS ? " runloop" : "");
        }
        if (p->kind == P_APP || p->kind == P_DAEMON)
            fprintf(out, "symbol 0x%" PRIx64 " \"%s`handler\"\n", p->func, p->name);
    }

    const uint64_t t0 = 1000000000000ull; /* 1000 s */
    for (uint32_t i = 0; i < nthrs; i++)
        if (thrs[i].role != R_KCALL && thrs[i].role != R_KIDLE)
            apush(t0 + urange(0, 20000000), A_STEP, i, 0);
        else
            thrs[i].last = t0;

    uint64_t now = t0;
    while (written < target_n && an) {
        agent a = apop();
        now = a.t;
        flush_upto(now);
        switch (a.kind) {
        case A_STEP: {
            thr *t = &thrs[a.idx];
            cur_tid = t->tid;
            uint64_t c = mx(a.t, t->last);
            switch (t->role) {
            case R_WS: step_ws(t, c); break;
            case R_MAIN: step_main(t, c); break;
            case R_EVT: step_evt(t, c); break;
            case R_WORKER: step_worker(t, c); break;
            case R_LISTEN: step_listen(t, c); break;
            case R_BG: step_bg(t, c); break;
            }
            break;
        }
        case A_TIMER: on_timer(a); break;
        case A_IO: on_io(a); break;
        }
    }
    flush_upto(UINT64_MAX);
    if (fflush(out) != 0 || (out != stdout && fclose(out) != 0)) {
        perror(argv[2]);
        return 2;
    }
    fprintf(stderr, "gen_argus: %" PRIu64 " events, %u processes, %u threads, %.1f s of trace\n", written,
            nprocs, nthrs, (double)(now - t0) / 1e9);
    return written == target_n ? 0 : 1;
}
