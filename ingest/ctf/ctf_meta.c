/* ingest/ctf/ctf_meta.c -- where a CTF trace's metadata is damaged, in the
 * words of babeltrace2's metadata parser.
 *
 * libbabeltrace2 2.0's source.ctf.fs fails a trace whose metadata does not
 * parse with one error cause, "Cannot create trace for `DIR`"; the
 * parser's own complaint ("At line 10 in metadata stream: syntax error,
 * ...") is only logged, with write(2) on fd 2, and only at the
 * level the ctf plugin read from its environment when it was loaded (no
 * cause, no logging callback in 2.0).  So on that failure the reader
 * loads the plugin anew with that level set and creates the component
 * once more with fd 2 sent to a temporary file (ctf.c), and these functions
 * find the complaint in what was logged and the place of its line in the
 * metadata file: the parser counts lines of the metadata text, which a
 * packetized file (LTTng's) holds in packets behind binary headers. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf_int.h"

#define CTF_META_MAGIC 0x75D11D57u
#define CTF_META_HEADER 37 /* magic, uuid[16], checksum, content_size, packet_size, 5 bytes */

/* One log line without its terminal colours (ESC [ ... letter). */
static size_t uncolour(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
            i += 2;
            while (i < n && !isalpha((unsigned char)s[i]))
                i++;
            continue;
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return o;
}

/* babeltrace2's log line: "MM-DD HH:MM:SS.mmm PID TID L TAG ...". */
static bool is_log_line(const char *s)
{
    static const char shape[] = "99-99 99:99:99.999 ";
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == '9' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    return true;
}

bool ingest_ctf_meta_complaint(const char *log, size_t len, unsigned *line, char *msg, size_t cap, FILE *other)
{
    static const char at[] = "At line ", in[] = " in metadata stream: ";
    bool found = false;
    char buf[2048];
    const char *end = log + len;
    for (const char *s = log; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        uncolour(s, (size_t)(e - s), buf, sizeof buf);
        s = nl ? nl + 1 : end;
        if (!is_log_line(buf)) {
            /* not babeltrace2's: another thread's, written while fd 2 was
             * borrowed */
            if (other && (buf[0] || nl))
                fprintf(other, "%s\n", buf);
            continue;
        }
        const char *a = strstr(buf, at), *b = a ? strstr(a, in) : NULL;
        char *num_end;
        unsigned long n = a ? strtoul(a + sizeof at - 1, &num_end, 10) : 0;
        /* the first is the root: the lexer's or the parser's, before the
         * decoder's and the component's own wrapping of it; a line 0 is
         * the IR visitor's summary, not a place */
        if (found || !b || n == 0 || num_end != b)
            continue;
        *line = (unsigned)n;
        snprintf(msg, cap, "%s", b + sizeof in - 1);
        found = true;
    }
    return found;
}

static uint32_t rd32(const unsigned char *p, bool be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int ingest_ctf_meta_locate(const char *path, unsigned line, ctf_meta_place *where)
{
    memset(where, 0, sizeof *where);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char h[CTF_META_HEADER];
    unsigned n = 1; /* the line the next text byte is on */
    int rc = 0;
    long off = 0;
    while (fread(h, 1, sizeof h, f) == sizeof h) {
        uint32_t m = rd32(h, false);
        bool be = m != CTF_META_MAGIC;
        if (be && rd32(h, true) != CTF_META_MAGIC)
            break; /* text metadata (the first packet), or the end of the packets */
        uint64_t content = rd32(h + 24, be) / 8, size = rd32(h + 28, be) / 8;
        if (content < sizeof h || size < content)
            break;
        where->packetized = true;
        where->packets++;
        long text = off + (long)sizeof h;
        for (uint64_t i = 0; i < content - sizeof h; i++) {
            int c = getc(f);
            if (c == EOF)
                break;
            if (n == line && !where->found) {
                where->found = true;
                where->packet = where->packets;
                where->offset = (uint64_t)(text + (long)i);
            }
            if (c == '\n')
                n++;
        }
        where->end = (uint64_t)text + (content - sizeof h);
        off += (long)size;
        if (fseek(f, off, SEEK_SET) != 0)
            break;
    }
    /* the parser's "unexpected end" is on the line after the last newline */
    if (where->packetized && !where->found && n == line) {
        where->found = true;
        where->packet = where->packets;
        where->offset = where->end;
    }
    if (ferror(f))
        rc = -1;
    fclose(f);
    return rc;
}
