/* db/types.c -- names of the Argus vocabulary, attribute lookup, and the
 * big-endian key encoding that makes memcmp order numeric order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* A name and its length: a lookup by name compares lengths first and
 * reads only the names of the same length (ingest looks one up per event). */
typedef struct {
    const char *s;
    size_t n;
} db_name_ent;
#define N(lit) {lit, sizeof lit - 1}

static const db_name_ent evtype_names[DB_EV__COUNT] = {
    [DB_EV_RAW] = N("raw"),
    [DB_EV_SYSCALL] = N("syscall"),
    [DB_EV_BACKTRACE] = N("backtrace"),
    [DB_EV_NSAPP_EVENT] = N("nsapp_event"),
    [DB_EV_WAIT] = N("wait"),
    [DB_EV_WAKEUP] = N("wakeup"),
    [DB_EV_INTERRUPT] = N("interrupt"),
    [DB_EV_TIMESHARE] = N("timeshare"),
    [DB_EV_DISPATCH_ENQUEUE] = N("dispatch_enqueue"),
    [DB_EV_DISPATCH_INVOKE] = N("dispatch_invoke"),
    [DB_EV_DISPATCH_MIG_SERVICE] = N("dispatch_mig_service"),
    [DB_EV_RUNLOOP_SUBMIT] = N("runloop_submit"),
    [DB_EV_RUNLOOP_INVOKE] = N("runloop_invoke"),
    [DB_EV_RUNLOOP_OBSERVER] = N("runloop_observer"),
    [DB_EV_MACH_MSG] = N("mach_msg"),
    [DB_EV_VOUCHER] = N("voucher"),
    [DB_EV_TIMER_ARM] = N("timer_arm"),
    [DB_EV_TIMER_CANCEL] = N("timer_cancel"),
    [DB_EV_TIMER_CALLOUT] = N("timer_callout"),
    [DB_EV_FLAG_WRITE] = N("flag_write"),
    [DB_EV_FLAG_READ] = N("flag_read"),
};

static const db_name_ent node_kind_names[DB_NODE__COUNT] = {
    [DB_NODE_THREAD] = N("thread"),       [DB_NODE_INTERRUPT] = N("interrupt"),
    [DB_NODE_SOFTIRQ] = N("softirq"),     [DB_NODE_TIMER] = N("timer"),
    [DB_NODE_DISPATCH] = N("dispatch"),   [DB_NODE_RUNLOOP] = N("runloop"),
    [DB_NODE_SERVICE] = N("service"),     [DB_NODE_TIMESHARE] = N("timeshare"),
};

static const db_name_ent edge_kind_names[DB_EDGE__COUNT] = {
    [DB_EDGE_WAKEUP] = N("wakeup"),     [DB_EDGE_WEAK] = N("weak"),
    [DB_EDGE_IPC] = N("ipc"),           [DB_EDGE_IPC_REPLY] = N("ipc_reply"),
    [DB_EDGE_DISPATCH] = N("dispatch"), [DB_EDGE_RUNLOOP] = N("runloop"),
    [DB_EDGE_TIMER] = N("timer"),       [DB_EDGE_FLAG] = N("flag"),
    [DB_EDGE_USER] = N("user"),       [DB_EDGE_PREEMPT] = N("preempt"),
    [DB_EDGE_IO] = N("io"),
};
#undef N

static const char *name_of(const db_name_ent *names, int n, int i)
{
    return i >= 0 && i < n && names[i].s ? names[i].s : "?";
}

static int index_of(const db_name_ent *names, int n, const char *s, size_t len)
{
    for (int i = 0; i < n; i++)
        if (names[i].n == len && len && names[i].s[0] == s[0] && memcmp(names[i].s, s, len) == 0)
            return i;
    return -1;
}

