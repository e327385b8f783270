/* db/archive.c -- opening the LMDB environment (its tables, its format,
 * its map) and replacing its file; the catalog's entries are catalog.c's. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "db_int.h"

/* Address space reserved for the map; the file grows only as data is
 * written.  A 2 GB trace makes an archive of a few GB.  $ARGUSQ_MAP_MB
 * lowers it where address space is scarce (valgrind, 32-bit limits). */
#define DB_MAPSIZE ((size_t)1 << 40)

static size_t map_size(void)
{
    const char *e = getenv("ARGUSQ_MAP_MB");
    char *end;
    unsigned long long mb = e ? strtoull(e, &end, 10) : 0;
    return e && *e && !*end && mb >= 16 ? (size_t)mb << 20 : DB_MAPSIZE;
}

static const char *const dbi_names[DBI__COUNT] = {
    "meta", "traces", "trace_ids", "events", "ev_time", "ev_thread", "node_thread", "ev_port",
    "ev_block", "ev_timer", "nodes", "edges_in", "edges_out", "threads", "procs", "symbols", "rules", "norms", "nodesig", "sigs", "labels",
};

int db_fail(db_error *err, int rc, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int db_fail_oom(db_error *err) { return db_fail(err, -1, "out of memory"); }

int db_lmdb_fail(db_error *err, int rc, const char *what)
{
    if (rc == MDB_MAP_FULL)
        return db_fail(err, -1, "%s: the archive is full", what);
    if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID)
        return db_fail(err, -1, "%s: the archive is damaged (%s)", what, mdb_strerror(rc));
    if (rc == ENOSPC || rc == EFBIG || rc == EDQUOT)
        return db_fail(err, -1, "%s: no space left for the archive (%s); it is unchanged", what, strerror(rc));
    return db_fail(err, -1, "%s: %s", what, mdb_strerror(rc));
}

/* The archive records its format version; one of another version is
 * refused with both numbers (an archive without one but with traces is
 * of format 1).  A new archive gets the current one. */
static int check_format(db_archive *a, MDB_txn *txn, db_error *err)
{
    MDB_val k = {6, "format"}, v;
    int rc = mdb_get(txn, a->dbi[DBI_META], &k, &v);
    uint32_t fmt = 0;
    if (rc == 0 && v.mv_size == 4)
        memcpy(&fmt, v.mv_data, 4);
    else if (rc == 0)
        return db_fail(err, -1, "%s: the archive's format record is damaged", a->path);
    else if (rc != MDB_NOTFOUND)
        return db_lmdb_fail(err, rc, a->path);
    if (rc == MDB_NOTFOUND) {
        MDB_val tk = {6, "latest"}, tv;
        if (mdb_get(txn, a->dbi[DBI_META], &tk, &tv) == 0)
            fmt = 1; /* traces, but no format record: the first format */
        else if (a->readonly)
            return 0; /* empty */
        else {
            uint32_t cur = DB_FORMAT_VERSION;
            v = (MDB_val){4, &cur};
            rc = mdb_put(txn, a->dbi[DBI_META], &k, &v, 0);
            return rc ? db_lmdb_fail(err, rc, a->path) : 0;
        }
    }
    if (fmt > DB_FORMAT_VERSION)
        return db_fail(err, -1, "%s: archive format %u, newer than this argusq's %u: use a newer argusq",
                       a->path, fmt, DB_FORMAT_VERSION);
    if (fmt < 2)
        return db_fail(err, -1, "%s: archive format %u, from before argusq kept a format record: it cannot "
                       "be migrated (re-ingest the traces)", a->path, fmt);
    if (fmt != DB_FORMAT_VERSION) {
        if (err)
            err->old_format = fmt;
        return db_fail(err, -1, "%s: archive format %u, written by an older argusq; this one reads format %u. "
                       "Open it once where the file can be written (argusq -d %s info) and it is migrated "
                       "in place, keeping every trace", a->path, fmt, DB_FORMAT_VERSION, a->path);
    }
    return 0;
}

/* NAME.compact-PID, NAME.migrate-PID (and its -lock) beside the archive:
 * what a killed compact or migration left.  Called with the writer lock
 * held, which each of those holds while it runs: none is running. */
