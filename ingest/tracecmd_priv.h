/* ingest/tracecmd_priv.h -- the few libtracecmd functions argusq's
 * recorder needs that Debian's libtracecmd-dev (trace-cmd 3.1.x) does not
 * declare.
 *
 * libtracecmd's public header, trace-cmd.h, only reads trace.dat files;
 * writing one (tracecmd_output_*) and the input flags are in trace-cmd's
 * private header (lib/trace-cmd/include/private/trace-cmd-private.h), yet
 * exported by libtracecmd.so.1 -- trace-cmd itself uses them.  These are
 * their declarations as that header gives them for trace-cmd 3.1; they are
 * the calls `trace-cmd extract` makes to write its file. */
#ifndef ARGUSQ_INGEST_TRACECMD_PRIV_H
#define ARGUSQ_INGEST_TRACECMD_PRIV_H

#include <stdbool.h>

#include <trace-cmd.h>

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

#endif
