/* bench/scale_ftrace.c -- a large ftrace text trace from a recorded one.
 *
 *   scale_ftrace K IN OUT
 *
 * Writes IN (a `trace-cmd report [-l]` or tracefs text trace) K times to
 * OUT, copy k with every event timestamp shifted by k * (span + 1 s),
 * span being the last timestamp minus the first, so the copies follow one
 * another in time and OUT stays in time order.  Pids and tids are kept:
 * the same tasks run the same workload again, later.  Lines without a
 * timestamp (the `cpus=N` header) are written with the first copy only.
 * Streams: one line in memory at a time. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The timestamp of an event line: the first token "DIGITS.DIGITS:" that
 * follows a blank.  Sets *at, *len (of the digits, colon excluded), and
 * returns the value in units of the last fraction digit (*frac digits). */
static int find_ts(const char *s, const char **at, size_t *len, int *frac, uint64_t *val)
{
    for (const char *p = strstr(s, ": "); p; p = strstr(p + 1, ": ")) {
        const char *q = p;
        int f = 0;
        while (q > s && q[-1] >= '0' && q[-1] <= '9')
            q--, f++;
        if (f == 0 || q == s || q[-1] != '.')
            continue;
        const char *dot = q - 1;
        q = dot;
        while (q > s && q[-1] >= '0' && q[-1] <= '9')
            q--;
        if (q == dot || (q > s && q[-1] != ' ' && q[-1] != '\t'))
            continue;
        uint64_t v = 0;
        for (const char *d = q; d < p; d++)
            if (d != dot)
                v = v * 10 + (uint64_t)(*d - '0');
        *at = q;
        *len = (size_t)(p - q);
        *frac = f;
        *val = v;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: scale_ftrace K IN OUT\n");
        return 2;
    }
    long k = strtol(argv[1], NULL, 10);
    FILE *in = fopen(argv[2], "r");
    if (!in) {
        perror(argv[2]);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lo = UINT64_MAX, hi = 0, events = 0;
    int frac = -1;
    while ((n = getline(&line, &cap, in)) > 0) {
        const char *at;
        size_t len;
        int f;
        uint64_t v;
        if (!find_ts(line, &at, &len, &f, &v))
            continue;
        if (frac < 0)
            frac = f;
        if (f != frac) {
            fprintf(stderr, "scale_ftrace: %s: timestamps with %d and %d decimals\n", argv[2], frac, f);
            return 1;
        }
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        events++;
    }
    if (!events) {
        fprintf(stderr, "scale_ftrace: %s: no event lines\n", argv[2]);
        return 1;
    }
    uint64_t unit = 1;
    for (int i = 0; i < frac; i++)
        unit *= 10;
    uint64_t shift = hi - lo + unit; /* span + 1 s */

    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 2;
    }
    static char obuf[1 << 20];
    setvbuf(out, obuf, _IOFBF, sizeof obuf);
    for (long c = 0; c < k; c++) {
        rewind(in);
        while ((n = getline(&line, &cap, in)) > 0) {
            const char *at;
            size_t len;
            int f;
            uint64_t v;
            if (!find_ts(line, &at, &len, &f, &v)) {
                if (c == 0)
                    fwrite(line, 1, (size_t)n, out);
                continue;
            }
            v += (uint64_t)c * shift;
            char ts[48];
            int tl = snprintf(ts, sizeof ts, "%" PRIu64 ".%0*" PRIu64, v / unit, frac, v % unit);
            /* keep the column: pad on the left when the new stamp is no longer */
            size_t pre = (size_t)(at - line);
            if ((size_t)tl < len) {
                fwrite(line, 1, pre, out);
                for (size_t i = (size_t)tl; i < len; i++)
                    fputc(' ', out);
            } else {
                size_t trim = 0; /* eat blanks before the stamp, up to the extra width, keeping one */
                while (trim < (size_t)tl - len && pre - trim > 1 && line[pre - trim - 1] == ' ' &&
                       line[pre - trim - 2] == ' ')
                    trim++;
                fwrite(line, 1, pre - trim, out);
            }
            fwrite(ts, 1, (size_t)tl, out);
            fwrite(at + len, 1, (size_t)n - pre - len, out);
        }
    }
    free(line);
    fclose(in);
    if (fflush(out) != 0 || fclose(out) != 0) {
        perror(argv[3]);
        return 2;
    }
    fprintf(stderr, "scale_ftrace: %" PRIu64 " events x %ld copies\n", events, k);
    return 0;
}
