/* lib/registry.c -- the archives this process has open: libargusq's one
 * piece of process-wide mutable state, and why it must exist.
 *
 * An archive is an LMDB file, and LMDB allows one environment per file in
 * a process: it keeps POSIX record locks on the file's lock file, which
 * belong to the process, not to the environment, so closing a second
 * environment on the same file silently drops the first one's locks (and
 * another process may then reset a reader table still in use).  A library
 * cannot know whether two callers -- two Python objects, two threads, a
 * Dask worker's tasks -- name the same file, so argusq_open looks the file
 * up here by device and inode (the same file under any path) and gives
 * the new handle a db_share of the environment already open.  Entries are
 * counted: the environment is closed with the last handle.
 *
 * One mutex guards the list and is held through an open, so two threads
 * opening one new file cannot make two environments; an open that
 * migrates an archive of an earlier format holds it for the migration. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib_int.h"

struct lib_shared {
    uint64_t dev, ino;
    db_archive *owner; /* opened by the first handle, in its mode */
    unsigned handles;
    lib_shared *next;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static lib_shared *registry; /* guarded by registry_mu */

/* db_open, and an archive of an earlier format migrated first when it may
 * be written (query_migrate), as the argusq command always did. */
static db_archive *open_migrating(const char *path, bool readonly, bool log, argusq_error *err)
{
    db_error de = {0};
    db_archive *a = db_open(path, readonly, &de);
    if (!a && de.old_format && !readonly) {
        query_error qe = {0};
        if (query_migrate(path, log ? stderr : NULL, &qe)) {
            lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s", qe.msg);
            return NULL;
        }
        de = (db_error){0};
        a = db_open(path, readonly, &de);
    }
    if (!a)
        lib_fail(err, strcmp(de.msg, "out of memory") ? ARGUSQ_ERR_ARCHIVE : ARGUSQ_ERR_NOMEM, "%s", de.msg);
    return a;
}

static argusq_archive *handle_of(lib_shared *sh, const char *path, bool readonly, argusq_error *err)
{
    argusq_archive *h = calloc(1, sizeof *h);
    char *p = strdup(path);
    db_error de = {0};
    db_archive *db = h && p ? db_share(sh->owner, path, readonly, &de) : NULL;
    if (!db) {
        if (h && p)
            lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s", de.msg);
        else
            lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
        free(p);
        free(h);
        return NULL;
    }
    h->db = db;
    h->shared = sh;
    h->path = p;
    sh->handles++;
    return h;
}

argusq_archive *lib_registry_open(const char *path, unsigned flags, argusq_error *err)
{
    bool readonly = !(flags & ARGUSQ_OPEN_WRITE), create = !readonly && (flags & ARGUSQ_OPEN_CREATE);
    argusq_archive *h = NULL;
    pthread_mutex_lock(&registry_mu);
    struct stat st;
    if (stat(path, &st) == 0) {
        for (lib_shared *sh = registry; sh; sh = sh->next)
            if (sh->dev == (uint64_t)st.st_dev && sh->ino == (uint64_t)st.st_ino) {
                h = handle_of(sh, path, readonly, err);
                goto out;
            }
    } else if (!create) {
        /* db_open's words for a read-only open of a missing file */
        lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s: no such archive (ingest a trace first)", path);
        goto out;
    }
    lib_shared *sh = calloc(1, sizeof *sh);
    if (!sh) {
        lib_fail(err, ARGUSQ_ERR_NOMEM, "out of memory");
        goto out;
    }
    sh->owner = open_migrating(path, readonly, flags & ARGUSQ_OPEN_LOG, err);
    /* the file the environment has open: the one stat found, unless the
     * archive was just created or replaced (compact) meanwhile */
    if (!sh->owner || db_file_id(sh->owner, &sh->dev, &sh->ino) != 0 ||
        !(h = handle_of(sh, path, readonly, err))) {
        if (sh->owner && !err->message[0])
            lib_fail(err, ARGUSQ_ERR_ARCHIVE, "%s: %s", path, strerror(errno));
        db_close(sh->owner);
        free(sh);
        goto out;
    }
    sh->next = registry;
    registry = sh;
out:
    pthread_mutex_unlock(&registry_mu);
    return h;
}

void lib_registry_close(argusq_archive *h)
{
    lib_shared *sh = h->shared;
    pthread_mutex_lock(&registry_mu);
    db_close(h->db);
    if (--sh->handles == 0) {
        for (lib_shared **p = &registry; *p; p = &(*p)->next)
            if (*p == sh) {
                *p = sh->next;
                break;
            }
        db_close(sh->owner);
        free(sh);
    }
    pthread_mutex_unlock(&registry_mu);
    free(h->path);
    free(h);
}
