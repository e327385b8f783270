/* ingest/perf/perf.c -- perf's traces: `perf script` text, and perf.data read
 * through `perf script`.
 *
 * `perf sched record` and `perf record -e 'sched:*'` record the kernel's
 * tracepoints, and `perf script` prints each with the tracepoint's own
 * print format -- the text ftrace prints -- after perf's columns:
 *
 *     sleep 12980 [000] 66515.940274:       sched:sched_switch: prev_comm=...
 *
 * So a line's columns are read here and its text goes through the ftrace
 * reader's canonical pairs and mapping (ftrace_text.c, ftrace_map.c),
 * which makes it the event a tracefs line of the same tracepoint makes.
 * perf script's default fields give no process id: a thread is then its
 * own process, as in ftrace text without a TGID column; perf.data is read
 * with `-F comm,pid,tid,...`, which gives it.  Lines go through the
 * reorder window, as ftrace text does.  `perf script --header` comments
 * (# hostname : ..., # perf version : ...) become the trace's labels.
 *
 * perf.data is perf's own format, which only perf reads whole (its
 * feature sections and event attributes change with perf's versions):
 * the reader runs `perf script` on it with nanosecond times and reads its
 * output as a pipe, so memory stays one line buffer. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf_int.h"

extern char **environ;

static bool blank(char c) { return c == ' ' || c == '\t'; }
static bool digit(char c) { return c >= '0' && c <= '9'; }

/* The columns left of the time: [CPU], [PID/]TID and COMM (from the
 * right, since comm may hold blanks).  l: just before the time. */
static bool left_columns(const char *line, const char *l, ftrace_line *out)
{
    while (l > line && blank(l[-1]))
        l--;
    out->cpu = 0;
    if (l > line && l[-1] == ']') {
        const char *e = l - 1, *b = e;
        while (b > line && digit(b[-1]))
            b--;
        if (b == e || b == line || b[-1] != '[' || e - b > 5)
            return false;
        uint32_t cpu;
        if (!ingest_dec_u32(b, (size_t)(e - b), &cpu) || cpu > UINT16_MAX)
            return false;
        out->cpu = (uint16_t)cpu;
        l = b - 1;
        while (l > line && blank(l[-1]))
            l--;
    }
    const char *te = l;
    while (l > line && digit(l[-1]))
        l--;
    if (l == te || !ingest_dec_u32(l, (size_t)(te - l), &out->tid))
        return false;
    /* -1: perf lost the task (an exiting one's last switch; comm ":-1") */
    if (te - l == 1 && *l == '1' && l > line && l[-1] == '-') {
        out->tid = UINT32_MAX;
        l--;
    }
    out->has_tgid = false;
    if (l > line && l[-1] == '/') { /* -F pid,tid: PID/TID */
        const char *pe = l - 1, *pb = pe;
        while (pb > line && digit(pb[-1]))
            pb--;
        if (pb == pe || !ingest_dec_u32(pb, (size_t)(pe - pb), &out->tgid))
            return false;
        out->has_tgid = out->tgid != 0 || out->tid == 0;
        l = pb;
    }
    if (l == line || !blank(l[-1]))
        return false;
    const char *cb = line, *ce = l;
    while (cb < ce && blank(*cb))
        cb++;
    while (ce > cb && blank(ce[-1]))
        ce--;
    if (ce == cb)
        return false;
    out->comm = cb;
    out->comm_len = (size_t)(ce - cb);
    return true;
}

