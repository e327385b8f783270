/* ingest/ftrace/ftrace_ahead.c -- the names a text trace gives its `<...>` tasks
 * further on.
 *
 * tracefs prints `<...>` in the task column of a task whose comm its
 * cache had lost; old systrace text (no TGID column) is full of them:
 * `<...>-1234` on the task's own lines, while a sched_switch of the same
 * file says `prev_comm=worker prev_pid=1234`.  The reader declares a
 * thread when it first sees it, and the graph names each node after its
 * thread as the thread stands at that point, so a name the file gives
 * only later would leave the nodes before it `<...>` (and `find nodes
 * where thread = "worker"` would miss them).  So the first time a task
 * shows as `<...>` with no name known yet, the file is read once more,
 * from its start, for the first name it gives each task on any line: its
 * task column, prev_comm / next_comm of a sched_switch, the comm of a
 * sched_wakeup(_new) or sched_waking.  A file without such a task never
 * pays for that read; one with them pays it once.
 *
 * Only a file that can be read again is: a regular file (standard input
 * is spooled to one), the same one (its device and inode) as the reader's. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ftrace_int.h"

typedef struct ahead_ent {
    char name[DB_NAME_MAX];
} ahead_ent;

struct ingest_ft_ahead {
    const char *path;
    bool html;
    bool read;        /* the file was read (or could not be) */
    dev_t dev;        /* the reader's file */
    ino_t ino;
    bool regular;
    ahead_ent *tab;   /* the names, in the order they were found */
    size_t cap, used;
    base_map tids;    /* tid -> its name in tab */
    ftrace_reader scratch; /* the canonical pairs of the lines read ahead */
};

ingest_ft_ahead *ingest_ft_ahead_new(const ingest_lines *lb, bool html)
{
    ingest_ft_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->path = lb->path;
    a->html = html;
    struct stat sb;
    if (lb->f && fstat(fileno(lb->f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        a->regular = true;
        a->dev = sb.st_dev;
        a->ino = sb.st_ino;
    }
    return a;
}

void ingest_ft_ahead_free(ingest_ft_ahead *a)
{
    if (!a)
        return;
    free(a->tab);
    base_map_free(&a->tids);
    free(a);
}

static ahead_ent *find(const ingest_ft_ahead *a, uint32_t tid)
{
    uint32_t i;
    return base_map_get(&a->tids, tid, &i) ? &a->tab[i] : NULL;
}

/* tid's name, unless the file named it before (the first name wins: the
 * one nearest the `<...>` lines that come before any).  tid 0 is the idle
 * task, never `<...>`. */
static int put(ingest_ft_ahead *a, uint32_t tid, const char *name, size_t n)
{
    if (tid == 0 || n == 0 || (n == 5 && memcmp(name, "<...>", 5) == 0) || find(a, tid))
        return 0;
    if (!base_grow((void **)&a->tab, &a->cap, a->used + 1, sizeof *a->tab) ||
        base_map_put(&a->tids, tid, (uint32_t)a->used))
        return -1;
    if (n > DB_NAME_MAX - 1)
        n = DB_NAME_MAX - 1;
    memcpy(a->tab[a->used].name, name, n);
    a->tab[a->used].name[n] = '\0';
    a->used++;
    return 0;
}

/* The name pair comm_key gives the tid of pair pid_key, if both are there. */
static int put_kv(ingest_ft_ahead *a, const char *pid_key, const char *comm_key)
{
    uint32_t tid;
    const ftrace_kv *c = ingest_ft_kv_get(&a->scratch, comm_key);
    if (!c || !ingest_ft_kv_u32(&a->scratch, pid_key, &tid))
        return 0;
    return put(a, tid, c->val, c->vlen);
}

/* The names one line gives.  Lines the reader would refuse give none:
 * the reader says what is wrong with them when it gets there. */
static int line_names(ingest_ft_ahead *a, char *line)
{
    ftrace_line li;
    if (line[0] == '#' || ingest_ftrace_lex_header(line) || ingest_ftrace_lex_line(line, &li) != FTRACE_LEX_OK)
        return 0;
    if (put(a, li.tid, li.comm, li.comm_len) < 0)
        return -1;
    if (li.sys != FTRACE_SYS_NONE)
        return 0;
    li.name[li.name_len] = '\0';
    ftrace_ev_kind k = ingest_ftrace_lex_event(li.name);
    if (k != FTRACE_EV_SCHED_SWITCH && k != FTRACE_EV_SCHED_WAKEUP && k != FTRACE_EV_SCHED_WAKEUP_NEW &&
        k != FTRACE_EV_SCHED_WAKING)
        return 0;
    if (ingest_ft_text_pairs(&a->scratch, k, &li) != 0)
        return 0;
    if (k != FTRACE_EV_SCHED_SWITCH)
        return put_kv(a, "pid", "comm");
    return put_kv(a, "prev_pid", "prev_comm") < 0 ? -1 : put_kv(a, "next_pid", "next_comm");
}

/* Reads the whole file for names; a file that cannot be read again (or a
 * read error) leaves the names found so far, and the reader goes on
 * without the rest. */
static int read_ahead(ingest_ft_ahead *a)
{
    a->read = true;
    if (!a->regular)
        return 0;
    ingest_lines lb;
    char e[512];
    struct stat sb;
    if (ingest_lines_open(&lb, a->path, e, sizeof e) < 0)
        return 0;
    int rc = 0;
    if (fstat(fileno(lb.f), &sb) == 0 && sb.st_dev == a->dev && sb.st_ino == a->ino) {
        ingest_ft_src src;
        ingest_ft_src_init(&src, &lb, a->html);
        char *line;
        size_t len;
        while (rc == 0 && ingest_ft_src_next(&src, &line, &len, e, sizeof e) == 1)
            rc = line_names(a, line);
        ingest_ft_src_free(&src);
    }
    ingest_lines_close(&lb);
    return rc;
}

int ingest_ft_ahead_name(ftrace_reader *r, uint32_t tid, const char **name)
{
    *name = NULL;
    ingest_ft_ahead *a = r->ahead;
    if (!a)
        return 0;
    if (!a->read && read_ahead(a) < 0)
        return ingest_ft_fail(r, "out of memory (names of <...> tasks: %zu threads)", a->used);
    const ahead_ent *t = find(a, tid);
    *name = t ? t->name : NULL;
    return 0;
}
