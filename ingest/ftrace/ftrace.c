/* ingest/ftrace/ftrace.c -- the Linux ftrace text reader: the line loop, the
 * thread/process table, and one event from its canonical pairs to the
 * sink (shared with the trace.dat reader, tracedat.c, and the other kernel
 * readers: ftrace_map_int.h).  A line's text
 * becomes its canonical pairs in ftrace_text.c, the pairs an event in
 * ftrace_map.c and ftrace_sched.c; the field helpers and the attribute
 * buffer are in ftrace_fields.c, the line scanners in ftrace_lex.re.  The
 * lines come from ftrace_page.c (a systrace page's text), the names of
 * `<...>` tasks that only later lines give from ftrace_ahead.c.
 *
 * Sink call order (what the db writer may rely on):
 *   - sink->proc(pid) comes before the first sink->thread of that pid;
 *   - sink->thread(tid) comes before the first event of tid, and again
 *     whenever tid moves to another process or is renamed;
 *   - the declarations a line causes (its own task, the child of a
 *     fork/newtask, a rename) come before that line's sink->event;
 *   - one sink->event per event line, in file order; sink->skip per
 *     header line (cpus=2, CPU 0 is empty, ...); nothing for comments.
 *
 * Memory: one line buffer, one attribute buffer reused for every event,
 * and the tid table, which grows with the number of distinct tids only. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace_int.h"


enum {
    T_THREAD = 2, /* the thread was declared (sink->thread) */
    T_COL = 4,    /* col holds the hash of the comm column last seen */
    T_PROC = 8,   /* tid is also a declared process id (sink->proc) */
    T_PNAMED = 16, /* that process name came from its leader or an exec */
    T_EVENT = 32,  /* ts, ts_line: the thread's latest event */
    T_FNAME = 64,  /* not declared yet; name holds the comm a field gave it */
    T_TGID = 128   /* tgid: the saved table's TGID of tid (0: none) */
};

struct ftrace_tent {
    uint32_t pid;
    uint32_t flags;
    uint32_t tgid;  /* T_TGID */
    uint64_t col;   /* hash of the comm column of tid's own lines */
    uint64_t pname; /* hash of the declared name of process tid */
    uint64_t ts, ts_line; /* timestamp and line of tid's latest event */
    char name[DB_NAME_MAX];
};

static uint64_t hash_str(const char *s, size_t n) { return ingest_ft_comm_hash(s, n); }

int ingest_ft_fail(ftrace_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ingest_vfail(r->err, r->errlen, r->path, r->lineno, fmt, ap);
    va_end(ap);
    return -1;
}

static int sink_failed(ftrace_reader *r)
{
    return ingest_sink_failed(r->err, r->errlen, r->path, r->lineno);
}

/* ---- tid table: the entries in r->tab, in the order the tids came;
 * r->tids maps a tid to its entry ---- */

static ftrace_tent *tab_find(ftrace_reader *r, uint32_t tid)
{
    uint32_t i;
    return base_map_get(&r->tids, tid, &i) ? &r->tab[i] : NULL;
}

/* Growing happens only here (ingest_ft_reserve), before a line takes any
 * pointer into the table, so the pointers of one line stay valid.  The
 * map first, then the entries to the map's room: r->tcap never passes
 * what the map holds without growing, so ingest_ft_reserve's one test
 * covers both, and a failure leaves that so.  The entries get twice the
 * room, as the open table before them had slots: a line that added more
 * tids than it reserved (a miscount, which tab_get's assert finds in the
 * tests) writes into the spare half, not past the array. */
int ingest_ft_tab_grow(ftrace_reader *r, size_t n)
{
    if (base_map_reserve(&r->tids, n) < 0)
        return ingest_ft_fail(r, "out of memory (%zu threads)", r->tused);
    size_t room = r->tids.cap / 2;
    if (room > r->tcap) {
        ftrace_tent *tab = realloc(r->tab, 2 * room * sizeof *tab);
        if (!tab)
            return ingest_ft_fail(r, "out of memory (%zu threads)", r->tused);
        r->tab = tab;
        r->tcap = room;
    }
    return 0;
}

