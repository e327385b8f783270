/* cli/signals.c -- the state signal handlers may touch, and only that:
 * the Ctrl-C flag libargusq looks at, and the message a damaged archive's
 * fault prints.  The rest of the command reads the flag through
 * cli_interrupted and hands its address to libargusq. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

/* ---- Ctrl-C ----
 * The one thing a SIGINT handler does is set this flag, which libargusq
 * looks at through the interrupt of its options: a statement stops at its
 * next read of the archive, an ingest within 4096 events or at its next
 * batch (its trace then deleted, as after any failure).  The REPL then
 * goes back to its prompt (repl_getc looks at the flag there); a command
 * undoes what it did and ends by SIGINT, as without a handler.  Something
 * stuck where nothing looks at the flag still ends: at the second Ctrl-C
 * in a command, the third in the REPL, the handler gives SIGINT its
 * default action and raises it.  A signal handler's state, so static: the
 * command's one flag (damaged_msg, below, is written once before any
 * handler can run; `argusq record` has its own, record/record.c). */
static volatile sig_atomic_t interrupted;

static void on_interrupt_command(int sig)
{
    if (++interrupted >= 2) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

static void on_interrupt_repl(int sig)
{
    if (++interrupted >= 3) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* No SA_RESTART: a wait for the archive's writer lock, or a write to a
 * terminal that reads no more for now, returns EINTR, and its statement
 * ends.  A SIGINT ignored when argusq started (a background job of a
 * shell without job control) stays ignored. */
void cli_catch_interrupts(bool repl)
{
    struct sigaction old, sa = {.sa_handler = repl ? on_interrupt_repl : on_interrupt_command};
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        return;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* A command's end after Ctrl-C, once what it did was undone: death by
 * SIGINT, which tells a shell's loop or make to stop too (status 130). */
int cli_die_interrupted(void)
{
    fflush(stdout);
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
    return CLI_EXIT_INTERRUPTED; /* SIGINT blocked by the caller: an exit says the same */
}

volatile sig_atomic_t *cli_interrupt_flag(void)
{
    return &interrupted;
}

bool cli_interrupted(void)
{
    return interrupted != 0;
}

/* The REPL, at each prompt: a Ctrl-C counts towards the kill only while
 * a statement runs. */
void cli_interrupt_reset(void)
{
    interrupted = 0;
}

/* LMDB reads pages it trusts: a damaged archive file can make it fault.
 * Say so and exit, rather than dying silently.  The message is prepared
 * before any archive is read because a handler may only write(2); it is the
 * one piece of state a signal handler has, hence static. */
static char damaged_msg[4200];
static size_t damaged_len;

static void on_fault(int sig)
{
    (void)sig;
    ssize_t n = write(STDERR_FILENO, damaged_msg, damaged_len);
    (void)n;
    _exit(3);
}

void cli_catch_faults(const char *archive)
{
    int n = snprintf(damaged_msg, sizeof damaged_msg,
                     "argusq: %s: the archive is damaged (a page could not be read); "
                     "argusq stopped without changing it\n",
                     archive);
    damaged_len = n > 0 ? (size_t)n < sizeof damaged_msg ? (size_t)n : sizeof damaged_msg - 1 : 0;
    struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    /* a file-size limit (ulimit -f) is an error, EFBIG, not a kill */
    signal(SIGXFSZ, SIG_IGN);
}
