/* query/lives.c -- a thread's whole life, and what the critical path's
 * parts say of it: the totals per state and device, and the life of a
 * short-lived thread beside the normal run's (a short-lived process is
 * diagnosed by its life as well as its steps).  Which device an
 * interrupt or softirq served is here too: the partition (critpath.c)
 * names an io part's device by it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

const char *query_cp_device_name(int dev)
{
    switch (dev) {
    case QUERY_DEV_DISK: return "disk";
    case QUERY_DEV_NETWORK: return "network";
    case QUERY_DEV_DEVICE: return "device";
    default: return "";
    }
}

static bool has_word(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strstr(s, *words))
            return true;
    return false;
}

/* What an interrupt or softirq node serves, by its name: the softirq's
 * vector ("softirq/NET_RX"; every reader names them so), an interrupt's
 * handler ("irq/36 virtio1-req.0", "irq/30 nvme0q1", "irq/25 eth0"). */
int query_cp_device_of(const db_node *n)
{
    static const char *const net_irq[] = {"eth", "enp", "ens", "eno", "wlan", "wlp", "-input", "-output", "virtio-net",
                                          NULL};
    static const char *const disk_irq[] = {"nvme", "ahci", "ata", "-req", "mmc", "sdhci", "scsi", "ufs", NULL};
    if (n->kind == DB_NODE_SOFTIRQ) {
        const char *v = strchr(n->thread, '/');
        v = v ? v + 1 : n->thread;
        if (strncmp(v, "NET_", 4) == 0)
            return QUERY_DEV_NETWORK;
        if (strncmp(v, "BLOCK", 5) == 0 || strcmp(v, "IRQ_POLL") == 0)
            return QUERY_DEV_DISK;
        if (strcmp(v, "TIMER") == 0 || strcmp(v, "HRTIMER") == 0)
            return QUERY_DEV_TIMER;
        return QUERY_DEV_NONE;
    }
    if (n->kind != DB_NODE_INTERRUPT)
        return QUERY_DEV_NONE;
    if (has_word(n->thread, net_irq))
        return QUERY_DEV_NETWORK;
    if (has_word(n->thread, disk_irq))
        return QUERY_DEV_DISK;
    return QUERY_DEV_DEVICE;
}

/* A thread's life as the trace shows it: from its creation (the wakeup
 * that created its first node: fork, sched_wakeup_new) or the start of
 * its first node's wait, to its last node's end. */
typedef struct life {
    db_node n;
    bool any, first; /* first: stop at the first node */
} life;

static int life_one(void *p, const db_node *n)
{
    life *l = p;
    if (db_node_kind_isolated(n->kind))
        return 0;
    l->n = *n;
    l->any = true;
    return l->first;
}

static int created_at(void *p, const db_edge *e)
{
    if (e->kind != DB_EDGE_WEAK && e->kind != DB_EDGE_PREEMPT && e->kind != DB_EDGE_IO)
        *(uint64_t *)p = e->from_event;
    return 0;
}

int query_thread_life(db_reader *r, uint32_t tid, bool created_only, uint64_t *begin, uint64_t *end, bool *created,
                      db_error *de)
{
    life f = {.first = true}, last = {0};
    if (db_scan_thread_nodes(r, tid, 0, UINT64_MAX, life_one, &f, de) < 0)
        return -1;
    if (!f.any)
        return 0;
    uint64_t b = f.n.blocked && f.n.blocked <= f.n.begin ? f.n.begin - f.n.blocked : query_node_oncpu(&f.n);
    uint64_t ev_id = 0;
    db_event ev;
    if (!f.n.blocked && db_edges_in(r, f.n.id, created_at, &ev_id, de))
        return -1;
    bool made = ev_id && db_get_event(r, ev_id, &ev, de) == 1 && ev.ts <= b;
    if (made)
        b = ev.ts;
    if (created)
        *created = made;
    if (created_only && !made)
        return 1; /* begin and end not wanted */
    /* the last node: the one the scan hands out first, as beginning before
     * the end of time */
    if (db_scan_thread_nodes(r, tid, UINT64_MAX - 1, UINT64_MAX, life_one, &last, de) < 0)
        return -1;
    *begin = b;
    *end = last.any && last.n.end > b ? last.n.end : b;
    return 1;
}

query_cp_totals query_cp_sum(const query_cp *cp)
{
    query_cp_totals t = {{0}, {0}};
    for (size_t i = 0; i < cp->n; i++) {
        t.state[cp->parts[i].state] += cp->parts[i].ns;
        if (cp->parts[i].state == QUERY_CP_IO && cp->parts[i].device <= QUERY_DEV_TIMER)
            t.dev[cp->parts[i].device] += cp->parts[i].ns;
    }
    return t;
}

/* Thread a's life in ra and thread tid's in rn, when both traces show
 * their creation (*lives then); 0 or -1. */