void db_remove_leftovers(const char *path)
{
    char dir[4096];
    const char *base = base_dir_of(path, dir, sizeof dir);
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || (strncmp(n + blen, ".compact-", 9) && strncmp(n + blen, ".migrate-", 9)))
            continue;
        const char *p = n + blen + 9;
        if (!isdigit((unsigned char)*p))
            continue;
        while (isdigit((unsigned char)*p))
            p++;
        if (*p && strcmp(p, "-lock") != 0)
            continue;
        unlinkat(dirfd(d), n, 0);
    }
    closedir(d);
}

/* The file at tmp (complete, synced, closed) takes the archive's name.
 * LMDB's lock file (PATH-lock) holds the last transaction id of the file
 * it was made for, and a process that opens the archive while another
 * still has it open reads that id from it to choose a meta page: with
 * the old file's id, a new file can read as empty (measured: a compact
 * with a REPL open, then `traces` listed nothing when the id was even).
 * So a new, empty lock file takes PATH-lock's name first: the next
 * process to open the archive initializes it from the file it finds.
 * In between, a process could open the old file with the new lock file:
 * it can only read (the caller holds the writer lock, and a writer that
 * opened the old file is refused: writer_life.c), which the new lock file
 * serves as well as any.  Processes that had the archive open keep both
 * old files, and read what they read before. */
int db_replace_file(const char *tmp, const char *path, db_error *err)
{
    char lock[4200], fresh[4300];
    snprintf(lock, sizeof lock, "%s-lock", path);
    snprintf(fresh, sizeof fresh, "%s-lock", tmp);
    unlink(fresh); /* the tmp archive's own, if it was opened */
    int fd = open(fresh, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return db_fail(err, -1, "%s: %s", fresh, strerror(errno));
    close(fd);
    if (rename(fresh, lock) != 0) {
        int e = errno;
        unlink(fresh);
        return db_fail(err, -1, "%s: %s", lock, strerror(e));
    }
    if (rename(tmp, path) != 0)
        return db_fail(err, -1, "%s: %s", path, strerror(errno));
    return base_sync_dir_of(path) == 0 ? 0 : db_fail(err, -1, "%s: %s", path, strerror(errno));
}

/* LMDB tells its map's address only for MDB_FIXEDMAP: find the mapping of
 * the archive file (offset 0) in /proc/self/maps.  Not found: no trim.
 * Called once, under a->map_mu; map_len is set before map, so whoever sees
 * the map sees its length. */
static void find_map(db_archive *a)
{
    int fd;
    struct stat st;
    if (mdb_env_get_fd(a->env, &fd) || fstat(fd, &st))
        return;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;
        if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min, &ino) == 6 && off == 0 &&
            ino == (unsigned long)st.st_ino && makedev(maj, min) == st.st_dev && hi - lo > 8192) {
            a->map_len = hi - lo;
            a->map = (void *)lo;
            break;
        }
    }
    if (f)
        fclose(f);
}

/* LMDB's own key order, memcmp of the shorter length then the shorter
 * key first (mdb_cmp_memn), compared 8 bytes at a time as big-endian
 * words: the keys are 4 to 28 bytes.  The same order for every pair of
 * keys, so an archive written with it is what LMDB's default writes and
 * reads (mdb_dump, an older argusq).  mdb_cmp_memn with its call to
 * memcmp cost much more a compare, and the writer compares keys at
 * every put.  The first word is compared before the loop: nearly every
 * compare ends there (the 8-byte keys of nodes and edges, a thread's
 * chunks against another thread's), and the loop's setup and its test of
 * i went first. */
