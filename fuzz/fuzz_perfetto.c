/* fuzz/fuzz_perfetto.c -- libFuzzer harness of the Perfetto reader
 * (ingest/perfetto/): the bytes are a whole trace file, sniffed as
 * ingest_file does (a gzip'd head is inflated there), then read from
 * memory by the same two passes, protobuf-c unpacking, compact_sched
 * decoding, compressed_packets inflating and mapping as `argusq ingest`,
 * into the checking sink of fuzz_common.h.  A failed read must say
 * "PATH: byte N: what" (or "PATH:N: what" from the shared mapping). */
#include "fuzz_common.h"
#include "ingest/perfetto/perfetto_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)ingest_perfetto_sniff((const char *)data, size);
    fuzz_sink s;
    ingest_sink sink = fuzz_sink_make(&s);
    ingest_stats st = {0};
    char err[512] = "";
    int rc = ingest_perfetto_read_mem(FUZZ_PATH, data, size, &sink, &st, err, sizeof err);
    if (rc != 0 && rc != -1)
        fuzz_fail("reader returned neither 0 nor -1", (unsigned long long)rc);
    size_t n = strlen(FUZZ_PATH);
    if (rc == -1 && strncmp(err, FUZZ_PATH ": byte ", n + 7) != 0 &&
        (strncmp(err, FUZZ_PATH ":", n + 1) != 0 || err[n + 1] < '0' || err[n + 1] > '9'))
        fuzz_fail("error message without PATH: byte N", 0);
    if (rc == 0 && st.events != s.events)
        fuzz_fail("stats.events is not the number of event() calls", st.events);
    fuzz_sink_free(&s);
    return 0;
}
