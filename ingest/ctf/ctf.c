/* ingest/ctf/ctf.c -- CTF traces (LTTng's kernel and userspace tracers; perf
 * data convert --to-ctf), read with libbabeltrace2.
 *
 * A trace is a folder: a `metadata` file and stream files (one per CPU
 * for LTTng, rotated ones as mychan_<cpu>_<n>).  An LTTng session folder
 * holds several (kernel/, ust/uid/1000/64-bit/: ctf_find.c finds them),
 * read as one, as babeltrace2 reads it.  Every CTF detail -- packetized
 * or text metadata, either byte order, rotated streams, timestamp wraps,
 * clock offsets -- is babeltrace2's: the graph is a source.ctf.fs for
 * each trace (2.0's source.ctf.fs takes several folders only when they
 * are parts of one trace, with one UUID), one filter.utils.muxer (every
 * stream of every trace merged in time order) and a simple sink of ours,
 * which turns each event message into plain values (ctf_int.h) for the
 * mapping (ctf_map.c), with the timestamp in ns from the clock's origin,
 * and says which events are LTTng-UST's (their trace's env domain).
 *
 * LTTng's events do not say their task: the task on a CPU is known from
 * the first sched_switch there on.  So the reader first reads the trace's
 * start without mapping it (the prescan), until every stream's CPU has
 * had its first switch (or 1M events), whose prev is the task that ran
 * there from the start.  It keeps the messages it read meanwhile, up to
 * CTF_HOLD_MAX, and maps them once the tasks are known, then the rest as
 * they come: one graph.  A longer prescan (perf's single stream, a CPU
 * that never switches) lets them go, and a second graph reads the whole
 * trace again.  (Two graphs every time cost even a short prescan a
 * graph's start and the metadata parsed twice: docs/PERFORMANCE.md.)
 *
 * Memory: babeltrace2 reads a packet per stream at a time; this reader
 * keeps one array of fields, reused for every event. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf_int.h"
#include "ctflib_int.h"

/* the prescan's bound: the start of a trace, not the whole */
#define CTF_PRESCAN_MAX (1u << 20)
/* the messages a prescan keeps, to map them without a second graph:
 * held messages keep their events out of babeltrace2's pools */
#define CTF_HOLD_MAX 8192u

typedef struct ctf_seed {
    bool seen, have;
    uint32_t tid;
    char comm[17];
} ctf_seed;

/* A structure class's member names, read once per class (two library
 * calls per field and event otherwise).  Direct-mapped by class. */
#define CTF_SCACHE 64
typedef struct ctf_snames {
    const bt_field_class *sc;
    uint64_t n;
    const char **names; /* n of them, the library's strings */
} ctf_snames;

/* A trace of the folder, by its babeltrace2 object (a handful: one per
 * trace folder, the same for all its streams). */
typedef struct ctf_tinfo {
    const bt_trace *t;
    bool ust;  /* LTTng-UST's: env domain "ust" */
    bool meta; /* its environment is in the labels */
} ctf_tinfo;

typedef struct ctf_reader {
    ctf_snames snames[CTF_SCACHE];
    ingest_ctflib lib;
    const char *dir;      /* as given: messages name it */
    ctf_traces traces;    /* the trace folders in it (dir itself, or a session's) */
    ctf_tinfo *tinfo;     /* the traces seen in the current graph */
    size_t ntinfo, tinfocap;
    ctf_map *map; /* NULL in the prescan */
    ingest_stats *st;
    const ingest_sink *sink;
    const ingest_opts *opts;
    char *err;
    size_t errlen;
    int rc;    /* -1: the mapping failed, err says why */
    bool stop; /* the prescan has seen enough */
    const bt_message **held; /* the prescan's messages, to be mapped */
    size_t nheld, heldcap;
    bool overflow; /* more than CTF_HOLD_MAX: a second graph maps the trace */
    uint64_t nev;
    uint64_t nports;      /* the sources' streams */
    uint64_t ust_streams; /* of them, LTTng-UST's (no task switches: not waited for) */
    ctf_seed *seeds; /* the prescan's: by CPU */
    size_t nseeds, seen, seeded;
    ctf_field *f; /* the current event's context fields, then its payload */
    size_t fcap, fn;
    /* the last event's packet: its cpu_id, its trace's domain, its clock */
    const bt_packet *packet;
    int64_t packet_cpu;
    bool packet_ust, packet_clock;
    char rec_kernel[128], rec_ust[128]; /* the recorders, LTTng-UST's apart */
} ctf_reader;

/* ---- babeltrace2's errors ---- */

/* A cause's message without babeltrace2's debugging details (": key=value,
 * ..." after the sentence). */