/* The entry of tid, added if new: never fails, ingest_ft_reserve made room. */
static ftrace_tent *tab_get(ftrace_reader *r, uint32_t tid)
{
    ftrace_tent *t = tab_find(r, tid);
    if (t)
        return t;
    assert(r->tused < r->tcap && (r->tused + 1) * 2 <= r->tids.cap);
    int rc = base_map_put(&r->tids, tid, (uint32_t)r->tused);
    assert(rc == 0);
    (void)rc;
    t = &r->tab[r->tused++];
    memset(t, 0, sizeof *t);
    t->pid = tid;
    return t;
}

/* ---- declarations ---- */

static int emit_proc(ftrace_reader *r, uint32_t pid, const char *name)
{
    if (r->sink->proc && r->sink->proc(r->sink->ctx, pid, name, r->err, r->errlen) != 0)
        return sink_failed(r);
    return 0;
}

static void copy_name(char *dst, const char *s, size_t n, size_t max)
{
    if (n > max)
        n = max;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Requirement 6: a process is declared when first seen, named after its
 * leader's comm if the leader is known, else after the thread that showed
 * it; afterwards it follows its leader's renames (a process's comm is its
 * leader's comm).  pid 0 is the idle task: process "swapper". */
static int ensure_proc(ftrace_reader *r, uint32_t pid, const char *name, bool leader)
{
    ftrace_tent *p = tab_get(r, pid);
    if (pid == 0) {
        if (p->flags & T_PROC)
            return 0;
        p->flags |= T_PROC | T_PNAMED;
        return emit_proc(r, 0, "swapper");
    }
    if (!(p->flags & T_PROC)) {
        if (!leader && (((p->flags & T_THREAD) && p->pid == pid) || (p->flags & (T_THREAD | T_FNAME)) == T_FNAME)) {
            name = p->name; /* the leader's comm, from its lines or a field */
            leader = true;
        }
        p->flags |= T_PROC | (leader ? T_PNAMED : 0);
        p->pname = hash_str(name, strlen(name));
        return emit_proc(r, pid, name);
    }
    uint64_t h = hash_str(name, strlen(name));
    if (leader && (!(p->flags & T_PNAMED) || p->pname != h)) {
        p->flags |= T_PNAMED;
        p->pname = h;
        return emit_proc(r, pid, name);
    }
    return 0;
}

int ingest_ft_rename_proc(ftrace_reader *r, uint32_t pid, const char *name, size_t n)
{
    char nm[DB_NAME_MAX];
    if (pid == 0)
        return ensure_proc(r, 0, "swapper", true);
    if (n > INGEST_NAME_MAX)
        return ingest_ft_fail(r, "process name too long (%zu bytes, at most %d)", n, INGEST_NAME_MAX);
    copy_name(nm, name, n, DB_NAME_MAX - 1);
    ftrace_tent *p = tab_get(r, pid);
    uint64_t h = hash_str(nm, strlen(nm));
    if ((p->flags & T_PROC) && p->pname == h)
        return 0;
    p->flags |= T_PROC | T_PNAMED;
    p->pname = h;
    return emit_proc(r, pid, nm);
}

int ingest_ft_set_thread(ftrace_reader *r, uint32_t tid, uint32_t pid, const char *name, size_t n,
                         bool new_task)
{
    char nm[DB_NAME_MAX] = {0}; /* whole: the table's and the record's names are compared and copied whole */
    if (n > INGEST_NAME_MAX)
        return ingest_ft_fail(r, "thread name too long (%zu bytes, at most %d)", n, INGEST_NAME_MAX);
    copy_name(nm, name, n, DB_NAME_MAX - 1);
    ftrace_tent *t = tab_get(r, tid);
    if (new_task)
        t->flags &= ~(uint32_t)T_COL;
    if ((t->flags & T_THREAD) && t->pid == pid && strcmp(t->name, nm) == 0)
        return 0;
    /* declarations before use: the process first */
    if (ensure_proc(r, pid, nm, tid == pid) < 0)
        return -1;
    t->pid = pid;
    t->flags |= T_THREAD;
    memcpy(t->name, nm, sizeof nm);

    db_thread th;
    memset(&th, 0, sizeof th);
    th.tid = tid;
    th.pid = pid;
    /* the leader of a process is its main thread */
    th.flags = (tid == pid && pid != 0) ? DB_THREAD_MAIN : 0;
    memcpy(th.name, nm, sizeof th.name);
    if (r->sink->thread && r->sink->thread(r->sink->ctx, &th, r->err, r->errlen) != 0)
        return sink_failed(r);
    return 0;
}

/* Is a table name `<...>`?  Its six bytes with the NUL, which the
 * compiler compares in two loads (names are DB_NAME_MAX bytes). */
static inline bool unknown_name(const char *name) { return memcmp(name, "<...>", 6) == 0; }

/* ingest_ft_full_comm's renames: a task not declared yet (t NULL or
 * without T_THREAD) named by the field, a declared one whose name is
 * `<...>` or a cut of comm renamed (the name's 8th byte is its NUL, and
 * its first 8 are comm's). */
static int __attribute__((noinline)) full_comm_set(ftrace_reader *r, ftrace_tent *t, uint32_t tid, const char *comm,
                                                   size_t n)
{
    if (!t || !(t->flags & T_THREAD)) {
        /* named before it is seen: the name for a `<...>` comm column */
        t = t ? t : tab_get(r, tid);
        copy_name(t->name, comm, n, DB_NAME_MAX - 1);
        t->flags |= T_FNAME;
        return 0;
    }
    /* a name of 8 bytes, comm's first 8 (ingest_ft_full_comm tested the
     * rest), is a cut of it */
    if (!unknown_name(t->name) && memchr(t->name, '\0', 8))
        return 0;
    return ingest_ft_set_thread(r, tid, t->pid, comm, n, false);
}

/* trace-cmd report -l cuts the comm column to 8 characters; the full comm
 * that sched_switch and sched_wakeup print in their fields restores the
 * name of a declared thread whose name is such a cut.  Most calls change
 * nothing (a declared thread named already: docs/PERFORMANCE.md): that
 * test is all of this function, the renames a tail call (full_comm_set),
 * so the common case saves and restores no registers. */
int ingest_ft_full_comm(ftrace_reader *r, uint32_t tid, const char *comm, size_t n)
{
    if (tid == 0 || n == 0 || n > INGEST_NAME_MAX || (n == 5 && memcmp(comm, "<...>", 5) == 0))
        return 0;
    ftrace_tent *t = tab_find(r, tid);
    /* tracefs prints `<...>` for a task whose comm it no longer had: the
     * fields of the same file name it.  A name of 8 bytes is tested
     * without strlen's call (a Perfetto switch restores two names here,
     * and strcmp's and strlen's calls for each cost more than the test). */
    if (t && (t->flags & T_THREAD) && !unknown_name(t->name) &&
        (n <= 8 || t->name[8] != '\0' || memcmp(t->name, comm, 8) != 0))
        return 0;
    return full_comm_set(r, t, tid, comm, n);
}

const char *ingest_ft_name_of(ftrace_reader *r, uint32_t tid)
{
    ftrace_tent *t = tab_find(r, tid);
    if (!t || !(t->flags & (T_THREAD | T_FNAME)) || !t->name[0] || unknown_name(t->name))
        return NULL;
    return t->name;
}

bool ingest_ft_pid_of(ftrace_reader *r, uint32_t tid, uint32_t *pid)
{
    ftrace_tent *t = tab_find(r, tid);
    if (!t || !(t->flags & T_THREAD))
        return false;
    *pid = t->pid;
    return true;
}

/* The task of the line itself (requirements 5 and 6): its process is the
 * TGID column when there is one, else what a task_newtask said, else the
 * tid.  Its name is the comm column; the column changing renames it.  The
 * first column seen for a task declared by a fork/newtask line renames it
 * too, unless it is a prefix of the known name (report -l cuts comm to 8
 * characters).  "<...>" means tracefs did not know the comm: no rename. */
/* The task's TGID: its column, else the saved table, else 0 (unknown).
 * The table's answer is kept in the task's entry: the table is set before
 * the first event and stays (Perfetto's process_tree, a trace.dat's saved
 * tgids), and searching it for each event cost a dozen steps in a trace
 * of thousands of threads. */
static uint32_t tgid_of(const ftrace_reader *r, const ftrace_line *li, ftrace_tent *t)
{
    if (li->has_tgid)
        return li->tgid;
    if (t->flags & T_TGID)
        return t->tgid;
    size_t lo = 0, hi = r->ntgids;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->tgids[mid][0] < li->tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    t->tgid = lo < r->ntgids && r->tgids[lo][0] == li->tid ? r->tgids[lo][1] : 0;
    t->flags |= T_TGID;
    return t->tgid;
}

static int __attribute__((noinline)) resolve_slow(ftrace_reader *r, const ftrace_line *li, ftrace_tent **te)
{
    size_t cl = li->comm_len < DB_NAME_MAX - 1 ? li->comm_len : DB_NAME_MAX - 1;
    bool unknown = cl == 5 && memcmp(li->comm, "<...>", 5) == 0;
    /* the column's hash and the name's length only when they are read:
     * Perfetto's events have no comm column (`<...>`); a reader that
     * gives the hash (comm_hash) saves it too */
    uint64_t h = unknown ? 0 : li->comm_hash ? li->comm_hash : hash_str(li->comm, cl);
    ftrace_tent *t = tab_get(r, li->tid);
    *te = t; /* valid for the line: declarations add entries, the table grows only in ingest_ft_reserve */
    uint32_t tgid = tgid_of(r, li, t);
    if (!(t->flags & T_THREAD)) {
        if (!unknown) {
            t->flags |= T_COL;
            t->col = h;
        } else if (t->flags & T_FNAME) { /* a field named it already */
            char nm[DB_NAME_MAX];
            memcpy(nm, t->name, sizeof nm);
            return ingest_ft_set_thread(r, li->tid, tgid ? tgid : li->tid, nm, strlen(nm), false);
        } else if (r->ahead) { /* a line further on may name it (ftrace_ahead.c) */
            const char *nm;
            if (ingest_ft_ahead_name(r, li->tid, &nm) < 0)
                return -1;
            if (nm)
                return ingest_ft_set_thread(r, li->tid, tgid ? tgid : li->tid, nm, strlen(nm), false);
        }
        return ingest_ft_set_thread(r, li->tid, tgid ? tgid : li->tid, li->comm, cl, false);
    }
    uint32_t pid = tgid ? tgid : t->pid;
    const char *name = t->name;
    if (!unknown && (!(t->flags & T_COL) || t->col != h)) {
        bool first = !(t->flags & T_COL);
        t->flags |= T_COL;
        t->col = h;
        if (!(first && cl <= strlen(t->name) && memcmp(li->comm, t->name, cl) == 0))
            name = li->comm;
    }
    if (pid == t->pid && name == t->name)
        return 0;
    return ingest_ft_set_thread(r, li->tid, pid, name, name == t->name ? strlen(t->name) : cl, false);
}

/* The common case without a call: a declared thread whose process is
 * known (the TGID column, or the saved table's answer kept) and the same,
 * its comm column none (`<...>`) or the one it had.  resolve_slow would
 * change nothing then; it does the rest.  Nearly every event is this
 * case, a leaf the compiler puts in ingest_ft_event, without the saved
 * registers and the call of tab_get of one function for both. */
static int resolve_task(ftrace_reader *r, const ftrace_line *li, ftrace_tent **te)
{
    ftrace_tent *t = tab_find(r, li->tid);
    if (t && (t->flags & T_THREAD) && (li->has_tgid || (t->flags & T_TGID))) {
        uint32_t tgid = li->has_tgid ? li->tgid : t->tgid;
        size_t cl = li->comm_len < DB_NAME_MAX - 1 ? li->comm_len : DB_NAME_MAX - 1;
        bool unknown = cl == 5 && memcmp(li->comm, "<...>", 5) == 0;
        if ((tgid ? tgid : t->pid) == t->pid &&
            (unknown ||
             ((t->flags & T_COL) && t->col == (li->comm_hash ? li->comm_hash : hash_str(li->comm, cl))))) {
            *te = t;
            return 0;
        }
    }
    return resolve_slow(r, li, te);
}

/* ---- syscall names ---- */

bool ingest_ft_syscall_nr(ftrace_reader *r, const char *name, uint32_t *nr)
{
    return r->arch && base_arch_syscall_nr(r->arch, name, strlen(name), nr);
}

/* ---- the line loop ---- */

static const char *lex_error(ftrace_lex_status s)
{
    switch (s) {
    case FTRACE_LEX_BAD_TS:
        return "bad timestamp (want SECONDS.FRACTION with 1 to 9 fraction digits)";
    case FTRACE_LEX_BAD_PID:
        return "bad pid";
    case FTRACE_LEX_BAD_CPU:
        return "bad CPU number";
    case FTRACE_LEX_BAD_FLAGS:
        return "bad flags column";
    default:
        return "not an ftrace event line";
    }
}

/* ingest_ft_event's failure for a name too long, out of line: with the
 * message there, gcc split ingest_ft_event in two (the test, then a call
 * of the rest, for every event) */
static int __attribute__((noinline, cold)) name_too_long(ftrace_reader *r, const ftrace_line *li)
{
    return ingest_ft_fail(r, "%s too long (%zu bytes, at most %d)",
                          li->comm_len > INGEST_NAME_MAX ? "task name" : "event name",
                          li->comm_len > INGEST_NAME_MAX ? li->comm_len : li->name_len, INGEST_NAME_MAX);
}

int ingest_ft_event(ftrace_reader *r, ftrace_line *li, ftrace_ev_kind k)
{
    if (li->comm_len > INGEST_NAME_MAX || li->name_len > INGEST_NAME_MAX)
        return name_too_long(r, li);
    /* at most: the task, a child, and a process entry for each, and two
     * tasks only named in fields (a switch's next, a wakeup's target) */
    ftrace_tent *te;
    if (ingest_ft_reserve(r, 8) < 0)
        return -1;
    if (resolve_task(r, li, &te) < 0)
        return -1;
    /* trace-cmd merges a .dat's CPU buffers in time order, so there a
     * thread's time going back means a corrupt file (text goes through the
     * reorder window instead, which keeps every thread in order) */
    if (r->check_order && (te->flags & T_EVENT) && li->ts < te->ts)
        return ingest_ft_fail(r, "thread %lu: time goes backwards: %llu.%09llu is before %llu.%09llu of %s %llu",
                              (unsigned long)li->tid, (unsigned long long)(li->ts / 1000000000),
                              (unsigned long long)(li->ts % 1000000000),
                              (unsigned long long)(te->ts / 1000000000),
                              (unsigned long long)(te->ts % 1000000000), r->unit,
                              (unsigned long long)te->ts_line);
    te->flags |= T_EVENT;
    te->ts = li->ts;
    te->ts_line = r->lineno;

    db_event ev;
    memset(&ev, 0, sizeof ev);
    ev.id = 0; /* the sink assigns it */
    ev.ts = li->ts;
    ev.tid = li->tid;
    ev.pid = (te->flags & T_THREAD) ? te->pid : li->tid; /* ingest_ft_pid_of's, without its lookup */
    ev.cpu = li->cpu;
    ev.name = li->name;
    ev.type = DB_EV_RAW;
    ev.phase = DB_PH_NONE;
    ev.ctx = li->ctx;

    r->alen = 0;
    int rc = ingest_ft_map(r, k, li, &ev);
    if (rc < 0)
        return rc;
    ev.attrs = r->ab;
    ev.attrs_len = r->alen;
    /* every reader's name ends at name_len: the sink's call copies it by
     * this length (db.h), unless the mapping named the event itself (an
     * Argus marker: its own type's name) */
    if (ev.name == li->name)
        ev.name_len = (uint32_t)li->name_len;
    if (r->sink->event && r->sink->event(r->sink->ctx, &ev, r->err, r->errlen) != 0)
        return sink_failed(r);
    r->st->events++;
    return 0;
}

/* May lines that are not events continue this event's text?  Free text
 * may hold newlines (a print or bprint string, an unknown event's text), and
 * a stack trace prints one frame a line; every other event's text is one
 * line, so a stray line after it is still an error. */
static bool may_continue(ftrace_ev_kind k)
{
    return k == FTRACE_EV_MARKER || k == FTRACE_EV_STACK || k == FTRACE_EV_OTHER;
}

/* The event line held back for its continuation lines (r->pend*): its
 * copy, and the offsets of the columns the lexer found in it. */
/* Room for need bytes in the held line's buffer (its content kept). */
static int pend_room(ftrace_reader *r, size_t need)
{
    if (need <= r->pend_cap)
        return 0;
    size_t cap = r->pend_cap ? r->pend_cap : 1024;
    while (need > cap)
        cap *= 2;
    char *b = realloc(r->pend, cap);
    if (!b)
        return ingest_ft_fail(r, "out of memory");
    r->pend = b;
    r->pend_cap = cap;
    return 0;
}

static int pend_hold(ftrace_reader *r, const char *line, size_t len, const ftrace_line *li, ftrace_ev_kind k)
{
    if (pend_room(r, len + 1) < 0)
        return -1;
    memcpy(r->pend, line, len + 1);
    r->pend_li = *li;
    r->pend_comm = (size_t)(li->comm - line);
    r->pend_flags = li->flags ? (size_t)(li->flags - line) : SIZE_MAX;
    r->pend_name = (size_t)(li->name - line);
    r->pend_fields = (size_t)(li->fields - line);
    r->pend_len = r->pend_fields + li->fields_len;
    r->pend_kind = k;
    r->pend_line = r->lineno;
    r->pending = true;
    return 0;
}

/* A continuation line: "\n" and the line, after the held event's text. */
static int pend_join(ftrace_reader *r, const char *line, size_t len)
{
    size_t need = r->pend_len + 1 + len + 1;
    if (need > INGEST_LINE_MAX)
        return ingest_ft_fail(r, "event text too long (more than %zu bytes over several lines)", INGEST_LINE_MAX);
    if (pend_room(r, need) < 0)
        return -1;
    r->pend[r->pend_len] = '\n';
    memcpy(r->pend + r->pend_len + 1, line, len);
    r->pend_len += 1 + len;
    r->pend[r->pend_len] = '\0';
    r->st->joined++;
    return 0;
}

/* The held event, whole, to the sink. */
static int pend_flush(ftrace_reader *r)
{
    if (!r->pending)
        return 0;
    r->pending = false;
    ftrace_line li = r->pend_li;
    li.comm = r->pend + r->pend_comm;
    li.flags = r->pend_flags == SIZE_MAX ? NULL : r->pend + r->pend_flags;
    li.name = r->pend + r->pend_name;
    li.fields = r->pend + r->pend_fields;
    li.fields_len = r->pend_len - r->pend_fields;
    while (li.fields_len && (li.fields[li.fields_len - 1] == ' ' || li.fields[li.fields_len - 1] == '\t' ||
                             li.fields[li.fields_len - 1] == '\n'))
        li.fields_len--;
    r->pend[r->pend_fields + li.fields_len] = '\0';
    uint64_t at = r->lineno;
    r->lineno = r->pend_line; /* messages name the event's first line */
    int rc = ingest_ft_text_pairs(r, r->pend_kind, &li);
    if (rc == 0)
        rc = ingest_ft_event(r, &li, r->pend_kind);
    if (rc == FTRACE_BAD_FIELDS)
        rc = ingest_ft_bad_fields(r, &li);
    r->lineno = at;
    return rc;
}

/* Returns 0, -1 (err set), or FTRACE_BAD_LINE (err set: the line could
 * be an event line cut short: it matches no line prefix, or its fields
 * are not those of its event). */
#define FTRACE_BAD_LINE (-3)

static int do_line(ftrace_reader *r, char *line, size_t len)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p) /* blank lines count for nothing */
        return 0;
    ftrace_line li;
    ftrace_lex_status s = line[0] == '#' || ingest_ftrace_lex_header(line) ? FTRACE_LEX_NOMATCH
                                                                           : ingest_ftrace_lex_line(line, &li);
    if (s == FTRACE_LEX_NOMATCH && r->pending && line[0] != '#' && !ingest_ftrace_lex_header(line))
        return pend_join(r, line, len);
    if (pend_flush(r) < 0)
        return -1;
    if (line[0] == '#') /* comments count for nothing */
        return 0;
    if (s == FTRACE_LEX_NOMATCH && ingest_ftrace_lex_header(line)) {
        r->st->skipped++;
        if (r->sink->skip)
            r->sink->skip(r->sink->ctx);
        return 0;
    }
    if (s != FTRACE_LEX_OK) { /* a line cut short matches no prefix: the others are bad columns */
        ingest_ft_fail(r, "%s: '%.60s%s'", lex_error(s), p, len > 60 ? "..." : "");
        return s == FTRACE_LEX_NOMATCH ? FTRACE_BAD_LINE : -1;
    }
    ftrace_ev_kind k;
    if (li.sys != FTRACE_SYS_NONE) {
        /* sys_NAME(...) / sys_NAME -> R: the event syscalls:sys_enter_NAME
         * or sys_exit_NAME, named so as a trace.dat names it */
        size_t n = li.name_len - 4;
        if (n > sizeof r->sysname - 11) {
            ingest_ft_fail(r, "syscall name too long (%zu bytes)", n);
            return FTRACE_BAD_LINE;
        }
        int w = snprintf(r->sysname, sizeof r->sysname, "sys_%s_%.*s", li.sys == FTRACE_SYS_ENTER ? "enter" : "exit",
                         (int)n, li.name + 4);
        li.name = r->sysname;
        li.name_len = (size_t)w;
        ((char *)li.fields)[li.fields_len] = '\0';
        k = li.sys == FTRACE_SYS_ENTER ? FTRACE_EV_SYSCALLS_ENTER : FTRACE_EV_SYSCALLS_EXIT;
    } else {
        li.name[li.name_len] = '\0'; /* the ':' after the name; ev.name points here */
        k = ingest_ftrace_lex_event(li.name);
    }
    /* Requirement 4: the third flag is the context: h/H hardirq (H: in a
     * softirq), z/Z NMI, s softirq; no flag column: unknown. */
    if (!li.flags)
        li.ctx = DB_CTX_UNKNOWN;
    else if (strchr("hHzZ", li.flags[2]))
        li.ctx = DB_CTX_HARDIRQ;
    else if (li.flags[2] == 's')
        li.ctx = DB_CTX_SOFTIRQ;
    else
        li.ctx = DB_CTX_THREAD;
    if (may_continue(k))
        return pend_hold(r, line, len, &li, k);
    int rc = ingest_ft_text_pairs(r, k, &li);
    if (rc == 0)
        rc = ingest_ft_event(r, &li, k);
    if (rc == FTRACE_BAD_FIELDS) {
        ingest_ft_bad_fields(r, &li);
        return FTRACE_BAD_LINE;
    }
    return rc;
}