bool ingest_perf_lex_line(const char *line, ftrace_line *out, bool strict)
{
    memset(out, 0, sizeof *out);
    /* the time: a blank, SECONDS.FRACTION (1 to 9 digits), ':' and a blank */
    for (const char *c = strchr(line, ':'); c; c = strchr(c + 1, ':')) {
        if (!blank(c[1]))
            continue;
        const char *f = c;
        while (f > line && digit(f[-1]))
            f--;
        size_t frac = (size_t)(c - f);
        if (frac == 0 || frac > 9 || f == line || f[-1] != '.')
            continue;
        const char *dot = f - 1, *s = dot;
        while (s > line && digit(s[-1]))
            s--;
        uint64_t secs, fr;
        if (s == dot || s == line || !blank(s[-1]) || !ingest_dec_u64(s, (size_t)(dot - s), &secs) ||
            secs > UINT64_MAX / 1000000000u || !ingest_dec_u64(f, frac, &fr))
            return false;
        for (size_t i = frac; i < 9; i++)
            fr *= 10;
        out->ts = secs * 1000000000u + fr;
        if (!left_columns(line, s, out))
            return false;
        /* the event: a word ending in ':' (perf prints a sample's period
         * before it: a number to pass) */
        const char *n = c + 1;
        for (int tries = 0; tries < 2; tries++) {
            while (blank(*n))
                n++;
            const char *ne = n;
            while (*ne && !blank(*ne))
                ne++;
            if (ne > n + 1 && ne[-1] == ':') {
                const char *colon = memchr(n, ':', (size_t)(ne - 1 - n));
                if (strict && (!colon || colon == n || colon + 1 == ne - 1))
                    return false;
                const char *name = colon ? colon + 1 : n;
                out->name = (char *)name;
                out->name_len = (size_t)(ne - 1 - name);
                const char *fb = ne;
                while (blank(*fb))
                    fb++;
                size_t fl = strlen(fb);
                while (fl && (blank(fb[fl - 1]) || fb[fl - 1] == '\r'))
                    fl--;
                out->fields = fb;
                out->fields_len = fl;
                out->form = FTRACE_FORM_REPORT;
                return true;
            }
            if (strict || ne == n)
                return false;
            for (const char *d = n; d < ne; d++)
                if (!digit(*d))
                    return false;
            n = ne;
        }
        return false;
    }
    return false;
}

/* ---- the reader ---- */

/* `perf script --header`'s comments: "# key : value". */
static void header_line(const char *line, ingest_meta *m)
{
    static const struct {
        const char *key;
        size_t off, cap;
    } keys[] = {
        {"hostname", offsetof(ingest_meta, host), sizeof m->host},
        {"os release", offsetof(ingest_meta, kernel), sizeof m->kernel},
        {"arch", offsetof(ingest_meta, arch), sizeof m->arch},
        {"perf version", offsetof(ingest_meta, recorder), sizeof m->recorder},
    };
    const char *p = line + 1;
    while (blank(*p))
        p++;
    const char *colon = strstr(p, " : ");
    if (!colon)
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if ((size_t)(colon - p) != strlen(keys[i].key) || memcmp(p, keys[i].key, strlen(keys[i].key)) != 0)
            continue;
        char *dst = (char *)m + keys[i].off;
        if (keys[i].off == offsetof(ingest_meta, recorder))
            snprintf(dst, keys[i].cap, "perf %s", colon + 3);
        else
            snprintf(dst, keys[i].cap, "%s", colon + 3);
    }
    if ((size_t)(colon - p) == 12 && memcmp(p, "nrcpus avail", 12) == 0)
        m->cpus = (uint32_t)strtoul(colon + 3, NULL, 10);
}

/* A call chain's frame (`perf script` after a sample recorded with -g):
 * blanks, a hex address, a symbol.  Not an event. */
static bool frame_line(const char *line)
{
    if (!blank(line[0]))
        return false;
    while (blank(*line))
        line++;
    const char *a = line;
    while ((*a >= '0' && *a <= '9') || (*a >= 'a' && *a <= 'f'))
        a++;
    return a > line && (blank(*a) || !*a);
}

static int perf_line(ftrace_reader *r, char *line)
{
    const char *p = line;
    while (blank(*p))
        p++;
    if (!*p)
        return 0;
    if (*p == '#') {
        header_line(p, &r->st->meta);
        return 0;
    }
    ftrace_line li;
    if (!ingest_perf_lex_line(line, &li, false)) {
        if (frame_line(line))
            return 0;
        size_t len = strlen(p);
        return ingest_ft_fail(r, "not a perf script line: '%.60s%s'", p, len > 60 ? "..." : "");
    }
    li.name[li.name_len] = '\0'; /* the ':' after the name; ev.name points here */
    ((char *)li.fields)[li.fields_len] = '\0';
    li.ctx = DB_CTX_UNKNOWN; /* perf script prints no irq flags */
    ftrace_ev_kind k = ingest_ftrace_lex_event(li.name);
    int rc = ingest_ft_text_pairs(r, k, &li);
    if (rc == 0 && li.tid == UINT32_MAX) {
        /* perf lost the task: a switch names it (prev), else it is no one's */
        const ftrace_kv *pc = ingest_ft_kv_get(r, "prev_comm");
        if (k != FTRACE_EV_SCHED_SWITCH || !pc || !ingest_ft_kv_u32(r, "prev_pid", &li.tid)) {
            r->st->skipped++;
            if (r->sink->skip)
                r->sink->skip(r->sink->ctx);
            return 0;
        }
        li.comm = pc->val;
        li.comm_len = pc->vlen;
        li.has_tgid = false;
    }
    if (rc == 0)
        rc = ingest_ft_event(r, &li, k);
    if (rc == FTRACE_BAD_FIELDS)
        return ingest_ft_bad_fields(r, &li);
    return rc;
}