static size_t cause_len(const char *m)
{
    for (const char *p = strstr(m, ": "); p; p = strstr(p + 2, ": ")) {
        const char *w = p + 2;
        while (*w && *w != ' ' && *w != '=')
            w++;
        if (*w == '=')
            return (size_t)(p - m);
    }
    return strlen(m);
}

/* What babeltrace2 said: the root cause (its first) and the next one, as
 * one line; *file: the first file a cause names (`PATH`), where the
 * trouble is.  file may be left empty. */
static void bt_message_text(ctf_reader *rd, char *out, size_t cap, char *file, size_t fcap)
{
    const bt_error *e = rd->lib.bt_current_thread_take_error();
    out[0] = '\0';
    file[0] = '\0';
    if (!e) {
        snprintf(out, cap, "babeltrace2 gave no reason");
        return;
    }
    uint64_t n = rd->lib.bt_error_get_cause_count(e);
    size_t len = 0;
    int kept = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *m = rd->lib.bt_error_cause_get_message(rd->lib.bt_error_borrow_cause_by_index(e, i));
        if (!m)
            continue;
        const char *q = strchr(m, '`'), *qe = q ? strchr(q + 1, '`') : NULL;
        struct stat sb;
        if (qe && !file[0] && (size_t)(qe - q) < fcap) {
            snprintf(file, fcap, "%.*s", (int)(qe - q - 1), q + 1);
            if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) /* the trace's folder */
                file[0] = '\0';
        }
        /* the graph's own wrapping of a component's failure says nothing */
        if (kept == 2 || strncmp(m, "Component initialization method failed", 38) == 0 ||
            strncmp(m, "Component's", 11) == 0 || len + 4 >= cap)
            continue;
        int w = snprintf(out + len, cap - len, "%s%.*s", len ? "; " : "", (int)cause_len(m), m);
        if (w > 0)
            len += (size_t)w < cap - len ? (size_t)w : cap - len - 1;
        kept++;
    }
    rd->lib.bt_error_release(e);
    /* one line: the messages may hold newlines */
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
}

/* ---- fields ---- */

static int field_room(ctf_reader *rd, size_t more)
{
    if (rd->fn + more <= rd->fcap)
        return 0;
    size_t cap = rd->fcap ? rd->fcap : 64;
    while (rd->fn + more > cap)
        cap *= 2;
    ctf_field *f = realloc(rd->f, cap * sizeof *f);
    if (!f)
        return -1;
    rd->f = f;
    rd->fcap = cap;
    return 0;
}

/* bt_field_class_type_is() is inline (it would link the library) */
static bool type_is(bt_field_class_type t, bt_field_class_type want) { return (t & want) == want; }

/* The members of a structure field (integers and strings; others are
 * kept as CTF_F_OTHER) appended to rd->f. */
static int add_members(ctf_reader *rd, const bt_field *s)
{
    const ingest_ctflib *L = &rd->lib;
    if (!s)
        return 0;
    const bt_field_class *sc = L->bt_field_borrow_class_const(s);
    ctf_snames *sn = &rd->snames[((uintptr_t)sc >> 4) % CTF_SCACHE];
    if (sn->sc != sc) {
        uint64_t n = L->bt_field_class_structure_get_member_count(sc);
        const char **names = realloc(sn->names, (n ? n : 1) * sizeof *names);
        if (!names)
            return -1;
        for (uint64_t i = 0; i < n; i++)
            names[i] = L->bt_field_class_structure_member_get_name(
                L->bt_field_class_structure_borrow_member_by_index_const(sc, i));
        sn->sc = sc;
        sn->n = n;
        sn->names = names;
    }
    uint64_t n = sn->n;
    if (field_room(rd, n) < 0)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        const bt_field *x = L->bt_field_structure_borrow_member_field_by_index_const(s, i);
        ctf_field *f = &rd->f[rd->fn++];
        memset(f, 0, sizeof *f);
        f->name = sn->names[i];
        bt_field_class_type t = L->bt_field_get_class_type(x);
        if (type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
            f->type = CTF_F_UINT;
            f->u = L->bt_field_integer_unsigned_get_value(x);
        } else if (type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
            f->type = CTF_F_INT;
            f->i = L->bt_field_integer_signed_get_value(x);
        } else if (type_is(t, BT_FIELD_CLASS_TYPE_STRING)) {
            f->type = CTF_F_STR;
            f->s = L->bt_field_string_get_value(x);
            f->slen = L->bt_field_string_get_length(x);
        }
        if (f->type == CTF_F_UINT || f->type == CTF_F_INT)
            f->hex = L->bt_field_class_integer_get_preferred_display_base(L->bt_field_borrow_class_const(x)) ==
                     BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL;
    }
    return 0;
}

