/* cli/repl.c -- the interactive shell: statements that may span lines
 * (ended by ';', as in psql or sqlite3), libedit's line editing, history
 * in ~/.argusq_history and Tab completion, the dot-commands of its
 * display settings, and Ctrl-C back to the prompt. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>

#include "cli.h"

/* True when the REPL should run what it has: the input ends with ';'
 * (statements may span lines, as in psql or sqlite3), or it is one of the
 * one-word statements people type bare. */
static bool repl_complete(const char *buf, size_t len)
{
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\n'))
        len--;
    if (len && buf[len - 1] == ';')
        return true;
    while (len && (*buf == ' ' || *buf == '\t' || *buf == '\n'))
        buf++, len--;
    static const char *const bare[] = {"help", "traces", "rules", "quit", "exit"};
    for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
        if (len == strlen(bare[i]) && strncasecmp(buf, bare[i], len) == 0)
            return true;
    return len > 5 && strncasecmp(buf, "help ", 5) == 0 && !memchr(buf, '\n', len);
}

/* A byte the REPL reads from the terminal, or EOF: at the end of the
 * input, and at a Ctrl-C (cli_interrupted()).  libedit reads through it
 * too (rl_getc_function), which is why it exists: a Ctrl-C that came
 * after the prompt was written but before read(2) began would have run
 * its handler and left read to sleep through it (it did, under load).
 * Here SIGINT is blocked from the look at the flag on, and let in only
 * while ppoll waits: a Ctrl-C at any moment ends the wait.  (Bytes, not
 * characters: as libedit's own reading in argusq's C locale, which drops
 * what is not ASCII.)
 *
 * A NUL byte is dropped.  Between two lines libedit leaves the terminal
 * in cooked mode, where a Ctrl-D typed ahead (while a statement runs, or
 * right after a Ctrl-C) is the line discipline's end of file; once
 * libedit sets the terminal raw again that end of file reaches it as a
 * NUL byte, after which libedit took each Ctrl-D as an error (the bell)
 * and never ended the REPL.  What goes with it: Ctrl-@, libedit's "set
 * mark", which the REPL's editing does not need. */
static int repl_getc(FILE *in)
{
    int fd = fileno(in);
    sigset_t intr, old;
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    for (;;) {
        pthread_sigmask(SIG_BLOCK, &intr, &old);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = cli_interrupted() ? -1 : ppoll(&p, 1, NULL, &old);
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (cli_interrupted())
            return EOF;
        if (rc < 0 && e == EINTR)
            continue; /* another signal: a resized window (libedit's SIGWINCH) */
        if (rc < 0)
            return EOF;
        unsigned char c;
        ssize_t n = read(fd, &c, 1);
        if (n == 1 && c == 0)
            continue; /* a NUL: see above */
        if (n == 1)
            return c;
        if (n == 0 || (errno != EINTR && errno != EAGAIN))
            return EOF;
    }
}

/* A line of the REPL: through libedit, or -- on a terminal that cannot
 * edit (TERM unset or dumb: an editor's shell buffer, a serial console),
 * where libedit took Ctrl-D for a character -- read as the terminal's own
 * line discipline gives it, where Ctrl-D ends the input.  NULL at the end,
 * and at a Ctrl-C (cli_interrupted()); the caller frees the line. */
