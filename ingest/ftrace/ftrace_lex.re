/* ingest/ftrace/ftrace_lex.re -- re2c scanners for one line of Linux ftrace text.
 *
 * Three line forms carry the same prefix (spec, "Linux ftrace mapping"):
 *
 *   tracefs trace       comm-PID  (  TGID) [CPU] FLAGS  SEC.FRAC: event: fields
 *                       (the TGID column only with record-tgid, the FLAGS
 *                       column only with irq-info)
 *   trace-cmd report -l comm-PID  CPUFLAGS  SEC.FRAC: event: fields
 *                       (e.g. `1dNh4.` = CPU 1, flags dNh4.)
 *   trace-cmd report    comm-PID  [CPU]  SEC.FRAC: event: fields
 *
 * comm may hold blanks, '-', ':' and '/', so the comm-PID token cannot be
 * scanned on its own: the driver tries each blank that follows a `-DIGITS`
 * word and lets the scanner match the rest of the prefix from there; the
 * first place where it matches ends comm-PID, so the tid is the digits
 * after the last '-' before the CPU/TGID column.
 *
 * Every line is NUL-terminated in place by the splitter and no rule
 * consumes a NUL, so the scanners never read past the end of the line
 * (re2c's sentinel method; YYFILL is off). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ftrace/ftrace_int.h"

/*!re2c
    re2c:yyfill:enable = 0;
    re2c:define:YYCTYPE = char;
    re2c:tags = 1;

    ws   = [ \t]+;
    dig  = [0-9];
    key  = [A-Za-z_] [A-Za-z0-9_]*;
    word = [^ \t\x00]+;
*/

