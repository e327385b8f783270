/* tests/crash/wlog.c -- an LD_PRELOAD library that logs every write,
 * size change and sync barrier a process makes to ONE file, with the bytes
 * written, so that tests/crash/crashgen.py can rebuild what a power cut at
 * any moment could have left on disk (the ALICE / CrashMonkey method).
 *
 *   ARGUSQ_WLOG_FILE=/path/argus.db   the file to watch
 *   ARGUSQ_WLOG_OUT=/path/wlog.bin    where the log goes (truncated)
 *
 * Without both variables every call passes straight through.
 *
 * Which calls matter, from liblmdb 0.9.24 (`nm -D liblmdb.so.0` imports
 * pwrite, write, writev, lseek, fdatasync, fsync, ftruncate, msync, mmap;
 * strace of an ingest confirms the pattern): mdb_page_flush writes runs of
 * dirty pages with lseek + writev, single pages with pwrite, all on the
 * plain fd (me_fd); a commit then calls fdatasync(me_fd) unless MDB_NOSYNC
 * is set on the environment, and mdb_env_write_meta writes the meta page
 * with a pwrite of 120 bytes at offset 32 or 4096+32 -- on me_mfd, a
 * second fd opened O_WRONLY|O_DSYNC (the write is its own barrier), or on
 * me_fd when MDB_NOSYNC or MDB_NOMETASYNC is set.  So an argusq batch
 * commit is pages, fdatasync, meta on me_fd (MDB_NOMETASYNC), and was
 * pages, meta on me_fd, no sync at all (MDB_NOSYNC, before the fix); the
 * final commit is pages, fdatasync, meta on me_mfd.
 * ftruncate and msync only come with MDB_WRITEMAP, which argusq does not
 * use.  The rest (pwritev*, fallocate, sync_file_range, sync, syncfs) is
 * caught so that a change of LMDB or of argusq cannot write unseen.
 *
 * Since LMDB opens the file three times (me_fd, me_mfd, and argusq's own
 * lock fd), a call is attributed to the file by fstat(fd) against the
 * target's st_dev/st_ino, never by remembering fds.  A write through a
 * shared writable mapping (MDB_WRITEMAP) cannot be seen from here: such a
 * mapping is logged as an 'X' record and crashgen refuses the log.
 *
 * Log format (little-endian): the 16-byte magic "argusq-wlog-v1\n\0", then
 * records of a 24-byte header {u8 op, u8 flags, u16 0, i32 fd, i64 off,
 * i64 len} followed, for 'W', by the len bytes written:
 *   'W' write at off (flags & WL_DSYNC: on an O_DSYNC/O_SYNC fd or with
 *       RWF_DSYNC, so durable when it returns)
 *   'F' fsync, 'D' fdatasync, 'S' sync()/syncfs(): barriers
 *   'Y' fsync/fdatasync of the target's directory: a new file's name durable
 *   'M' msync of a mapping of the file (flags & WL_SYNC: MS_SYNC, a barrier)
 *   'R' sync_file_range(off, len) (not a barrier: it neither flushes the
 *       drive's cache nor the metadata)
 *   'T' size set to off (ftruncate), 'A' fallocate(off, len, mode in flags)
 *   'X' a shared writable mapping of the file: writes not logged
 * Only completed calls are logged, with the byte count that was written.
 *
 * One mutex covers the real call and its record, so the log's order is the
 * order in which the calls completed even when several threads write (an
 * argusq ingest has a reader thread, but only the main thread writes the
 * archive). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define WL_DSYNC 1
#define WL_SYNC 2

struct wl_rec {
    uint8_t op, flags;
    uint16_t pad;
    int32_t fd;
    int64_t off, len;
};

/* the libc functions behind ours */
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);
static ssize_t (*real_pwritev64v2)(int, const struct iovec *, int, off64_t, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void *, size_t, int);
static int (*real_sync_file_range)(int, off64_t, off64_t, unsigned);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fallocate64)(int, int, off64_t, off64_t);
static void (*real_sync)(void);
static int (*real_syncfs)(int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_munmap)(void *, size_t);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *target; /* NULL: logging off */
static int log_fd = -1;
static dev_t t_dev;
static ino_t t_ino;
static int t_known; /* st_dev/st_ino resolved (the file may not exist yet) */
static dev_t d_dev;   /* the target's directory, whose syncs make a new */
static ino_t d_ino;   /* file's name durable ('Y' records) */
static int d_known;