static char *read_line(const char *prompt, bool edit)
{
    if (edit)
        return readline(prompt);
    fputs(prompt, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t len = 0, cap = 0;
    int c;
    while ((c = repl_getc(stdin)) != EOF && c != '\n') {
        if (len + 2 > cap) {
            char *p = realloc(line, cap = cap ? 2 * cap : 256);
            if (!p)
                break;
            line = p;
        }
        line[len++] = (char)c;
    }
    if (c != '\n' && (cli_interrupted() || len == 0)) { /* a line cut short by Ctrl-D is a line */
        free(line);
        return NULL;
    }
    if (!line && !(line = malloc(1)))
        return NULL;
    line[len] = '\0';
    return line;
}

/* ---- the REPL's settings and completion ---- */

typedef struct repl_state {
    argusq_session *s;
    argusq_archive *a;          /* the session's archive (completion reads it) */
    bool timer;                 /* .timer on: each statement's time */
    bool no_headers, expanded;  /* .headers off, .expanded on (\x) */
    bool rows;                  /* .rows on: "(N rows)" after a table */
    bool pager;                 /* .pager on: long output through $PAGER */
    int format;                 /* the session's output format */
    char trace[256];            /* the trace the completion's names are of */
    char **names;               /* completion: trace and thread names (malloc'd) */
    size_t nnames;
    bool have_names;
    const char *words[512]; /* completion: the language's words (argusq_language_words) */
    size_t nwords;
} repl_state;

/* One repl_state per process (libedit's completion callback takes no
 * context): set by repl() for its run, read by the generator. */
static repl_state *completing;

static void names_free(repl_state *r)
{
    for (size_t i = 0; i < r->nnames; i++)
        free(r->names[i]);
    free(r->names);
    r->names = NULL;
    r->nnames = 0;
    r->have_names = false;
}

static void names_add(repl_state *r, const char *s, size_t n)
{
    for (size_t i = 0; i < r->nnames; i++)
        if (strlen(r->names[i]) == n && memcmp(r->names[i], s, n) == 0)
            return;
    char **v = realloc(r->names, (r->nnames + 1) * sizeof *v);
    if (!v)
        return;
    r->names = v;
    if ((v[r->nnames] = strndup(s, n)) != NULL)
        r->nnames++;
}

/* the string values of "key": in a JSON text (argusq's own output: no
 * escapes but \" and \\ in names worth completing) */
static void names_from(repl_state *r, const char *json, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    for (const char *p = strstr(json, pat); p; p = strstr(p, pat)) {
        p += strlen(pat);
        const char *e = p;
        while (*e && *e != '"' && *e != '\\')
            e++;
        if (*e == '"')
            names_add(r, p, (size_t)(e - p));
    }
}

/* The trace names and the current trace's thread names, read once per
 * current trace (the threads: by `find nodes group by thread`). */
static void names_load(repl_state *r)
{
    const char *cur = argusq_session_trace(r->s);
    if (r->have_names && strcmp(r->trace, cur) == 0)
        return;
    names_free(r);
    snprintf(r->trace, sizeof r->trace, "%s", cur);
    r->have_names = true;
    argusq_query_opts qo = {.size = sizeof qo, .format = ARGUSQ_FORMAT_JSON, .trace = cur[0] ? cur : NULL};
    static const struct {
        const char *stmt, *key;
    } q[] = {{"traces", "name"}, {"find nodes group by thread", "thread"}};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char *out = NULL;
        size_t len = 0;
        argusq_error e;
        argusq_session *t = r->a ? argusq_session_new(r->a, &qo, &e) : NULL;
        if (t && argusq_session_query(t, q[i].stmt, strlen(q[i].stmt), &out, &len, &e) > 0 && out)
            names_from(r, out, q[i].key);
        argusq_free(out);
        argusq_session_free(t);
    }
}

/* Tab: the keywords, fields, kinds and aggregates of the language; in a
 * string ("..."), the archive's trace and thread names. */
static char *complete_word(const char *text, int state)
{
    /* the shell's own commands; the language's words come from the library */
    static const char *const dots[] = {".format", ".timer", ".headers", ".expanded", ".rows", ".pager",
                                       ".help", "quit"};
    const size_t ndots = sizeof dots / sizeof dots[0];
    static size_t i;
    static bool quoted;
    if (!state) {
        i = 0;
        /* the word follows a '"' when the character before it is one */
        quoted = rl_line_buffer && text >= rl_line_buffer + 0 && rl_point > (int)strlen(text) &&
                 rl_line_buffer[rl_point - strlen(text) - 1] == '"';
        if (quoted && completing)
            names_load(completing);
    }
    size_t n = strlen(text);
    if (quoted) {
        while (completing && i < completing->nnames)
            if (strncmp(completing->names[i++], text, n) == 0)
                return strdup(completing->names[i - 1]);
        return NULL;
    }
    size_t nwords = completing ? completing->nwords : 0;
    while (i < nwords + ndots) {
        const char *w = i < nwords ? completing->words[i] : dots[i - nwords];
        i++;
        if (strncasecmp(w, text, n) == 0)
            return strdup(w);
    }
    return NULL;
}

