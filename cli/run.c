/* cli/run.c -- statements: libargusq runs them (lib/session.c); here the
 * messages, which name the file, line and column of what failed, and the
 * exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ingest/ingest.h"

/* The exit status of a failure: 1 a statement or an ingest failed, 2
 * usage, I/O or the archive. */
int cli_status_of(const argusq_error *e)
{
    return e->code == ARGUSQ_ERR_STATEMENT || e->code == ARGUSQ_ERR_INGEST ? 1 : 2;
}

/* "where: line:col: msg" and the offending source line with a caret.
 * src is the whole text, or the offending line alone when it is e->text
 * (the line of a rules file or a dump that libargusq read). */
void cli_report(const char *where, const char *src, size_t len, const argusq_error *e)
{
    if (e->line <= 0) {
        fprintf(stderr, "argusq: %s: %s\n", where, e->message);
        return;
    }
    fprintf(stderr, "argusq: %s:%d:%d: %s\n", where, e->line, e->col, e->message);
    const char *p = src, *end = src + len;
    for (int l = 1; l < e->line && p < end && src != e->text; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int n = (int)((nl ? nl : end) - p);
    fprintf(stderr, "  %.*s\n  %*s^\n", n, p, e->col - 1, "");
}

/* Parses and runs src; stops at the first failing statement. */
int cli_run_to(argusq_session *s, const char *where, const char *src, size_t len, FILE *out)
{
    argusq_error e;
    long n = argusq_session_run_file(s, src, len, out, &e);
    /* `argusq ''` or `argusq ';'` asked for nothing: say so (a script or
     * stdin may well hold no statement) */
    if (n == 0 && !strcmp(where, "query")) {
        fprintf(stderr, "argusq: query: no statement (`argusq help` lists them)\n");
        return 2;
    }
    if (n >= 0)
        return 0;
    if (e.code == ARGUSQ_ERR_INTERRUPTED) {
        /* after what the statement wrote and the terminal's ^C, on a line of its own */
        fflush(stdout);
        if (isatty(STDOUT_FILENO))
            putchar('\n');
        fflush(stdout);
        fprintf(stderr, "argusq: interrupted\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (e.code != ARGUSQ_ERR_STATEMENT) {
        fprintf(stderr, "argusq: %s\n", e.message);
        return cli_status_of(&e);
    }
    /* a script names the line of the statement that failed */
    if (e.stmt_count && e.line <= 0 && (e.stmt_count > 1 || strcmp(where, "query") != 0))
        fprintf(stderr, "argusq: %s:%d: %s\n", where, e.stmt_line, e.message);
    else
        cli_report(where, src, len, &e);
    return 1;
}

int cli_run(argusq_session *s, const char *where, const char *src, size_t len)
{
    return cli_run_to(s, where, src, len, stdout);
}

int cli_run_file(argusq_session *s, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "argusq: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t len;
    char *src = ingest_slurp(f, &len);
    if (f != stdin)
        fclose(f);
    if (!src && cli_interrupted()) /* a read cut short by Ctrl-C (EINTR) */
        return CLI_EXIT_INTERRUPTED;
    if (!src) {
        fprintf(stderr, "argusq: %s: read error\n", path);
        return 2;
    }
    int rc = cli_run(s, strcmp(path, "-") ? path : "stdin", src, len);
    free(src);
    return rc;
}
