/* ingest/ftrace/tracelib_int.h -- libtracecmd and libtraceevent, loaded
 * when a trace.dat is read, not when argusq starts.
 *
 * Most runs of argusq are one-shot queries of an archive; linking the
 * three libraries (and libzstd under them) would make every such run pay
 * for their dynamic loading.  So they are opened with dlopen by their
 * sonames (the ABI the Debian -dev headers we compile against describe)
 * and each function the reader calls is reached through the table below,
 * filled once per read.  `argusq record` loads the same libraries for its
 * own functions (record/tracelib.c).
 *
 * The libraries stay mapped to the end of the process (RTLD_NODELETE):
 * what they allocate and keep (see tracedat.c) must still be theirs when
 * LeakSanitizer looks at the end. */
#ifndef ARGUSQ_INGEST_FTRACE_TRACELIB_INT_H
#define ARGUSQ_INGEST_FTRACE_TRACELIB_INT_H

#include <stddef.h>

#include <event-parse.h>
#include <trace-cmd.h>

/* not in trace-cmd.h 3.1, exported by libtracecmd.so.1 */
const char *tracecmd_get_uname(struct tracecmd_input *handle);
const char *tracecmd_get_version(struct tracecmd_input *handle);
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
int tracecmd_cpus(struct tracecmd_input *handle);

/* every function the reader calls, with its library */
#define INGEST_TRACELIB_FUNCS(X)                                                                       \
    X(tracecmd_open) X(tracecmd_close) X(tracecmd_get_tep) X(tracecmd_get_uname)                      \
    X(tracecmd_get_version) X(tracecmd_get_trace_clock) X(tracecmd_cpus)                               \
    X(tracecmd_iterate_events) X(tracecmd_set_loglevel)                                                \
    X(tep_set_loglevel) X(tep_find_event) X(tep_find_field) X(tep_read_number) X(tep_find_function)    \
    X(tep_data_type) X(tep_data_pid) X(tep_data_flags) X(tep_data_comm_from_pid) X(tep_get_long_size)  \
    X(tep_print_event) X(trace_seq_init) X(trace_seq_destroy) X(trace_seq_reset) X(trace_seq_puts)     \
    X(trace_seq_printf) X(trace_seq_terminate)

typedef struct ingest_tracelib {
#define INGEST_TRACELIB_MEMBER(f) __typeof__(&f) f;
    INGEST_TRACELIB_FUNCS(INGEST_TRACELIB_MEMBER)
#undef INGEST_TRACELIB_MEMBER
} ingest_tracelib;

/* Fills *lib.  -1 with a message saying which library or function is
 * missing (the packages to install) when they cannot be loaded. */
int ingest_tracelib_open(ingest_tracelib *lib, char *err, size_t errlen);

#endif
