/* cli/usage.c -- the command line's usage text, which main.c prints for
 * -h and ingest.c for `argusq record -h`, and with every usage error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "record/record.h"

static const char usage[] =
    "usage: argusq [-d ARCHIVE] ingest FILE|FOLDER [--name NAME] [--rules RULES] [--arch MACHINE]\n"
    "              [--label KEY=VALUE]... [--json]\n"
    "       argusq record [-o FILE] [--max-mb N] [--events LIST] [--watch SYMBOL]... -- CMD [ARGS...]\n"
    "       argusq [-d ARCHIVE] [--trace NAME] [--json | --format table|json|csv|dot|svg|perfetto] 'STATEMENT'\n"
    "       argusq [-d ARCHIVE] [--trace NAME] [--json] -f SCRIPT\n"
    "       argusq [-d ARCHIVE]                      (statements from stdin, or a REPL)\n"
    "       argusq [-d ARCHIVE] [--json] info | compact | backup FILE\n"
    "       argusq [-d ARCHIVE] [--json] dump [--trace NAME] [-o FILE]\n"
    "\n"
    "info: the archive's file, its used and free space, format and contents.  compact: the\n"
    "archive rewritten without free pages (dropped traces, killed ingests), in its place.\n"
    "backup FILE: a consistent copy of the archive as last committed, while others use it.\n"
    "dump: a trace (default the latest) as an Argus trace (docs/ARGUS-DUMP.md) on standard\n"
    "output or in FILE; `argusq ingest FILE` gives back the same events, nodes and edges.\n"
    "\n"
    "ingest reads (detected by content) ftrace text, trace-cmd report, trace.dat, systrace,\n"
    "the Argus format, perf script text, perf.data, Perfetto (plain or gzip'd) and a CTF (LTTng)\n"
    "trace's FOLDER; FILE - is standard input (copied to a temporary file first).\n"
    "\n"
    "ARCHIVE defaults to $ARGUSQ_DB, else ./argus.db.  `argusq help` lists the statements.\n"
    "\n"
    "record (as root) traces the whole system while CMD runs and writes FILE (default trace.dat),\n"
    "then `argusq ingest FILE` reads it:\n"
    "  -o FILE         the trace.dat to write\n"
    "  --max-mb N      ring buffer of N MiB for all CPUs (default 64); when it is full the\n"
    "                  oldest events are dropped, so FILE keeps the last N MiB of the run\n"
    "  --events LIST   ftrace events SYSTEM:EVENT or SYSTEM, comma-separated, instead of the\n"
    "                  ones the Argus mapping uses (`default` stands for those)\n"
    "  --watch SYMBOL  a global variable of CMD (1, 2, 4 or 8 bytes; at most two): each write\n"
    "                  and read becomes a flag_write / flag_read event of the accessing thread\n"
    "Exit status of record: 0 the trace was written, 1 it failed, 2 usage, 3 this machine\n"
    "cannot trace (not root, no tracefs).\n";

int cli_usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "argusq: %s%s%s\n%s", msg, arg ? " " : "", arg ? arg : "", usage);
    return 2;
}

void cli_usage(FILE *out)
{
    fputs(usage, out);
}

/* record -h: the usage, then the events `default` stands for, from
 * record's own list, a few to a line */
void cli_usage_record(FILE *out)
{
    fputs(usage, out);
    fputs("The default events (--events default):\n", out);
    const char *ev = record_default_events();
    size_t col = 0;
    while (*ev) {
        size_t n = strcspn(ev, ",");
        if (col && col + n + 2 > 90) {
            fputs(",\n", out);
            col = 0;
        } else if (col) {
            fputs(", ", out);
            col += 2;
        }
        if (!col) {
            fputs("  ", out);
            col = 2;
        }
        fwrite(ev, 1, n, out);
        col += n;
        ev += n + (ev[n] == ',');
    }
    fputs("\n", out);
}
