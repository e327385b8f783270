/* record/tracelib_int.h -- libtracefs and libtracecmd's writer, loaded
 * when a recording starts, not when argusq starts.
 *
 * For the reason ingest/ftrace/tracelib_int.h gives (most runs of argusq
 * are one-shot queries, which would pay for loading them), they are opened
 * with dlopen by their sonames and each function the recorder calls is
 * reached through the table below.  The trace.dat reader loads the same
 * libraries for its own functions (ingest/ftrace/tracelib.c); each
 * stage's table lists what it calls.
 *
 * The libraries stay mapped to the end of the process (RTLD_NODELETE).
 *
 * libtracecmd's public header, trace-cmd.h, only reads trace.dat files;
 * writing one (tracecmd_output_*) and the input flags are in trace-cmd's
 * private header (lib/trace-cmd/include/private/trace-cmd-private.h), yet
 * exported by libtracecmd.so.1 -- trace-cmd itself uses them.  Below are
 * their declarations as that header gives them for trace-cmd 3.1, which
 * Debian's libtracecmd-dev (trace-cmd 3.1.x) does not declare; they are
 * the calls `trace-cmd extract` makes to write its file. */
#ifndef ARGUSQ_RECORD_TRACELIB_INT_H
#define ARGUSQ_RECORD_TRACELIB_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <event-parse.h>
#include <trace-cmd.h>
#include <tracefs.h>

/* ---- writing ---- */

struct tracecmd_output;
struct tracecmd_option;

struct tracecmd_event_list {
    struct tracecmd_event_list *next;
    const char *glob; /* "system:event" */
};

enum { /* the option ids argusq writes (trace-cmd-private.h) */
    ARGUS_TRACECMD_OPTION_DATE = 1,
    ARGUS_TRACECMD_OPTION_CPUSTAT = 2,
    ARGUS_TRACECMD_OPTION_TRACECLOCK = 4,
    ARGUS_TRACECMD_OPTION_UNAME = 5,
    ARGUS_TRACECMD_OPTION_VERSION = 9,
};

struct tracecmd_output *tracecmd_output_create(const char *output_file);
int tracecmd_output_set_compression(struct tracecmd_output *handle, const char *compression);
int tracecmd_output_write_headers(struct tracecmd_output *handle, struct tracecmd_event_list *list);
struct tracecmd_option *tracecmd_add_option(struct tracecmd_output *handle, unsigned short id, int size,
                                            const void *data);
int tracecmd_write_cmdlines(struct tracecmd_output *handle);
int tracecmd_append_cpu_data(struct tracecmd_output *handle, int cpus, char *const *cpu_data_files);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
void tracecmd_output_close(struct tracecmd_output *handle);

/* ---- the table ---- */

/* every function the recorder calls, with its library */
#define RECORD_TRACELIB_FUNCS(X)                                                                       \
    X(tracecmd_set_loglevel) X(tracecmd_output_create) X(tracecmd_output_set_compression)              \
    X(tracecmd_output_write_headers) X(tracecmd_add_option) X(tracecmd_write_cmdlines)                 \
    X(tracecmd_append_cpu_data) X(tracecmd_set_quiet) X(tracecmd_output_close)                         \
    X(tracefs_set_loglevel) X(tracefs_tracing_dir) X(tracefs_tracing_dir_is_mounted)                   \
    X(tracefs_trace_on) X(tracefs_trace_off) X(tracefs_trace_is_on) X(tracefs_option_enable)           \
    X(tracefs_option_disable) X(tracefs_option_is_enabled) X(tracefs_option_is_supported)              \
    X(tracefs_event_enable) X(tracefs_instance_file_read) X(tracefs_instance_file_write)               \
    X(tracefs_instance_file_clear) X(tracefs_instance_get_buffer_size)                                 \
    X(tracefs_instance_set_buffer_size) X(tracefs_cpu_open) X(tracefs_cpu_close) X(tracefs_cpu_read)   \
    X(tracefs_cpu_read_size) X(tracefs_cpu_flush)

typedef struct record_tracelib {
#define RECORD_TRACELIB_MEMBER(f) __typeof__(&f) f;
    RECORD_TRACELIB_FUNCS(RECORD_TRACELIB_MEMBER)
#undef RECORD_TRACELIB_MEMBER
} record_tracelib;

/* Fills *lib.  -1 with a message saying which library or function is
 * missing (the packages to install) when they cannot be loaded. */
int record_tracelib_open(record_tracelib *lib, char *err, size_t errlen);

#endif