/* mappings of the target, so that an msync can be attributed to it */
static struct {
    uintptr_t lo, hi;
    int64_t off; /* file offset of lo */
} maps[32];

#define RESOLVE(name) real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name)

static void init(void)
{
    RESOLVE(write);
    RESOLVE(writev);
    RESOLVE(pwrite);
    RESOLVE(pwrite64);
    RESOLVE(pwritev);
    RESOLVE(pwritev64);
    RESOLVE(pwritev2);
    RESOLVE(pwritev64v2);
    RESOLVE(fsync);
    RESOLVE(fdatasync);
    RESOLVE(msync);
    RESOLVE(sync_file_range);
    RESOLVE(ftruncate);
    RESOLVE(ftruncate64);
    RESOLVE(fallocate);
    RESOLVE(fallocate64);
    RESOLVE(sync);
    RESOLVE(syncfs);
    RESOLVE(mmap);
    RESOLVE(mmap64);
    RESOLVE(munmap);
    const char *t = getenv("ARGUSQ_WLOG_FILE"), *out = getenv("ARGUSQ_WLOG_OUT");
    if (!t || !*t || !out || !*out)
        return;
    /* O_APPEND: a child process that inherits the variables (none does in
     * an ingest) would add to the log rather than overwrite it */
    log_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0)
        return;
    static const char magic[16] = "argusq-wlog-v1\n";
    if (real_write(log_fd, magic, sizeof magic) != (ssize_t)sizeof magic) {
        close(log_fd);
        log_fd = -1;
        return;
    }
    target = t;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", t);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0) {
        d_dev = st.st_dev;
        d_ino = st.st_ino;
        d_known = 1;
    }
}

static void ensure_init(void) { pthread_once(&once, init); }

/* Is fd the watched file?  Resolving lazily covers a target created by the
 * process itself (an ingest into a new archive). */
static int is_target(int fd)
{
    if (!target || fd < 0 || fd == log_fd)
        return 0;
    struct stat st;
    if (!t_known) {
        if (stat(target, &st) != 0)
            return 0;
        t_dev = st.st_dev;
        t_ino = st.st_ino;
        t_known = 1;
    }
    return fstat(fd, &st) == 0 && st.st_dev == t_dev && st.st_ino == t_ino;
}

/* A log the harness cannot trust must not look complete: on a failed log
 * write the process dies (crashgen then reports the recording failed). */
static void out(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = real_write(log_fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            abort();
        c += w;
        n -= (size_t)w;
    }
}

static void record(char op, int flags, int fd, int64_t off, int64_t len)
{
    struct wl_rec r = {(uint8_t)op, (uint8_t)flags, 0, fd, off, len};
    out(&r, sizeof r);
}

/* a write's record and its first `done` bytes, from iovecs */
static void record_write(int fd, int flags, int64_t off, const struct iovec *iov, int cnt, size_t done)
{
    record('W', flags, fd, off, (int64_t)done);
    for (int i = 0; i < cnt && done; i++) {
        size_t n = iov[i].iov_len < done ? iov[i].iov_len : done;
        out(iov[i].iov_base, n);
        done -= n;
    }
}

/* A write on an O_DSYNC or O_SYNC fd (LMDB's me_mfd) is durable on
 * return: the log says so, and crashgen treats it as write + barrier of
 * its pages. */
static int fd_dsync(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & (O_DSYNC | O_SYNC)) ? WL_DSYNC : 0;
}

/* The offset a write() or writev() goes to: the fd's position, or the end
 * for O_APPEND. */
static int64_t cur_off(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND)) {
        struct stat st;
        return fstat(fd, &st) == 0 ? (int64_t)st.st_size : -1;
    }
    return (int64_t)lseek(fd, 0, SEEK_CUR);
}

