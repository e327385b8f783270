/* ingest/ctf/ctflib.c -- libbabeltrace2, opened on first use (ctflib_int.h
 * says why). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ctflib_int.h"
#include "ingest/ingest_int.h"

int ingest_ctflib_open(ingest_ctflib *lib, char *err, size_t errlen)
{
    static const char soname[] = "libbabeltrace2.so.0";
    /* RTLD_NODELETE: never unmapped; the handle need not be kept */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        ingest_errf(err, errlen,
                    "cannot load %s (%s): CTF traces (LTTng) are read with babeltrace2's library "
                    "(Debian: apt-get install libbabeltrace2-0)",
                    soname, dlerror());
        return -1;
    }
    memset(lib, 0, sizeof *lib);
#define INGEST_CTFLIB_LOAD(f)                                                                          \
    *(void **)&lib->f = dlsym(h, #f);                                                                  \
    if (!lib->f) {                                                                                     \
        ingest_errf(err, errlen, "%s: no function %s (a libbabeltrace2 older than 2.0)", soname, #f);   \
        return -1;                                                                                     \
    }
    INGEST_CTFLIB_FUNCS(INGEST_CTFLIB_LOAD)
#undef INGEST_CTFLIB_LOAD
    return 0;
}
