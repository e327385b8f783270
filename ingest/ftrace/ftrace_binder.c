/* ingest/ftrace/ftrace_binder.c -- Android's binder IPC onto the Argus message
 * vocabulary (spec: mach_msg send/recv with dest=, reply=, id=, kmsg=,
 * peer=), so the graph's Mach message rules connect it unchanged:
 *
 *   paper/000 2.b  send -> receive:   binder_transaction (sent) and
 *                  binder_transaction_received of the same debug_id
 *                  (kmsg = the debug_id) give an ipc edge;
 *                  receive -> reply:  the receipt of a two-way request
 *                  carries reply=R, R the requesting thread's own reply
 *                  "port"; the server's reply transaction (reply=1) is
 *                  sent to R, which gives the ipc_reply edge, and its
 *                  receipt, by the requester, the ipc edge back to it;
 *   paper/000 1.d  peer= the process sent to: boundaries by IPC peer.
 *
 * Ports: a request is sent to its binder node (the object, as a Mach
 * port is), or to the process when the node is not given; a reply to the
 * thread that is waiting for it (dest_thread).  The receipt has only the
 * debug_id, so what its send said (port and reply port) waits here until
 * the receipt comes.  A oneway transaction (TF_ONE_WAY) wants no reply.
 *
 * Canonical pairs (the kernel's print format): binder_transaction
 * `transaction dest_node dest_proc dest_thread reply flags code`,
 * binder_transaction_received `transaction`. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ftrace_int.h"

#define TF_ONE_WAY 0x01u
#define PORT_PROC ((uint64_t)1 << 32)   /* a request to a process (no node) */
#define PORT_THREAD ((uint64_t)2 << 32) /* a thread's reply port */
/* sends whose receipt never comes (before the trace, lost): the table is
 * emptied past this many, so it stays bounded */
#define BINDER_PENDING_MAX 65536

typedef struct binder_ent {
    int64_t id; /* debug_id */
    uint64_t port, reply;
} binder_ent;

/* The sends waiting: their entries in v[0 .. n), and ids mapping a
 * debug_id to its entry.  A receipt takes its entry out and the last one
 * moves into its place, so v stays dense. */
struct ingest_binder {
    binder_ent *v;
    size_t n, cap;
    base_map ids;
};

void ingest_ft_binder_free(struct ingest_binder *b)
{
    if (!b)
        return;
    free(b->v);
    base_map_free(&b->ids);
    free(b);
}

static int put(ftrace_reader *r, int64_t id, uint64_t port, uint64_t reply)
{
    struct ingest_binder *b = r->binder;
    if (!b) {
        b = r->binder = calloc(1, sizeof *b);
        if (!b)
            return ingest_ft_fail(r, "out of memory");
    }
    if (b->n >= BINDER_PENDING_MAX) { /* forget the ones never received */
        base_map_clear(&b->ids);
        b->n = 0;
    }
    uint32_t i;
    if (!base_map_get(&b->ids, (uint64_t)id, &i)) {
        if (!base_grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v) ||
            base_map_put(&b->ids, (uint64_t)id, (uint32_t)b->n))
            return ingest_ft_fail(r, "out of memory");
        i = (uint32_t)b->n++;
    }
    b->v[i] = (binder_ent){id, port, reply};
    return 0;
}

/* takes the send of id out of the table; false if it is not there */
static bool take(ftrace_reader *r, int64_t id, binder_ent *out)
{
    struct ingest_binder *b = r->binder;
    uint32_t i;
    if (!b || !base_map_del(&b->ids, (uint64_t)id, &i))
        return false;
    *out = b->v[i];
    if (i != --b->n) {
        b->v[i] = b->v[b->n];
        /* the moved entry's key is there: replaced in place, never grows */
        int rc = base_map_put(&b->ids, (uint64_t)b->v[i].id, i);
        assert(rc == 0);
        (void)rc;
    }
    return true;
}

/* The fields from the pairs (a text or trace.dat reader's): 0, or
 * FTRACE_BAD_FIELDS.  A receipt has only the transaction. */
static int vals_of_pairs(const ftrace_reader *r, bool received, ftrace_binder_vals *v)
{
    if (!ingest_ft_kv_i64(r, "transaction", &v->transaction))
        return FTRACE_BAD_FIELDS;
    if (received)
        return 0;
    if (!ingest_ft_kv_i64(r, "dest_node", &v->dest_node) || !ingest_ft_kv_i64(r, "dest_proc", &v->dest_proc) ||
        !ingest_ft_kv_i64(r, "dest_thread", &v->dest_thread) || !ingest_ft_kv_i64(r, "reply", &v->reply) ||
        !ingest_ft_kv_hex(r, "flags", &v->flags) || !ingest_ft_kv_hex(r, "code", &v->code))
        return FTRACE_BAD_FIELDS;
    return 0;
}