int db_key_order(const MDB_val *a, const MDB_val *b)
{
    const unsigned char *x = a->mv_data, *y = b->mv_data;
    size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size, i = 0;
    if (n >= 8) {
        uint64_t u = db_get_be64(x), v = db_get_be64(y);
        if (u != v)
            return u < v ? -1 : 1;
        i = 8;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t u = db_get_be64(x + i), v = db_get_be64(y + i);
        if (u != v)
            return u < v ? -1 : 1;
    }
    if (i + 4 <= n) { /* the 12-, 20- and 28-byte keys' last word */
        uint32_t u = db_get_be32(x + i), v = db_get_be32(y + i);
        if (u != v)
            return u < v ? -1 : 1;
        i += 4;
    }
    for (; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return (a->mv_size > b->mv_size) - (a->mv_size < b->mv_size);
}

/* The tables, in a write transaction (write: created if missing) or a
 * read one (MDB_NOTFOUND when a table or, in a writable archive, the
 * format record is missing).  Returns 0, an LMDB code, or -1 with err
 * filled (the format is not this argusq's).  Committing, even a read
 * transaction, keeps the dbi handles open for the environment. */
static int open_tables(db_archive *a, bool write, db_error *err)
{
    MDB_txn *txn;
    unsigned create = write ? MDB_CREATE : 0;
    int rc = mdb_txn_begin(a->env, NULL, write ? 0 : MDB_RDONLY, &txn);
    if (rc)
        return rc;
    /* the format first: an archive of another format may lack tables */
    rc = mdb_dbi_open(txn, dbi_names[DBI_META], create, &a->dbi[DBI_META]);
    MDB_val fk = {6, "format"}, lk = {6, "latest"}, v;
    if (!rc && !write && !a->readonly && mdb_get(txn, a->dbi[DBI_META], &fk, &v) == MDB_NOTFOUND &&
        mdb_get(txn, a->dbi[DBI_META], &lk, &v) == MDB_NOTFOUND)
        rc = MDB_NOTFOUND; /* empty: the write transaction records the format */
    if (!rc && check_format(a, txn, err)) {
        mdb_txn_abort(txn);
        return -1;
    }
    /* the environment keeps a table's compare for every later transaction */
    for (int i = 0; !rc && i < DBI__COUNT; i++)
        if (!(rc = mdb_dbi_open(txn, dbi_names[i], create, &a->dbi[i])))
            rc = mdb_set_compare(txn, a->dbi[i], db_key_order);
    if (!rc)
        return mdb_txn_commit(txn);
    mdb_txn_abort(txn);
    return rc;
}

/* mdb_env_create, its settings and mdb_env_open: 0 with a->env open, else
 * an LMDB code or errno with a->env closed (LMDB's rule for an
 * environment whose open failed). */
static int env_open(db_archive *a, const char *path, unsigned flags)
{
    int rc = mdb_env_create(&a->env);
    if (rc)
        return rc;
    rc = mdb_env_set_maxdbs(a->env, DBI__COUNT);
    if (!rc)
        rc = mdb_env_set_mapsize(a->env, map_size());
    if (!rc)
        rc = mdb_env_set_maxreaders(a->env, 126);
    if (!rc)
        rc = mdb_env_open(a->env, path, flags, 0644);
    if (rc) {
        mdb_env_close(a->env);
        a->env = NULL;
    }
    return rc;
}

/* LMDB says only the errno of a file it could not open, the archive or
 * its lock file: the archive's when it does not open as asked (errno
 * says why).  O_NONBLOCK: a FIFO in its place does not hang the probe. */
static bool archive_opens(const char *path, bool readonly)
{
    int fd = open(path, (readonly ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* A failed open leaves nothing behind: the lock file LMDB made beside a
 * file that is not an archive (a mistyped -d, a directory, a file this
 * user may not write), and the archive file when the open made it.  Only
 * when no other process has the environment open: each holds a shared
 * record lock on the lock file's first byte while it does (LMDB's
 * mdb_env_excl_lock), so the write lock taken here says none does.  The
 * window left is a process that opened the lock file just now and has
 * not locked it yet: one opening the same new file or non-archive. */
static void remove_made(const char *path, const char *lock, bool made_lock, bool made_file)
{
    if (!made_lock && !made_file)
        return;
    int fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return; /* none: LMDB makes the lock file first when it makes the archive */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_SETLK, &fl) == 0) {
        if (made_file)
            unlink(path);
        if (made_lock)
            unlink(lock);
    }
    close(fd); /* drops the record lock */
}

/* Why a->env could not be opened, naming the file it is about. */
static void open_failed(const char *path, const char *lock, bool readonly, bool created, int rc, db_error *err)
{
    bool denied = rc == EACCES || rc == EPERM || rc == EROFS;
    if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
        db_fail(err, -1, "%s: not an argusq archive", path);
    else if (denied && created) /* where the archive was to be: LMDB makes its lock file there first */
        db_fail(err, -1, "%s: cannot create the archive: %s", path, strerror(rc));
    else if (denied && !archive_opens(path, readonly))
        db_fail(err, -1, "%s: %s%s", path, readonly ? "" : "cannot write the archive: ", strerror(errno));
    else if (denied)
        db_fail(err, -1, "%s: %s (the lock file of %s, which %s it needs)", lock, strerror(rc), path,
                readonly ? "reading" : "writing");
    else
        db_fail(err, -1, "%s: %s", path, mdb_strerror(rc));
}

db_archive *db_open(const char *path, bool readonly, db_error *err)
{
    struct stat st;
    bool created = !readonly && stat(path, &st) != 0;
    if (readonly && stat(path, &st) != 0) {
        db_fail(err, -1, "%s: no such archive (ingest a trace first)", path);
        return NULL;
    }
    if (strlen(path) >= sizeof ((db_archive *)0)->path) {
        db_fail(err, -1, "%s: path too long", path);
        return NULL;
    }
    db_archive *a = calloc(1, sizeof *a);
    if (!a) {
        db_fail(err, -1, "out of memory");
        return NULL;
    }
    a->statm_fd = -2;
    pthread_mutex_init(&a->map_mu, NULL);
    strcpy(a->path, path);
    a->readonly = readonly;
    char lock[sizeof a->path + 8];
    snprintf(lock, sizeof lock, "%s-lock", path);
    bool made_lock = lstat(lock, &st) != 0 && errno == ENOENT;
    /* NOSUBDIR: the archive is one file (plus PATH-lock); NOTLS: a reader
     * snapshot is not tied to a thread. */
    unsigned flags = MDB_NOSUBDIR | MDB_NOTLS | (readonly ? MDB_RDONLY : 0);
    int rc = env_open(a, path, flags);
    if (readonly && (rc == EACCES || rc == EPERM) && archive_opens(path, true)) {
        /* The archive can be read but its lock file cannot be made or
         * written: a directory this user may not write (another user's
         * archive, read-only media), or another user's lock file.  LMDB
         * already goes without one on a read-only file system (EROFS);
         * here it is told to (MDB_NOLOCK), so that whoever can read the
         * file can read the archive.  What that gives up is the lock
         * file's reader table: a writer elsewhere does not see this
         * process's snapshots, and may reuse pages a read still uses.  So
         * reading an archive nobody writes is safe, and reading one that
         * is being written (an ingest, rules, drop trace) is not.  The
         * handle never writes (without the lock file LMDB has no writers'
         * mutex either): it is read-only, and db_writer says why. */
        a->nolock_errno = rc;
        rc = env_open(a, path, flags | MDB_NOLOCK);
    }
    if (rc) {
        open_failed(path, lock, readonly, created, rc, err);
        remove_made(path, lock, made_lock, created);
        pthread_mutex_destroy(&a->map_mu);
        free(a);
        return NULL;
    }
    /* an archive that has its tables and format opens them in a read
     * transaction: no writer lock, so a query never waits for an ingest's
     * batch; a new one (or one without some table) in a write transaction,
     * which creates them */
    rc = open_tables(a, false, err);
    if (rc == MDB_NOTFOUND && !readonly)
        rc = open_tables(a, true, err);
    if (rc == 0 && created)
        base_sync_dir_of(path);
    if (rc) {
        if (rc != -1) /* -1: err says it already (LMDB codes are below -30000, errno above 0) */
            db_fail(err, -1, "%s: %s", path, rc == MDB_NOTFOUND ? "not an argusq archive" : mdb_strerror(rc));
        mdb_env_close(a->env);
        remove_made(path, lock, made_lock, created);
        pthread_mutex_destroy(&a->map_mu);
        free(a);
        return NULL;
    }
    return a;
}

int db_fail_readonly(const db_archive *a, db_error *err)
{
    const db_archive *owner = a->env_owner ? a->env_owner : a;
    if (access(a->path, W_OK) != 0) {
        if (errno == EROFS)
            return db_fail(err, -1, "%s: the archive is read-only: its file system is mounted read-only", a->path);
        return db_fail(err, -1, "%s: the archive is read-only: this user may not write it (%s)", a->path,
                       strerror(errno));
    }
    if (owner->nolock_errno)
        return db_fail(err, -1, "%s: the archive is read-only: its lock file %s-lock cannot be made or written "
                       "(%s), so it was opened without one, for reading only", a->path, a->path,
                       strerror(owner->nolock_errno));
    return db_fail(err, -1, "%s: the archive is read-only: it was opened read-only", a->path);
}

bool db_writable(const char *path)
{
    char lock[4200], dir[4096];
    if (access(path, W_OK) != 0)
        return false;
    snprintf(lock, sizeof lock, "%s-lock", path);
    if (access(lock, W_OK) == 0)
        return true;
    if (errno != ENOENT)
        return false;
    base_dir_of(path, dir, sizeof dir);
    return access(dir, W_OK | X_OK) == 0;
}

db_archive *db_share(db_archive *a, const char *path, bool readonly, db_error *err)
{
    if (!readonly && a->readonly) {
        db_fail(err, -1, "%s: this process has the archive open read-only: it cannot be opened for writing "
                "until that handle is closed", path);
        return NULL;
    }
    if (strlen(path) >= sizeof a->path) {
        db_fail(err, -1, "%s: path too long", path);
        return NULL;
    }
    db_archive *s = calloc(1, sizeof *s);
    if (!s) {
        db_fail(err, -1, "out of memory");
        return NULL;
    }
    s->env = a->env;
    memcpy(s->dbi, a->dbi, sizeof s->dbi); /* dbi handles belong to the environment */
    s->readonly = readonly;
    strcpy(s->path, path);
    s->env_owner = a;
    s->statm_fd = -2;
    pthread_mutex_init(&s->map_mu, NULL);
    return s;
}

int db_file_id(db_archive *a, uint64_t *dev, uint64_t *ino)
{
    int fd;
    struct stat st;
    if (mdb_env_get_fd(a->env, &fd) || fstat(fd, &st))
        return -1;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return 0;
}

void db_archive_trim(db_archive *a)
{
    int fd;
    struct stat st;
    if (!a->map_looked) { /* not at open: a query never trims */
        pthread_mutex_lock(&a->map_mu);
        if (!a->map_looked)
            find_map(a);
        a->map_looked = true;
        pthread_mutex_unlock(&a->map_mu);
    }
    void *map = a->map;
    if (!map || mdb_env_get_fd(a->env, &fd) || fstat(fd, &st))
        return;
    size_t map_len = a->map_len;
    size_t len = (size_t)st.st_size < map_len ? (size_t)st.st_size : map_len;
    long page = sysconf(_SC_PAGESIZE);
    len -= len % (size_t)(page > 0 ? page : 4096);
    if (len)
        madvise(map, len, MADV_DONTNEED);
}

uint64_t db_archive_file_rss(db_archive *a)
{
    char buf[128];
    int fd = a->statm_fd;
    if (fd == -2) { /* opened the first time a writer asks, not at every open */
        fd = a->readonly ? -1 : open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
        int none = -2;
        if (!atomic_compare_exchange_strong(&a->statm_fd, &none, fd)) { /* another thread's was first */
            if (fd >= 0)
                close(fd);
            fd = none;
        }
    }
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return 0;
    buf[n] = 0;
    unsigned long size, resident, shared;
    if (sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    return (uint64_t)shared * (uint64_t)(page > 0 ? page : 4096);
}

bool db_archive_trim_past(db_archive *a, uint64_t *base, uint64_t slack)
{
    uint64_t rss = db_archive_file_rss(a);
    if (!rss)
        return false;
    if (rss > *base + slack) {
        db_archive_trim(a);
        *base = db_archive_file_rss(a);
    }
    return true;
}

void db_close(db_archive *a)
{
    if (!a)
        return;
    if (a->statm_fd >= 0)
        close(a->statm_fd);
    if (!a->env_owner)
        mdb_env_close(a->env);
    pthread_mutex_destroy(&a->map_mu);
    free(a);
}
