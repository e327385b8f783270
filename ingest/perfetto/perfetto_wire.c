/* ingest/perfetto/perfetto_wire.c -- the Perfetto reader's bytes: the outer
 * Trace's stream (gzread, which reads a plain file as it is, or memory),
 * protobuf's wire format over a buffer (the inner Trace of
 * compressed_packets, the fields of a packet in the first pass), the
 * sniffing of a file's head, and inflating compressed_packets.  Every
 * varint and length is checked against the end of what holds it, so a
 * truncated or corrupt file ends in a message naming its byte offset,
 * never in a read past a buffer. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perfetto_int.h"
/* ---- errors ---- */

int ingest_pf_fail(pf_reader *d, uint64_t off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ingest_errf(d->fr.err, d->fr.errlen, "%s: byte %llu: %s", d->path, (unsigned long long)off, msg);
    return -1;
}

/* ---- the byte stream (gzread, which reads a plain file as it is, or memory) ---- */

/* The file's next PF_AHEAD bytes asked of the kernel before gzread needs
 * them, PF_AHEAD / 2 at a time: both passes read the whole file, and a
 * page of it not in the page cache was a synchronous read of the
 * kernel's small readahead window, the reading thread in D state while
 * the others waited on it (and even a cached trace loses pages between
 * two runs: docs/PERFORMANCE.md). */
#define PF_AHEAD ((uint64_t)32 << 20)

static void read_ahead(pf_reader *d)
{
    if (d->fd < 0)
        return;
    z_off_t at = gzoffset(d->gz);
    if (at < 0 || (uint64_t)at + PF_AHEAD / 2 < d->advised)
        return;
    uint64_t from = d->advised > (uint64_t)at ? d->advised : (uint64_t)at;
    (void)posix_fadvise(d->fd, (off_t)from, (off_t)((uint64_t)at + PF_AHEAD - from), POSIX_FADV_WILLNEED);
    d->advised = (uint64_t)at + PF_AHEAD;
}

static int in_fill(pf_reader *d)
{
    if (d->in_pos > 0) {
        memmove(d->in, d->in + d->in_pos, d->in_len - d->in_pos);
        d->in_off += d->in_pos;
        d->in_len -= d->in_pos;
        d->in_pos = 0;
    }
    if (d->eof || d->in_len == PF_IN_SIZE)
        return 0;
    size_t want = PF_IN_SIZE - d->in_len;
    size_t got;
    if (d->gz) {
        read_ahead(d);
        int n = gzread(d->gz, d->in + d->in_len, (unsigned)want);
        if (n < 0) {
            int e;
            const char *m = gzerror(d->gz, &e);
            return ingest_pf_fail(d, d->in_off + d->in_len, "read error: %s", e == Z_ERRNO ? strerror(errno) : m);
        }
        got = (size_t)n;
    } else {
        got = d->mem_len - d->mem_pos < want ? d->mem_len - d->mem_pos : want;
        memcpy(d->in + d->in_len, d->mem + d->mem_pos, got);
        d->mem_pos += got;
    }
    if (got == 0)
        d->eof = true;
    d->in_len += got;
    return 0;
}

/* 1: a varint read; 0: end of the stream before its first byte; -1: error */
int ingest_pf_in_varint(pf_reader *d, uint64_t *v)
{
    uint64_t at = d->in_off + d->in_pos;
    *v = 0;
    for (int i = 0; i < 10; i++) {
        if (d->in_pos == d->in_len) {
            if (in_fill(d) < 0)
                return -1;
            if (d->in_pos == d->in_len) {
                if (i == 0)
                    return 0;
                return ingest_pf_fail(d, at, "the file ends inside a varint (truncated)");
            }
        }
        unsigned char b = d->in[d->in_pos++];
        *v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return 1;
    }
    return ingest_pf_fail(d, at, "bad varint (more than 10 bytes)");
}

int ingest_pf_in_view(pf_reader *d, uint64_t n, const unsigned char **p)
{
    if (n > PF_IN_SIZE)
        return 0;
    while (d->in_len - d->in_pos < n) {
        size_t had = d->in_len - d->in_pos;
        if (in_fill(d) < 0)
            return -1;
        if (d->in_len - d->in_pos == had) /* the end of the stream */
            return 0;
    }
    *p = d->in + d->in_pos;
    d->in_pos += n;
    return 1;
}

/* n bytes into dst (NULL: skipped) */
int ingest_pf_in_bytes(pf_reader *d, unsigned char *dst, uint64_t n, uint64_t at)
{
    uint64_t want = n;
    while (n > 0) {
        if (d->in_pos == d->in_len && in_fill(d) < 0)
            return -1;
        size_t avail = d->in_len - d->in_pos;
        if (avail == 0)
            return ingest_pf_fail(d, at, "a length of %llu bytes runs past the end of the file (truncated)",
                           (unsigned long long)want);
        size_t take = avail < n ? avail : (size_t)n;
        if (dst) {
            memcpy(dst, d->in + d->in_pos, take);
            dst += take;
        }
        d->in_pos += take;
        n -= take;
    }
    return 0;
}

/* ---- wire format of a buffer (the inner Trace of compressed_packets, the
 * fields of a packet in the first pass) ---- */

/* One field at *p: its number, wire type, and for a length-delimited one
 * its bytes.  False: a bad varint, wire type or length. */
