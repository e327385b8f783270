/* base/fmt.c -- numbers in decimal, one writer of them for every stage
 * (base.h). */
#include "base.h"

/* never inlined, nor split into an inlined head: with its paths to
 * eight digits, gcc split it and inlined the head into the reader's
 * callers, which then no longer inlined the Perfetto emit into the
 * merge */
__attribute__((noinline)) size_t base_fmt_u64(char *b, uint64_t v)
{
    /* two digits a division, written from the end: nanosecond times have
     * 19 digits, and a digit at a time showed in a Perfetto ingest's
     * reading thread (docs/PERFORMANCE.md); the length first, so the
     * digits go straight to b
     * (a copy's memcpy call cost as much as a small number's digits) */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    /* the numbers of events are mostly small (a prio, a state, a cpu, a
     * pid): up to four digits without the loops */
    if (v < 100) {
        if (v < 10) {
            b[0] = (char)('0' + v);
            return 1;
        }
        memcpy(b, pairs + 2 * v, 2);
        return 2;
    }
    if (v < 10000) {
        unsigned hi = (unsigned)v / 100, lo = (unsigned)v % 100;
        if (hi < 10) {
            b[0] = (char)('0' + hi);
            memcpy(b + 1, pairs + 2 * lo, 2);
            return 3;
        }
        memcpy(b, pairs + 2 * hi, 2);
        memcpy(b + 2, pairs + 2 * lo, 2);
        return 4;
    }
    /* five digits: most of the rest are pids (Android's run past 10000),
     * which the general path below takes longer over */
    if (v < 100000) {
        unsigned u = (unsigned)v, rest = u % 10000;
        b[0] = (char)('0' + u / 10000);
        memcpy(b + 1, pairs + 2 * (rest / 100), 2);
        memcpy(b + 3, pairs + 2 * (rest % 100), 2);
        return 5;
    }
    /* six to eight digits (rss_stat's sizes and mm_ids, common in
     * Android traces): four digits and the rest, two pairs and up to four
     * digits, hi at least 10 */
    if (v < 100000000) {
        unsigned u = (unsigned)v, hi = u / 10000, lo = u % 10000;
        size_t n;
        if (hi < 100) {
            memcpy(b, pairs + 2 * hi, 2);
            n = 2;
        } else if (hi < 1000) {
            b[0] = (char)('0' + hi / 100);
            memcpy(b + 1, pairs + 2 * (hi % 100), 2);
            n = 3;
        } else {
            memcpy(b, pairs + 2 * (hi / 100), 2);
            memcpy(b + 2, pairs + 2 * (hi % 100), 2);
            n = 4;
        }
        memcpy(b + n, pairs + 2 * (lo / 100), 2);
        memcpy(b + n + 2, pairs + 2 * (lo % 100), 2);
        return n + 4;
    }
    /* nine digits or more (rss_stat's sizes and mm_ids): the
     * length from the highest bit (bits * 1233 / 4096 is the log10 of its
     * power of two) and one compare, not a loop of them; the pairs above
     * 2^32 by 64-bit divisions, the rest by 32-bit ones */
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* the digits, or one fewer */
    size_t n = t + (v >= pow10[t]);
    char *q = b + n;
    while (v > UINT32_MAX) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        unsigned r = w % 100;
        w /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    v = w;
    if (v >= 10)
        memcpy(q - 2, pairs + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return n;
}

size_t base_fmt_i64(char *b, int64_t v)
{
    if (v >= 0)
        return base_fmt_u64(b, (uint64_t)v);
    b[0] = '-';
    return 1 + base_fmt_u64(b + 1, 0 - (uint64_t)v);
}

size_t base_fmt_hex(char *b, uint64_t v, int min)
{
    static const char digit[] = "0123456789abcdef";
    char t[16];
    int n = 0;
    do
        t[n++] = digit[v & 15];
    while ((v >>= 4) != 0);
    while (n < min && n < 16)
        t[n++] = '0';
    for (int i = 0; i < n; i++)
        b[i] = t[n - 1 - i];
    return (size_t)n;
}