/* on/off of a setting, or a toggle without one (psql's \x, \timing) */
static bool setting(const char *cmd, const char *arg, bool now, bool *ok)
{
    *ok = true;
    if (!strcmp(arg, "on"))
        return true;
    if (!strcmp(arg, "off"))
        return false;
    if (!arg[0] && cmd[0] == '\\')
        return !now;
    *ok = false;
    return now;
}

/* `.format table|json|csv|...`, `.timer`, `.headers`, `.expanded` (psql's
 * \x), `.rows`, `.pager`, `.help`: the REPL's own settings (sqlite3's
 * dot-commands, psql's backslash ones).  Returns false for a line that is
 * none of them. */
static bool dot_command(repl_state *r, const char *line)
{
    const char *w = line + strspn(line, " \t");
    if (*w != '.' && *w != '\\')
        return false;
    char cmd[32] = "", arg[32] = "";
    sscanf(w, "%31s %31s", cmd, arg);
    bool ok = true;
    argusq_error e;
    if (!strcmp(cmd, ".format") || !strcmp(cmd, ".mode")) {
        int f = arg[0] ? argusq_format_from_name(arg) : -1;
        if (f < 0 || argusq_session_set_format(r->s, f, &e))
            fprintf(stderr, "argusq: .format table|json|csv|dot|svg|perfetto, not \"%s\"\n", arg);
        else
            r->format = f;
    } else if (!strcmp(cmd, ".timer") || !strcmp(cmd, "\\timing"))
        r->timer = setting(cmd, arg, r->timer, &ok);
    else if (!strcmp(cmd, ".headers"))
        r->no_headers = !setting(cmd, arg, !r->no_headers, &ok);
    else if (!strcmp(cmd, ".expanded") || !strcmp(cmd, "\\x"))
        r->expanded = setting(cmd, arg, r->expanded, &ok);
    else if (!strcmp(cmd, ".rows"))
        r->rows = setting(cmd, arg, r->rows, &ok);
    else if (!strcmp(cmd, ".pager"))
        r->pager = setting(cmd, arg, r->pager, &ok);
    else if (!strcmp(cmd, ".help") || !strcmp(cmd, "\\?"))
        printf(".format table|json|csv|dot|svg|perfetto  the output of the statements after it\n"
               ".timer on|off      (\\timing)  the time each statement took\n"
               ".headers on|off               the header row of tables\n"
               ".expanded on|off   (\\x)       a table's rows as blocks, a line per column\n"
               ".rows on|off                  \"(N rows)\" after a table\n"
               ".pager on|off                 output longer than the terminal through $PAGER (less)\n"
               ".help              (\\?)       this\n"
               "Tab completes keywords and fields, and in a string trace and thread names.\n");
    else
        fprintf(stderr, "argusq: unknown command %s (.help lists them)\n", cmd);
    if (!ok)
        fprintf(stderr, "argusq: %s on|off\n", cmd);
    else if (argusq_session_set_display(r->s, (r->no_headers ? ARGUSQ_DISPLAY_NO_HEADERS : 0) |
                                                  (r->expanded ? ARGUSQ_DISPLAY_EXPANDED : 0),
                                        &e))
        fprintf(stderr, "argusq: %s\n", e.message);
    else if (cmd[0] == '\\' && !arg[0]) /* a toggle says where it left the setting */
        printf("%s is %s.\n", !strcmp(cmd, "\\x") ? "Expanded display" : "Timing",
               (!strcmp(cmd, "\\x") ? r->expanded : r->timer) ? "on" : "off");
    return true;
}

/* The terminal's height in lines; 0 not a terminal. */
static int term_lines(void)
{
    struct winsize ws;
    return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
}

/* A statement's output, held (with .pager on, on a terminal): through the
 * pager when it is longer than the terminal, else as it is. */