bool ingest_pf_buf_field(const unsigned char **p, const unsigned char *e, uint32_t *num, int *wt,
                      const unsigned char **val, size_t *vlen)
{
    uint64_t tag, v;
    if (!ingest_pf_varint(p, e, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
        return false;
    *num = (uint32_t)(tag >> 3);
    *wt = (int)(tag & 7);
    *val = NULL;
    *vlen = 0;
    switch (*wt) {
    case 0:
        return ingest_pf_varint(p, e, &v);
    case 1:
        if (e - *p < 8)
            return false;
        *p += 8;
        return true;
    case 5:
        if (e - *p < 4)
            return false;
        *p += 4;
        return true;
    case 2:
        if (!ingest_pf_varint(p, e, &v) || v > (uint64_t)(e - *p))
            return false;
        *val = *p;
        *vlen = (size_t)v;
        *p += v;
        return true;
    default:
        return false;
    }
}

bool ingest_perfetto_sniff(const char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    unsigned char *head = NULL;
    bool ok = false;
    if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b) { /* gzip: look at what it holds */
        size_t cap = 65536;
        head = malloc(cap);
        if (!head)
            return false;
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, 15 + 16) != Z_OK) {
            free(head);
            return false;
        }
        z.next_in = (unsigned char *)p;
        z.avail_in = (uInt)(len < UINT32_MAX ? len : UINT32_MAX);
        z.next_out = head;
        z.avail_out = (uInt)cap;
        int zr = inflate(&z, Z_SYNC_FLUSH);
        size_t n = cap - z.avail_out;
        inflateEnd(&z);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            free(head);
            return false;
        }
        p = head;
        len = n;
    }
    /* packets (field 1, length-delimited) whose own fields parse, as far
     * as the head goes; at least one whole packet, or one of more than
     * the head.  A file whose first 4 KiB or more are such packets is one
     * even when what follows is not (a corrupt or cut file: the reader
     * then says where); text parses as packets for a few bytes at most. */
    const unsigned char *q = p, *e = p + len, *good_end = p;
    int packets = 0;
    while (q < e) {
        uint64_t tag, plen;
        if (!ingest_pf_varint(&q, e, &tag) || tag != ((1u << 3) | 2) || !ingest_pf_varint(&q, e, &plen))
            break;
        const unsigned char *pe = plen > (uint64_t)(e - q) ? e : q + plen;
        bool whole = plen <= (uint64_t)(e - q);
        bool good = plen > 0;
        while (good && q < pe) {
            uint32_t num;
            int wt;
            const unsigned char *val;
            size_t vl;
            const unsigned char *at = q;
            if (!ingest_pf_buf_field(&q, e, &num, &wt, &val, &vl)) {
                /* a field cut by the end of the head is fine, in a head
                 * long enough to have shown fields before it, or when it
                 * is a length-delimited field longer than the head (a
                 * packet holding one large bundle) */
                const unsigned char *t = at;
                uint64_t ftag, flen;
                bool cut = ingest_pf_varint(&t, e, &ftag) && (ftag & 7) == 2 && (ftag >> 3) != 0 &&
                           ingest_pf_varint(&t, e, &flen) && flen > (uint64_t)(e - t);
                good = !whole && (at > p + 64 || cut);
                q = pe;
                break;
            }
            if (q > pe && whole)
                good = false;
        }
        if (!good)
            break;
        packets++;
        q = pe;
        if (whole)
            good_end = q;
        if (!whole) {
            ok = true;
            break;
        }
    }
    if ((q >= e && packets > 0) || (packets >= 2 && good_end - p >= 4096))
        ok = true;
    free(head);
    return ok;
}

/* ---- inflating compressed_packets ---- */

/* in inflated into *out (malloc'd, at most PF_PACKET_MAX).  0 or -1. */
static int inflate_packets(pf_reader *d, const ProtobufCBinaryData *in, uint64_t off, unsigned char **out,
                           size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return ingest_pf_fail(d, off, "out of memory");
    size_t cap = in->len * 4 + 4096, n = 0;
    unsigned char *b = malloc(cap);
    z.next_in = in->data;
    z.avail_in = (uInt)in->len;
    int zr = Z_OK;
    while (b && zr != Z_STREAM_END) {
        if (n == cap) {
            if (cap >= PF_PACKET_MAX) {
                inflateEnd(&z);
                free(b);
                return ingest_pf_fail(d, off, "compressed_packets inflate to more than %zu MiB", PF_PACKET_MAX >> 20);
            }
            cap *= 2;
            unsigned char *nb = realloc(b, cap);
            if (!nb)
                break;
            b = nb;
        }
        z.next_out = b + n;
        z.avail_out = (uInt)(cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (zr != Z_OK && zr != Z_STREAM_END) {
            inflateEnd(&z);
            free(b);
            return ingest_pf_fail(d, off, "compressed_packets: corrupt zlib data (%s)", z.msg ? z.msg : "inflate failed");
        }
        if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            inflateEnd(&z);
            free(b);
            return ingest_pf_fail(d, off, "compressed_packets: zlib data cut short (truncated)");
        }
    }
    inflateEnd(&z);
    if (!b)
        return ingest_pf_fail(d, off, "out of memory");
    *out = b;
    *outlen = n;
    return 0;
}

int ingest_pf_compressed(pf_reader *d, const ProtobufCBinaryData *in, uint64_t off, int depth, pf_packet_fn fn)
{
    unsigned char *b = NULL;
    size_t len = 0;
    if (inflate_packets(d, in, off, &b, &len) < 0)
        return -1;
    /* the packets inside are a Trace's: field 1 each */
    const unsigned char *q = b, *e = b + len;
    int rc = 0;
    while (rc == 0 && q < e) {
        uint32_t num;
        int wt;
        const unsigned char *val;
        size_t vl;
        if (!ingest_pf_buf_field(&q, e, &num, &wt, &val, &vl))
            rc = ingest_pf_fail(d, off, "compressed_packets: corrupt protobuf inside (bad varint or a length past the end)");
        else if (num == 1 && wt == 2 && fn(d, val, vl, off, depth + 1) < 0)
            rc = -1;
    }
    free(b);
    return rc;
}