/* The attributes are written after one reservation each, not an
 * ingest_ft_attr call each (a send has eight of its own). */
#define BINDER_ATTR_MAX (16 + INGEST_FT_NUM_MAX) /* a key of at most 14 bytes, '=', a number, NUL */

int ingest_ft_map_binder(ftrace_reader *r, db_event *ev, bool received)
{
    static const ftrace_key send_keys[] = {
        FTRACE_KEY("dest_node"), FTRACE_KEY("dest_proc"), FTRACE_KEY("dest_thread"), FTRACE_KEY("flags"),
        FTRACE_KEY("code"), {NULL, 0},
    };
    ftrace_binder_vals own;
    const ftrace_binder_vals *v = r->txn; /* the values instead of the pairs */
    if (!v) {
        if (vals_of_pairs(r, received, &own) != 0)
            return FTRACE_BAD_FIELDS;
        v = &own;
    }
    int64_t id = v->transaction;
    if (id == 0)
        return FTRACE_BAD_FIELDS;
    ev->type = DB_EV_MACH_MSG;
    if (received) {
        binder_ent e = {0, 0, 0};
        take(r, id, &e); /* sent before the trace began: no port known */
        ev->phase = DB_PH_END;
        ev->obj = e.port;
        char *p = ingest_ft_attrs_room(r, 4 * BINDER_ATTR_MAX);
        if (!p)
            return -1;
        p = ingest_ft_put_hex(p, FTRACE_LIT("dest"), e.port);
        p = ingest_ft_put_hex(p, FTRACE_LIT("reply"), e.reply);
        p = ingest_ft_put_num(p, FTRACE_LIT("kmsg"), base_fmt_i64, id);
        p = ingest_ft_put_num(p, FTRACE_LIT("transaction"), base_fmt_i64, id);
        ingest_ft_attrs_done(r, p);
        return 0;
    }
    int64_t proc = v->dest_proc, thread = v->dest_thread, is_reply = v->reply, node = v->dest_node;
    uint64_t port, reply = 0;
    if (is_reply)
        port = PORT_THREAD | (uint32_t)thread;
    else
        port = node > 0 ? (uint64_t)(uint32_t)node : PORT_PROC | (uint32_t)proc;
    if (!is_reply && !(v->flags & TF_ONE_WAY))
        reply = PORT_THREAD | ev->tid;
    if (put(r, id, port, reply) < 0)
        return -1;
    ev->phase = DB_PH_BEGIN;
    ev->obj = port;
    /* the send's own eight, then the pairs kept as they are: from values,
     * as the reader would have printed them */
    char *p = ingest_ft_attrs_room(r, 13 * BINDER_ATTR_MAX);
    if (!p)
        return -1;
    p = ingest_ft_put_hex(p, FTRACE_LIT("dest"), port);
    p = ingest_ft_put_hex(p, FTRACE_LIT("reply"), reply);
    p = ingest_ft_put_u64(p, FTRACE_LIT("id"), v->code);
    p = ingest_ft_put_num(p, FTRACE_LIT("kmsg"), base_fmt_i64, id);
    if (proc > 0)
        p = ingest_ft_put_num(p, FTRACE_LIT("peer"), base_fmt_i64, proc);
    p = ingest_ft_put_num(p, FTRACE_LIT("transaction"), base_fmt_i64, id);
    p = ingest_ft_put(p, FTRACE_LIT("binder_reply"), is_reply ? "1" : "0", 1);
    p = ingest_ft_put(p, FTRACE_LIT("oneway"), (v->flags & TF_ONE_WAY) ? "1" : "0", 1);
    if (r->txn) {
        p = ingest_ft_put_num(p, FTRACE_LIT("dest_node"), base_fmt_i64, node);
        p = ingest_ft_put_num(p, FTRACE_LIT("dest_proc"), base_fmt_i64, proc);
        p = ingest_ft_put_num(p, FTRACE_LIT("dest_thread"), base_fmt_i64, thread);
        p = ingest_ft_put_hex(p, FTRACE_LIT("flags"), v->flags);
        p = ingest_ft_put_hex(p, FTRACE_LIT("code"), v->code);
    }
    ingest_ft_attrs_done(r, p);
    return r->txn ? 0 : ingest_ft_attr_same(r, send_keys);
}