/* ---- the traces' environments: the recorder and machine, the domain ---- */

static const char *env_str(ctf_reader *rd, const bt_trace *t, const char *key, char *num, size_t cap)
{
    const ingest_ctflib *L = &rd->lib;
    const bt_value *v = L->bt_trace_borrow_environment_entry_value_by_name_const(t, key);
    if (!v)
        return "";
    switch (L->bt_value_get_type(v)) {
    case BT_VALUE_TYPE_STRING:
        return L->bt_value_string_get(v);
    case BT_VALUE_TYPE_SIGNED_INTEGER:
        snprintf(num, cap, "%lld", (long long)L->bt_value_integer_signed_get(v));
        return num;
    case BT_VALUE_TYPE_UNSIGNED_INTEGER:
        snprintf(num, cap, "%llu", (unsigned long long)L->bt_value_integer_unsigned_get(v));
        return num;
    default:
        return "";
    }
}

/* The entry of trace t, added at its first sight: its index, or -1 when
 * out of memory. */
static long tinfo_of(ctf_reader *rd, const bt_trace *t)
{
    for (size_t i = 0; i < rd->ntinfo; i++)
        if (rd->tinfo[i].t == t)
            return (long)i;
    if (rd->ntinfo == rd->tinfocap) {
        size_t cap = rd->tinfocap ? 2 * rd->tinfocap : 4;
        ctf_tinfo *ti = realloc(rd->tinfo, cap * sizeof *ti);
        if (!ti)
            return -1;
        rd->tinfo = ti;
        rd->tinfocap = cap;
    }
    char a[32], b[32];
    ctf_tinfo *ti = &rd->tinfo[rd->ntinfo];
    memset(ti, 0, sizeof *ti);
    ti->t = t;
    ti->ust = strcmp(env_str(rd, t, "domain", a, sizeof a), "ust") == 0 ||
              strcmp(env_str(rd, t, "tracer_name", b, sizeof b), "lttng-ust") == 0;
    return (long)rd->ntinfo++;
}

/* s appended to list (", " between), unless it is empty or list has it
 * already. */
static void add_recorder(char *list, size_t cap, const char *s)
{
    size_t n = strlen(s), len = strlen(list);
    if (n == 0)
        return;
    for (const char *p = strstr(list, s); p; p = strstr(p + 1, s))
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ','))
            return;
    snprintf(list + len, cap - len, "%s%s", len ? ", " : "", s);
}

/* LTTng: tracer_name lttng-modules (lttng-ust), tracer_major.minor.patchlevel,
 * hostname, kernel_release; perf: tracer_name perf, host, release,
 * machine.  A session's traces give one recorder each ("lttng-modules
 * 2.11.0, lttng-ust 2.10": the kernel's first), and the first host,
 * kernel and machine any of them says. */
static void read_meta(ctf_reader *rd, const bt_trace *t, bool ust)
{
    ingest_meta *m = &rd->st->meta;
    char a[32], b[32], c[32], d[32], rec[sizeof m->recorder];
    const char *tracer = env_str(rd, t, "tracer_name", a, sizeof a);
    const char *maj = env_str(rd, t, "tracer_major", b, sizeof b);
    const char *min = env_str(rd, t, "tracer_minor", c, sizeof c);
    const char *pat = env_str(rd, t, "tracer_patchlevel", d, sizeof d);
    if (*maj)
        snprintf(rec, sizeof rec, "%s %s%s%s%s%s", *tracer ? tracer : "ctf", maj, *min ? "." : "", min,
                 *pat ? "." : "", pat);
    else
        snprintf(rec, sizeof rec, "%s", *tracer ? tracer : "ctf");
    add_recorder(ust ? rd->rec_ust : rd->rec_kernel, sizeof rd->rec_kernel, rec);
    m->recorder[0] = '\0';
    add_recorder(m->recorder, sizeof m->recorder, rd->rec_kernel);
    add_recorder(m->recorder, sizeof m->recorder, rd->rec_ust);
    const char *host = env_str(rd, t, "hostname", a, sizeof a);
    if (!*host)
        host = env_str(rd, t, "host", a, sizeof a);
    if (!m->host[0])
        snprintf(m->host, sizeof m->host, "%s", host);
    const char *kernel = env_str(rd, t, "kernel_release", b, sizeof b);
    if (!*kernel)
        kernel = env_str(rd, t, "release", b, sizeof b);
    if (!m->kernel[0])
        snprintf(m->kernel, sizeof m->kernel, "%s", kernel);
    if (!m->arch[0])
        snprintf(m->arch, sizeof m->arch, "%s", env_str(rd, t, "machine", c, sizeof c));
    if (rd->map && m->arch[0])
        ingest_ctf_map_set_arch(rd->map, base_arch_find(m->arch));
}