int ingest_ft_reader_init(ftrace_reader *r, const char *path, const ingest_sink *sink,
                          ingest_stats *st, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->sink = sink;
    r->st = st;
    r->err = err;
    r->errlen = errlen;
    r->unit = "line";
    r->acap = 65536;
    r->ab = malloc(r->acap);
    if (!r->ab)
        return ingest_ft_fail(r, "out of memory");
    if (ingest_ft_reserve(r, 8) < 0)
        return -1;
    return 0;
}


void ingest_ft_reader_free(ftrace_reader *r)
{
    free(r->tab);
    base_map_free(&r->tids);
    free(r->ab);
    free(r->pend);
    ingest_ft_binder_free(r->binder);
    r->binder = NULL;
    ingest_ft_ahead_free(r->ahead);
    r->ahead = NULL;
    r->tab = NULL;
    r->ab = NULL;
    r->pend = NULL;
}

/* Is the rest of the text blank?  (Reads it: only for a line that
 * failed, whose read ends here either way.) */
static bool only_blanks_left(ingest_ft_src *src)
{
    char *line, e[512];
    size_t len;
    int n;
    while ((n = ingest_ft_src_next(src, &line, &len, e, sizeof e)) == 1)
        for (size_t i = 0; i < len; i++)
            if (line[i] != ' ' && line[i] != '\t')
                return false;
    return n == 0;
}

