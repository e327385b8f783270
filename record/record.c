/* record/record.c -- `argusq record`: a system-wide kernel trace of a
 * command, written as a trace.dat (paper/003 §Event Tracing, on Linux).
 *
 *   1. tracefs (mounted if it is not) is set up with libtracefs: tracing
 *      off, the events of the ftrace mapping (docs: the spec's last
 *      section), trace clock "mono" (CLOCK_MONOTONIC), option record-tgid,
 *      an overwriting ring buffer of --max-mb MiB in all (so, like the
 *      paper's file-backed ring buffer, a long run keeps its newest
 *      events and drops the oldest), a large saved_cmdlines table;
 *   2. CMD is started, tracing goes on just before it execs; with --watch,
 *      CMD stops at its exec (ptrace) while the watchpoints are armed
 *      (record_watch.c), then runs on;
 *   3. when CMD exits, tracing goes off, each CPU's ring buffer is read
 *      whole from trace_pipe_raw (libtracefs tracefs_cpu_*) into a
 *      temporary file, and libtracecmd writes the trace.dat the way
 *      `trace-cmd extract` does: headers and the formats of the recorded
 *      events, kallsyms, printk formats, saved cmdlines, options (trace
 *      clock, uname, per-CPU statistics), the CPU data, zstd-compressed;
 *   4. every setting changed is put back as it was: tracing_on, the trace
 *      clock, buffer sizes, options, the set of enabled events,
 *      saved_cmdlines_size -- also after an error, and on SIGINT, SIGTERM
 *      and SIGHUP, which end CMD (it gets the signal too) but not the
 *      recording: the trace of the run so far is still written.
 *
 * `trace-cmd record` cannot be used on the machines this is built for (it
 * writes /proc/sys/kernel/ftrace_enabled and set_ftrace_filter, which the
 * sandbox refuses); nothing here touches either. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracefs.h>

#include "db/db.h"
#include "record.h"
#include "record_int.h"
#include "tracelib_int.h"

#define ARGUSQ_RECORD_VERSION "argusq 0.1.0"
#define CMDLINES_SIZE "32768" /* the kernel's maximum (PID_MAX_DEFAULT) */

static const char default_events[] =
    "sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_waking,"
    "sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,"
    "task:task_newtask,task:task_rename,"
    "irq:irq_handler_entry,irq:irq_handler_exit,irq:softirq_entry,irq:softirq_exit,irq:softirq_raise,"
    "timer:hrtimer_start,timer:hrtimer_cancel,timer:hrtimer_expire_entry,timer:hrtimer_expire_exit,"
    "workqueue:workqueue_queue_work,workqueue:workqueue_activate_work,"
    "workqueue:workqueue_execute_start,workqueue:workqueue_execute_end,"
    "block:block_bio_queue,block:block_rq_insert,block:block_rq_issue,block:block_rq_complete,"
    "raw_syscalls:sys_enter,raw_syscalls:sys_exit";

const char *record_default_events(void) { return default_events; }

/* ---- errors and log ---- */

typedef struct rec {
    const record_opts *o;
    char *err;
    size_t errlen;
    int ncpu;
    /* what was there before */
    bool saved;
    int was_on;
    char *clock;      /* the selected clock's name */
    ssize_t *buf_kb;  /* per CPU */
    char *set_event;  /* the enabled events, one a line */
    char *cmdlines;   /* saved_cmdlines_size */
    int opt_tgid, opt_overwrite, opt_markers; /* 1, 0, or -1 unknown */
    /* ours */
    struct tracecmd_event_list *events; /* the enabled events, for the file */
    char **tmp;                         /* per-CPU data files */
    /* the trace.dat, and its OUT.tgids, under temporary names until the
     * recording is whole (base_outfile: a failed one leaves the old files) */
    base_outfile dat, tgids;
    bool dat_open, tgids_open;
    record_watch *watch;
    char exe[4096];
    record_tracelib lib;
} rec;