/* What an event's packet says, looked up once per packet: its context's
 * cpu_id (-1: none), whether its trace is LTTng-UST's, whether its stream
 * has a clock.  A packet's stream is fixed (babeltrace2 recycles a packet
 * object only within its stream's pool).  -1: out of memory. */
static int packet_info(ctf_reader *rd, const bt_event *ev)
{
    const ingest_ctflib *L = &rd->lib;
    const bt_packet *p = L->bt_event_borrow_packet_const(ev);
    if (p == rd->packet)
        return 0;
    rd->packet = p;
    rd->packet_cpu = -1;
    rd->packet_ust = false;
    rd->packet_clock = true;
    if (!p)
        return 0;
    const bt_stream *s = L->bt_packet_borrow_stream_const(p);
    long ti = tinfo_of(rd, L->bt_stream_borrow_trace_const(s));
    if (ti < 0) {
        rd->packet = NULL;
        return -1;
    }
    rd->packet_ust = rd->tinfo[ti].ust;
    rd->packet_clock = L->bt_stream_class_borrow_default_clock_class_const(L->bt_stream_borrow_class_const(s)) != NULL;
    const bt_field *c = L->bt_packet_borrow_context_field_const(p);
    if (!c)
        return 0;
    const bt_field_class *sc = L->bt_field_borrow_class_const(c);
    uint64_t n = L->bt_field_class_structure_get_member_count(sc);
    for (uint64_t i = 0; i < n; i++) {
        const char *name = L->bt_field_class_structure_member_get_name(
            L->bt_field_class_structure_borrow_member_by_index_const(sc, i));
        const bt_field *x = L->bt_field_structure_borrow_member_field_by_index_const(c, i);
        if (strcmp(name, "cpu_id") == 0 &&
            type_is(L->bt_field_get_class_type(x), BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
            rd->packet_cpu = (int64_t)L->bt_field_integer_unsigned_get_value(x);
            break;
        }
    }
    return 0;
}

/* ---- messages ---- */

static int prescan_event(ctf_reader *rd, const ctf_event_in *e)
{
    uint32_t cpu, tid;
    const char *comm;
    size_t n;
    int64_t c = e->cpu;
    if (e->ust) /* userspace: says nothing of the task a CPU runs */
        return 0;
    bool prev = ingest_ctf_prev_task(e, &cpu, &tid, &comm, &n);
    if (prev)
        c = cpu;
    if (c < 0 || c >= 65536)
        return 0;
    if ((size_t)c >= rd->nseeds) {
        size_t cap = rd->nseeds ? rd->nseeds : 8;
        while (cap <= (size_t)c)
            cap *= 2;
        ctf_seed *s = realloc(rd->seeds, cap * sizeof *s);
        if (!s)
            return -1;
        memset(s + rd->nseeds, 0, (cap - rd->nseeds) * sizeof *s);
        rd->seeds = s;
        rd->nseeds = cap;
    }
    ctf_seed *s = &rd->seeds[c];
    if (!s->seen)
        s->seen = true, rd->seen++;
    if (prev && !s->have) {
        s->have = true;
        s->tid = tid;
        snprintf(s->comm, sizeof s->comm, "%.*s", (int)(n < 16 ? n : 16), comm);
        rd->seeded++;
    }
    /* perf's one stream holds every CPU: which ones is not known before */
    bool perf = strchr(e->name, ':') != NULL;
    if ((rd->seeded == rd->seen && rd->seeded >= rd->nports - rd->ust_streams &&
         (!perf || rd->nev >= CTF_PRESCAN_MAX / 8)) ||
        rd->nev >= CTF_PRESCAN_MAX)
        rd->stop = true;
    return 0;
}

static int on_event(ctf_reader *rd, const bt_message *msg)
{
    const ingest_ctflib *L = &rd->lib;
    const bt_event *ev = L->bt_message_event_borrow_event_const(msg);
    ctf_event_in e;
    memset(&e, 0, sizeof e);
    e.name = L->bt_event_class_get_name(L->bt_event_borrow_class_const(ev));
    if (!e.name)
        e.name = "(unnamed)";
    if (packet_info(rd, ev) < 0)
        goto oom;
    int64_t ns = 0;
    if (!rd->packet_clock) { /* babeltrace2 gives such a stream's events no time: no order, no graph */
        ingest_errf(rd->err, rd->errlen, "%s: event %llu (%s): its stream has no clock: its events have no time",
                    rd->dir, (unsigned long long)rd->nev + 1, e.name);
        return -1;
    }
    const bt_clock_snapshot *cs = L->bt_message_event_borrow_default_clock_snapshot_const(msg);
    if (L->bt_clock_snapshot_get_ns_from_origin(cs, &ns) != BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
        ns = 0;
    e.ts = ns < 0 ? 0 : (uint64_t)ns;
    e.cpu = rd->packet_cpu;
    e.ust = rd->packet_ust;
    rd->fn = 0;
    if (add_members(rd, L->bt_event_borrow_common_context_field_const(ev)) < 0 ||
        add_members(rd, L->bt_event_borrow_specific_context_field_const(ev)) < 0)
        goto oom;
    size_t nctx = rd->fn;
    if (add_members(rd, L->bt_event_borrow_payload_field_const(ev)) < 0)
        goto oom;
    e.ctx = rd->f;
    e.nctx = nctx;
    e.pay = rd->f + nctx;
    e.npay = rd->fn - nctx;
    rd->nev++;
    if (!rd->map)
        return prescan_event(rd, &e) < 0 ? -1 : 0;
    return ingest_ctf_map_event(rd->map, &e, rd->nev);
oom:
    ingest_errf(rd->err, rd->errlen, "%s: event %llu: out of memory", rd->dir, (unsigned long long)rd->nev + 1);
    return -1;
}

static int on_message(ctf_reader *rd, const bt_message *msg)
{
    const ingest_ctflib *L = &rd->lib;
    switch (L->bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT:
        return on_event(rd, msg);
    case BT_MESSAGE_TYPE_STREAM_BEGINNING: {
        const bt_trace *t = L->bt_stream_borrow_trace_const(L->bt_message_stream_beginning_borrow_stream_const(msg));
        long ti = tinfo_of(rd, t);
        if (ti < 0) {
            ingest_errf(rd->err, rd->errlen, "%s: out of memory", rd->dir);
            return -1;
        }
        if (!rd->map && rd->tinfo[ti].ust) /* the prescan does not wait for its CPU's switch */
            rd->ust_streams++;
        if (rd->map && !rd->tinfo[ti].meta) {
            rd->tinfo[ti].meta = true;
            read_meta(rd, t, rd->tinfo[ti].ust);
        }
        return 0;
    }
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        /* the tracer's buffers were full: events lost here, as ftrace's
         * [LOST n EVENTS] (a skipped line) */
        if (rd->map) {
            rd->st->skipped++;
            if (rd->sink->skip)
                rd->sink->skip(rd->sink->ctx);
        }
        return 0;
    default:
        return 0;
    }
}

static void release_held(ctf_reader *rd)
{
    for (size_t i = 0; i < rd->nheld; i++)
        rd->lib.bt_message_put_ref(rd->held[i]);
    rd->nheld = 0;
}

/* Keeps a prescan's message (its reference passes to rd->held): true; or
 * false past CTF_HOLD_MAX, when every held one goes (rd->overflow). */
static bool hold(ctf_reader *rd, const bt_message *msg)
{
    if (rd->overflow)
        return false;
    if (rd->nheld == rd->heldcap) {
        size_t cap = rd->heldcap ? 2 * rd->heldcap : 256;
        const bt_message **h = cap <= CTF_HOLD_MAX ? realloc(rd->held, cap * sizeof *h) : NULL;
        if (!h) { /* past the bound (or out of memory): the second graph's way */
            rd->overflow = true;
            release_held(rd);
            return false;
        }
        rd->held = h;
        rd->heldcap = cap;
    }
    rd->held[rd->nheld++] = msg;
    return true;
}

/* The mapping, given the tasks the prescan found each CPU running. */
static int begin_mapping(ctf_reader *rd)
{
    rd->map = ingest_ctf_map_new(rd->dir, rd->sink, rd->opts, rd->st, rd->err, rd->errlen);
    if (!rd->map)
        return -1;
    for (size_t i = 0; i < rd->nseeds; i++)
        if (rd->seeds[i].have &&
            ingest_ctf_map_seed(rd->map, (uint32_t)i, rd->seeds[i].tid, rd->seeds[i].comm,
                                strlen(rd->seeds[i].comm)) < 0) {
            ingest_errf(rd->err, rd->errlen, "%s: out of memory", rd->dir);
            return -1;
        }
    rd->stop = false;
    rd->nev = 0;
    rd->packet = NULL;
    return 0;
}

/* The prescan is over and kept every message it read: they are mapped
 * now, in order, as the second graph would have given them. */
static int start_mapping(ctf_reader *rd)
{
    int rc = begin_mapping(rd);
    for (size_t i = 0; rc == 0 && i < rd->nheld; i++)
        if (on_message(rd, rd->held[i]) < 0)
            rc = -1;
    release_held(rd);
    rd->packet = NULL; /* a packet let go of may come back at its address */
    return rc;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *data)
{
    ctf_reader *rd = data;
    const ingest_ctflib *L = &rd->lib;
    bt_message_array_const msgs;
    uint64_t n;
    switch (L->bt_message_iterator_next(it, &msgs, &n)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (rd->rc == 0 && !rd->stop && on_message(rd, msgs[i]) < 0)
            rd->rc = -1;
        if (rd->map || rd->rc || !hold(rd, msgs[i]))
            L->bt_message_put_ref(msgs[i]);
        if (rd->rc == 0 && rd->stop && !rd->map && !rd->overflow && start_mapping(rd) < 0)
            rd->rc = -1;
    }
    /* our own end: the mapping failed (rd->rc says why), or a prescan that
     * let its messages go has seen enough */
    return rd->rc || rd->stop ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END
                              : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- damaged metadata ---- */

/* The metadata parser's complaint (ctf_meta.c says why it is looked for
 * this way).  The parser's log level is not the component's: the ctf
 * plugin reads it from BABELTRACE_PLUGIN_CTF_METADATA_LOG_LEVEL when it
 * is loaded.  So, on this failure path only, with that set (unless the
 * user set it), the plugin is loaded anew (the reader let go of it, so
 * babeltrace2 unloaded it) and source.ctf.fs created once more, in a graph
 * of its own, at log level ERROR with fd 2 sent to a temporary file for
 * the few milliseconds it takes to fail.  A trace that reads well never
 * touches the environment or fd 2; what other threads wrote to stderr
 * meanwhile is passed on.  Should the plugin have stayed loaded (another
 * thread reading a CTF trace), only the complaints logged at the
 * component's level are seen, or none, and the message is babeltrace2's
 * error causes as before. */
static bool parser_complaint(ctf_reader *rd, const bt_value *params, unsigned *line, char *msg, size_t cap)
{
    static const char level_env[] = "BABELTRACE_PLUGIN_CTF_METADATA_LOG_LEVEL";
    const ingest_ctflib *L = &rd->lib;
    bool set_env = getenv(level_env) == NULL;
    if (set_env && setenv(level_env, "E", 1) != 0)
        set_env = false;
    const bt_plugin *ctf = NULL;
    const bt_component_class_source *fs = NULL;
    bt_graph *g = NULL;
    FILE *log = NULL;
    bool found = false;
    if (L->bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) != BT_PLUGIN_FIND_STATUS_OK ||
        !(fs = L->bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs")) ||
        !(g = L->bt_graph_create(0)) || !(log = tmpfile()))
        goto out;
    int saved = dup(STDERR_FILENO);
    if (saved >= 0) {
        fflush(stderr);
        if (dup2(fileno(log), STDERR_FILENO) >= 0) {
            const bt_component_source *src;
            (void)L->bt_graph_add_source_component(g, fs, "source", params, BT_LOGGING_LEVEL_ERROR, &src);
            fflush(stderr);
            dup2(saved, STDERR_FILENO);
        }
        close(saved);
    }
    struct stat sb;
    char *text = NULL;
    /* the log of one failed creation: a few lines (at a user's DEBUG
     * level more, the parser's first) */
    size_t want = fstat(fileno(log), &sb) == 0 && sb.st_size > 0 ? (size_t)sb.st_size : 0;
    if (want > (1u << 20))
        want = 1u << 20;
    if (want && (text = malloc(want))) {
        rewind(log);
        size_t n = fread(text, 1, want, log);
        found = ingest_ctf_meta_complaint(text, n, line, msg, cap, stderr);
    }
    free(text);
out:
    if (log)
        fclose(log);
    L->bt_current_thread_clear_error();
    if (g)
        L->bt_graph_put_ref(g);
    if (ctf)
        L->bt_plugin_put_ref(ctf);
    if (set_env)
        unsetenv(level_env);
    return found;
}

/* The metadata of trace dir did not make a trace: where and why, in the parser's
 * words when it said; else babeltrace2's error causes (why). */
static void metadata_error(ctf_reader *rd, const char *dir, const bt_value *params, const char *why)
{
    char path[4096], msg[800];
    unsigned line = 0;
    snprintf(path, sizeof path, "%s/metadata", dir);
    if (!parser_complaint(rd, params, &line, msg, sizeof msg)) {
        ingest_errf(rd->err, rd->errlen, "%s: not a CTF trace babeltrace2 can read: %s", path, why);
        return;
    }
    for (char *p = msg; *p; p++) /* one line */
        if (*p == '\r' || *p == '\t')
            *p = ' ';
    ctf_meta_place w;
    if (ingest_ctf_meta_locate(path, line, &w) < 0 || !w.packetized)
        ingest_errf(rd->err, rd->errlen, "%s:%u: not a CTF trace babeltrace2 can read: %s", path, line, msg);
    else if (w.found) /* a binary file: the line's place too */
        ingest_errf(rd->err, rd->errlen,
                    "%s:%u: not a CTF trace babeltrace2 can read: %s (line %u of the metadata text, which this "
                    "file holds in %llu packet%s: packet %llu, byte %llu)",
                    path, line, msg, line, (unsigned long long)w.packets, w.packets == 1 ? "" : "s",
                    (unsigned long long)w.packet, (unsigned long long)w.offset);
    else
        ingest_errf(rd->err, rd->errlen,
                    "%s:%u: not a CTF trace babeltrace2 can read: %s (line %u of the metadata text, which this "
                    "file holds in %llu packet%s)",
                    path, line, msg, line, (unsigned long long)w.packets, w.packets == 1 ? "" : "s");
}

/* ---- the graph ---- */

/* source.ctf.fs (inputs: [dir]) for trace dir, in graph g as component
 * name.  0, or -1 with err set (the plugin let go of when its metadata
 * is to blame: metadata_error loads it anew, and *g is then NULL). */
static int add_source(ctf_reader *rd, bt_graph **g, const bt_plugin **ctf, const char *dir, const char *name,
                      const bt_component_source **src)
{
    const ingest_ctflib *L = &rd->lib;
    char why[800], file[4096];
    const bt_component_class_source *fs = L->bt_plugin_borrow_source_component_class_by_name_const(*ctf, "fs");
    bt_value *params = L->bt_value_map_create(), *inputs = L->bt_value_array_create();
    int rc = -1;
    if (!fs || !params || !inputs ||
        L->bt_value_array_append_string_element(inputs, dir) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
        L->bt_value_map_insert_entry(params, "inputs", inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
        L->bt_current_thread_clear_error();
        ingest_errf(rd->err, rd->errlen, "%s: cannot set up babeltrace2's graph", dir);
    } else if (L->bt_graph_add_source_component(*g, fs, name, params, BT_LOGGING_LEVEL_NONE, src) ==
               BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        rc = 0;
    } else {
        bt_message_text(rd, why, sizeof why, file, sizeof file);
        if (file[0]) { /* a stream file */
            ingest_errf(rd->err, rd->errlen, "%s: not a CTF stream babeltrace2 can read: %s", file, why);
        } else {
            L->bt_graph_put_ref(*g);
            *g = NULL;
            L->bt_plugin_put_ref(*ctf);
            *ctf = NULL;
            metadata_error(rd, dir, params, why);
        }
    }
    L->bt_value_put_ref(inputs);
    L->bt_value_put_ref(params);
    return rc;
}

/* A source.ctf.fs for each trace -> filter.utils.muxer -> our sink.
 * Returns the graph, or NULL with err set. */
static bt_graph *make_graph(ctf_reader *rd)
{
    const ingest_ctflib *L = &rd->lib;
    char why[800], file[4096];
    const bt_plugin *ctf = NULL, *utils = NULL;
    bt_graph *g = NULL;
    if (L->bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) != BT_PLUGIN_FIND_STATUS_OK ||
        L->bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils) !=
            BT_PLUGIN_FIND_STATUS_OK) {
        L->bt_current_thread_clear_error();
        ingest_errf(rd->err, rd->errlen,
                    "%s: babeltrace2's ctf and utils plugins are not installed (Debian: apt-get install "
                    "libbabeltrace2-0)", rd->dir);
        goto out;
    }
    const bt_component_class_filter *mux = L->bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    const bt_component_filter *m;
    const bt_component_sink *sink;
    g = L->bt_graph_create(0);
    if (!mux || !g) {
        L->bt_current_thread_clear_error();
        ingest_errf(rd->err, rd->errlen, "%s: cannot set up babeltrace2's graph", rd->dir);
        goto fail;
    }
    if (L->bt_graph_add_filter_component(g, mux, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &m) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        L->bt_graph_add_simple_sink_component(g, "argusq", NULL, consume, NULL, rd, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        goto graph_error;
    rd->nports = rd->ust_streams = 0;
    for (size_t t = 0; t < rd->traces.n; t++) {
        const char *dir = rd->traces.dirs[t];
        const bt_component_source *src;
        char name[32];
        snprintf(name, sizeof name, "source-%zu", t);
        if (add_source(rd, &g, &ctf, dir, name, &src) < 0)
            goto fail;
        uint64_t np = L->bt_component_source_get_output_port_count(src);
        if (np == 0) {
            ingest_errf(rd->err, rd->errlen, "%s: a CTF trace without stream files (only its metadata)", dir);
            goto fail;
        }
        for (uint64_t i = 0; i < np; i++) {
            /* the muxer keeps one free input port, its last */
            const bt_port_input *in = L->bt_component_filter_borrow_input_port_by_index_const(
                m, L->bt_component_filter_get_input_port_count(m) - 1);
            if (L->bt_graph_connect_ports(g, L->bt_component_source_borrow_output_port_by_index_const(src, i), in,
                                          NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
                goto graph_error;
        }
        rd->nports += np;
    }
    if (L->bt_graph_connect_ports(g, L->bt_component_filter_borrow_output_port_by_index_const(m, 0),
                                  L->bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                  NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        goto graph_error;
    goto out;
graph_error:
    bt_message_text(rd, why, sizeof why, file, sizeof file);
    ingest_errf(rd->err, rd->errlen, "%s: cannot set up babeltrace2's graph: %s", rd->dir, why);
fail:
    L->bt_graph_put_ref(g); /* NULL-safe */
    g = NULL;
out:
    L->bt_plugin_put_ref(ctf);
    L->bt_plugin_put_ref(utils);
    return g;
}

/* Runs a graph to its end (or ours).  0, or -1 with err set. */
static int run_graph(ctf_reader *rd)
{
    bt_graph *g = make_graph(rd);
    if (!g)
        return -1;
    bt_graph_run_status s = rd->lib.bt_graph_run(g);
    int rc = rd->rc;
    if (rc == 0 && s != BT_GRAPH_RUN_STATUS_OK) {
        char why[800], file[4096];
        bt_message_text(rd, why, sizeof why, file, sizeof file);
        ingest_errf(rd->err, rd->errlen, "%s: after event %llu: cannot read the trace (cut short or corrupt): %s",
                    file[0] ? file : rd->dir, (unsigned long long)rd->nev, why);
        rc = -1;
    }
    /* a trace that ended inside the prescan: its messages are mapped
     * while the graph that made them is there */
    if (rc == 0 && !rd->map && !rd->overflow && start_mapping(rd) < 0)
        rc = -1;
    release_held(rd);
    rd->lib.bt_current_thread_clear_error();
    rd->lib.bt_graph_put_ref(g);
    return rc;
}

/* A stream file trace dir's index names but that is not there: the
 * library would read the trace without it, and say nothing. */
static int check_streams(ctf_reader *rd, const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s/index", dir) >= (int)sizeof p)
        return 0;
    DIR *d = opendir(p);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        struct stat sb;
        if (n <= 4 || strcmp(de->d_name + n - 4, ".idx") != 0)
            continue;
        if (snprintf(p, sizeof p, "%s/%.*s", dir, (int)(n - 4), de->d_name) >= (int)sizeof p)
            continue;
        if (stat(p, &sb) != 0) {
            ingest_errf(rd->err, rd->errlen, "%s: stream file missing (index/%s names it): %s", p, de->d_name,
                        strerror(errno));
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int ingest_ctf_read(const char *dir, const ingest_sink *sink, const ingest_opts *opts, ingest_stats *st, char *err,
                    size_t errlen)
{
    ctf_reader rd;
    memset(&rd, 0, sizeof rd);
    rd.dir = dir;
    rd.st = st;
    rd.sink = sink;
    rd.opts = opts;
    rd.err = err;
    rd.errlen = errlen;
    rd.packet_cpu = -1;
    if (ingest_ctf_find(dir, &rd.traces, err, errlen) < 0)
        return -1;
    int rc = 0;
    if (rd.traces.n == 0) {
        ingest_errf(err, errlen, "%s/metadata: cannot open: %s, and no folder below it holds a CTF trace", dir,
                    strerror(ENOENT));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < rd.traces.n; i++)
        rc = check_streams(&rd, rd.traces.dirs[i]);
    if (rc == 0)
        rc = ingest_ctflib_open(&rd.lib, err, errlen);
    if (rc == 0) {
        rd.lib.bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
        /* the task each CPU starts with, then (usually) the whole trace */
        rc = run_graph(&rd);
    }
    if (rc == 0 && !rd.map) { /* the prescan let its messages go: read again */
        rc = begin_mapping(&rd);
        for (size_t i = 0; i < CTF_SCACHE; i++) /* the first graph's classes are gone */
            rd.snames[i].sc = NULL;
        rd.ntinfo = 0; /* and its traces */
        if (rc == 0)
            rc = run_graph(&rd);
    }
    if (rc == 0 && sink->end)
        sink->end(sink->ctx);
    ingest_ctf_traces_free(&rd.traces);
    free(rd.tinfo);
    ingest_ctf_map_free(rd.map);
    free(rd.held);
    free(rd.seeds);
    free(rd.f);
    for (size_t i = 0; i < CTF_SCACHE; i++)
        free(rd.snames[i].names);
    return rc;
}
