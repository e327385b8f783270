/* tests/unit/ftrace_rec.h -- a sink that records what a reader hands it,
 * and small helpers, for the ftrace reader's unit tests (test_ftrace.c,
 * test_ftrace_field.c).  Static: each test program has its own copy. */
#ifndef ARGUSQ_TESTS_FTRACE_REC_H
#define ARGUSQ_TESTS_FTRACE_REC_H

/* ---- a recording sink ---- */

typedef struct rec_event {
    db_event ev; /* name and attrs are in the copies below */
    char name[48];
    char attrs[1024];
} rec_event;

typedef struct rec_thread {
    uint32_t tid, pid;
    char name[DB_NAME_MAX];
} rec_thread;

typedef struct rec {
    rec_event *ev;
    size_t nev, cap;
    rec_thread th[512]; /* latest declaration of each tid */
    size_t nth;
    uint32_t procs[512]; /* declared pids */
    char pnames[512][DB_NAME_MAX];
    size_t nprocs;
    size_t thread_calls, proc_calls, skips, progress_calls;
    size_t order_errors; /* uses before declarations */
    size_t name_lens, bad_name_lens; /* events with name_len set, and set wrong */
    bool keep;           /* keep the events (else count only) */
    int fail_at;         /* event number at which to fail, 0 never */
    const char *fail_msg;
} rec;

static inline rec_thread *find_thread(rec *r, uint32_t tid)
{
    for (size_t i = 0; i < r->nth; i++)
        if (r->th[i].tid == tid)
            return &r->th[i];
    return NULL;
}

static inline int find_proc(rec *r, uint32_t pid)
{
    for (size_t i = 0; i < r->nprocs; i++)
        if (r->procs[i] == pid)
            return (int)i;
    return -1;
}

static inline int on_proc(void *ctx, uint32_t pid, const char *name, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    r->proc_calls++;
    int i = find_proc(r, pid);
    if (i < 0 && r->nprocs < 512) {
        i = (int)r->nprocs++;
        r->procs[i] = pid;
    }
    if (i >= 0)
        snprintf(r->pnames[i], DB_NAME_MAX, "%s", name);
    return 0;
}

static inline int on_thread(void *ctx, const db_thread *t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    rec *r = ctx;
    r->thread_calls++;
    if (find_proc(r, t->pid) < 0)
        r->order_errors++;
    rec_thread *th = find_thread(r, t->tid);
    if (!th && r->nth < 512)
        th = &r->th[r->nth++];
    if (th) {
        th->tid = t->tid;
        th->pid = t->pid;
        memcpy(th->name, t->name, DB_NAME_MAX);
    }
    return 0;
}

static inline int on_event(void *ctx, db_event *ev, char *err, size_t errlen)
{
    rec *r = ctx;
    rec_thread *th = find_thread(r, ev->tid);
    if (!th || th->pid != ev->pid || find_proc(r, ev->pid) < 0)
        r->order_errors++;
    if (ev->name_len) { /* the sink's call copies the name by it */
        r->name_lens++;
        r->bad_name_lens += !ev->name || strlen(ev->name) != ev->name_len;
    }
    if (r->fail_at && (int)r->nev + 1 == r->fail_at) {
        snprintf(err, errlen, "%s", r->fail_msg);
        return -1;
    }
    if (!r->keep) {
        r->nev++;
        return 0;
    }
    if (r->nev == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 1024;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        assert_non_null(r->ev);
    }
    rec_event *e = &r->ev[r->nev++];
    e->ev = *ev;
    snprintf(e->name, sizeof e->name, "%s", ev->name);
    size_t n = ev->attrs_len < sizeof e->attrs ? ev->attrs_len : sizeof e->attrs;
    memcpy(e->attrs, ev->attrs, n);
    e->ev.name = NULL; /* the array moves: see assert_attr */
    e->ev.attrs = NULL;
    e->ev.attrs_len = n;
    return 0;
}

static inline void on_skip(void *ctx)
{
    ((rec *)ctx)->skips++;
}