/* The one path of every write: the real call under the mutex, then the
 * record.  off < 0: at the fd's position (write, writev, pwritev2 with -1);
 * rwf: pwritev2's flags. */
static ssize_t logged_write(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf,
                            ssize_t (*call)(int, const struct iovec *, int, int64_t, int))
{
    pthread_mutex_lock(&mu);
    int saved = errno;
    int64_t at = off >= 0 ? off : cur_off(fd);
    int flags = fd_dsync(fd);
#ifdef RWF_DSYNC
    if (rwf & (RWF_DSYNC | RWF_SYNC))
        flags |= WL_DSYNC;
#endif
    errno = saved;
    ssize_t n = call(fd, iov, cnt, off, rwf);
    saved = errno;
    if (n > 0)
        record_write(fd, flags, at, iov, cnt, (size_t)n);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return n;
}

static ssize_t call_write(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    (void)cnt, (void)off, (void)rwf;
    return real_write(fd, iov[0].iov_base, iov[0].iov_len);
}
static ssize_t call_writev(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    (void)off, (void)rwf;
    return real_writev(fd, iov, cnt);
}
static ssize_t call_pwrite(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    (void)cnt, (void)rwf;
    return real_pwrite64 ? real_pwrite64(fd, iov[0].iov_base, iov[0].iov_len, off)
                         : real_pwrite(fd, iov[0].iov_base, iov[0].iov_len, (off_t)off);
}
static ssize_t call_pwritev(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    (void)rwf;
    return real_pwritev64 ? real_pwritev64(fd, iov, cnt, off) : real_pwritev(fd, iov, cnt, (off_t)off);
}
static ssize_t call_pwritev2(int fd, const struct iovec *iov, int cnt, int64_t off, int rwf)
{
    return real_pwritev64v2 ? real_pwritev64v2(fd, iov, cnt, off, rwf)
                            : real_pwritev2(fd, iov, cnt, (off_t)off, rwf);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    ensure_init();
    if (!is_target(fd))
        return real_write(fd, buf, n);
    struct iovec v = {(void *)buf, n};
    return logged_write(fd, &v, 1, -1, 0, call_write);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    ensure_init();
    if (!is_target(fd))
        return real_writev(fd, iov, cnt);
    return logged_write(fd, iov, cnt, -1, 0, call_writev);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwrite(fd, buf, n, off);
    struct iovec v = {(void *)buf, n};
    return logged_write(fd, &v, 1, off, 0, call_pwrite);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwrite64(fd, buf, n, off);
    struct iovec v = {(void *)buf, n};
    return logged_write(fd, &v, 1, off, 0, call_pwrite);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwritev(fd, iov, cnt, off);
    return logged_write(fd, iov, cnt, off, 0, call_pwritev);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwritev64(fd, iov, cnt, off);
    return logged_write(fd, iov, cnt, off, 0, call_pwritev);
}

/* pwritev2 writes at the fd's position when off is -1 (logged_write finds
 * it) and may carry its own RWF_DSYNC */
ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwritev2(fd, iov, cnt, off, rwf);
    return logged_write(fd, iov, cnt, off, rwf, call_pwritev2);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int rwf)
{
    ensure_init();
    if (!is_target(fd))
        return real_pwritev64v2(fd, iov, cnt, off, rwf);
    return logged_write(fd, iov, cnt, off, rwf, call_pwritev2);
}

/* A barrier: logged after the call returned successfully, since only then
 * is what it covers durable. */
static int barrier(int fd, char op, int (*call)(int))
{
    ensure_init();
    if (!is_target(fd)) {
        /* the target's directory: its entries (a new archive's name) */
        struct stat st;
        if (!target || !d_known || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != d_dev ||
            st.st_ino != d_ino)
            return call(fd);
        op = 'Y';
    }
    pthread_mutex_lock(&mu);
    int rc = call(fd);
    int saved = errno;
    if (rc == 0)
        record(op, 0, fd, 0, 0);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}

int fsync(int fd)
{
    ensure_init();
    return barrier(fd, 'F', real_fsync);
}

