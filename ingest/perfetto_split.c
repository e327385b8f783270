/* ingest/perfetto_split.c -- the first pass's second half on a thread of
 * its own.  The first pass (perfetto.c walk, perfetto_names.c) reads the
 * whole file before any event goes on, and the other threads of an
 * ingest wait for it: 30 ms of the bench's Android 11 file (117 MB), 85%
 * of it the kernel's copy of the file into the read buffer (perf), which
 * two threads do in about half the time (a test program reading the file
 * in halves: 24 -> 13-16 ms).  So, for a plain file of PF_SPLIT_MIN bytes
 * or more, a scout thread walks the second half -- the outer framing and
 * each packet's own fields, every check walk and ingest_pf_names_packet
 * make -- while the reading thread walks the first, and keeps only where
 * the packets are that name tasks or the machine (process_tree,
 * system_info, compressed_packets: a few in a file).  Those the reading
 * thread then reads as walk would have, in file order, once its own walk
 * has landed on the scout's first packet.
 *
 * Where the second half begins is found, not known: the first offset past
 * the middle where PF_SPLIT_CHAIN packets in a row parse (field 1, a
 * length, and fields that fill the packet exactly).  A wrong guess costs
 * time, never output: the result is used only when the reading thread's
 * own walk lands exactly on that offset, and only when the scout met
 * nothing it does not read as walk does (a bad varint, a length past the
 * end, a packet larger than its buffer, a read error): then the reading
 * thread walks the second half itself, and a damaged file's message is
 * the one the single walk gives.
 *
 * Measured (make bench's files, 9 runs each interleaved, medians of the
 * time from main to the first pass's end, on this 2-core machine while
 * another job ran beside): Android 11 x80 (117 MB) 32 -> 22 ms, the
 * process 962 -> 937 ms; Android 13 x40 (73 MB) 20 -> 17 ms. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfetto_int.h"

#define PF_SPLIT_MIN ((uint64_t)16 << 20) /* smaller files: a single walk */
#define PF_SPLIT_BUF ((size_t)4 << 20)    /* the scout's read buffer; a larger packet: it gives up */
#define PF_SPLIT_LOOK ((size_t)1 << 20)   /* how far past the middle a packet start is looked for */
#define PF_SPLIT_CHAIN 8                  /* packets in a row that parse make a start */

/* a packet of the second half the first pass reads (perfetto_names.c) */
typedef struct split_pkt {
    uint64_t tag_off;  /* its Trace field's first byte: walk's off */
    uint64_t data_off; /* its bytes */
    uint64_t len;
    uint64_t nth; /* 1-based, in the second half */
} split_pkt;

struct pf_split {
    pthread_t th;
    bool say; /* $ARGUSQ_PF_SPLIT_MIN set: what the split did, on stderr (tests) */
    int fd;
    uint64_t start, size;
    atomic_bool cancel;
    /* the scout's, read by the reading thread after the join */
    bool ok; /* walked to the end with no surprise */
    uint64_t npackets;
    split_pkt *pk;
    size_t npk, pkcap;
    /* the scout's window of the file: buf[0, len) is the file at off */
    unsigned char *buf;
    size_t len, pos;
    uint64_t off;
};

/* buf holds at least n bytes from pos, unless the file ends first (then
 * what there is); false: a read error or cancelled */
static bool need(pf_split *s, size_t n)
{
    if (s->len - s->pos >= n)
        return true;
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->off += s->pos;
    s->len -= s->pos;
    s->pos = 0;
    while (s->len < n && s->off + s->len < s->size) {
        if (atomic_load_explicit(&s->cancel, memory_order_relaxed))
            return false;
        ssize_t r = pread(s->fd, s->buf + s->len, PF_SPLIT_BUF - s->len, (off_t)(s->off + s->len));
        if (r <= 0)
            return false;
        s->len += (size_t)r;
    }
    return true;
}

/* A varint at buf[pos]: true and *v; false: it does not end before the
 * buffer's end (at the file's end: cut) or is longer than 10 bytes. */
static bool split_varint(pf_split *s, uint64_t *v)
{
    const uint8_t *p = s->buf + s->pos;
    if (!ingest_pf_varint(&p, s->buf + s->len, v))
        return false;
    s->pos = (size_t)(p - s->buf);
    return true;
}

/* A packet's own fields fill it exactly (ingest_pf_buf_field, as
 * ingest_pf_names_packet reads them); *names: one of them is a field the
 * first pass reads. */
static bool packet_parses(const unsigned char *p, size_t len, bool *names)
{
    const unsigned char *q = p, *e = p + len;
    *names = false;
    while (q < e) {
        uint32_t num;
        int wt;
        const unsigned char *val;
        size_t vl;
        if (!ingest_pf_buf_field(&q, e, &num, &wt, &val, &vl))
            return false;
        if (wt == 2 && (num == 2 || num == 45 || num == 50))
            *names = true;
    }
    return true;
}

