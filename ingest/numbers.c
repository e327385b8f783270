/* ingest/numbers.c -- numbers parsed from a reader's text and printed
 * into an event's attributes, by hand: they are on every event's path,
 * where strtoull's and printf's generality costs more than the work. */
#include <stdint.h>
#include <string.h>

#include "ingest_int.h"

/* ---- text to numbers, over [p, p + n) ---- */

bool ingest_dec_u64_long(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool ingest_dec_i64(const char *p, size_t n, int64_t *out)
{
    uint64_t v;
    bool neg = n > 0 && p[0] == '-';
    if (!ingest_dec_u64(p + neg, n - neg, &v) || v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* hex with or without 0x (tracefs prints hashed pointers without it) */
bool ingest_hex_u64(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        n -= 2;
    }
    if (n == 0 || n > 16)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* ---- numbers to text ---- */

size_t ingest_fmt_i64_03(char *b, int64_t v)
{
    /* by hand: snprintf showed in a Perfetto ingest's reading thread
     * (docs/PERFORMANCE.md); the sign counts in the width, as in printf */
    if (v >= 0 && v < 1000) {
        /* a CPU's number, all a wakeup's target_cpu ever is: its three
         * digits at once, not through base_fmt_u64 and a padding loop */
        b[0] = (char)('0' + v / 100);
        b[1] = (char)('0' + v / 10 % 10);
        b[2] = (char)('0' + v % 10);
        return 3;
    }
    char t[24];
    size_t n = 0, s = v < 0;
    if (s)
        b[n++] = '-';
    size_t k = base_fmt_u64(t, s ? 0 - (uint64_t)v : (uint64_t)v);
    for (; n + k < 3; n++)
        b[n] = '0';
    memcpy(b + n, t, k);
    return n + k;
}