static int fail(rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(rec *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static void logf_(rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(rec *r, const char *fmt, ...)
{
    if (!r->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("argusq: ", r->o->log);
    vfprintf(r->o->log, fmt, ap);
    fputc('\n', r->o->log);
    va_end(ap);
    fflush(r->o->log);
}

/* ---- signals: end CMD, not the recording ---- */

static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_child;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    g_signal = sig;
    /* a terminal's ^C already reached CMD (same process group) */
    if (g_child > 0 && (!si || si->si_code != SI_KERNEL))
        kill((pid_t)g_child, sig);
}

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction old_act[3];

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    g_child = 0;
    for (size_t i = 0; i < 3; i++)
        sigaction(caught[i], &sa, &old_act[i]);
}

static void release_signals(void)
{
    for (size_t i = 0; i < 3; i++)
        sigaction(caught[i], &old_act[i], NULL);
}

/* ---- tracefs files ---- */

static char *read_file(rec *r, const char *name)
{
    return r->lib.tracefs_instance_file_read(NULL, name, NULL);
}

static int write_file(rec *r, const char *name, const char *val)
{
    if (r->lib.tracefs_instance_file_write(NULL, name, val) < 0)
        return fail(r, "cannot write '%s' to %s/%s: %s", val, r->lib.tracefs_tracing_dir(), name, strerror(errno));
    return 0;
}

/* the name in brackets of trace_clock's "local global [mono] ..." */
static char *selected_clock(const char *s)
{
    const char *a = s ? strchr(s, '[') : NULL;
    const char *b = a ? strchr(a, ']') : NULL;
    return b ? strndup(a + 1, (size_t)(b - a - 1)) : NULL;
}

static int option_state(rec *r, enum tracefs_option_id id)
{
    if (!r->lib.tracefs_option_is_supported(NULL, id))
        return -1;
    return r->lib.tracefs_option_is_enabled(NULL, id) ? 1 : 0;
}

static void option_set(rec *r, enum tracefs_option_id id, int on)
{
    if (on < 0)
        return;
    if (on)
        r->lib.tracefs_option_enable(NULL, id);
    else
        r->lib.tracefs_option_disable(NULL, id);
}

/* ---- can we trace at all? ---- */

static int check_tracefs(rec *r)
{
    const char *dir = NULL;
    int m = r->lib.tracefs_tracing_dir_is_mounted(true, &dir);
    if (m < 0 || !dir)
        return fail(r, "cannot trace: tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s)%s",
                    strerror(errno), geteuid() ? "; run argusq record as root" : "");
    if (m == 0)
        logf_(r, "mounted tracefs at %s", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/tracing_on", dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(r, "cannot trace: cannot open %s for writing (%s)%s", path, strerror(errno),
                    geteuid() ? "; run argusq record as root" : "");
    close(fd);
    snprintf(path, sizeof path, "%s/per_cpu/cpu0/trace_pipe_raw", dir);
    if (access(path, R_OK) != 0)
        return fail(r, "cannot trace: %s: %s", path, strerror(errno));
    return 0;
}

/* ---- save / restore ---- */

static int save_settings(rec *r)
{
    int on = r->lib.tracefs_trace_is_on(NULL);
    r->was_on = on < 0 ? 0 : on;
    char *c = read_file(r, "trace_clock");
    r->clock = selected_clock(c);
    free(c);
    r->buf_kb = calloc((size_t)r->ncpu, sizeof *r->buf_kb);
    if (!r->buf_kb)
        return fail(r, "out of memory");
    for (int i = 0; i < r->ncpu; i++)
        r->buf_kb[i] = r->lib.tracefs_instance_get_buffer_size(NULL, i);
    r->set_event = read_file(r, "set_event");
    r->cmdlines = read_file(r, "saved_cmdlines_size");
    r->opt_tgid = option_state(r, TRACEFS_OPTION_RECORD_TGID);
    r->opt_overwrite = option_state(r, TRACEFS_OPTION_OVERWRITE);
    r->opt_markers = option_state(r, TRACEFS_OPTION_MARKERS);
    r->saved = true;
    return 0;
}

static void restore_settings(rec *r)
{
    if (!r->saved)
        return;
    r->lib.tracefs_trace_off(NULL);
    /* set_event is opened with O_TRUNC: every event off, then the old ones on */
    r->lib.tracefs_instance_file_write(NULL, "set_event", r->set_event ? r->set_event : "");
    if (r->clock)
        r->lib.tracefs_instance_file_write(NULL, "trace_clock", r->clock);
    for (int i = 0; i < r->ncpu; i++)
        if (r->buf_kb[i] > 0 && r->lib.tracefs_instance_get_buffer_size(NULL, i) != r->buf_kb[i])
            r->lib.tracefs_instance_set_buffer_size(NULL, (size_t)r->buf_kb[i], i);
    if (r->cmdlines) {
        char *n = strndup(r->cmdlines, strcspn(r->cmdlines, "\n"));
        if (n)
            r->lib.tracefs_instance_file_write(NULL, "saved_cmdlines_size", n);
        free(n);
    }
    option_set(r, TRACEFS_OPTION_RECORD_TGID, r->opt_tgid);
    option_set(r, TRACEFS_OPTION_OVERWRITE, r->opt_overwrite);
    option_set(r, TRACEFS_OPTION_MARKERS, r->opt_markers);
    if (r->was_on)
        r->lib.tracefs_trace_on(NULL);
    r->saved = false;
}

/* ---- events ---- */

static int add_event(rec *r, const char *sys, const char *ev, bool user)
{
    if (r->lib.tracefs_event_enable(NULL, sys, ev) < 0) {
        if (user)
            return fail(r, "no such event %s%s%s (see %s/available_events)", sys, ev ? ":" : "", ev ? ev : "",
                        r->lib.tracefs_tracing_dir());
        logf_(r, "this kernel has no event %s:%s; recording without it", sys, ev ? ev : "*");
        return 0;
    }
    struct tracecmd_event_list *e = calloc(1, sizeof *e);
    char *g = NULL;
    if (!e || asprintf(&g, "%s:%s", sys, ev ? ev : "*") < 0) {
        free(e);
        return fail(r, "out of memory");
    }
    e->glob = g;
    e->next = r->events;
    r->events = e;
    return 0;
}

static int add_list(rec *r, const char *list, bool user, int depth)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return fail(r, "out of memory");
    int rc = 0;
    for (char *it = strtok_r(copy, ", \t\n", &save); it && rc == 0; it = strtok_r(NULL, ", \t\n", &save)) {
        if (strcmp(it, "default") == 0) {
            rc = depth ? 0 : add_list(r, default_events, false, 1);
            continue;
        }
        char *colon = strchr(it, ':');
        const char *ev = NULL;
        if (colon) {
            *colon = '\0';
            ev = colon + 1;
            if (!*ev || strcmp(ev, "*") == 0)
                ev = NULL;
        }
        if (!*it) {
            rc = fail(r, "bad event '%s' (want SYSTEM:EVENT or SYSTEM)", it);
            break;
        }
        rc = add_event(r, it, ev, user);
    }
    free(copy);
    return rc;
}

static int set_events(rec *r)
{
    if (write_file(r, "set_event", "") < 0) /* all off */
        return -1;
    if (add_list(r, r->o->events ? r->o->events : default_events, r->o->events != NULL, 0) < 0)
        return -1;
    if (r->watch && add_event(r, "bpf_trace", "bpf_trace_printk", true) < 0)
        return -1;
    if (!r->events)
        return fail(r, "no event to record");
    return 0;
}

static int configure(rec *r)
{
    if (r->lib.tracefs_trace_off(NULL) < 0)
        return fail(r, "cannot turn tracing off: %s", strerror(errno));
    if (write_file(r, "trace_clock", "mono") < 0)
        return -1;
    /* each task's TGID in saved_tgids (the tracefs text shows it) */
    if (r->opt_tgid >= 0 && r->lib.tracefs_option_enable(NULL, TRACEFS_OPTION_RECORD_TGID) < 0)
        return fail(r, "cannot set option record-tgid: %s", strerror(errno));
    /* a full buffer overwrites its oldest events */
    if (r->opt_overwrite >= 0 && r->lib.tracefs_option_enable(NULL, TRACEFS_OPTION_OVERWRITE) < 0)
        return fail(r, "cannot set option overwrite: %s", strerror(errno));
    /* trace_marker writes (include/argus/argus.h) */
    if (r->opt_markers >= 0 && r->lib.tracefs_option_enable(NULL, TRACEFS_OPTION_MARKERS) < 0)
        return fail(r, "cannot set option markers: %s", strerror(errno));
    /* names of all the tasks, not the last 128 */
    if (r->cmdlines)
        r->lib.tracefs_instance_file_write(NULL, "saved_cmdlines_size", CMDLINES_SIZE);
    unsigned mb = r->o->max_mb ? r->o->max_mb : RECORD_DEFAULT_MB;
    size_t kb = (size_t)mb * 1024 / (size_t)r->ncpu;
    if (kb < 64)
        kb = 64;
    if (r->lib.tracefs_instance_set_buffer_size(NULL, kb, -1) < 0)
        return fail(r, "cannot set the ring buffer to %zu KiB per CPU: %s", kb, strerror(errno));
    if (set_events(r) < 0)
        return -1;
    if (r->lib.tracefs_instance_file_clear(NULL, "trace") < 0)
        return fail(r, "cannot clear the ring buffer: %s", strerror(errno));
    return 0;
}

/* ---- the command ---- */

static int find_exe(rec *r, const char *cmd)
{
    if (strchr(cmd, '/')) {
        snprintf(r->exe, sizeof r->exe, "%s", cmd);
        if (access(r->exe, X_OK) != 0)
            return fail(r, "%s: %s", cmd, strerror(errno));
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(r->exe, sizeof r->exe, "%.*s/%s", (int)n, n ? p : ".", cmd);
        struct stat st;
        if (stat(r->exe, &st) == 0 && S_ISREG(st.st_mode) && access(r->exe, X_OK) == 0)
            return 0;
        p += n;
        if (*p == ':')
            p++;
    }
    return fail(r, "%s: command not found", cmd);
}

/* Starts CMD with tracing on; with watches, arms them at its exec. */
/* What the per-cpu buffers hold now ("entries:" and "bytes:" of each
 * cpu's stats file), for the progress line. */
static void buffer_fill(rec *r, uint64_t *bytes, uint64_t *events)
{
    *bytes = *events = 0;
    for (int cpu = 0; cpu < r->ncpu; cpu++) {
        char name[64];
        snprintf(name, sizeof name, "per_cpu/cpu%d/stats", cpu);
        char *t = read_file(r, name);
        const char *e = t ? strstr(t, "entries:") : NULL, *b = t ? strstr(t, "bytes:") : NULL;
        if (e)
            *events += strtoull(e + 8, NULL, 10);
        if (b)
            *bytes += strtoull(b + 6, NULL, 10);
        free(t);
    }
}

/* Waits for CMD, reporting progress while it runs. */
static void wait_cmd(rec *r, pid_t pid, int *status)
{
    for (;;) {
        pid_t got = waitpid(pid, status, r->o->progress ? WNOHANG : 0);
        if (got == pid) {
            if (r->o->progress) /* the bar goes before the summary lines */
                r->o->progress(r->o->progress_ctx, UINT64_MAX, UINT64_MAX);
            return;
        }
        if (got < 0 && errno != EINTR) {
            *status = 0;
            return;
        }
        if (got == 0) {
            uint64_t bytes, events;
            buffer_fill(r, &bytes, &events);
            r->o->progress(r->o->progress_ctx, bytes, events);
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The recording's own description, in the trace itself (the ring buffer
 * keeps its newest events, so it is written last): the ingest makes it
 * the trace's labels (ftrace_map.c, record_marker). */
static void end_marker(rec *r, const struct timespec *t0, time_t wall, int status)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
    struct tm tm;
    char when[32] = "";
    if (gmtime_r(&wall, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char text[1024];
    int n = snprintf(text, sizeof text, "argusq-record: started=%s duration=%.3f status=%d command=", when, secs,
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    for (char *const *a = r->o->argv; *a && n > 0 && (size_t)n < sizeof text - 1; a++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", a == r->o->argv ? "" : " ", *a);
    for (char *c = text; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    r->lib.tracefs_instance_file_write(NULL, "trace_marker", text);
}

static int run_cmd(rec *r, int *status)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    time_t wall = time(NULL);
    int go[2], ex[2];
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0)
        return fail(r, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(go[0]), close(go[1]), close(ex[0]), close(ex[1]);
        return fail(r, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        char c;
        close(go[1]);
        close(ex[0]);
        if (r->watch && ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
            int e = errno;
            (void)!write(ex[1], &e, sizeof e);
            _exit(127);
        }
        while (read(go[0], &c, 1) < 0 && errno == EINTR) {}
        execv(r->exe, r->o->argv);
        int e = errno;
        (void)!write(ex[1], &e, sizeof e);
        _exit(127);
    }
    g_child = pid;
    close(go[0]);
    close(ex[1]);
    int rc = 0;
    if (r->lib.tracefs_trace_on(NULL) < 0)
        rc = fail(r, "cannot turn tracing on: %s", strerror(errno));
    if (rc == 0 && write(go[1], "g", 1) != 1)
        rc = fail(r, "cannot start %s: %s", r->exe, strerror(errno));
    close(go[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(ex[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close(ex[0]);
    if (rc == 0 && n > 0)
        rc = fail(r, "cannot run %s: %s", r->exe, strerror(e));
    if (rc == 0 && r->watch) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        if (!WIFSTOPPED(st)) {
            rc = fail(r, "%s ended before it could be watched", r->exe);
        } else {
            if (record_watch_arm(r->watch, pid, r->err, r->errlen) < 0)
                rc = -1;
            else
                for (size_t i = 0; i < record_watch_count(r->watch); i++) {
                    char d[300];
                    logf_(r, "watching %s", record_watch_describe(r->watch, i, d, sizeof d));
                }
            if (rc < 0)
                kill(pid, SIGKILL);
            ptrace(PTRACE_DETACH, pid, NULL, NULL);
        }
    }
    if (rc < 0)
        kill(pid, SIGKILL);
    wait_cmd(r, pid, status);
    g_child = 0;
    if (rc == 0)
        end_marker(r, &t0, wall, *status);
    r->lib.tracefs_trace_off(NULL);
    return rc;
}

/* ---- saving ---- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The whole ring buffer of one CPU, as raw sub-buffers. */
static int save_cpu(rec *r, int cpu, unsigned long long *bytes)
{
    struct tracefs_cpu *tc = r->lib.tracefs_cpu_open(NULL, cpu, true);
    if (!tc)
        return fail(r, "cannot open the ring buffer of CPU %d: %s", cpu, strerror(errno));
    int psz = r->lib.tracefs_cpu_read_size(tc);
    char *buf = psz > 0 ? malloc((size_t)psz) : NULL;
    int fd = open(r->tmp[cpu], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = 0;
    if (!buf || fd < 0)
        rc = fail(r, "%s: %s", r->tmp[cpu], buf ? strerror(errno) : "out of memory");
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        for (;;) {
            /* full sub-buffers, then what is left of the last one */
            int n = pass == 0 ? r->lib.tracefs_cpu_read(tc, buf, true) : r->lib.tracefs_cpu_flush(tc, buf);
            if (n <= 0)
                break;
            if (write_all(fd, buf, (size_t)n) < 0) {
                rc = fail(r, "%s: %s", r->tmp[cpu], strerror(errno));
                break;
            }
            *bytes += (unsigned long long)n;
        }
    }
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = fail(r, "%s: %s", r->tmp[cpu], strerror(errno));
    free(buf);
    r->lib.tracefs_cpu_close(tc);
    return rc;
}

static unsigned long long stat_value(const char *stats, const char *key)
{
    const char *p = stats ? strstr(stats, key) : NULL;
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static int write_dat(rec *r, record_stats *st)
{
    /* libtracecmd opens the file by its name, the temporary one */
    struct tracecmd_output *out = r->lib.tracecmd_output_create(base_outfile_name(&r->dat));
    if (!out)
        return fail(r, "%s: cannot create: %s", r->o->output, strerror(errno));
    r->lib.tracecmd_set_quiet(out, true);
    if (r->lib.tracecmd_output_set_compression(out, "any") < 0)
        r->lib.tracecmd_output_set_compression(out, "none");
    if (r->lib.tracecmd_output_write_headers(out, r->events) < 0) {
        r->lib.tracecmd_output_close(out);
        return fail(r, "%s: cannot write the trace.dat headers (event formats, kallsyms)", r->o->output);
    }
    char *clock = read_file(r, "trace_clock");
    if (clock)
        r->lib.tracecmd_add_option(out, ARGUS_TRACECMD_OPTION_TRACECLOCK, (int)strlen(clock) + 1, clock);
    free(clock);
    struct utsname u;
    char uts[4 * sizeof u.release + 8];
    if (uname(&u) == 0) {
        int n = snprintf(uts, sizeof uts, "%s %s %s %s", u.sysname, u.nodename, u.release, u.machine);
        r->lib.tracecmd_add_option(out, ARGUS_TRACECMD_OPTION_UNAME, n + 1, uts);
    }
    r->lib.tracecmd_add_option(out, ARGUS_TRACECMD_OPTION_VERSION, (int)sizeof ARGUSQ_RECORD_VERSION,
                        ARGUSQ_RECORD_VERSION);
    for (int i = 0; i < r->ncpu; i++) {
        char name[64];
        snprintf(name, sizeof name, "per_cpu/cpu%d/stats", i);
        char *s = read_file(r, name);
        if (!s)
            continue;
        st->overrun += stat_value(s, "overrun:");
        /* trace-cmd's CPUSTAT option starts with "CPU: N" */
        char *text = NULL;
        if (asprintf(&text, "CPU: %d\n%s", i, s) >= 0)
            r->lib.tracecmd_add_option(out, ARGUS_TRACECMD_OPTION_CPUSTAT, (int)strlen(text) + 1, text);
        free(text);
        free(s);
    }
    if (r->lib.tracecmd_write_cmdlines(out) < 0) {
        r->lib.tracecmd_output_close(out);
        return fail(r, "%s: cannot write the saved command lines", r->o->output);
    }
    if (r->lib.tracecmd_append_cpu_data(out, r->ncpu, r->tmp) < 0) {
        r->lib.tracecmd_output_close(out);
        return fail(r, "%s: cannot write the trace data", r->o->output);
    }
    r->lib.tracecmd_output_close(out);
    return 0;
}

/* trace.dat has no table of TGIDs: keep tracefs's saved_tgids (filled
 * by option record-tgid) beside it as OUT.tgids, read by ingest.  Left
 * out when it cannot be written: ingest then has each thread its own
 * process, as for a text trace without TGIDs. */
static void save_tgids(rec *r)
{
    char *t = r->lib.tracefs_instance_file_read(NULL, "saved_tgids", NULL);
    char name[4096], msg[512];
    if (t && snprintf(name, sizeof name, "%s.tgids", r->o->output) < (int)sizeof name &&
        base_outfile_open(&r->tgids, name, 0, msg, sizeof msg) == 0) {
        r->tgids_open = true;
        fputs(t, r->tgids.f);
    }
    free(t);
}

/* The trace.dat takes OUT's name, then the TGIDs OUT.tgids's: a crash in
 * between leaves the new trace.dat beside the old TGIDs, which name the
 * same kernel's processes or none of its threads. */
static int save(rec *r, record_stats *st)
{
    for (int i = 0; i < r->ncpu; i++)
        if (save_cpu(r, i, &st->data_bytes) < 0)
            return -1;
    save_tgids(r);
    if (write_dat(r, st) < 0)
        return -1;
    char msg[512];
    r->dat_open = false;
    if (base_outfile_commit(&r->dat, msg, sizeof msg))
        return fail(r, "%s", msg);
    if (r->tgids_open) {
        r->tgids_open = false;
        if (base_outfile_commit(&r->tgids, msg, sizeof msg))
            logf_(r, "%s", msg);
    }
    struct stat sb;
    if (stat(r->o->output, &sb) == 0)
        st->file_bytes = (unsigned long long)sb.st_size;
    return 0;
}

static void cleanup(rec *r)
{
    for (int i = 0; r->tmp && i < r->ncpu; i++) {
        if (r->tmp[i])
            unlink(r->tmp[i]);
        free(r->tmp[i]);
    }
    free(r->tmp);
    if (r->dat_open)
        base_outfile_abort(&r->dat);
    if (r->tgids_open)
        base_outfile_abort(&r->tgids);
    r->dat_open = r->tgids_open = false;
    while (r->events) {
        struct tracecmd_event_list *e = r->events;
        r->events = e->next;
        free((char *)e->glob);
        free(e);
    }
    record_watch_free(r->watch);
    free(r->clock);
    free(r->buf_kb);
    free(r->set_event);
    free(r->cmdlines);
}

int record_run(const record_opts *o, record_stats *st, char *err, size_t errlen)
{
    record_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    rec r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.err = err;
    r.errlen = errlen;
    err[0] = '\0';
    if (!o->argv || !o->argv[0])
        return fail(&r, "no command to record");
    if (!o->output || !*o->output)
        return fail(&r, "no output file");

    /* everything that can be checked before tracefs is touched */
    if (find_exe(&r, o->argv[0]) < 0)
        return -1;
    if (o->nwatch && !(r.watch = record_watch_resolve(r.exe, o->watch, o->nwatch, err, errlen)))
        return -1;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    r.ncpu = n > 0 ? (int)n : 1;
    st->cpus = r.ncpu;
    r.tmp = calloc((size_t)r.ncpu, sizeof *r.tmp);
    if (!r.tmp) {
        cleanup(&r);
        return fail(&r, "out of memory");
    }
    for (int i = 0; i < r.ncpu; i++)
        if (asprintf(&r.tmp[i], "%s.cpu%d", o->output, i) < 0) {
            r.tmp[i] = NULL;
            cleanup(&r);
            return fail(&r, "out of memory");
        }
    /* made first: an output that cannot be written fails before tracefs
     * is touched */
    char msg[512];
    if (base_outfile_open(&r.dat, o->output, 0, msg, sizeof msg)) {
        cleanup(&r);
        return fail(&r, "%s", msg);
    }
    r.dat_open = true;
    if (record_tracelib_open(&r.lib, err, errlen) < 0) {
        cleanup(&r);
        return -1;
    }
    r.lib.tracecmd_set_loglevel(TEP_LOG_NONE);
    r.lib.tracefs_set_loglevel(TEP_LOG_NONE);

    if (check_tracefs(&r) < 0) {
        cleanup(&r);
        return -2;
    }
    /* tracefs is one per machine: one recording at a time */
    int lock = open(access("/run/lock", W_OK) == 0 ? "/run/lock/argusq-record.lock" : "/tmp/argusq-record.lock",
                    O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
        logf_(&r, "waiting for another argusq record to finish");
        while (flock(lock, LOCK_EX) < 0 && errno == EINTR) {}
    }
    catch_signals();
    int rc = save_settings(&r);
    if (rc == 0)
        rc = configure(&r);
    if (rc == 0 && g_signal)
        rc = fail(&r, "interrupted before %s started", r.exe);
    if (rc == 0) {
        unsigned mb = o->max_mb ? o->max_mb : RECORD_DEFAULT_MB;
        logf_(&r, "recording system-wide into %s (%u MiB ring buffer, clock mono) while %s runs", o->output,
              mb, r.exe);
        rc = run_cmd(&r, &st->cmd_status);
    }
    r.lib.tracefs_trace_off(NULL);
    if (rc == 0) {
        if (WIFEXITED(st->cmd_status))
            logf_(&r, "%s exited with status %d", r.exe, WEXITSTATUS(st->cmd_status));
        else if (WIFSIGNALED(st->cmd_status))
            logf_(&r, "%s ended by signal %d", r.exe, WTERMSIG(st->cmd_status));
        rc = save(&r, st);
    }
    record_watch_free(r.watch); /* disarm before the settings go back */
    r.watch = NULL;
    restore_settings(&r);
    release_signals();
    if (lock >= 0)
        close(lock);
    if (rc == 0) {
        logf_(&r, "wrote %s: %llu bytes (%llu bytes of events from %d CPUs)", o->output, st->file_bytes,
              st->data_bytes, st->cpus);
        if (st->overrun)
            logf_(&r, "the ring buffer was full: its %llu oldest events were overwritten (--max-mb)",
                  st->overrun);
    }
    cleanup(&r);
    return rc;
}