static void page(const char *out, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += out[i] == '\n';
    int rows = term_lines();
    const char *pager = getenv("PAGER");
    FILE *p = rows > 0 && lines >= (size_t)rows ? popen(pager && *pager ? pager : "less -FRX", "w") : NULL;
    fwrite(out, 1, len, p ? p : stdout);
    if (p)
        pclose(p);
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int cli_repl(argusq_session *s, argusq_archive *a, const char *archive, int format)
{
    repl_state rs = {.s = s, .a = a, .rows = true, .format = format};
    rs.nwords = argusq_language_words(rs.words, sizeof rs.words / sizeof rs.words[0]);
    assert(rs.nwords <= sizeof rs.words / sizeof rs.words[0]);
    completing = &rs;
    rl_completion_entry_function = complete_word;
    rl_basic_word_break_characters = " \t\n\"(),=<>;";
    const char *term = getenv("TERM");
    bool edit = term && *term && strcmp(term, "dumb") != 0;
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (home)
        snprintf(hist, sizeof hist, "%s/.argusq_history", home);
    rl_getc_function = repl_getc; /* before libedit's first call, which reads it */
    using_history();
    if (hist[0])
        read_history(hist);
    printf("argusq %s on %s -- end statements with ';', `help` lists them, Ctrl-D quits\n", argusq_version(),
           archive);
    char *buf = NULL;
    size_t len = 0;
    for (;;) {
        cli_interrupt_reset();
        /* the prompt names the current trace once `use trace` set one */
        char prompt[300];
        const char *cur = argusq_session_trace(s);
        if (len)
            snprintf(prompt, sizeof prompt, "   ...> ");
        else if (cur[0])
            snprintf(prompt, sizeof prompt, "(%.256s) argusq> ", cur);
        else
            snprintf(prompt, sizeof prompt, "argusq> ");
        char *line = read_line(prompt, edit);
        if (cli_interrupted()) {
            /* Ctrl-C at the prompt: the line being typed goes, with the
             * lines of the statement it continued; a fresh prompt (the
             * terminal echoed ^C itself where libedit is not reading) */
            free(line);
            len = 0;
            fputs(edit ? "^C\n" : "\n", stdout);
            continue;
        }
        if (!line)
            break;
        if (!len && line[strspn(line, " \t")] == '\0') { /* Enter on an empty line: the prompt again */
            free(line);
            continue;
        }
        if (!len && dot_command(&rs, line)) {
            add_history(line);
            free(line);
            continue;
        }
        size_t n = strlen(line);
        char *p = realloc(buf, len + n + 2);
        if (!p) {
            free(line);
            break;
        }
        buf = p;
        memcpy(buf + len, line, n);
        len += n;
        buf[len++] = '\n';
        buf[len] = 0;
        free(line);
        if (!repl_complete(buf, len))
            continue;
        buf[len - 1] = 0;
        /* one history entry per statement, however many lines it took */
        for (char *c = buf; *c; c++)
            if (*c == '\n')
                *c = ' ';
        add_history(buf);
        const char *w = buf + strspn(buf, " \t");
        if (!strncasecmp(w, "quit", 4) || !strncasecmp(w, "exit", 4))
            break;
        if (w[strspn(w, " \t;")] == '\0') { /* a lone `;`: nothing asked */
            len = 0;
            continue;
        }
        double t0 = now_s();
        char *held = NULL;
        size_t nheld = 0;
        FILE *out = rs.pager && isatty(STDOUT_FILENO) ? open_memstream(&held, &nheld) : NULL;
        cli_run_to(s, "query", buf, len - 1, out ? out : stdout);
        if (out) {
            fclose(out);
            page(held, nheld);
            free(held);
        }
        long rows = argusq_session_rows(s);
        if (rs.rows && rows >= 0 && rs.format == ARGUSQ_FORMAT_TABLE)
            printf("(%ld row%s)\n", rows, rows == 1 ? "" : "s");
        if (rs.timer)
            printf("time: %.3f s\n", now_s() - t0);
        clearerr(stdout); /* a write Ctrl-C cut short (EINTR) is no reason to stop writing */
        len = 0;
    }
    free(buf);
    if (hist[0])
        write_history(hist);
    putchar('\n');
    names_free(&rs);
    completing = NULL;
    return 0;
}
