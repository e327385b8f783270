/* ingest/ftrace/ftrace_page.c -- the lines of ftrace text in a file: every line
 * of a text file, and the ftrace text a systrace HTML page holds, in
 * either of the two ways Android's tools wrote it:
 *
 *   - a <script class="trace-data"> element whose body is the text
 *     (catapult's systrace; other such elements hold JSON);
 *   - the legacy page (systrace before trace-data elements, 2012-2015): a
 *     JavaScript string, `var linuxPerfData = "\` and then each line of
 *     the text ending in `\n\` (an escaped newline and a line
 *     continuation), the last one in `\n";`.
 *
 * The string is unescaped as JavaScript reads it (\n, \t, \", \\, \xHH,
 * \uXXXX, a line continuation), so its text is the text the recorder
 * wrote.  Trimmed copies of such pages (trappy's test page) drop the
 * `\n\` and the closing quote: a line break inside the string then ends
 * a line of text too, and `</script>` ends the string, as it ends the
 * script for a browser.  A line read from the string is named by the
 * file's line it came from. */
#include <stdlib.h>
#include <string.h>

#include "ftrace_int.h"

/* Where a line of the page is: outside the trace data, at the start of a
 * trace-data block (its kind not known yet), in a block of ftrace text,
 * in a block of something else (JSON), or inside linuxPerfData's string. */
enum { H_OUT, H_START, H_FTRACE, H_OTHER, H_JS };

void ingest_ft_src_init(ingest_ft_src *s, ingest_lines *lb, bool html)
{
    memset(s, 0, sizeof *s);
    s->lb = lb;
    s->html = html;
    s->state = H_OUT;
}

void ingest_ft_src_free(ingest_ft_src *s)
{
    free(s->js);
    s->js = NULL;
}

static int src_fail(const ingest_ft_src *s, char *err, size_t errlen, const char *msg)
{
    ingest_errf(err, errlen, "%s:%llu: %s", s->lb->path, (unsigned long long)s->lb->lineno, msg);
    return -1;
}