const char *db_evtype_name(int t) { return name_of(evtype_names, DB_EV__COUNT, t); }
int db_evtype_from_name(const char *s, size_t len) { return index_of(evtype_names, DB_EV__COUNT, s, len); }
const char *db_node_kind_name(int k) { return name_of(node_kind_names, DB_NODE__COUNT, k); }
int db_node_kind_from_name(const char *s, size_t len) { return index_of(node_kind_names, DB_NODE__COUNT, s, len); }
const char *db_edge_kind_name(int k) { return name_of(edge_kind_names, DB_EDGE__COUNT, k); }
int db_edge_kind_from_name(const char *s, size_t len) { return index_of(edge_kind_names, DB_EDGE__COUNT, s, len); }

const char *db_evtype_obj_name(int type)
{
    switch (type) {
    case DB_EV_WAKEUP: return "target";
    case DB_EV_SYSCALL: return "nr";
    case DB_EV_INTERRUPT: return "irq";
    case DB_EV_TIMER_ARM:
    case DB_EV_TIMER_CANCEL:
    case DB_EV_TIMER_CALLOUT: return "timer";
    case DB_EV_DISPATCH_ENQUEUE:
    case DB_EV_DISPATCH_INVOKE:
    case DB_EV_RUNLOOP_SUBMIT:
    case DB_EV_RUNLOOP_INVOKE: return "block";
    case DB_EV_MACH_MSG: return "port";
    case DB_EV_VOUCHER:
    case DB_EV_FLAG_READ:
    case DB_EV_FLAG_WRITE: return "addr";
    default: return NULL;
    }
}

bool db_evtype_obj_is_addr(int type)
{
    const char *f = db_evtype_obj_name(type);
    return f && strcmp(f, "target") != 0 && strcmp(f, "nr") != 0 && strcmp(f, "irq") != 0;
}

bool db_event_attr(const db_event *ev, const char *key, const char **val, size_t *len)
{
    const char *p = ev->attrs, *end = ev->attrs + ev->attrs_len;
    while (p && p < end) {
        /* the key's bytes first: most entries differ in the first */
        size_t i = 0, room = (size_t)(end - p);
        while (key[i] && i < room && p[i] == key[i])
            i++;
        size_t n = i + strnlen(p + i, room - i);
        if (!key[i] && i < n && p[i] == '=') {
            *val = p + i + 1;
            *len = n - i - 1;
            return true;
        }
        p += n + 1;
    }
    return false;
}

/* Decimal digits, or 0x and hex digits: what the readers write for
 * numbers; anything else (octal, signs, blanks) goes to strtoull. */
static bool plain_u64(const char *v, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        if (n > 18)
            return false;
        for (size_t i = 2; i < n; i++) {
            char c = v[i];
            unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                         : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (unsigned)((c | 0x20) - 'a' + 10) : 16;
            if (d > 15)
                return false;
            x = x << 4 | d;
        }
    } else {
        if (n > 19 || (n > 1 && v[0] == '0'))
            return false;
        for (size_t i = 0; i < n; i++) {
            if (v[i] < '0' || v[i] > '9')
                return false;
            x = x * 10 + (uint64_t)(v[i] - '0');
        }
    }
    *out = x;
    return true;
}

bool db_event_attr_u64(const db_event *ev, const char *key, uint64_t *out)
{
    const char *v;
    size_t n;
    return db_event_attr(ev, key, &v, &n) && db_attr_u64(v, n, out);
}

bool db_attr_u64(const char *v, size_t n, uint64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    if (plain_u64(v, n, out))
        return true;
    memcpy(buf, v, n);
    buf[n] = 0;
    char *e;
    unsigned long long x = strtoull(buf, &e, 0);
    if (*e)
        return false;
    *out = x;
    return true;
}

/* Counterparts are nodes of a thread with the same name and role: the key
 * the signature index groups them by, FNV-1a of "NAME/KIND" (at most
 * DB_NAME_MAX + 15 bytes of it: a name from a query may be longer than any
 * stored one, and what fits is hashed).  Byte by byte rather than through
 * snprintf: the graph asks for every node it closes. */
uint32_t db_thread_key(const char *thread, int kind)
{
    size_t left = DB_NAME_MAX + 15;
    uint32_t h = 2166136261u;
    const char *parts[3] = {thread, "/", db_node_kind_name(kind)};
    for (int k = 0; k < 3; k++)
        for (const char *c = parts[k]; *c && left; c++, left--)
            h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}
