/* query/query_int.h -- internals of the executor (exec*.c, fields.c, out.c).
 * The AST is in query_ast.h. */
#ifndef ARGUSQ_QUERY_INT_H
#define ARGUSQ_QUERY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../graph/graph.h"
#include "query_ast.h"

/* ---- values (fields.c) ---- */
typedef enum query_vtype { QV_NONE = 0, QV_NUM, QV_STR } query_vtype;

/* A number is a sign and a 64-bit magnitude, so that both kernel addresses
 * (above INT64_MAX) and negative return values compare right. */
typedef struct query_val {
    query_vtype t;
    bool neg;
    uint64_t mag;
    const char *s;
    size_t n;
} query_val;

/* The row an expression is evaluated on: a node or an event. */
/* A trace and its labels, as `traces where` sees it (exec.c). */
typedef struct query_label {
    char key[DB_LABEL_KEY_MAX + 1];
    char *value; /* owned by the row's array */
} query_label;

typedef struct query_trace_row {
    db_trace_info info;
    query_label *labels;
    size_t nlabels;
} query_trace_row;

typedef struct query_row {
    const db_node *node;
    const db_event *ev;
    const db_edge *edge;
    const query_trace_row *trace;
} query_row;

/* Checks that every field of e exists for the target (events accept any
 * attribute name).  Returns 0, or -1 with err at the field. */
int query_check_fields(const query_expr *e, query_target target, query_error *err);
/* A date or age as unix seconds (fields.c): "2026-11-17", "2026-11-17
 * 09:30[:00]" (or T; Z allowed; UTC), "7d ago" before now (s m h d w). */
bool query_date_seconds(const char *s, size_t n, uint64_t now, uint64_t *out);
int query_check_field(const query_name *f, query_target target, query_error *err);
bool query_eval(const query_expr *e, const query_row *row);
query_val query_field(const query_name *f, const query_row *row);
int query_val_cmp(const query_val *a, const query_val *b, bool *comparable);

/* event fields derived from the phase of an event */
const char *query_event_phase(const db_event *ev); /* "begin", "send", ... or NULL */
bool query_event_is_fixed_field(const char *name);

/* ---- output (out.c) ---- */
void query_json_node(FILE *f, const db_node *n, int depth); /* depth < 0: none */
void query_json_node_open(FILE *f, const db_node *n);
void query_json_edge(FILE *f, const db_edge *e);
void query_json_event(FILE *f, const db_event *ev);
void query_fmt_duration(char *buf, size_t len, uint64_t ns);
void query_fmt_bytes(char *buf, size_t len, uint64_t bytes);
void query_fmt_ts(char *buf, size_t len, uint64_t ns);
void query_xml_text(FILE *f, const char *s); /* text in an SVG element or attribute */

/* Rows for people (aligned columns, readable times) or for programs
 * (CSV: a header row, raw integer nanoseconds). */
typedef struct query_table {
    int ncols;
    size_t *cells; /* where each cell's text starts in buf */
    size_t ncells, cap;
    char *buf;     /* every cell's text, each ended by a NUL, one arena */
    size_t len, bcap;
    bool oom;
    bool csv;
    /* events in CSV: each row's other keys (out.c, x_row) */
    char *xbuf;
    size_t xlen, xcap;
    size_t *xrow;
    size_t nxrow, xrowcap;
} query_table;

