/* cli/main.c -- the argusq command: ingest a trace, or run statements (one
 * from the command line, a script with -f, stdin, or a REPL).  Thin on
 * purpose: ingest and statements are calls of libargusq's public API
 * (include/argusq.h), as any client makes them.  This file reads the
 * command line and hands it to the file of its command (cli.h lists them).
 *
 * Exit status: 0 success, 1 a statement or an ingest failed, 2 usage or
 * I/O error (archive or script cannot be opened); killed by SIGINT (130
 * in a shell) when Ctrl-C ended a statement or an ingest, once undone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "db/db.h"
#include "include/argusq.h"

/* Options may come before or after the command words. */
static int parse_args(int argc, char **argv, cli_options *o)
{
    const char *env = getenv("ARGUSQ_DB");
    o->archive = env && *env ? env : "argus.db";
    o->format = ARGUSQ_FORMAT_TABLE;
    size_t stmt_len = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("argusq %s\n", argusq_version());
            exit(0);
        } else if (!strcmp(a, "-d") || !strcmp(a, "--db")) {
            if (!has_next)
                return cli_usage_error("missing archive after", a);
            o->archive = argv[++i];
        } else if (!strcmp(a, "--trace")) {
            if (!has_next)
                return cli_usage_error("missing trace name after", a);
            o->trace = argv[++i];
        } else if (!strcmp(a, "--name")) {
            if (!has_next)
                return cli_usage_error("missing name after", a);
            o->name = argv[++i];
        } else if (!strcmp(a, "--arch")) {
            if (!has_next)
                return cli_usage_error("missing machine (x86_64, arm64, arm, i386, riscv64) after", a);
            o->arch = argv[++i];
        } else if (!strcmp(a, "--label")) {
            if (!has_next)
                return cli_usage_error("missing KEY=VALUE after", a);
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            char key[ARGUSQ_LABEL_KEY_MAX + 1];
            argusq_error e;
            if (!eq || (size_t)(eq - kv) > ARGUSQ_LABEL_KEY_MAX)
                return cli_usage_error("--label takes KEY=VALUE:", kv);
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            if (argusq_label_check(key, eq + 1, &e))
                return cli_usage_error(e.message, NULL);
            if (o->nlabels == (int)(sizeof o->labels / sizeof o->labels[0]))
                return cli_usage_error("too many --label (at most 32)", NULL);
            o->labels[o->nlabels++] = kv;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!has_next)
                return cli_usage_error("missing file after", a);
            o->output = argv[++i];
        } else if (!strcmp(a, "--rules")) {
            if (!has_next)
                return cli_usage_error("missing rules file after", a);
            o->rules = argv[++i];
        } else if (!strcmp(a, "-f")) {
            if (!has_next)
                return cli_usage_error("missing script after", a);
            o->script = argv[++i];
        } else if (!strcmp(a, "--json")) {
            o->format = ARGUSQ_FORMAT_JSON;
        } else if (!strcmp(a, "--list-traces")) {
            o->list_traces = true;
        } else if (!strcmp(a, "--format")) {
            if (!has_next)
                return cli_usage_error("missing format after", a);
            const char *f = argv[++i];
            if ((o->format = argusq_format_from_name(f)) < 0)
                return cli_usage_error("unknown format (table, json, csv, dot, svg, perfetto):", f);
        } else if (a[0] == '-' && a[1] && !o->statement) {
            return cli_usage_error("unknown option", a);
        } else if (!o->statement && !o->ingest && !strcmp(a, "ingest")) {
            o->ingest = true;
        } else if (o->ingest && !o->file) {
            o->file = a;
        } else if (o->ingest) {
            return cli_usage_error("unexpected argument", a);
        } else {
            /* statement words: `argusq find nodes` works like `argusq 'find nodes'` */
            size_t n = strlen(a);
            char *p = realloc(o->statement, stmt_len + n + 2);
            if (!p)
                return cli_usage_error("out of memory", NULL);
            o->statement = p;
            if (stmt_len)
                p[stmt_len++] = ' ';
            memcpy(p + stmt_len, a, n + 1);
            stmt_len += n;
            o->words++;
        }
    }
    if (o->ingest && !o->file)
        return cli_usage_error("ingest needs a FILE", NULL);
    if (o->script && o->statement)
        return cli_usage_error("give a statement or -f SCRIPT, not both", NULL);
    if (o->output && (!o->statement || strcmp(o->statement, "dump") != 0))
        return cli_usage_error("-o FILE is an option of dump", NULL);
    return 0;
}