int ingest_ft_text_begin(ftrace_reader *r, ingest_reorder **ro, const ingest_lines *lb, const ingest_sink *sink,
                         const ingest_opts *opts, ingest_stats *st, char *err, size_t errlen)
{
    *r = (ftrace_reader){0};
    if (!(*ro = ingest_reorder_new(sink, st, lb->path, &r->lineno))) {
        ingest_errf(err, errlen, "%s: out of memory", lb->path);
        return -1;
    }
    int rc = ingest_ft_reader_init(r, lb->path, ingest_reorder_front(*ro), st, err, errlen);
    r->arch = opts ? base_arch_find(opts->arch) : NULL; /* text does not say its machine */
    return rc;
}

int ingest_ft_text_end(ftrace_reader *r, ingest_reorder *ro, int rc, char *err, size_t errlen)
{
    if (rc == 0 && ro)
        rc = ingest_reorder_finish(ro, err, errlen);
    ingest_ft_reader_free(r);
    ingest_reorder_free(ro);
    return rc < 0 ? -1 : 0;
}

static int src_next(void *src, char **line, size_t *len, char *err, size_t errlen)
{
    return ingest_ft_src_next(src, line, len, err, errlen);
}

static int text_line(void *reader, char *line, size_t len) { return do_line(reader, line, len); }

