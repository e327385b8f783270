/* cli/progress.c -- the progress bar of long ingests and recordings (see
 * progress.h).  One line on stderr, rewritten in place with "\r" and
 * erased with "\033[K"; nothing is written when stderr is not a terminal. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

void progress_begin(progress *p, const char *what, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(STDERR_FILENO) == 1;
    snprintf(p->what, sizeof p->what, "%s", what);
    p->total = total;
    p->t0 = now();
}

void progress_set_total(progress *p, uint64_t total) { p->total = total; }

/* 1234 -> "1234", 123456 -> "123k", 1234567 -> "1.2M" */
static void count(char *buf, size_t len, double v)
{
    if (v < 10000)
        snprintf(buf, len, "%.0f", v);
    else if (v < 1e6)
        snprintf(buf, len, "%.0fk", v / 1e3);
    else if (v < 1e9)
        snprintf(buf, len, "%.1fM", v / 1e6);
    else
        snprintf(buf, len, "%.1fG", v / 1e9);
}

static void clock_text(char *buf, size_t len, double secs)
{
    unsigned long s = secs < 0 ? 0 : (unsigned long)(secs + 0.5);
    if (s >= 3600)
        snprintf(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%lu:%02lu", s / 60, s % 60);
}

static void draw(progress *p, const char *phase)
{
    double t = now(), el = t - p->t0;
    char ev[16], rate[16], left[24], line[512];
    count(ev, sizeof ev, (double)p->events);
    count(rate, sizeof rate, el > 0 ? (double)p->events / el : 0);
    int cols = columns() - 1, n;
    if (phase) {
        n = snprintf(line, sizeof line, "%s: %s... %s events", p->what, phase, ev);
    } else if (p->total) {
        double frac = p->bytes >= p->total ? 1.0 : (double)p->bytes / (double)p->total;
        if (frac > 0 && el > 0.2 && frac < 1.0) {
            clock_text(left, sizeof left, el / frac - el);
            strcat(left, " left");
        } else
            snprintf(left, sizeof left, frac >= 1.0 ? "0:00 left" : "--:-- left");
        char tail[160];
        snprintf(tail, sizeof tail, " %3.0f%%  %.1f/%.1f MB  %s events  %s ev/s  %s", frac * 100,
                 (double)p->bytes / 1e6, (double)p->total / 1e6, ev, rate, left);
        int bar = cols - (int)strlen(p->what) - 3 - (int)strlen(tail);
        if (bar > 40)
            bar = 40;
        if (bar < 10) { /* a narrow terminal: the numbers only */
            n = snprintf(line, sizeof line, "%s%s", p->what, tail);
        } else {
            char b[41];
            int fill = (int)(frac * bar + 0.5);
            for (int i = 0; i < bar; i++)
                b[i] = i < fill ? '#' : '.';
            b[bar] = 0;
            n = snprintf(line, sizeof line, "%s [%s]%s", p->what, b, tail);
        }
    } else {
        char el_text[24];
        clock_text(el_text, sizeof el_text, el);
        n = snprintf(line, sizeof line, "%s  %s events  %s ev/s  %.1f MB  %s", p->what, ev, rate,
                     (double)p->bytes / 1e6, el_text);
    }
    if (n > cols)
        line[cols > 0 ? cols : 0] = 0;
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = true;
    p->last = t;
}

void progress_update(progress *p, uint64_t bytes, uint64_t events)
{
    if (!p->on)
        return;
    p->bytes = bytes;
    p->events = events;
    double t = now();
    if (!p->drawn || t - p->last >= 0.1)
        draw(p, NULL);
}

void progress_phase(progress *p, const char *phase)
{
    if (p->on)
        draw(p, phase);
}

void progress_end(progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = false;
}