/* The trace names, one a line, for shell completion: quiet and 0 when
 * there is no archive. */
static int print_name(void *ctx, const db_trace_info *t)
{
    (void)ctx;
    puts(t->name);
    return 0;
}

static int list_traces(const char *archive)
{
    db_error de = {0};
    if (access(archive, R_OK) != 0)
        return 0;
    db_archive *a = db_open(archive, true, &de);
    if (!a)
        return 0;
    int rc = db_list_traces(a, print_name, NULL, &de) ? 1 : 0;
    db_close(a);
    return rc;
}

/* `help` or `help WORD`, alone: answered without an archive */
static bool help_only(const char *stmt)
{
    while (*stmt == ' ' || *stmt == '\t' || *stmt == '\n')
        stmt++;
    return strncasecmp(stmt, "help", 4) == 0 && (!stmt[4] || strchr(" \t\n;", stmt[4])) && !strchr(stmt, ';');
}

int main(int argc, char **argv)
{
    /* `record` takes a command line of its own: parsed apart */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "record"))
            return cli_record(argc, argv, i + 1);
        if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--db"))
            i++;
        else
            break;
    }
    cli_options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        free(o.statement);
        return rc;
    }
    cli_catch_faults(o.archive);
    if (o.ingest) {
        cli_catch_interrupts(false);
        rc = cli_ingest(&o);
        free(o.statement);
        return rc == CLI_EXIT_INTERRUPTED ? cli_die_interrupted() : rc;
    }
    if (o.list_traces) {
        free(o.statement);
        return list_traces(o.archive);
    }
    /* the archive's own commands (admin.c) */
    bool json = o.format == ARGUSQ_FORMAT_JSON;
    if (o.statement && (!strcmp(o.statement, "info") || !strcmp(o.statement, "compact"))) {
        rc = o.statement[0] == 'i' ? cli_info(o.archive, json) : cli_compact(o.archive, json);
        free(o.statement);
        return rc;
    }
    if (o.statement && !strcmp(o.statement, "dump")) {
        rc = cli_dump(o.archive, o.trace, o.output, json);
        free(o.statement);
        return rc;
    }
    if (o.statement && (!strcmp(o.statement, "backup") || !strncmp(o.statement, "backup ", 7))) {
        rc = o.statement[6] ? cli_backup(o.archive, o.statement + 7, json) : cli_usage_error("backup needs a FILE", NULL);
        free(o.statement);
        return rc;
    }
    /* statements that change a trace (rules, rebuild graph) need a writable
     * archive; reading works on a read-only one (and on one whose
     * directory this user may not write: db_open) */
    argusq_error e;
    bool readonly = !db_writable(o.archive);
    argusq_archive *a = argusq_open(o.archive, readonly ? ARGUSQ_OPEN_READ : ARGUSQ_OPEN_WRITE | ARGUSQ_OPEN_LOG, &e);
    if (!a && !(o.statement && help_only(o.statement))) { /* help needs no archive */
        fprintf(stderr, "argusq: %s\n", e.message);
        free(o.statement);
        return 2;
    }
    /* Ctrl-C from here on ends the statement running (not an archive's
     * migration in argusq_open: a kill leaves that undone) */
    bool is_repl = !o.statement && !o.script && isatty(STDIN_FILENO);
    cli_catch_interrupts(is_repl);
    argusq_query_opts qo = {.size = sizeof qo, .format = o.format, .trace = o.trace, .interrupt = cli_interrupt_flag()};
    argusq_session *s = argusq_session_new(a, &qo, &e);
    if (!s) {
        fprintf(stderr, "argusq: %s\n", e.message);
        rc = 2;
    } else if (o.statement) {
        rc = cli_run(s, "query", o.statement, strlen(o.statement));
        /* `argusq find nodes where thread = "hog"`: the shell ate the quotes */
        if (rc == 1 && o.words > 1 && !strchr(o.statement, '"'))
            fprintf(stderr, "argusq: the shell takes double quotes away from words: put the whole statement in "
                            "single quotes, argusq '... = \"VALUE\"'\n");
    }
    else if (o.script)
        rc = cli_run_file(s, o.script);
    else if (!is_repl)
        rc = cli_run_file(s, "-");
    else
        rc = cli_repl(s, a, o.archive, o.format);
    argusq_session_free(s);
    argusq_close(a);
    free(o.statement);
    return rc == CLI_EXIT_INTERRUPTED && !is_repl ? cli_die_interrupted() : rc;
}