/* Text: every line through the reorder window.  A last line cut short (a
 * recorder killed, a disk full mid-write: a line this reader cannot read,
 * with nothing after it) is left out and reported (st->truncated);
 * anywhere else a bad line fails the read with its file and line. */
int ingest_ftrace_read(ingest_lines *lb, const ingest_sink *sink, const ingest_opts *opts, bool html,
                       ingest_stats *st, char *err, size_t errlen)
{
    ingest_ft_src src;
    ingest_ft_src_init(&src, lb, html);
    ftrace_reader r;
    ingest_reorder *ro;
    int rc = ingest_ft_text_begin(&r, &ro, lb, sink, opts, st, err, errlen);
    if (rc == 0 && !(r.ahead = ingest_ft_ahead_new(lb, html)))
        rc = ingest_ft_fail(&r, "out of memory");
    if (rc == 0)
        rc = ingest_lines_each(&(ingest_line_loop){.lb = lb, .next = src_next, .src = &src, .st = st,
                                                   .lineno = &r.lineno, .line = text_line, .reader = &r},
                               err, errlen);
    /* a bad last line after events: a trace cut short */
    if (rc == FTRACE_BAD_LINE && st->events + r.pending > 0 && only_blanks_left(&src)) {
        st->truncated = r.lineno;
        rc = 0;
    }
    if (rc == 0)
        rc = pend_flush(&r);
    if (rc == 0 && html && !src.found) {
        ingest_errf(err, errlen,
                    "%s:%llu: a systrace page without ftrace text (neither a <script class=\"trace-data\"> nor a "
                    "var linuxPerfData string holds any, up to its end here)",
                    lb->path, (unsigned long long)(lb->lineno ? lb->lineno : 1));
        rc = -1;
    }
    ingest_ft_src_free(&src);
    return ingest_ft_text_end(&r, ro, rc, err, errlen);
}
