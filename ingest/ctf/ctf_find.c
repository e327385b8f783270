/* ingest/ctf/ctf_find.c -- the CTF traces a folder holds.
 *
 * A folder with a `metadata` file is one CTF trace.  An LTTng session
 * folder is not: `lttng` writes one trace per tracer under it (kernel/,
 * ust/uid/UID/64-bit/ or ust/pid/APP-PID-DATE/, the same again under
 * archives/CHUNK/ after a rotation), and babeltrace2 reads the folder as
 * one trace made of all of them.  So a folder without metadata is
 * searched for trace folders, which ctf.c then reads together, merged in
 * time order.
 *
 * The search does not go into a trace folder (its index/ holds no trace),
 * nor through symbolic links (a link back up would loop), nor deeper than
 * CTF_FIND_DEPTH; the traces come sorted by path, so a session reads the
 * same way every time. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctf_int.h"

/* LTTng's deepest: SESSION/archives/CHUNK/ust/uid/UID/64-bit */
#define CTF_FIND_DEPTH 8
/* more would be a folder of something else (a home directory) */
#define CTF_FIND_MAX 4096

bool ingest_ctf_is_trace(const char *dir)
{
    char p[4096];
    struct stat sb;
    if (snprintf(p, sizeof p, "%s/metadata", dir) >= (int)sizeof p)
        return false;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add(ctf_traces *t, const char *dir, char *err, size_t errlen)
{
    if (t->n == CTF_FIND_MAX) {
        ingest_errf(err, errlen, "%s: more than %d CTF traces below it: not one recording", dir, CTF_FIND_MAX);
        return -1;
    }
    char **d = realloc(t->dirs, (t->n + 1) * sizeof *d);
    char *copy = strdup(dir);
    if (!d || !copy) {
        if (d)
            t->dirs = d;
        free(copy);
        ingest_errf(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    t->dirs = d;
    t->dirs[t->n++] = copy;
    return 0;
}

static int walk(ctf_traces *t, const char *dir, int depth, char *err, size_t errlen)
{
    if (ingest_ctf_is_trace(dir))
        return add(t, dir, err, errlen);
    if (depth == CTF_FIND_DEPTH)
        return 0;
    DIR *d = opendir(dir);
    if (!d) /* a folder we may not read holds nothing we can */
        return 0;
    int rc = 0;
    struct dirent *de;
    char p[4096];
    while (rc == 0 && (de = readdir(d))) {
        struct stat sb;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
            continue;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            rc = walk(t, p, depth + 1, err, errlen);
    }
    closedir(d);
    return rc;
}

int ingest_ctf_find(const char *dir, ctf_traces *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    /* the folder as given, with its trailing slashes (DIR/ as a shell
     * completes it) dropped, so the paths below it read DIR/kernel */
    char top[4096];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n >= sizeof top) {
        ingest_errf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    memcpy(top, dir, n);
    top[n] = '\0';
    if (walk(t, top, 0, err, errlen) < 0) {
        ingest_ctf_traces_free(t);
        return -1;
    }
    if (t->n > 1)
        qsort(t->dirs, t->n, sizeof *t->dirs, cmp_path);
    return 0;
}

void ingest_ctf_traces_free(ctf_traces *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->dirs[i]);
    free(t->dirs);
    memset(t, 0, sizeof *t);
}

bool ingest_ctf_holds_traces(const char *dir)
{
    ctf_traces t;
    char err[256];
    if (ingest_ctf_find(dir, &t, err, sizeof err) < 0)
        return true; /* too many: ingest says so */
    bool any = t.n > 0;
    ingest_ctf_traces_free(&t);
    return any;
}