/* Appends n bytes to the string's text (the lines not handed out yet). */
static int js_put(ingest_ft_src *s, const char *b, size_t n, char *err, size_t errlen)
{
    const char *nl = n ? memrchr(b, '\n', n) : NULL;
    s->js_open = nl ? (size_t)(b + n - nl - 1) : s->js_open + n;
    if (s->js_open > INGEST_LINE_MAX)
        return src_fail(s, err, errlen, "line too long (more than 1 MiB of linuxPerfData's text without a \\n)");
    if (s->js_len + n + 1 > s->js_cap) {
        if (s->js_pos) { /* the lines handed out already make room first */
            memmove(s->js, s->js + s->js_pos, s->js_len - s->js_pos);
            s->js_len -= s->js_pos;
            s->js_pos = 0;
        }
        size_t cap = s->js_cap ? s->js_cap : 4096;
        while (s->js_len + n + 1 > cap)
            cap *= 2;
        if (cap != s->js_cap) {
            char *p = realloc(s->js, cap);
            if (!p)
                return src_fail(s, err, errlen, "out of memory");
            s->js = p;
            s->js_cap = cap;
        }
    }
    memcpy(s->js + s->js_len, b, n);
    s->js_len += n;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* n hex digits at p, or -1 */
static long hexnum(const char *p, const char *e, int n)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        int d = p + i < e ? hexval(p[i]) : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A code point as UTF-8 (the text's names are bytes; JavaScript's are
 * UTF-16 units, which \u writes). */
static size_t utf8(unsigned long cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* One escape after a backslash at *pp (moved past it) into out; its
 * length, or -1 for one JavaScript would refuse (a bad \x or \u) or that
 * would put a NUL in the text (the line scanners stop at a NUL). */
static int unescape(const char **pp, const char *e, char out[8])
{
    const char *p = *pp;
    char c = *p++;
    long v;
    size_t n = 1;
    switch (c) {
    case 'n': out[0] = '\n'; break;
    case 't': out[0] = '\t'; break;
    case 'r': out[0] = '\r'; break;
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'v': out[0] = '\v'; break;
    case '0':
        return -1;
    case 'x':
        if ((v = hexnum(p, e, 2)) <= 0)
            return -1;
        p += 2;
        n = utf8((unsigned long)v, out);
        break;
    case 'u':
        if ((v = hexnum(p, e, 4)) <= 0)
            return -1;
        p += 4;
        if (v >= 0xd800 && v < 0xdc00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            long lo = hexnum(p + 2, e, 4); /* a surrogate pair: one code point */
            if (lo >= 0xdc00 && lo < 0xe000) {
                v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            }
        }
        if (v >= 0xd800 && v < 0xe000)
            v = 0xfffd; /* a lone surrogate has no UTF-8 */
        n = utf8((unsigned long)v, out);
        break;
    default: /* \" \' \\ \/ and any other character: itself */
        out[0] = c;
        break;
    }
    *pp = p;
    return (int)n;
}

/* One line of the file inside the string: its text unescaped onto s->js.
 * Ends the string (state H_OUT) at its closing quote or at `</script>`. */
static int js_line(ingest_ft_src *s, const char *p, char *err, size_t errlen)
{
    const char *close = strstr(p, "</script>");
    const char *e = close ? close : p + strlen(p);
    bool cont = false;
    while (p < e) {
        const char *q = p;
        while (q < e && *q != '\\' && *q != '"')
            q++;
        if (js_put(s, p, (size_t)(q - p), err, errlen) < 0)
            return -1;
        p = q;
        if (p == e)
            break;
        if (*p == '"') { /* the string's end: the rest of the line is script */
            s->state = H_OUT;
            break;
        }
        if (++p == e) { /* a line continuation: the line break is no character */
            cont = true;
            break;
        }
        char b[8];
        int n = unescape(&p, e, b);
        if (n < 0)
            return src_fail(s, err, errlen,
                            "linuxPerfData's text has an escape that is not JavaScript's or makes a NUL character");
        if (js_put(s, b, (size_t)n, err, errlen) < 0)
            return -1;
    }
    if (close)
        s->state = H_OUT;
    /* a line break the page left unescaped (a trimmed page), and the
     * string's end, end a line of the text */
    bool open_line = s->js_len > s->js_pos && s->js[s->js_len - 1] != '\n';
    if (open_line && (s->state == H_OUT || !cont))
        return js_put(s, "\n", 1, err, errlen);
    return 0;
}

/* The next line of the string's text that is whole, if any. */
static bool js_take(ingest_ft_src *s, char **line, size_t *len)
{
    if (s->js_pos == s->js_len)
        return false;
    char *b = s->js + s->js_pos, *nl = memchr(b, '\n', s->js_len - s->js_pos);
    if (!nl)
        return false;
    *nl = '\0';
    *line = b;
    *len = (size_t)(nl - b);
    s->js_pos += *len + 1;
    if (*len && b[*len - 1] == '\r')
        b[--*len] = '\0';
    if (s->js_pos == s->js_len)
        s->js_pos = s->js_len = 0;
    return true;
}

/* The start of linuxPerfData's string on a line outside the trace data:
 * just after its opening quote, or NULL.  Only a line that begins with
 * the declaration: newer pages carry the trace viewer's own script, whose
 * importer of the legacy page mentions `var linuxPerfData = "` in a
 * regular expression. */
static char *js_start(char *line)
{
    char *v = line;
    while (*v == ' ' || *v == '\t')
        v++;
    if (strncmp(v, "var", 3) != 0 || (v[3] != ' ' && v[3] != '\t'))
        return NULL;
    v += 3;
    while (*v == ' ' || *v == '\t')
        v++;
    if (strncmp(v, "linuxPerfData", 13) != 0)
        return NULL;
    v += 13;
    while (*v == ' ' || *v == '\t')
        v++;
    if (*v++ != '=')
        return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    return *v == '"' ? v + 1 : NULL;
}

/* The part of an HTML line the ftrace reader should see (NULL: none),
 * moving s->state along the page; a line that opens linuxPerfData's
 * string goes to js_line (returns NULL; *rc -1 on an error). */
static char *page_part(ingest_ft_src *s, char *line, int *rc, char *err, size_t errlen)
{
    static const char open[] = "<script class=\"trace-data\"";
    if (s->state == H_JS) {
        *rc = js_line(s, line, err, errlen);
        return NULL;
    }
    if (s->state == H_OUT) {
        char *o = strstr(line, open), *js = o ? NULL : js_start(line);
        if (js) {
            s->state = H_JS;
            s->found = true;
            *rc = js_line(s, js, err, errlen);
            return NULL;
        }
        char *gt = o ? strchr(o, '>') : NULL;
        if (!gt)
            return NULL;
        s->state = H_START;
        line = gt + 1;
    }
    char *close = strstr(line, "</script>");
    if (close)
        *close = '\0';
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (s->state == H_START && *p)
        s->state = (*p == '{' || *p == '[') ? H_OTHER : H_FTRACE;
    int now = s->state;
    if (close)
        s->state = H_OUT;
    if (now != H_FTRACE)
        return NULL;
    s->found = true;
    /* the page indents the block's closing tag: that line is empty */
    return line;
}

int ingest_ft_src_next(ingest_ft_src *s, char **line, size_t *len, char *err, size_t errlen)
{
    for (;;) {
        if (js_take(s, line, len))
            return 1;
        int n = ingest_lines_next(s->lb, line, len, err, errlen);
        s->lineno = s->lb->lineno;
        if (n <= 0 || !s->html)
            return n;
        int rc = 0;
        char *part = page_part(s, *line, &rc, err, errlen);
        if (rc < 0)
            return -1;
        if (!part)
            continue;
        *len = strlen(part);
        *line = part;
        return 1;
    }
}
