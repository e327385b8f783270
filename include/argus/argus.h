/* include/argus/argus.h -- user-space instrumentation for argusq, header only.
 *
 * The Linux counterpart of the kdebug_trace calls the paper adds to
 * libraries (paper/003 §Instrumentation): each function writes one line
 *
 *     argus: TYPE [WORD ...] [KEY=VALUE ...]
 *
 * to the ftrace marker file (/sys/kernel/tracing/trace_marker).  The kernel
 * records it as a `print` event of the calling thread, with its CPU and
 * timestamp, in the same ring buffer as the scheduler events, so a trace
 * made with `argusq record` (or trace-cmd, or the tracefs text) carries it
 * and `argusq ingest` maps it onto the Argus event it spells (the spec's
 * event table, ../shared/spec/argus-trace-format.md): the dispatch and
 * run-loop events that connect a submitter to the thread that runs the
 * work, flag writes and reads, input events.
 *
 *     #include <argus/argus.h>           (cc -I include ...)
 *
 *     argus_dispatch_enqueue(queue, block);          on the submitting thread
 *     argus_dispatch_invoke_begin(queue, block, fn); on the thread that runs it
 *     fn(block);
 *     argus_dispatch_invoke_end();
 *
 * gives a `dispatch` edge from the submitter's node to the runner's.  The
 * marker file is opened once per program (the first call), write-only;
 * every call is one write(2), which the kernel records atomically.  When
 * tracefs is not there or not writable the calls do nothing and return -1;
 * they never block and never change errno.  C11 or later (stdatomic.h). */
#ifndef ARGUS_ARGUS_H
#define ARGUS_ARGUS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The marker file's descriptor, opened on first use (-1: not available). */
static inline int argus_marker_fd(void)
{
    static _Atomic int fd = -2;
    int f = atomic_load(&fd);
    if (f != -2)
        return f;
    int saved = errno;
    int n = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
    if (n < 0)
        n = open("/sys/kernel/debug/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
    errno = saved;
    int expect = -2;
    if (!atomic_compare_exchange_strong(&fd, &expect, n)) { /* another thread was first */
        if (n >= 0)
            close(n);
        return expect;
    }
    return n;
}

/* Writes "argus: " and the formatted text as one marker.  Returns 0 or -1. */
static inline int argus_mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int argus_mark(const char *fmt, ...)
{
    int fd = argus_marker_fd();
    if (fd < 0)
        return -1;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "argus: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)(n + m) >= sizeof buf)
        return -1;
    int saved = errno;
    ssize_t w = write(fd, buf, (size_t)(n + m));
    errno = saved;
    return w == n + m ? 0 : -1;
}

#define ARGUS__P(p) ((unsigned long long)(uintptr_t)(p))

/* ---- dispatch queues (paper/000 2.c): enqueue -> the invoke of that block ---- */

static inline int argus_dispatch_enqueue(const void *queue, const void *block)
{
    return argus_mark("dispatch_enqueue queue=0x%llx block=0x%llx", ARGUS__P(queue), ARGUS__P(block));
}

static inline int argus_dispatch_invoke_begin(const void *queue, const void *block, const void *func)
{
    return argus_mark("dispatch_invoke begin queue=0x%llx block=0x%llx func=0x%llx", ARGUS__P(queue),
                      ARGUS__P(block), ARGUS__P(func));
}

static inline int argus_dispatch_invoke_end(void) { return argus_mark("dispatch_invoke end"); }

/* ---- run loops (paper/000 2.d): submit -> the invoke of that block ---- */

static inline int argus_runloop_submit(const void *runloop, const void *block)
{
    return argus_mark("runloop_submit rl=0x%llx block=0x%llx", ARGUS__P(runloop), ARGUS__P(block));
}

static inline int argus_runloop_invoke_begin(const void *runloop, const void *block, const void *func)
{
    return argus_mark("runloop_invoke begin rl=0x%llx block=0x%llx func=0x%llx", ARGUS__P(runloop),
                      ARGUS__P(block), ARGUS__P(func));
}

static inline int argus_runloop_invoke_end(void) { return argus_mark("runloop_invoke end"); }

/* ---- data flags (paper/000 2.f): a write -> each later read of its value ----
 * sym may be NULL; it must not hold '"' or '\\'. */

static inline int argus_flag_write(const void *addr, long long value, const char *sym)
{
    if (sym)
        return argus_mark("flag_write addr=0x%llx value=%lld sym=\"%s\"", ARGUS__P(addr), value, sym);
    return argus_mark("flag_write addr=0x%llx value=%lld", ARGUS__P(addr), value);
}

static inline int argus_flag_read(const void *addr, long long value, const char *sym)
{
    if (sym)
        return argus_mark("flag_read addr=0x%llx value=%lld sym=\"%s\"", ARGUS__P(addr), value, sym);
    return argus_mark("flag_read addr=0x%llx value=%lld", ARGUS__P(addr), value);
}

/* ---- input events (nsapp_event): the handling of one user input ---- */

static inline int argus_input_begin(int input_class)
{
    return argus_mark("nsapp_event begin class=%d", input_class);
}

static inline int argus_input_end(void) { return argus_mark("nsapp_event end"); }

#ifdef __cplusplus
}
#endif

#endif