int fdatasync(int fd)
{
    ensure_init();
    return barrier(fd, 'D', real_fdatasync);
}

int syncfs(int fd)
{
    ensure_init();
    return barrier(fd, 'S', real_syncfs);
}

/* sync() flushes every file system, the target's too */
void sync(void)
{
    ensure_init();
    if (!target) {
        real_sync();
        return;
    }
    pthread_mutex_lock(&mu);
    real_sync();
    record('S', 0, -1, 0, 0);
    pthread_mutex_unlock(&mu);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned flags)
{
    ensure_init();
    if (!is_target(fd))
        return real_sync_file_range(fd, off, n, flags);
    pthread_mutex_lock(&mu);
    int rc = real_sync_file_range(fd, off, n, flags);
    int saved = errno;
    if (rc == 0)
        record('R', 0, fd, off, n);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}

static int size_change(int fd, int64_t size, int (*call)(int, int64_t))
{
    pthread_mutex_lock(&mu);
    int rc = call(fd, size);
    int saved = errno;
    if (rc == 0)
        record('T', 0, fd, size, 0);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}

static int call_ftruncate(int fd, int64_t size)
{
    return real_ftruncate64 ? real_ftruncate64(fd, size) : real_ftruncate(fd, (off_t)size);
}

int ftruncate(int fd, off_t size)
{
    ensure_init();
    if (!is_target(fd))
        return real_ftruncate(fd, size);
    return size_change(fd, size, call_ftruncate);
}

int ftruncate64(int fd, off64_t size)
{
    ensure_init();
    if (!is_target(fd))
        return real_ftruncate64(fd, size);
    return size_change(fd, size, call_ftruncate);
}

static int logged_fallocate(int fd, int mode, int64_t off, int64_t len)
{
    pthread_mutex_lock(&mu);
    int rc = real_fallocate64 ? real_fallocate64(fd, mode, off, len) : real_fallocate(fd, mode, (off_t)off, (off_t)len);
    int saved = errno;
    if (rc == 0)
        record('A', mode & 0xff, fd, off, len);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    ensure_init();
    if (!is_target(fd))
        return real_fallocate(fd, mode, off, len);
    return logged_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
    ensure_init();
    if (!is_target(fd))
        return real_fallocate64(fd, mode, off, len);
    return logged_fallocate(fd, mode, off, len);
}

/* mmap: remembers mappings of the target (msync names an address, not a
 * file), and flags a shared writable one, whose writes never pass here. */
static void note_map(void *p, size_t len, int prot, int flags, int fd, int64_t off)
{
    if (p == MAP_FAILED || !is_target(fd))
        return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (!maps[i].hi) {
            maps[i].lo = (uintptr_t)p;
            maps[i].hi = (uintptr_t)p + len;
            maps[i].off = off;
            break;
        }
    if ((prot & PROT_WRITE) && (flags & MAP_SHARED))
        record('X', 0, fd, 0, (int64_t)len);
    pthread_mutex_unlock(&mu);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    ensure_init();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (target && fd >= 0)
        note_map(p, len, prot, flags, fd, off);
    return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    ensure_init();
    void *p = real_mmap64(addr, len, prot, flags, fd, off);
    if (target && fd >= 0)
        note_map(p, len, prot, flags, fd, off);
    return p;
}

int munmap(void *addr, size_t len)
{
    ensure_init();
    int rc = real_munmap(addr, len);
    if (target && rc == 0) {
        pthread_mutex_lock(&mu);
        for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
            if (maps[i].lo == (uintptr_t)addr)
                maps[i].lo = maps[i].hi = 0;
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

int msync(void *addr, size_t len, int flags)
{
    ensure_init();
    int rc = real_msync(addr, len, flags);
    if (!target || rc != 0)
        return rc;
    int saved = errno;
    pthread_mutex_lock(&mu);
    uintptr_t a = (uintptr_t)addr;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (maps[i].hi && a < maps[i].hi && a + len > maps[i].lo) {
            record('M', (flags & MS_SYNC) ? WL_SYNC : 0, -1, maps[i].off + (int64_t)(a - maps[i].lo), (int64_t)len);
            break;
        }
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