static inline rec *rec_new(bool keep)
{
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->keep = keep;
    return r;
}

static inline void rec_free(rec *r)
{
    free(r->ev);
    free(r);
}

static inline int run(rec *r, const char *path, ingest_format *fmt, ingest_stats *st, char *err, size_t errlen)
{
    ingest_sink s = {.ctx = r, .proc = on_proc, .thread = on_thread, .event = on_event, .skip = on_skip};
    /* the text traces of tests/traces were recorded on x86-64 */
    ingest_opts o = {.arch = "x86_64"};
    return ingest_file_opts(path, &s, &o, fmt, st, err, errlen);
}

static inline const rec_event *find_event(const rec *r, uint64_t ts, const char *name)
{
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].ev.ts == ts && strcmp(r->ev[i].name, name) == 0)
            return &r->ev[i];
    return NULL;
}

/* Two recordings hold the same events, field by field and attribute by
 * attribute (the same trace read two ways: a compact and a full form, an
 * item held two ways). */
static inline void assert_same_events(const rec *a, const rec *b)
{
    assert_int_equal(a->nev, b->nev);
    for (size_t i = 0; i < a->nev; i++) {
        const rec_event *x = &a->ev[i], *y = &b->ev[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->ev.ts, y->ev.ts);
        assert_int_equal(x->ev.tid, y->ev.tid);
        assert_int_equal(x->ev.pid, y->ev.pid);
        assert_int_equal(x->ev.cpu, y->ev.cpu);
        assert_int_equal(x->ev.type, y->ev.type);
        assert_int_equal(x->ev.phase, y->ev.phase);
        assert_int_equal(x->ev.obj, y->ev.obj);
        assert_int_equal(x->ev.ctx, y->ev.ctx);
        assert_int_equal(x->ev.attrs_len, y->ev.attrs_len);
        if (memcmp(x->attrs, y->attrs, x->ev.attrs_len) != 0)
            fail_msg("event %zu (%s): other attributes", i, x->name);
    }
}

static inline void assert_attr(const rec_event *e, const char *key, const char *want)
{
    const char *v;
    size_t n;
    db_event ev = e->ev;
    ev.attrs = e->attrs;
    if (!db_event_attr(&ev, key, &v, &n))
        fail_msg("event %s at %llu has no attribute %s", e->name, (unsigned long long)e->ev.ts, key);
    if (strlen(want) != n || memcmp(v, want, n) != 0)
        fail_msg("event %s: %s=%.*s, want %s", e->name, key, (int)n, v, want);
}

static inline void assert_no_attr(const rec_event *e, const char *key)
{
    const char *v;
    size_t n;
    db_event ev = e->ev;
    ev.attrs = e->attrs;
    if (db_event_attr(&ev, key, &v, &n))
        fail_msg("event %s at %llu has %s=%.*s, want none", e->name, (unsigned long long)e->ev.ts, key, (int)n, v);
}

/* Event lines of a file, counted independently of the reader: everything
 * except '#' comments, blank lines and trace-cmd's cpus= header. */
static inline size_t count_event_lines(const char *path, size_t *headers)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    size_t n = 0;
    *headers = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (line[0] == '#' || *p == '\n' || *p == '\0')
            continue;
        if (strncmp(line, "cpus=", 5) == 0) {
            (*headers)++;
            continue;
        }
        n++;
    }
    fclose(f);
    return n;
}

static inline char *write_temp(const char *content)
{
    char *path = strdup("/tmp/test_ftrace_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(content);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    close(fd);
    return path;
}

typedef struct one {
    rec *r;
    const rec_event *e;
} one;

static inline one ingest_text(const char *text)
{
    char *path = write_temp(text);
    rec *r = rec_new(true);
    char err[512];
    int rc = run(r, path, NULL, NULL, err, sizeof err);
    if (rc != 0)
        fail_msg("%s", err);
    unlink(path);
    free(path);
    one o = {r, r->nev ? &r->ev[r->nev - 1] : NULL};
    return o;
}

#endif