/* The scout: walk's checks over [start, size), the naming packets kept. */
static void *scout(void *arg)
{
    pf_split *s = arg;
    s->off = s->start;
    for (;;) {
        if (!need(s, 20))
            return NULL;
        if (s->pos == s->len) { /* the file's end, between two fields: done */
            s->ok = true;
            return NULL;
        }
        uint64_t tag_off = s->off + s->pos, tag, len;
        if (!split_varint(s, &tag) || (tag >> 3) == 0 || ((tag & 7) != 2 && (tag & 7) != 0) ||
            !split_varint(s, &len))
            return NULL;
        if ((tag & 7) == 0)
            continue;
        if ((tag >> 3) != 1) { /* skipped, as walk skips it */
            if (len > s->size - (s->off + s->pos))
                return NULL;
            uint64_t to = s->off + s->pos + len;
            s->off = to;
            s->pos = s->len = 0;
            continue;
        }
        s->npackets++;
        if (len > PF_SPLIT_BUF || !need(s, (size_t)len) || s->len - s->pos < len)
            return NULL;
        bool names;
        if (!packet_parses(s->buf + s->pos, (size_t)len, &names))
            return NULL;
        if (names) {
            if (s->npk == s->pkcap) {
                size_t c = s->pkcap ? 2 * s->pkcap : 16;
                split_pkt *n = realloc(s->pk, c * sizeof *n);
                if (!n)
                    return NULL;
                s->pk = n;
                s->pkcap = c;
            }
            s->pk[s->npk++] = (split_pkt){tag_off, s->off + s->pos, len, s->npackets};
        }
        s->pos += (size_t)len;
    }
}

/* PF_SPLIT_CHAIN packets in a row parse from b[i] on (within n bytes) */
static bool chain_at(const unsigned char *b, size_t n, size_t i)
{
    for (int k = 0; k < PF_SPLIT_CHAIN; k++) {
        if (i >= n || b[i] != 0x0a) /* field 1, length-delimited: a TracePacket */
            return false;
        const uint8_t *p = b + i + 1;
        uint64_t len;
        bool names;
        if (!ingest_pf_varint(&p, b + n, &len) || len > (uint64_t)(b + n - p) ||
            !packet_parses(p, (size_t)len, &names))
            return false;
        i = (size_t)(p - b) + (size_t)len;
    }
    return true;
}

/* The first packet start past the file's middle, or 0: none found. */
static uint64_t find_start(pf_split *s)
{
    uint64_t mid = s->size / 2;
    ssize_t r = pread(s->fd, s->buf, PF_SPLIT_LOOK, (off_t)mid);
    if (r <= 0)
        return 0;
    for (size_t i = 0; i < (size_t)r; i++)
        if (s->buf[i] == 0x0a && chain_at(s->buf, (size_t)r, i))
            return mid + i;
    return 0;
}

pf_split *ingest_pf_split_start(pf_reader *d, uint64_t *stop)
{
    *stop = UINT64_MAX;
    uint64_t min = PF_SPLIT_MIN;
    const char *env = getenv("ARGUSQ_PF_SPLIT_MIN"); /* tests: split small files too; 0 never */
    if (env)
        min = strtoull(env, NULL, 10);
    if (min == 0 || d->fd < 0 || !d->gz || d->size < min || !gzdirect(d->gz))
        return NULL;
    pf_split *s = calloc(1, sizeof *s);
    if (!s || !(s->buf = malloc(PF_SPLIT_BUF))) {
        free(s);
        return NULL; /* a single walk */
    }
    s->fd = d->fd;
    s->size = d->size;
    s->say = env != NULL;
    atomic_init(&s->cancel, false);
    s->start = find_start(s);
    if (s->start == 0 || pthread_create(&s->th, NULL, scout, s) != 0) {
        free(s->buf);
        free(s);
        return NULL;
    }
    *stop = s->start;
    return s;
}

static void split_free(pf_split *s)
{
    free(s->buf);
    free(s->pk);
    free(s);
}

void ingest_pf_split_cancel(pf_split *s)
{
    if (!s)
        return;
    atomic_store(&s->cancel, true);
    pthread_join(s->th, NULL);
    split_free(s);
}

int ingest_pf_split_finish(pf_reader *d, pf_split *s)
{
    pthread_join(s->th, NULL);
    int rc = s->ok;
    uint64_t base = d->npackets;
    for (size_t i = 0; rc == 1 && i < s->npk; i++) {
        const split_pkt *p = &s->pk[i];
        if (p->len > d->pkt_cap) {
            unsigned char *nb = realloc(d->pkt, (size_t)p->len);
            if (!nb) {
                rc = ingest_pf_fail(d, p->tag_off, "out of memory");
                break;
            }
            d->pkt = nb;
            d->pkt_cap = (size_t)p->len;
        }
        if (pread(s->fd, d->pkt, (size_t)p->len, (off_t)p->data_off) != (ssize_t)p->len) {
            rc = ingest_pf_fail(d, p->tag_off, "read error: the file changed while it was read");
            break;
        }
        d->npackets = base + p->nth;
        d->fr.st->lines = d->npackets;
        if (ingest_pf_names_packet(d, d->pkt, (size_t)p->len, p->tag_off, 0) < 0)
            rc = -1;
    }
    if (rc == 1) {
        d->npackets = base + s->npackets;
        d->fr.st->lines = d->npackets;
    }
    if (s->say)
        fprintf(stderr, "%s: first pass split at byte %llu: %s\n", d->path, (unsigned long long)s->start,
                rc == 1 ? "second half scanned beside" : rc == 0 ? "second half walked here" : "failed");
    split_free(s);
    return rc;
}