/* a line of perf script's text; its header may name the machine */
static int perf_text_line(void *reader, char *line, size_t len)
{
    ftrace_reader *r = reader;
    (void)len;
    int rc = perf_line(r, line);
    if (r->st->meta.arch[0] && !r->arch)
        r->arch = base_arch_find(r->st->meta.arch);
    return rc;
}

int ingest_perf_read(ingest_lines *lb, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                     char *err, size_t errlen)
{
    ftrace_reader r;
    ingest_reorder *ro;
    int rc = ingest_ft_text_begin(&r, &ro, lb, sink, opts, st, err, errlen);
    if (!st->meta.recorder[0])
        snprintf(st->meta.recorder, sizeof st->meta.recorder, "perf");
    if (rc == 0)
        rc = ingest_lines_each(&(ingest_line_loop){.lb = lb, .st = st, .lineno = &r.lineno,
                                                   .line = perf_text_line, .reader = &r},
                               err, errlen);
    if (rc == 0 && st->events == 0 && st->lines > 0) {
        ingest_errf(err, errlen, "%s:%llu: no perf script event line in the file", lb->path,
                    (unsigned long long)lb->lineno);
        rc = -1;
    }
    return ingest_ft_text_end(&r, ro, rc, err, errlen);
}

/* ---- perf.data ---- */

/* perf's program: ARGUSQ_PERF, perf on PATH, or Debian's versioned
 * binary (/usr/bin/perf is a wrapper that refuses a kernel whose version
 * has no perf_X.Y of its own; the binary itself reads any perf.data). */
static bool find_perf(char *out, size_t cap)
{
    const char *env = getenv("ARGUSQ_PERF");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, X_OK) == 0;
    }
    glob_t g;
    bool found = false;
    if (glob("/usr/bin/perf_[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        snprintf(out, cap, "%s", g.gl_pathv[g.gl_pathc - 1]); /* the newest */
        found = access(out, X_OK) == 0;
    }
    globfree(&g);
    if (found)
        return true;
    const char *path = getenv("PATH");
    for (const char *d = path ? path : "/usr/bin:/bin"; d && *d;) {
        const char *e = strchr(d, ':');
        size_t n = e ? (size_t)(e - d) : strlen(d);
        if (n && (size_t)snprintf(out, cap, "%.*s/perf", (int)n, d) < cap && access(out, X_OK) == 0)
            return true;
        d = e ? e + 1 : NULL;
    }
    return false;
}

/* The last line of what perf said on stderr (its reason; the lines
 * before it are warnings such as "'trace' not valid for ... Ignoring."),
 * "" when it said nothing. */
static void last_line(FILE *f, char *out, size_t cap)
{
    char line[512];
    out[0] = '\0';
    rewind(f);
    while (fgets(line, (int)sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] && !strstr(line, "Ignoring."))
            snprintf(out, cap, "%s", line);
    }
}

/* One run of `perf script` on the file: how perf ended. */
typedef struct perf_run {
    bool failed;    /* perf itself failed (not our SIGTERM after a read error) */
    char how[160];  /* "was killed by signal 11 (Segmentation fault)", "exited with status 255" */
    char said[512]; /* the last line it wrote on stderr, "" none */
} perf_run;

/* What waitpid's status says of perf, in words.  A status over 128 is
 * how a shell in between (a wrapper script) reports its child's signal. */
