/* fuzz/fuzz_ftrace.c -- libFuzzer harness of the ftrace text reader: the
 * bytes are a whole trace file (tracefs `trace` or `trace-cmd report`),
 * read by the same line splitter and reader as `argusq ingest`, into a
 * sink that checks the reader's promises (fuzz_common.h).  Format
 * detection runs on the same bytes first, as ingest_file does. */
#include "fuzz_common.h"
#include "ingest/ftrace/ftrace_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool html = ingest_detect((const char *)data, size) == INGEST_SYSTRACE_HTML;
    ingest_opts opts = {.arch = size % 2 ? "x86_64" : NULL}; /* both namings */
    ingest_lines lb;
    if (fuzz_lines_open(&lb, data, size) < 0)
        return 0;
    fuzz_sink s;
    ingest_sink sink = fuzz_sink_make(&s);
    ingest_stats st = {0};
    char err[512] = "";
    int rc = ingest_ftrace_read(&lb, &sink, &opts, html, &st, err, sizeof err);
    fuzz_check_error(rc, err);
    if (rc == 0 && st.events != s.events)
        fuzz_fail("stats.events is not the number of event() calls", st.events);
    fuzz_lines_close(&lb);
    fuzz_sink_free(&s);
    return 0;
}