static int parse_u32(const char *p, const char *e, uint32_t *out)
{
    uint64_t v = 0;
    if (p == e || e - p > 10)
        return -1;
    for (; p < e; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Requirement 3: SECONDS.FRACTION with 1..9 fraction digits, converted
 * to integer nanoseconds without floating point. */
static int parse_ts(const char *p, const char *e, uint64_t *out)
{
    uint64_t sec = 0, frac = 0;
    const char *dot = p;
    while (dot < e && *dot >= '0' && *dot <= '9')
        dot++;
    if (dot == p || dot == e || *dot != '.' || dot - p > 19)
        return -1;
    for (const char *q = p; q < dot; q++)
        sec = sec * 10 + (uint64_t)(*q - '0');
    size_t n = (size_t)(e - dot - 1);
    if (n < 1 || n > 9)
        return -1;
    for (const char *q = dot + 1; q < e; q++) {
        if (*q < '0' || *q > '9')
            return -1;
        frac = frac * 10 + (uint64_t)(*q - '0');
    }
    for (size_t i = n; i < 9; i++)
        frac *= 10;
    if (sec > (UINT64_MAX - frac) / 1000000000u)
        return -1;
    *out = sec * 1000000000u + frac;
    return 0;
}

/* The columns of a matched prefix: the start of the CPU column (c0 NULL:
 * the -l form), the TGID digits, the event name [e0, e1), the rest. */
static ftrace_lex_status lex_columns(char *start, char *g0, char *g1, char *c0, char *c1, char *e0, char *e1,
                                     char *rest, ftrace_line *out)
{
    /* Only the unambiguous columns are tagged (keeps the DFA
     * deterministic); flags and timestamp are found from them: the
     * timestamp is the word before the name, any word between the CPU
     * column and the timestamp is the flags column. */
    char *s1 = e0;
    while (s1[-1] == ' ' || s1[-1] == '\t')
        s1--;
    s1--; /* the ':' after the timestamp */
    char *s0 = s1;
    while (s0[-1] != ' ' && s0[-1] != '\t')
        s0--;
    char *f0 = NULL, *f1 = NULL;
    uint32_t cpu;
    bool report_l = !c0;
    if (report_l) { /* -l: CPU digits glued to the flags */
        c0 = start;
        if (g1)
            for (c0 = g1 + 1; *c0 == ' ' || *c0 == '\t'; c0++) {}
        for (c1 = c0; *c1 >= '0' && *c1 <= '9'; c1++) {}
        f0 = c1;
    } else {
        f0 = c1 + 1;
        while (*f0 == ' ' || *f0 == '\t')
            f0++;
        if (f0 == s0)
            f0 = NULL;
    }
    if (f0)
        for (f1 = f0; *f1 != ' ' && *f1 != '\t'; f1++) {}
    if (report_l)
        out->form = FTRACE_FORM_REPORT_L;
    else
        out->form = (f0 || g0) ? FTRACE_FORM_TRACEFS : FTRACE_FORM_REPORT;
    out->has_tgid = false;
    if (g0 && *g0 != '-') {
        if (parse_u32(g0, g1, &out->tgid) < 0)
            return FTRACE_LEX_BAD_PID;
        out->has_tgid = true;
    }
    if (parse_u32(c0, c1, &cpu) < 0 || cpu >= 0xffffu)
        return FTRACE_LEX_BAD_CPU;
    out->cpu = (uint16_t)cpu;
    out->flags = f0;
    out->flags_len = f0 ? (size_t)(f1 - f0) : 0;
    /* the context is the third flag char (requirement 4); kernels since
     * 5.14 print a fifth (migrate-disable), some builds more */
    if (f0 && (out->flags_len < 3 || out->flags_len > 8))
        return FTRACE_LEX_BAD_FLAGS;
    if (parse_ts(s0, s1, &out->ts) < 0)
        return FTRACE_LEX_BAD_TS;
    out->name = e0;
    out->name_len = (size_t)(e1 - e0);
    char *p = rest;
    while (*p == ' ' || *p == '\t')
        p++;
    out->fields = p;
    char *end = p + strlen(p); /* libc's scan, many bytes a step: fields are most of a line */
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    out->fields_len = (size_t)(end - p);
    return FTRACE_LEX_OK;
}

/* The prefix after comm-PID: optional (TGID), the CPU column, optional
 * flags, the timestamp and the event name.  NOMATCH means "comm-PID does
 * not end here"; the other errors mean it does but a column is bad.
 *
 * The event name is a C identifier, or a number: kernels before 3.10
 * print trace_marker writes as event `0:` (old Android systrace).  The
 * syscalls:* tracepoints print no name at all, only their own text:
 * `sys_read(fd: 3, ...)` on entry and `sys_read -> 0x0` on exit; out->sys
 * says which, the name is NAME, the fields the arguments or the value. */
static ftrace_lex_status lex_rest(char *YYCURSOR, ftrace_line *out)
{
    char *const start = YYCURSOR;
    char *YYMARKER;
    char *g0, *g1, *c0, *c1, *e0, *e1;
    /*!stags:re2c:prefix format = 'char *@@;\n'; */
    out->sys = FTRACE_SYS_NONE;
    /*!local:re2c:prefix
        tgid = "(" [ \t]* @g0 (dig+ | "-"+) @g1 ")" ws;
        cpub = "[" @c0 dig+ @c1 "]" ws ([^ \t\x00:()[\]]+ ws)?;
        cpul = dig+ [^ \t\x00:0-9] [^ \t\x00:]* ws;
        ts   = [^ \t\x00:]+ ":" ws;
        name = @e0 ([A-Za-z_] [A-Za-z0-9_]* | dig+) @e1 ":";
        sysenter = "sys_" @e0 [A-Za-z0-9_]+ @e1 "(";
        sysexit  = "sys_" @e0 [A-Za-z0-9_]+ @e1 ws "->" ws;

        tgid? (cpub | cpul) ts name {
            return lex_columns(start, g0, g1, c0, c1, e0, e1, YYCURSOR, out);
        }
        tgid? (cpub | cpul) ts sysenter {
            ftrace_lex_status st = lex_columns(start, g0, g1, c0, c1, e0 - 4, e1, YYCURSOR, out);
            if (st != FTRACE_LEX_OK || out->fields_len == 0 || out->fields[out->fields_len - 1] != ')')
                return st == FTRACE_LEX_OK ? FTRACE_LEX_NOMATCH : st;
            out->sys = FTRACE_SYS_ENTER;
            out->fields_len--; /* the ')' */
            return st;
        }
        tgid? (cpub | cpul) ts sysexit {
            ftrace_lex_status st = lex_columns(start, g0, g1, c0, c1, e0 - 4, e1, YYCURSOR, out);
            if (st == FTRACE_LEX_OK)
                out->sys = FTRACE_SYS_EXIT;
            return st;
        }
        * { return FTRACE_LEX_NOMATCH; }
    */
}

ftrace_lex_status ingest_ftrace_lex_line(char *line, ftrace_line *out)
{
    out->comm_hash = 0; /* the comm column's hash: ingest_ft_event makes it */
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    char *start = p;
    while (*p) {
        char *q = p;
        while (*q && *q != ' ' && *q != '\t')
            q++;
        if (!*q)
            break;
        char *d = q;
        while (d > p && d[-1] >= '0' && d[-1] <= '9')
            d--;
        char *r = q;
        while (*r == ' ' || *r == '\t')
            r++;
        /* a word ending in -DIGITS, with a non-empty comm before the '-' */
        if (d < q && d - 1 > start && d[-1] == '-') {
            ftrace_lex_status s = lex_rest(r, out);
            if (s != FTRACE_LEX_NOMATCH) {
                if (s == FTRACE_LEX_OK && parse_u32(d, q, &out->tid) < 0)
                    return FTRACE_LEX_BAD_PID;
                out->comm = start;
                out->comm_len = (size_t)(d - 1 - start);
                return s;
            }
        }
        p = r;
    }
    return FTRACE_LEX_NOMATCH;
}

/* Requirement 2: trace-cmd and tracefs print a few lines that are neither
 * comments nor events; they are counted as skipped, anything else is an
 * error. */
int ingest_ftrace_lex_header(const char *line)
{
    const char *YYCURSOR = line, *YYMARKER;
    /*!re2c
        sp = [ \t]*;
        sp "cpus=" dig+ sp "\x00"                                   { return 1; }
        sp "version" sp "=" sp [0-9.]+ sp "\x00"                    { return 1; }
        sp "CPU" sp dig+ sp "is empty" sp "\x00"                    { return 1; }
        sp "CPU" sp ":" sp dig+ sp "[" [^\]\x00]* "EVENTS" [^\]\x00]* "]" sp "\x00" { return 1; }
        * { return 0; }
    */
}

ftrace_ev_kind ingest_ftrace_lex_event(const char *name)
{
    const char *YYCURSOR = name, *YYMARKER;
    /*!re2c
        end = "\x00";
        "sys_enter" end               { return FTRACE_EV_SYS_ENTER; }
        "sys_exit" end                { return FTRACE_EV_SYS_EXIT; }
        "sys_enter_" key end          { return FTRACE_EV_SYSCALLS_ENTER; }
        "sys_exit_" key end           { return FTRACE_EV_SYSCALLS_EXIT; }
        "sched_switch" end            { return FTRACE_EV_SCHED_SWITCH; }
        "sched_wakeup" end            { return FTRACE_EV_SCHED_WAKEUP; }
        "sched_wakeup_new" end        { return FTRACE_EV_SCHED_WAKEUP_NEW; }
        "sched_waking" end            { return FTRACE_EV_SCHED_WAKING; }
        "sched_process_fork" end      { return FTRACE_EV_PROCESS_FORK; }
        "sched_process_exec" end      { return FTRACE_EV_PROCESS_EXEC; }
        "sched_process_exit" end      { return FTRACE_EV_PROCESS_EXIT; }
        "task_newtask" end            { return FTRACE_EV_TASK_NEWTASK; }
        "task_rename" end             { return FTRACE_EV_TASK_RENAME; }
        "binder_transaction" end      { return FTRACE_EV_BINDER_TXN; }
        "binder_transaction_received" end { return FTRACE_EV_BINDER_RECV; }
        "irq_handler_entry" end       { return FTRACE_EV_IRQ_ENTRY; }
        "irq_handler_exit" end        { return FTRACE_EV_IRQ_EXIT; }
        "softirq_entry" end           { return FTRACE_EV_SOFTIRQ_ENTRY; }
        "softirq_exit" end            { return FTRACE_EV_SOFTIRQ_EXIT; }
        "softirq_raise" end           { return FTRACE_EV_SOFTIRQ_RAISE; }
        "hrtimer_start" end           { return FTRACE_EV_HRTIMER_START; }
        "hrtimer_cancel" end          { return FTRACE_EV_HRTIMER_CANCEL; }
        "hrtimer_expire_entry" end    { return FTRACE_EV_HRTIMER_EXPIRE_ENTRY; }
        "hrtimer_expire_exit" end     { return FTRACE_EV_HRTIMER_EXPIRE_EXIT; }
        "workqueue_queue_work" end    { return FTRACE_EV_WQ_QUEUE; }
        "workqueue_activate_work" end { return FTRACE_EV_WQ_ACTIVATE; }
        "workqueue_execute_start" end { return FTRACE_EV_WQ_START; }
        "workqueue_execute_end" end   { return FTRACE_EV_WQ_END; }
        "kernel_stack" end            { return FTRACE_EV_STACK; }
        "user_stack" end              { return FTRACE_EV_STACK; }
        "block_bio_queue" end         { return FTRACE_EV_BLOCK; }
        "block_rq_insert" end         { return FTRACE_EV_BLOCK; }
        "block_rq_issue" end          { return FTRACE_EV_BLOCK; }
        "block_rq_complete" end       { return FTRACE_EV_BLOCK; }
        "tracing_mark_write" end      { return FTRACE_EV_MARKER; }
        "print" end                   { return FTRACE_EV_MARKER; }
        "0" end                       { return FTRACE_EV_MARKER; } /* kernels < 3.10: trace_marker */
        "bpf_trace_printk" end        { return FTRACE_EV_MARKER; }
        * { return FTRACE_EV_OTHER; }
    */
}

int ingest_ftrace_lex_kv(const char *text, ftrace_kv *kv, int max)
{
    const char *YYCURSOR = text, *YYMARKER;
    const char *k0, *k1, *v0, *v1;
    /*!stags:re2c:kv format = 'const char *@@;\n'; */
    int n = 0;
    int open = 0; /* may a bare word extend the last value? */
    for (;;) {
        /*!local:re2c:kv
            ws     { continue; }
            "\x00" { return n > 0 ? n : -1; }
            "==>"  { open = 0; continue; }
            "[" @k0 key @k1 "=" @v0 [^\]\x00]* @v1 "]"
                   { open = 0; goto pair; }
            @k0 key @k1 "=" @v0 [^ \t\x00]* @v1
                   { open = 1; goto pair; }
            word   {
                if (!open)
                    return -1;
                kv[n - 1].vlen = (size_t)(YYCURSOR - kv[n - 1].val);
                continue;
            }
            *      { return -1; }
        */
    pair:
        if (n == max)
            return -1;
        kv[n].key = k0;
        kv[n].klen = (size_t)(k1 - k0);
        kv[n].val = v0;
        kv[n].vlen = (size_t)(v1 - v0);
        n++;
    }
}