static void ended_how(int status, char *out, size_t cap)
{
    if (WIFSIGNALED(status)) {
        snprintf(out, cap, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        return;
    }
    int code = WEXITSTATUS(status);
    if (code > 128 && code - 128 < NSIG)
        snprintf(out, cap, "exited with status %d (a shell's word for signal %d, %s)", code, code - 128,
                 strsignal(code - 128));
    else
        snprintf(out, cap, "exited with status %d", code);
}

/* Runs `perf script` (with --header: its comments become the labels) and
 * reads its output into sink.  Returns the reader's 0 or -1 (err set);
 * pr says whether perf itself failed, and how. */
static int run_script(const char *perf, const char *path, bool header, const ingest_sink *sink,
                      const ingest_opts *opts, ingest_stats *st, perf_run *pr, char *err, size_t errlen)
{
    memset(pr, 0, sizeof *pr);
    char label[4200];
    snprintf(label, sizeof label, "%s (perf script)", path);
    FILE *errf = tmpfile();
    int fd[2];
    if (!errf || pipe(fd) != 0) {
        ingest_errf(err, errlen, "%s: cannot run perf: %s", path, strerror(errno));
        if (errf)
            fclose(errf);
        return -1;
    }
    char *argv[] = {(char *)perf, "script", "-f", "--ns", "-F", "comm,pid,tid,cpu,time,event,trace", "-i",
                    (char *)path, header ? "--header" : NULL, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fileno(errf), 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int sp = posix_spawn(&pid, perf, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (sp != 0) {
        ingest_errf(err, errlen, "%s: cannot run %s: %s", path, perf, strerror(sp));
        close(fd[0]);
        fclose(errf);
        return -1;
    }
    ingest_lines lb;
    memset(&lb, 0, sizeof lb);
    lb.path = label;
    lb.f = fdopen(fd[0], "rb");
    lb.cap = INGEST_LINE_MAX + 1;
    lb.buf = malloc(lb.cap + 1);
    int rc;
    if (!lb.f || !lb.buf) {
        if (!lb.f)
            close(fd[0]);
        ingest_errf(err, errlen, "%s: out of memory", path);
        rc = -1;
    } else {
        rc = ingest_perf_read(&lb, sink, opts, st, err, errlen);
    }
    if (rc != 0)
        kill(pid, SIGTERM); /* it may be blocked writing to the pipe */
    ingest_lines_close(&lb);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    /* perf's own failure, not the end our SIGTERM (or the pipe we closed)
     * gave it after the reader failed */
    pr->failed = WIFEXITED(status) ? WEXITSTATUS(status) != 0
                                   : rc == 0 || (WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGPIPE);
    if (pr->failed) {
        ended_how(status, pr->how, sizeof pr->how);
        last_line(errf, pr->said, sizeof pr->said);
    }
    fclose(errf);
    return rc;
}

/* "PERF script[ --header] HOW: SAID" */
static void run_words(const char *perf, bool header, const perf_run *pr, char *out, size_t cap)
{
    snprintf(out, cap, "%.1024s script%s %s%s%s", perf, header ? " --header" : "", pr->how, pr->said[0] ? ": " : "",
             pr->said[0] ? pr->said : ", without a message");
}

/* perf.data through `perf script --header`.  Some perf builds crash
 * printing the header of a file (exit 139, signal 11) that they read
 * whole without it; the header comes before any event, so a failure with
 * no event read yet is tried once more without --header, losing only the
 * labels the header gives (host, kernel, arch, cpus, perf's version),
 * which st->warning says. */
int ingest_perf_data_read(const char *path, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st,
                          char *err, size_t errlen)
{
    char perf[4096];
    if (!find_perf(perf, sizeof perf)) {
        ingest_errf(err, errlen,
                    "%s: offset 0: a perf.data file: argusq reads it through `perf script`, and perf is not "
                    "installed (Debian: apt-get install linux-perf; or give perf's own text: perf script -i %s > "
                    "trace.txt)", path, path);
        return -1;
    }
    perf_run hd, plain;
    char first[2048], second[2048];
    int rc = run_script(perf, path, true, sink, opts, st, &hd, err, errlen);
    if (!hd.failed)
        return rc;
    run_words(perf, true, &hd, first, sizeof first);
    if (st->events || st->skipped) { /* the sink has events: too late to read it again */
        ingest_errf(err, errlen, "%s: offset 0: not a perf.data file perf can read (%s, after %llu events)", path,
                    first, (unsigned long long)st->events);
        return -1;
    }
    memset(st, 0, sizeof *st);
    rc = run_script(perf, path, false, sink, opts, st, &plain, err, errlen);
    if (plain.failed) {
        run_words(perf, false, &plain, second, sizeof second);
        if (strcmp(hd.how, plain.how) == 0 && strcmp(hd.said, plain.said) == 0)
            ingest_errf(err, errlen, "%s: offset 0: not a perf.data file perf can read (%s; the same without --header)",
                        path, first);
        else
            ingest_errf(err, errlen, "%s: offset 0: not a perf.data file perf can read (%s; %s)", path, first,
                        second);
        return -1;
    }
    if (rc == 0)
        snprintf(st->warning, sizeof st->warning,
                 "%s; read without --header, so the trace has no labels from perf's header (host, kernel, arch, "
                 "cpus, perf version)",
                 first);
    return rc;
}
