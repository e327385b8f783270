/* query/cpsvg.c -- `critical path ... --format svg`: the period as a
 * timeline, drawn here rather than laid out by Graphviz (whose layout put
 * the node that took 99.8% of the period apart, with no edge).
 *
 * A row per thread of the path (the victim's first, the others as they
 * come), time left to right over the whole period; each part a bar on its
 * thread's row, colored by its state and labeled with its state and share
 * where it is wide enough (a tooltip says all); the chain of the wait an
 * arrow from each part to the next where the thread changes; a legend of
 * the states and the period's time axis. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

#define CPSVG_LEFT 180   /* the thread names' column */
#define CPSVG_PLOT 900   /* the timeline's width */
#define CPSVG_ROW 30
#define CPSVG_TOP 46
#define CPSVG_ROWS_MAX 64

static const char *const state_color[QUERY_CP__COUNT] = {
    [QUERY_CP_RUNNING] = "#43a047",  [QUERY_CP_RUNNABLE] = "#ffb300", [QUERY_CP_BLOCKED] = "#9e9e9e",
    [QUERY_CP_TIMER] = "#1e88e5",    [QUERY_CP_IO] = "#8d6e63",       [QUERY_CP_INTERRUPT] = "#8e24aa",
};

/* the row of a part's thread (by tid, and by name for tid 0: interrupt
 * contexts share it); -1 past CPSVG_ROWS_MAX */
static int row_of(const query_cp_part *p, const query_cp_part **rows, int *n)
{
    for (int i = 0; i < *n; i++)
        if (rows[i]->tid == p->tid && (p->tid || strncmp(rows[i]->thread, p->thread, DB_NAME_MAX) == 0))
            return i;
    if (*n == CPSVG_ROWS_MAX)
        return -1;
    rows[*n] = p;
    return (*n)++;
}

static double x_of(const query_cp *cp, uint64_t t)
{
    uint64_t period = cp->end - cp->begin;
    return CPSVG_LEFT + (period ? (double)(t - cp->begin) * CPSVG_PLOT / (double)period : 0);
}

void query_cp_svg(FILE *f, const query_cp *cp)
{
    const query_cp_part *rows[CPSVG_ROWS_MAX];
    int nrows = 0;
    /* the victim's row first */
    query_cp_part victim = {.tid = cp->node.tid};
    memcpy(victim.thread, cp->node.thread, sizeof victim.thread);
    row_of(&victim, rows, &nrows);
    int *at = NULL;
    if (cp->n) {
        at = malloc(cp->n * sizeof *at);
        if (!at)
            return;
    }
    for (size_t i = 0; i < cp->n; i++)
        at[i] = row_of(&cp->parts[i], rows, &nrows);
    uint64_t period = cp->end - cp->begin;
    int height = CPSVG_TOP + nrows * CPSVG_ROW + 70, width = CPSVG_LEFT + CPSVG_PLOT + 20;
    char dur[32], ts[32];
    query_fmt_duration(dur, sizeof dur, period);
    query_fmt_ts(ts, sizeof ts, cp->begin);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
            "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\">"
            "critical path of ",
            width, height);
    query_xml_text(f, cp->node.thread);
    fprintf(f, " (node %" PRIu32 "): %s from %s</text>\n", cp->node.id, dur, ts);
    for (int i = 0; i < nrows; i++) {
        int y = CPSVG_TOP + i * CPSVG_ROW;
        fprintf(f, "<text x=\"10\" y=\"%d\">", y + 19);
        query_xml_text(f, rows[i]->thread);
        if (rows[i]->tid)
            fprintf(f, " %" PRIu32, rows[i]->tid);
        fprintf(f, "</text><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eeeeee\"/>\n", CPSVG_LEFT,
                y + 14, CPSVG_LEFT + CPSVG_PLOT, y + 14);
    }
    for (size_t i = 0; i < cp->n; i++) {
        const query_cp_part *p = &cp->parts[i];
        if (at[i] < 0)
            continue;
        double x = x_of(cp, p->begin), w = x_of(cp, p->begin + p->ns) - x;
        if (w < 1)
            w = 1;
        int y = CPSVG_TOP + at[i] * CPSVG_ROW;
        double share = period ? 100.0 * (double)p->ns / (double)period : 0;
        char d[32];
        query_fmt_duration(d, sizeof d, p->ns);
        fprintf(f, "<rect class=\"part\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"22\" fill=\"%s\"><title>", x,
                y + 3, w, state_color[p->state]);
        query_xml_text(f, p->thread);
        fprintf(f, " %s %s (%.1f%%)", query_cp_state_name(p->state), d, share);
        if (p->node)
            fprintf(f, ", node %" PRIu32, p->node);
        if (p->for_tid) {
            fputs(", for ", f);
            query_xml_text(f, p->for_thread);
        }
        fputs("</title></rect>\n", f);
        if (w >= 70)
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"white\">%s %.1f%%</text>\n", x + 4, y + 19,
                    query_cp_state_name(p->state), share);
    }
    /* the chain: from a part to the next, where the thread changes */
    for (size_t i = 0; i + 1 < cp->n; i++) {
        if (at[i] < 0 || at[i + 1] < 0 || at[i] == at[i + 1])
            continue;
        double x = x_of(cp, cp->parts[i + 1].begin);
        int y1 = CPSVG_TOP + at[i] * CPSVG_ROW + 14, y2 = CPSVG_TOP + at[i + 1] * CPSVG_ROW + 14;
        fprintf(f,
                "<line class=\"chain\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" "
                "marker-end=\"url(#arrow)\"/>\n",
                x, y1, x, y2 + (y2 > y1 ? -11 : 11));
    }
    int y = CPSVG_TOP + nrows * CPSVG_ROW + 16;
    fprintf(f, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
            CPSVG_LEFT, y, CPSVG_LEFT + CPSVG_PLOT, y, dur);
    for (int s = 0; s < QUERY_CP__COUNT; s++)
        fprintf(f,
                "<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\">%s</text>\n",
                CPSVG_LEFT + s * 120, y + 18, state_color[s], CPSVG_LEFT + s * 120 + 16, y + 29,
                query_cp_state_name(s));
    fputs("</svg>\n", f);
    free(at);
}
