/* record/record_int.h -- internals of `argusq record` (not public; the
 * entry point is record_run in record.h).
 *
 *   record.c        tracefs set-up and restore, running CMD, saving the
 *                   ring buffers as a trace.dat with libtracecmd
 *   tracelib.c      the trace-cmd libraries, loaded when a recording
 *                   starts (tracelib_int.h)
 *   record_watch.c  --watch SYMBOL: hardware watchpoints on a global of
 *                   CMD that write flag_write / flag_read events into the
 *                   trace from the thread that touched the variable */
#ifndef ARGUSQ_RECORD_INT_H
#define ARGUSQ_RECORD_INT_H

#include <stddef.h>
#include <sys/types.h>

/* Watches of one run.  Two hardware debug registers per watch (x86 has
 * four per thread). */
#define RECORD_WATCH_MAX 2

typedef struct record_watch record_watch;

/* Finds each symbol in the ELF symbol table of exe (a global variable of
 * 1, 2, 4 or 8 bytes), and checks that a hardware watchpoint fires on
 * this machine (where none does, err says so and names the markers of
 * include/argus/ instead).  Returns NULL with err set. */
record_watch *record_watch_resolve(const char *exe, const char *const *syms, size_t n, char *err,
                                   size_t errlen);

/* pid has just exec'd exe and is stopped (ptrace): computes each
 * variable's address in it, loads the watch programs and arms the
 * watchpoints, inherited by every thread and child it creates.
 * Returns 0, or -1 with err set. */
int record_watch_arm(record_watch *w, pid_t pid, char *err, size_t errlen);

/* "NAME at 0xADDR (N bytes)" of watch i, for the log. */
const char *record_watch_describe(const record_watch *w, size_t i, char *buf, size_t len);
size_t record_watch_count(const record_watch *w);

/* Disarms and frees. */
void record_watch_free(record_watch *w);

#endif