void query_table_init(query_table *t, query_format f, int ncols, const char *const *heads);
void query_table_ts(query_table *t, uint64_t ns);   /* a timestamp cell */
void query_table_dur(query_table *t, uint64_t ns, bool dash_if_zero); /* a duration cell */
void query_table_cell(query_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void query_table_str(query_table *t, const char *s); /* a text cell (no format) */
void query_table_u64(query_table *t, uint64_t v);    /* a number cell */
void query_table_print(query_table *t, FILE *f);
/* t to s->out as the session shows tables (headers, expanded), its rows
 * counted in s->rows */
void query_table_show(query_session *s, query_table *t);
void query_table_free(query_table *t);
void query_table_nodes_init(query_table *t, query_format f);
void query_table_node(query_table *t, const db_node *n);
void query_table_events_init(query_table *t, query_format f);
void query_table_event(query_table *t, const db_event *ev);
bool query_rows_format(query_format f); /* table or csv */


/* ---- walking the graph (path.c) ---- */
#define QUERY_PATH_MAX 100000 /* nodes a walk collects at most */
#define QUERY_WALK_IN 1u
#define QUERY_WALK_OUT 2u

typedef struct query_path_item {
    db_node node;
    int depth;
    size_t parent; /* the item it was reached from */
    db_edge via;   /* the edge it was reached by (item 0: none) */
} query_path_item;

typedef struct query_path {
    query_path_item *items; /* items[0] is the start */
    size_t len, cap;
    db_edge *edges;         /* every edge followed */
    size_t elen, ecap;
    uint32_t *seen;         /* the node ids met, open addressing: id + 1, 0 empty */
    size_t seen_cap, seen_len; /* seen_cap a power of two, at most half full */
    uint64_t nnodes;
    bool full;              /* nodes beyond QUERY_PATH_MAX were left out */
} query_path;

/* Breadth-first from start along edges of `kinds` (bit per db_edge_kind),
 * into (IN) and/or out of (OUT) each node, at most max_depth steps.
 * Returns 0, 1 if start does not exist, -1 on error. */
int query_path_walk(db_reader *r, uint32_t start, unsigned dirs, uint32_t kinds, int max_depth, query_path *p,
                    db_error *de);
int query_path_add(db_reader *r, query_path *p, uint32_t id, size_t parent, const db_edge *via, db_error *de);
bool query_path_has(const query_path *p, uint32_t node);
void query_path_free(query_path *p);
uint32_t query_causal_kinds(void);

/* ---- analysis.c: counterparts (paper/004 §Node Comparison) ---- */
/* A candidate counterpart as the signature index gives it: no node record
 * read yet (a busy thread has hundreds of thousands of candidates, and a
 * query looks at a few of them). */
typedef struct query_cand {
    double score;   /* |A and B| / |A or B| of the normal forms */
    uint32_t trace, node;
    bool contained; /* one normal form holds the other */
} query_cand;

typedef struct query_cands {
    query_cand *v; /* malloc'd; query_cands_free */
    size_t len;
    size_t heap; /* v[0 .. heap): not handed out yet, a heap of the best */
} query_cands;

typedef struct query_match {
    db_node n;
    uint32_t trace;
    double score;
    bool contained;
} query_match;

bool query_cand_similar(const query_cand *c);

/* ---- syscalls across machines (sysforms.c) ----
 * A trace of a known machine beside one of a machine not known: the
 * latter's syscall numbers read with the former's table when their
 * signatures are compared.  The traces' machines, by catalog id, are
 * looked up once; the tables made once.  Zero-initialized, then _free. */
#define QUERY_SYSFORMS_ARCHES 8
typedef struct query_sysforms {
    uint8_t *looked;        /* by trace id: arch[id] is known */
    const base_arch **arch; /* by trace id: its machine, NULL not known */
    size_t cap;
    struct query_sysform_tab {
        const base_arch *arch;
        uint32_t (*pair)[2]; /* (hash of "syscall:NR", of "syscall:NAME"), by the first */
        size_t n;
    } tab[QUERY_SYSFORMS_ARCHES];
} query_sysforms;
void query_sysforms_free(query_sysforms *f);
/* The machine of `trace` (its label arch, read through r): *out, NULL if
 * not known.  0 or -1.  _arch caches by trace id (of r's archive). */
int query_trace_arch(db_reader *r, uint32_t trace, const base_arch **out, db_error *de);
int query_sysforms_arch(query_sysforms *f, db_reader *r, uint32_t trace, const base_arch **out, db_error *de);
/* a (a trace of machine ma) and b (mb) as they compare: the one of a
 * machine not known has its numbers named by the other's table, in place */
void query_sysforms_align(query_sysforms *f, db_sig *a, const base_arch *ma, db_sig *b, const base_arch *mb);
/* graph_similarity of a and b, aligned so (without changing them) */
double query_sysforms_similarity(query_sysforms *f, const db_sig *a, const base_arch *ma, const db_sig *b,
                                 const base_arch *mb, bool *contained);
/* The nodes like n (same thread name and kind) in trace_id (0: every
 * trace), ranked best first -- score, then one form holding the other,
 * then trace and node id -- but handed out one at a time by
 * query_cands_next: a busy thread has hundreds of thousands and a query
 * wants a few, so they are not sorted all (a heap).  Node ids follow begin
 * order within a trace (graph/build numbers segments as they open). */
int query_find_matches(db_reader *r, const db_node *n, uint32_t trace_id, query_cands *out, db_error *de);
/* ... in each of the traces ids[0 .. nids) of r's archive, or (scan not
 * NULL) of the archive of reader scan: another archive file, whose
 * signature index holds the same normal forms (the hashes are of their
 * texts), and where n itself is none of the candidates */
int query_find_matches_in(db_reader *r, const db_node *n, db_reader *scan, const uint32_t *ids, size_t nids,
                          query_cands *out, db_error *de);
/* likeness.c: how alike a trace is to self's for an anomaly: the share of
 * the real threads on its path (a slice back from it) that the trace has
 * threads of, then how many thread names the two traces share; 1 for
 * self's own; remembered per trace.  The tie-break of counterparts from a
 * set of traces. */
typedef struct query_likeness query_likeness;
typedef struct query_like {
    double path;  /* the share of the path's threads the trace has */
    double whole; /* the Jaccard index of the two traces' thread names */
} query_like;
/* archive: where the traces compared live; names: a reader of another
 * archive, through which their names are read (NULL: archive is self's) */
query_likeness *query_likeness_new(db_reader *self, const query_path *path, db_archive *archive, db_reader *names,
                                   db_error *de);
int query_likeness_of(query_likeness *l, uint32_t trace, query_like *out, db_error *de);
int query_like_cmp(const query_like *a, const query_like *b); /* path, then whole */
void query_likeness_free(query_likeness *l);
/* The next best candidate, false when none is left.  A candidate handed
 * out moves to v[heap] (the heap shrinks by one): handed-out ones lie in
 * v[heap .. len), the later ones at lower indexes; when all are out, v is
 * sorted, the best last. */
bool query_cands_next(query_cands *c, query_cand *out);
/* The node of candidate c: 1, 0 when it is gone, -1 on error. */
int query_cand_node(db_reader *r, const query_cand *c, query_match *out, db_error *de);
void query_cands_free(query_cands *c);
int query_longest_block(db_reader *r, uint32_t trace_id, const char *name, db_node *out, db_error *de);
int query_trace_id(query_session *s, const query_name *n, uint32_t *id, query_error *err);

/* ---- source.c: where counterparts come from (match, diagnose) ----
 * The session's archive, or the archive file `in archive "PATH"` names,
 * opened read-only for the statement (query_opener); and which of its
 * traces: one (`in trace`, `against trace`), those `traces where`
 * lists, every one. */
typedef struct query_source {
    db_archive *archive; /* the session's, or the other one */
    void *handle;        /* the other's, from the session's opener */
    const char *path;    /* the other's path as written; NULL: the session's archive */
    db_reader *scan;     /* the other's: a reader of one of its traces, through which
                            its signature index, nodes and trace names are read */
    uint32_t *ids;       /* the traces (0: every trace); ids == &one or malloc'd */
    size_t nids;
    uint32_t one;
    bool listed;         /* a list of traces (`traces`): ranked among each other */
} query_source;

/* The clauses of st: its archive (`in archive`, may be absent), trace
 * (one trace's name, may be absent), its traces_all / traces_where (a
 * list); with none of them, ids {0}: every trace (match), or the caller's
 * default (diagnose: the anomaly's own trace) -- but for another archive
 * when every is false, the list of its traces.  A trace or an archive
 * that is not there is an error at its clause. */
int query_source_open(query_session *s, const query_stmt *st, const query_name *trace, bool every,
                      query_source *src, query_error *err);
void query_source_close(query_session *s, query_source *src);
/* A trace of the source by id: its name into buf (1, 0 gone, -1). */
int query_source_trace_name(const query_source *src, db_reader *self, uint32_t trace, char *buf, size_t len,
                            db_error *de);
/* The traces whose catalog entry and labels satisfy where (every one when
 * NULL) in archive a (path: its name in messages, NULL for the session's),
 * in catalog order: ids malloc'd (none: an error at pos when where is set;
 * with where NULL, *n = 0 is no error). */
int query_traces_in(db_archive *a, const char *path, const query_expr *where, const query_pos *pos, uint32_t **ids,
                    size_t *n, query_error *err);
/* The ids of the traces whose catalog entry and labels satisfy where
 * (`traces where`), in *ids (malloc'd, the caller frees): none is an
 * error at pos. */
int query_traces_where(query_session *s, const query_expr *where, const query_pos *pos, uint32_t **ids, size_t *n,
                       query_error *err);
int query_path_fail(int rc, db_reader *r, const query_stmt *st, const db_error *de, query_error *err);
void query_print_path(query_session *s, const query_path *p, bool back); /* table, csv, json */
int query_output_path(query_session *s, db_reader *r, const query_path *p, bool back, query_error *err);

/* ---- views (view.c: DOT and SVG; export_perfetto.c: Chrome JSON trace events) ----
 * A statement that returns nodes (find nodes, show node, slice,
 * transaction, diagnose, compare path) collects them, and the edges
 * between them, into a view, from one trace or two (the anomaly and the
 * normal run), and prints the view whole in the session's format. */
#define QUERY_VIEW_GROUPS 2
#define QUERY_VIEW_TELL 8 /* key events kept per node */

typedef struct query_view_node {
    db_node n;
    uint8_t grp;   /* the trace: index into query_view.r */
    bool start;    /* where the statement started (drawn highlighted) */
    uint32_t track; /* export_perfetto.c: the output thread track */
    uint64_t wait_from; /* export_perfetto.c: where the slices of its wait may start on its track */
    /* fold.c (DOT, SVG): 1 + the index of the node its fold is drawn as, 0
     * none; the fold's own node: the repetitions it stands for, of how many
     * nodes each, and when the last of them ended */
    uint32_t fold_rep, fold_n;
    uint8_t fold_len;
    uint64_t fold_end;
} query_view_node;

typedef struct query_view_edge {
    db_edge e;
    uint8_t grp;
} query_view_edge;

typedef struct query_view {
    db_reader *r[QUERY_VIEW_GROUPS];
    char role[QUERY_VIEW_GROUPS][32]; /* "anomaly", "normal"; shown when there are two */
    int ngrp;
    query_view_node *nodes;
    size_t len, cap;
    query_view_edge *edges;
    size_t elen, ecap;
    bool oom, sorted;
    const struct query_cp *cp; /* the critical path of group cp_grp's node, drawn as a track of its own; NULL */
    int cp_grp;
} query_view;

bool query_view_format(query_format f); /* dot, svg or perfetto */
void query_view_init(query_view *v);
/* The group of reader r (added, with its role, if new); -1 if full. */
int query_view_group(query_view *v, db_reader *r, const char *role);
void query_view_add_node(query_view *v, int grp, const db_node *n, bool start);
void query_view_add_edge(query_view *v, int grp, const db_edge *e);
void query_view_add_path(query_view *v, int grp, const query_path *p);
/* fold.c: fold the view's long chains of one repeated pattern (for DOT
 * and SVG); 0, -1 out of memory */
int query_view_fold(query_view *v); /* items[0] is a start */
/* Prints the view in s->format (DOT, SVG through `dot`, Perfetto JSON). */
int query_view_print(query_session *s, query_view *v, query_error *err);
void query_view_free(query_view *v);
/* for export_perfetto.c: sorts and merges duplicates; a node by group and id */
void query_view_sort(query_view *v);
const query_view_node *query_view_find(const query_view *v, int grp, uint32_t id);
/* The node's telling events (its normal form, most telling first), as
 * texts such as "wait:futex" or "wakeup:worker"; returns how many. */
int query_view_telling(const query_view *v, const query_view_node *n, char (*out)[64], int most);
int query_perfetto_print(FILE *f, query_view *v, db_error *de);
/* diagnose, compare path: the anomaly path (reader ra) and the normal one
 * (reader rn, NULL if none), drawn together; same: rn reads ra's trace
 * (the caller says: rn may be of another archive, whose trace ids say
 * nothing of it) */
int query_view_paths(query_session *s, db_reader *ra, const query_path *anomaly, db_reader *rn,
                     const query_path *normal, bool same, const struct query_cp *cp, query_error *err);
/* Graphviz's dot on PATH: 0, or -1 with err saying how to get it. */
int query_need_dot(query_error *err);

/* ---- stats.c: a part of the anomaly against its distribution over many
 * normal steps.  Values are ns; nothing allocates. ---- */

/* Fewer normal steps than this are too few to judge a distribution by:
 * callers fall back to the single-baseline comparison. */
#define QUERY_STATS_MIN_STEPS 5
/* The smallest scale a z-score is measured in, whatever floor is asked
 * for: 1 us, below which a difference is scheduling noise. */
#define QUERY_STATS_FLOOR_NS 1000

/* Percentiles by linear interpolation between order statistics (numpy's
 * default): the p-th of sorted v[0..n) is at index h = (n - 1) * p / 100,
 * v[floor(h)] + (h - floor(h)) * (v[floor(h) + 1] - v[floor(h)]).  The
 * median is the 50th (the mean of the middle two when n is even); mad is
 * the median of |v[i] - median|.  n = 0: every field 0. */
typedef struct query_stats_summary {
    size_t n;       /* normal steps */
    size_t nonzero; /* of them, the ones with a nonzero value (0: a part no normal step has) */
    double median, p5, p95, mad;
} query_stats_summary;

/* How far a value lies outside a summary. */
typedef struct query_stats_effect {
    double z;        /* robust z-score: (x - median) / scale */
    double scale;    /* ns: query_stats_scale's, what z is measured in */
    uint64_t excess; /* ns above p95 (truncated), 0 at or below it */
    bool outside;    /* above p95 by more than the floor (floor_ns, at least QUERY_STATS_FLOOR_NS) */
} query_stats_effect;

/* v[0..n) summarized; v is sorted in place (NULL allowed when n is 0). */
query_stats_summary query_stats_summarize(uint64_t *v, size_t n);
/* nsteps < QUERY_STATS_MIN_STEPS */
bool query_stats_too_few(size_t nsteps);
/* The floor callers pass for a period: 1% of it (the share below which
 * diagnose ranks no suspect by time), at least QUERY_STATS_FLOOR_NS. */
uint64_t query_stats_floor_of_period(uint64_t period_ns);
/* max(1.4826 * mad, (p95 - p5) / 3.29, floor_ns, QUERY_STATS_FLOOR_NS):
 * never 0, so z is finite when every normal step has the same value. */
double query_stats_scale(const query_stats_summary *s, uint64_t floor_ns);
double query_stats_z(const query_stats_summary *s, uint64_t x, uint64_t floor_ns);
query_stats_effect query_stats_effect_of(const query_stats_summary *s, uint64_t x, uint64_t floor_ns);
/* nkeys parts (e.g. per (thread, state)): anomaly[k] is part k's value in
 * the anomaly, normal[k * nsteps + j] its value in normal step j (0 where
 * step j has no such part); each key's row of normal is sorted in place.
 * Fills sum[k] and eff[k] per key, and order[0..nkeys) with the keys most
 * outside first: by z (a part every normal step has at the anomaly's size
 * ranks low however large; one no normal step has is measured against the
 * floor alone and so ranks first unless another lies further outside its
 * own distribution); of equal z the part fewer normal steps have first,
 * then the larger excess, the larger value, the lower key. */
void query_stats_rank(const uint64_t *anomaly, uint64_t *normal, size_t nkeys, size_t nsteps, uint64_t floor_ns,
                      query_stats_summary *sum, query_stats_effect *eff, size_t *order);

/* ---- suspects.c: path comparison (paper/004 §Path Comparison) ---- */
typedef struct query_period {
    uint64_t begin, end; /* the anomalous period: the victim's wait */
} query_period;

typedef struct query_suspect {
    db_node node;        /* its node on the anomaly path, or the evidence node */
    double score;
    bool on_path;        /* on the anomaly's own causal chain */
    int depth;
    uint64_t overlap;    /* ns blocked during the anomalous period */
    bool attributed;     /* from the critical path (attrib.c): ns and state */
    uint64_t ns;         /* ns of the anomalous period it took */
    int state;           /* QUERY_CP_* it took them in */
    bool finding;        /* the path comparison names why (its own timer, a
                            normal node it never ran), not only a blocked overlap */
    char reason[320];
    char evidence[480];
    /* against many normal steps (normals.c): its (thread, state)'s
     * distribution over them and how far outside it the anomaly lies */
    bool have_normal;
    query_stats_summary normal;
    query_stats_effect effect;
} query_suspect;

query_period query_period_of(const db_node *n);
/* The threads of both paths (but the victim's), ranked; *out malloc'd. */
int query_compare_paths(db_reader *ra, db_reader *rn, const query_path *normal, const query_path *anomaly,
                        const query_period *per, const db_node *victim, query_suspect **out, size_t *len,
                        db_error *de);
void query_print_comparison(query_session *s, const query_period *per, const db_node *victim,
                            const query_suspect *sus, size_t n, const query_path *normal, const query_path *anomaly);
void query_json_suspects(FILE *f, const query_suspect *s, size_t n);
void query_json_paths(FILE *f, const query_path *normal, const query_path *anomaly);
void query_text_suspects(FILE *f, const query_suspect *s, size_t n, size_t most);

/* ---- critpath.c: where a node's period went (its critical path) ---- */
enum {
    QUERY_CP_RUNNING,   /* the thread was on a cpu */
    QUERY_CP_RUNNABLE,  /* woken or preempted, off the cpu (to the preempter when known) */
    QUERY_CP_BLOCKED,   /* waiting, with no cause the graph knows */
    QUERY_CP_TIMER,     /* a timer ran out (charged to who armed it) */
    QUERY_CP_IO,        /* a device's completion (interrupt, block / net softirq) */
    QUERY_CP_INTERRUPT, /* another interrupt or softirq ended the wait */
    QUERY_CP__COUNT
};

typedef struct query_cp_part {
    uint32_t tid, node; /* node 0: the thread had no node there */
    uint8_t kind;       /* the node's kind */
    uint8_t state;      /* QUERY_CP_* */
    uint8_t device;     /* io: QUERY_DEV_* the thread waited on */
    char thread[DB_NAME_MAX];
    uint64_t begin, ns;
    /* running on another thread's request: the thread that woke the node
     * (a client of a server loop, a producer of a pool's job); 0 none */
    uint32_t for_tid, for_node;
    char for_thread[DB_NAME_MAX];
    /* runnable, charged to the thread that held the cpu: the thread it
     * held off (0: the part's own thread was runnable) */
    uint32_t held_tid;
    char held_thread[DB_NAME_MAX];
    /* io, writes a cache flush waited for (flush.c): the thread whose
     * flush it was (0 none), and the bytes the part's thread wrote */
    uint32_t flush_tid;
    char flush_thread[DB_NAME_MAX];
    uint64_t flush_bytes;
} query_cp_part;

typedef struct query_cp {
    db_node node;       /* whose period */
    uint64_t begin, end; /* the period: the wait before the node, and the node */
    /* the wait before the node: ended by a thread (waker), or by a timer
     * the node's own thread armed (timeout); expect_tid: follow that wait
     * along this thread's timeline instead of the timer (a missed wakeup:
     * the thread that woke it in the normal run), 0 none */
    char waker[DB_NAME_MAX];
    bool timeout;
    uint32_t expect_tid;
    char expected[DB_NAME_MAX];
    query_cp_part *parts; /* in time order, adding up to end - begin */
    size_t n, cap;
} query_cp;

/* What a wait ended by an interrupt or softirq was for */
enum {
    QUERY_DEV_NONE,    /* not a device: the handler's own run */
    QUERY_DEV_DISK,    /* a block request, the block softirq, a storage controller */
    QUERY_DEV_NETWORK, /* the network softirqs, a network card */
    QUERY_DEV_DEVICE,  /* another device's interrupt */
    QUERY_DEV_TIMER,   /* the timer softirqs: a timeout the thread armed */
};
int query_cp_device_of(const db_node *n);
/* cpuholder.c: the thread node that had the cpu of k's first event most of
 * [a, b] (half of it at least), by that cpu's events: 1, 0 none, -1 */
int query_cpu_holder(db_reader *r, const db_node *k, uint64_t a, uint64_t b, db_node *out, db_error *de);
/* flush.c: when io edge `io` is a request with a cache flush, the threads
 * that queued writes to its device since the device's previous flush, by
 * bytes: 1 (out filled), 0 not a flush or no writes, -1 */
#define QUERY_FLUSH_WRITERS 8
typedef struct query_flush {
    size_t n;
    uint64_t total;
    struct query_flush_writer {
        uint32_t tid, node; /* node: the one that queued its last write */
        uint64_t bytes;
    } w[QUERY_FLUSH_WRITERS];
} query_flush;
int query_flush_writers(db_reader *r, const db_edge *io, query_flush *out, db_error *de);
int query_cp_io_device(const query_cp *cp); /* attrib.c: where most of its io went */
const char *query_cp_device_name(int dev); /* "disk", "network", "device"; "" none */
int query_critical_path(db_reader *r, const db_node *n, query_cp *cp, db_error *de);
/* The same, the node's own wait followed along thread expect_tid's timeline
 * where the trace says a timer of its own ended it (paper/004 §Path
 * Comparison: what the normal path's waker did instead) */
int query_critical_path_expect(db_reader *r, const db_node *n, uint32_t expect_tid, const char *expected, query_cp *cp,
                               db_error *de);
/* Thread n->tid's timeline over [begin, end] (a stretch of its life; cp->node
 * is n, for reference), and the bounds of its life (1; 0 it has no node) */
int query_critical_path_span(db_reader *r, const db_node *n, uint64_t begin, uint64_t end, query_cp *cp, db_error *de);
/* created: the trace shows its creation (a short-lived thread's life);
 * created_only: begin and end only when it does */
int query_thread_life(db_reader *r, uint32_t tid, bool created_only, uint64_t *begin, uint64_t *end, bool *created,
                      db_error *de);
void query_cp_free(query_cp *cp);
/* ns per state, and per device of the io */
typedef struct query_cp_totals {
    uint64_t state[QUERY_CP__COUNT];
    uint64_t dev[QUERY_DEV_TIMER + 1];
} query_cp_totals;
query_cp_totals query_cp_sum(const query_cp *cp);
/* exec_critpath.c: "totals":{...},"devices":{...}; " running 3.1ms 1.0%, ..." and a newline */
void query_json_cp_totals(FILE *f, const query_cp_totals *t);
void query_text_cp_totals(FILE *f, const query_cp *cp);
/* lives.c: thread a's life in ra beside thread tid's in rn, when both
 * traces show their creation (*lives then, la and ln filled; 0 or -1) */
int query_compare_lives(db_reader *ra, const db_node *a, db_reader *rn, uint32_t tid, query_cp *la, query_cp *ln,
                        bool *lives, db_error *de);
/* lives.c: the thread (by name) that woke thread tid most often in its
 * nodes from time `from` on (a few hundred): 1, 0 none, -1 */
int query_usual_waker(db_reader *r, uint32_t tid, uint64_t from, char out[DB_NAME_MAX], db_error *de);
/* "Its life (from its creation) took ...", the normal run's, the difference */
void query_text_lives(FILE *f, const query_cp *la, const query_cp *ln);
/* When the node's thread got the cpu its first event ran on (its begin in
 * an archive without it, or a trace without scheduler events) */
static inline uint64_t query_node_oncpu(const db_node *k)
{
    return k->oncpu && k->oncpu <= k->begin ? k->oncpu : k->begin;
}
const char *query_cp_state_name(int state);
/* The wait before node k as its critical path splits it: blocked from
 * `from` to `woke` (what ended it: `by`, when `known`), then runnable to
 * `on`, its switch-in.  1, 0 (no wait), -1. */
typedef struct query_wait {
    uint64_t from, woke, on;
    db_edge by;
    bool known;
} query_wait;
int query_node_wait(db_reader *r, const db_node *k, query_wait *out, db_error *de);
/* cpsvg.c: the period as a timeline, a row per thread (--format svg) */
void query_cp_svg(FILE *f, const query_cp *cp);
int query_exec_critical(query_session *s, const query_stmt *st, query_error *err); /* exec_critpath.c */
int query_exec_compare_groups(query_session *s, const query_stmt *st, query_error *err); /* exec_groups.c */
int query_exec_check_fix_groups(query_session *s, const query_stmt *st, query_error *err); /* exec_groups.c */
/* exec_critpath.c: the first thread the trace names NAME: 1 (tid), 0 none, -1 */
int query_thread_tid(db_reader *r, const char *name, uint32_t *tid, db_error *de);
/* ns a node's thread was not running: the wait before it, and preempted */
uint64_t query_not_running(const db_node *n);
/* attrib.c: the threads of an anomaly's critical path a by the time they
 * took of it, less what they took of the normal one's (NULL: none);
 * *out malloc'd.  And the anomaly's kind by where its period went:
 * "busy", "runnable", "io" or "wait". */
/* spin.c: the thread a spinner of a's path waited on, by time alone (a
 * long run of another thread that ended just before the spinner went on),
 * put before the spinner in sus (at most `most` kept): 0 (found or not), -1 */
int query_spin_suspect(db_reader *r, const query_cp *a, const query_cp *normal, query_suspect **sus, size_t *n,
                       size_t most, db_error *de);
int query_attrib_suspects(db_reader *r, const query_cp *a, const query_cp *normal, const query_path *anomaly,
                          query_suspect **out, size_t *len, db_error *de);
const char *query_cp_kind(const query_cp *cp);
void query_json_cp_parts(FILE *f, const query_cp *cp); /* exec_critpath.c: [{part}...] */
/* The node of thread `name` that was not running the longest (1, 0, -1). */
int query_worst_step(db_reader *r, uint32_t trace_id, const char *name, db_node *out, db_error *de);

/* ---- normals.c: the anomaly's step against every normal step like it
 * in a list of traces ---- */
#define QUERY_NORMALS_MAX 256  /* normal steps read, the most similar first */
#define QUERY_NORMALS_NAMES 8
typedef struct query_normal_key {
    char thread[DB_NAME_MAX];
    int state;         /* QUERY_CP_*, or -1: the thread's whole share */
    uint64_t anomaly;  /* its ns on the anomaly's critical path */
    query_stats_summary sum;
    query_stats_effect eff;
} query_normal_key;
typedef struct query_normals {
    size_t steps, traces; /* normal steps found, in how many traces */
    query_normal_key *keys; /* malloc'd, most outside first */
    size_t nkeys;
    /* paths: threads on the anomaly's critical path (1% of its period)
     * on no normal one; on every normal one and not on the anomaly's */
    char fresh[QUERY_NORMALS_NAMES][DB_NAME_MAX], missing[QUERY_NORMALS_NAMES][DB_NAME_MAX];
    size_t nfresh, nmissing;
    bool timeout;      /* the anomaly's wait ended by its own timer */
    size_t timeouts;   /* normal steps whose wait did */
    char waker[DB_NAME_MAX]; /* the anomaly's waker ("" none) */
    size_t waker_seen; /* normal steps woken by the same thread */
    query_pool sample; /* the steps, best first */
} query_normals;
/* m: the anomaly's candidates in src (query_find_matches_in), handed out;
 * given (not NULL): judged against those steps instead (a fleet's) */
int query_normals_collect(db_reader *ra, const db_node *a, const query_cp *cpa, const query_source *src,
                          query_cands *m, const query_pool *given, query_normals *out, db_error *de);
/* pool.c: which steps of p a diagnosis judges against, best first:
 * out[0 .. n) (out: room for p->nsteps), SIZE_MAX out of memory */
size_t query_pool_choose(const query_pool *p, size_t *out);
/* [{"trace":..,"node":..,"score":..,"contained":..,"period":..,"timeout":..,
 *   "waker":..,"parts":[{"thread":..,"state":..,"ns":..}]}] of the steps
 * which[0 .. n) (which NULL: the first n) */
void query_pool_json(FILE *f, const query_pool *p, const size_t *which, size_t n);
const query_normal_key *query_normals_key(const query_normals *n, const char *thread, int state);
void query_normals_free(query_normals *n);
/* each attributed suspect's distribution and effect (5 steps at least);
 * sort: by the effect, the annotated first */
void query_normals_rank(const query_normals *n, query_suspect *sus, size_t nsus, uint64_t period, bool sort);
/* ,"normal_steps":N,"normal_traces":N,"outside_paths":{...}|null (n NULL: none) */
void query_normals_json(FILE *f, const query_normals *n);
void query_normals_text(FILE *f, const query_normals *n);

/* ---- an array that grows: room for `need` elements of `elem` bytes in
 * *arr, whose capacity is *cap elements (doubled, at least 64); false
 * when out of memory, *arr as it was ---- */
static inline bool query_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

/* ---- exec_group.c: find ... group by / compute ---- */
typedef struct query_group query_group;
int query_group_check(const query_stmt *st, query_session *s, query_error *err);
query_group *query_group_new(const query_stmt *st); /* NULL: out of memory */
int query_group_add(query_group *g, const query_row *row); /* -1: out of memory */
int query_group_print(query_group *g, query_session *s, query_error *err);
void query_group_free(query_group *g);

/* ---- FNV-1a over bytes, continued from h (QUERY_FNV_SEED to start) ---- */
#define QUERY_FNV_SEED 14695981039346656037u
static inline uint64_t query_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211u;
    return h;
}

/* ---- errors ---- */
int query_fail(query_error *err, const query_pos *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- statements (exec.c, exec_find.c, exec_slice.c) ---- */
db_reader *query_open_trace(query_session *s, const query_name *in, query_error *err);
int query_exec_find(query_session *s, const query_stmt *st, query_error *err);
int query_exec_slice(query_session *s, const query_stmt *st, query_error *err);
int query_exec_match(query_session *s, const query_stmt *st, query_error *err);      /* exec_compare.c */
int query_exec_compare(query_session *s, const query_stmt *st, query_error *err);
int query_exec_diagnose(query_session *s, const query_stmt *st, query_error *err);   /* exec_diagnose.c */
int query_exec_check_fix(query_session *s, const query_stmt *st, query_error *err);
int query_exec_transaction(query_session *s, const query_stmt *st, query_error *err); /* exec_slice.c */
int query_exec_rule_stmt(query_session *s, const query_stmt *st, query_error *err); /* exec_rules.c */
int query_exec_trace_stmt(query_session *s, const query_stmt *st, query_error *err); /* exec_traces.c */

#endif
