/* fuzz/fuzz_argus.c -- libFuzzer harness of the Argus trace format reader
 * (#argus-trace 1): the bytes are a whole file, read by the same line
 * splitter and reader as `argusq ingest`, into a sink that checks the
 * reader's promises (fuzz_common.h).  The seeds all start with the
 * mandatory first line, so mutations reach the declarations and events. */
#include "fuzz_common.h"
#include "ingest/argus/argus_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)ingest_detect((const char *)data, size);
    ingest_lines lb;
    if (fuzz_lines_open(&lb, data, size) < 0)
        return 0;
    fuzz_sink s;
    ingest_sink sink = fuzz_sink_make(&s);
    ingest_stats st = {0};
    char err[512] = "";
    int rc = ingest_argus_read(&lb, &sink, &st, err, sizeof err);
    fuzz_check_error(rc, err);
    if (rc == 0 && st.events != s.events)
        fuzz_fail("stats.events is not the number of event() calls", st.events);
    fuzz_lines_close(&lb);
    fuzz_sink_free(&s);
    return 0;
}
