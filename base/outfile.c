/* base/outfile.c -- a file argusq writes at a path the user named (export,
 * dump, backup, record's trace.dat): written under a temporary name
 * beside it and renamed over it once whole.  A failure -- a statement
 * that fails half-way, a full disk, Ctrl-C -- then leaves the old file
 * byte for byte, and a crash leaves the old file or the new one, never a
 * part of either (the data is synced before the rename for that: ext4
 * syncs a file renamed over another by itself, other file systems don't),
 * at worst with the temporary file beside it.  Beside, not in $TMPDIR:
 * rename is atomic only within one file system. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

/* A new file at a name of this thread's beside path, made as fopen makes
 * one: mode 0666 less the umask, which the kernel applies (a library
 * must not set the process's umask to read it, and mkstemp's files are
 * 0600).  The fd, or -1 with errno set. */
static int create_beside(const char *path, char *tmp, size_t len)
{
    for (int i = 0; i < 100; i++) {
        snprintf(tmp, len, "%s.tmp-%ld-%ld-%d", path, (long)getpid(), (long)gettid(), i);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) /* EEXIST: a leftover of a process that died: another name */
            return fd;
    }
    return -1;
}

static int fail_errno(base_outfile *o, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", o->shown, strerror(errno));
    return -1;
}

static int fail_oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* open's failure: errno's message, and o as it was before */
static int open_fails(base_outfile *o, char *err, size_t errlen)
{
    fail_errno(o, err, errlen);
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return -1;
}

int base_outfile_open(base_outfile *o, const char *path, unsigned flags, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->shown = path;
    o->excl = flags & BASE_OUTFILE_EXCL;
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && o->excl)
        {
        snprintf(err, errlen, "%s: %s", path, strerror(EEXIST));
        return -1;
    }
    /* a symbolic link stays one: fopen writes the file it names, so the
     * new file goes beside that one, in its place */
    char *real = exists && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
    if (real && stat(real, &st) != 0)
        exists = false;
    if (!(o->path = real ? real : strdup(path)))
        return fail_oom(err, errlen);
    /* a file fopen could not open for writing (read-only: a result kept
     * on purpose) is not replaced either, though its directory would let
     * a rename do it */
    if (exists && faccessat(AT_FDCWD, o->path, W_OK, AT_EACCESS) != 0 && errno != ENOENT)
        return open_fails(o, err, errlen);
    if (exists && !S_ISREG(st.st_mode)) {
        /* a FIFO, a terminal, /dev/stdout: nothing there to keep, and no
         * file could take its place; written as fopen writes it */
        return (o->f = fopen(o->path, "w")) ? 0 : open_fails(o, err, errlen);
    }
    size_t n = strlen(o->path) + 64;
    if (!(o->tmp = malloc(n))) {
        free(o->path);
        o->path = NULL;
        return fail_oom(err, errlen);
    }
    int fd = create_beside(o->path, o->tmp, n);
    if (fd < 0)
        return open_fails(o, err, errlen);
    if (exists) {
        /* fopen over a file keeps its mode and owner: so does its
         * replacement, as far as this process may give them */
        if (fchown(fd, st.st_uid, st.st_gid) != 0) {
            /* not ours to give: this process's, as a new file is */
        }
        if (fchmod(fd, st.st_mode & 0777) != 0) {
            /* our own file: cannot fail but on a file system without
             * modes, where the mode it has is all there is */
        }
    }
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        errno = e;
        return open_fails(o, err, errlen);
    }
    return 0;
}

const char *base_outfile_name(const base_outfile *o) { return o->tmp ? o->tmp : o->path; }

/* The temporary file takes path's name: over the old file, or -- EXCL --
 * only where there is none (RENAME_NOREPLACE; a file system without it
 * gets a hard link, which fails on an existing name as well). */
static int put_in_place(base_outfile *o)
{
    if (!o->excl)
        return rename(o->tmp, o->path);
    if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (link(o->tmp, o->path) != 0)
        return -1;
    unlink(o->tmp);
    return 0;
}

int base_outfile_commit(base_outfile *o, char *err, size_t errlen)
{
    int rc = 0;
    if (fflush(o->f) != 0 || (o->tmp && fsync(fileno(o->f)) != 0))
        rc = fail_errno(o, err, errlen);
    if (fclose(o->f) != 0 && !rc)
        rc = fail_errno(o, err, errlen);
    o->f = NULL;
    if (!rc && o->tmp && put_in_place(o) != 0)
        rc = fail_errno(o, err, errlen);
    if (o->tmp) {
        if (rc)
            unlink(o->tmp);
        else
            /* the new name into the directory's data; best effort: some
             * file systems refuse fsync of a directory, and the file is
             * whole under its name already */
            base_sync_dir_of(o->path);
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return rc;
}

void base_outfile_abort(base_outfile *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

/* ---- directories ---- */

/* path's directory into dir; its last component (base.h). */
const char *base_dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return base;
}

/* A new file's name is in its directory's data, which fsync of the file
 * does not write: sync the directory too, or a crash right after the
 * archive (or its lock file) was made can leave it without a name. */
int base_sync_dir_of(const char *path)
{
    char dir[4096];
    base_dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}
