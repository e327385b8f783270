/* record/tracelib.c -- libtracefs and libtracecmd, opened when a
 * recording starts (tracelib_int.h says why). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tracelib_int.h"

/* The sonames of the ABI the headers describe; a library's dependencies
 * (libtracecmd needs the other two) load with it. */
static const char *const tracelib_sonames[] = {"libtraceevent.so.1", "libtracefs.so.1", "libtracecmd.so.1"};

int record_tracelib_open(record_tracelib *lib, char *err, size_t errlen)
{
    enum { N = sizeof tracelib_sonames / sizeof tracelib_sonames[0] };
    void *h[N];
    for (size_t i = 0; i < N; i++) {
        /* RTLD_NODELETE: never unmapped; the handle need not be kept */
        h[i] = dlopen(tracelib_sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h[i]) {
            snprintf(err, errlen,
                     "cannot load %s (%s): trace.dat files and recording need trace-cmd's libraries "
                     "(Debian: apt-get install libtracecmd1 libtracefs1 libtraceevent1)",
                     tracelib_sonames[i], dlerror());
            return -1;
        }
    }
    memset(lib, 0, sizeof *lib);
    /* each function from the first library that has it */
#define RECORD_TRACELIB_LOAD(f)                                                                        \
    for (size_t i = 0; i < N && !lib->f; i++)                                                          \
        *(void **)&lib->f = dlsym(h[i], #f);                                                           \
    if (!lib->f) {                                                                                     \
        snprintf(err, errlen, "%s: no function %s in trace-cmd's libraries (%s)", tracelib_sonames[N - 1], \
                 #f, "a libtracecmd older than 3.1");                                                  \
        return -1;                                                                                     \
    }
    RECORD_TRACELIB_FUNCS(RECORD_TRACELIB_LOAD)
#undef RECORD_TRACELIB_LOAD
    return 0;
}