int query_compare_lives(db_reader *ra, const db_node *a, db_reader *rn, uint32_t tid, query_cp *la, query_cp *ln,
                         bool *lives, db_error *de)
{
    uint64_t b1, e1, b2, e2;
    bool c1 = false, c2 = false;
    int g1 = query_thread_life(ra, a->tid, true, &b1, &e1, &c1, de);
    int g2 = g1 <= 0 || !c1 ? g1 : query_thread_life(rn, tid, true, &b2, &e2, &c2, de);
    if (g1 < 0 || g2 < 0)
        return -1;
    if (!g1 || !g2 || !c1 || !c2)
        return 0;
    db_node other = {.tid = tid};
    memcpy(other.thread, a->thread, sizeof other.thread);
    if (query_critical_path_span(ra, a, b1, e1, la, de))
        return -1;
    if (query_critical_path_span(rn, &other, b2, e2, ln, de)) {
        query_cp_free(la);
        return -1;
    }
    *lives = true;
    return 0;
}

/* "Its life: 235ms: ...; the normal run's: 120ms: ...; the difference: io
 * (disk) +46.0ms (none in the normal run), ..." -- per state and device, what
 * differs by 1% of the anomaly's life or more */
void query_text_lives(FILE *f, const query_cp *la, const query_cp *ln)
{
    char d[32];
    query_fmt_duration(d, sizeof d, la->end - la->begin);
    fprintf(f, "Its life (from its creation) took %s:", d);
    query_text_cp_totals(f, la);
    query_fmt_duration(d, sizeof d, ln->end - ln->begin);
    fprintf(f, "In the normal run it took %s:", d);
    query_text_cp_totals(f, ln);
    query_cp_totals ta = query_cp_sum(la), tn = query_cp_sum(ln);
    uint64_t floor = (la->end - la->begin) / 100;
    int k = 0;
    for (int i = 0; i < QUERY_CP__COUNT + QUERY_DEV_DEVICE; i++) {
        /* the states but io, then io by device */
        bool dev = i >= QUERY_CP__COUNT;
        int x = dev ? i - QUERY_CP__COUNT + 1 : i;
        if (!dev && x == QUERY_CP_IO)
            continue;
        uint64_t va = dev ? ta.dev[x] : ta.state[x], vn = dev ? tn.dev[x] : tn.state[x];
        uint64_t diff = va > vn ? va - vn : vn - va;
        if (diff < floor || !diff)
            continue;
        query_fmt_duration(d, sizeof d, diff);
        fprintf(f, "%s %s%s%s %s%s%s", k++ ? "," : "The difference:", dev ? "io (" : "",
                dev ? query_cp_device_name(x) : query_cp_state_name(x), dev ? ")" : "", va > vn ? "+" : "-", d,
                !vn ? " (none in the normal run)" : !va ? " (none in this run)" : "");
    }
    fputs(k ? ".\n" : "The difference: none of 1% of its life or more.\n", f);
}


/* The thread that woke thread tid most often (by name; a thread of
 * another name than its own) in its WAKER_NODES nodes from `from`: who
 * normally ends its waits.  1, 0 none, -1. */
#define WAKERS 16
#define WAKER_NODES 256

typedef struct wakers {
    db_reader *r;
    db_error *de;
    uint32_t tid;
    char name[WAKERS][DB_NAME_MAX];
    uint32_t count[WAKERS];
    int n, seen;
} wakers;

static int waker_edge(void *p, const db_edge *e)
{
    wakers *w = p;
    db_node src;
    if ((e->kind != DB_EDGE_WAKEUP && e->kind != DB_EDGE_IPC && e->kind != DB_EDGE_IPC_REPLY) ||
        db_get_node(w->r, e->from, &src, w->de) != 1 || db_node_kind_isolated(src.kind) || src.tid == w->tid)
        return 0;
    int i = 0;
    while (i < w->n && strncmp(w->name[i], src.thread, DB_NAME_MAX) != 0)
        i++;
    if (i == w->n) {
        if (w->n == WAKERS)
            return 0;
        memcpy(w->name[w->n++], src.thread, DB_NAME_MAX);
    }
    w->count[i]++;
    return 0;
}

static int waker_node(void *p, const db_node *n)
{
    wakers *w = p;
    if (++w->seen > WAKER_NODES)
        return 1;
    return n->blocked && !db_node_kind_isolated(n->kind) ? db_edges_in(w->r, n->id, waker_edge, w, w->de) : 0;
}

int query_usual_waker(db_reader *r, uint32_t tid, uint64_t from, char out[DB_NAME_MAX], db_error *de)
{
    wakers w = {.r = r, .de = de, .tid = tid};
    if (db_scan_thread_nodes(r, tid, from, UINT64_MAX, waker_node, &w, de) < 0)
        return -1;
    int best = -1;
    for (int i = 0; i < w.n; i++)
        if (best < 0 || w.count[i] > w.count[best])
            best = i;
    if (best < 0)
        return 0;
    memcpy(out, w.name[best], DB_NAME_MAX);
    return 1;
}
