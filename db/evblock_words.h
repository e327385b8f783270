/* db/evblock_words.h -- the event block encoder's byte work (private to
 * db/evblock_enc.c): strings read as words (head_word, tail_word), the
 * encoder's own hashes, equality eight bytes a step, the canonical
 * decimal and hex numbers a value is written as, and a value or an entry
 * of an event's text found a word at a time.  None of it knows the
 * encoder's tables; all of it is inline, as it runs for every key and
 * value of every event (docs/PERFORMANCE.md keeps what was measured). */
#ifndef ARGUSQ_DB_EVBLOCK_WORDS_H
#define ARGUSQ_DB_EVBLOCK_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EVB_LE 1 /* a word loaded from bytes has the first in its low bits */
#else
#define EVB_LE 0
#endif

/* The last n bytes (1 to 7) of a string as a number, in two loads that
 * may overlap and never read past them, instead of a loop over the bytes:
 * most keys and values of events are short ("prio", "120", "sleep").  On
 * a little-endian machine the second load is
 * shifted onto the first's overlapping bytes, which makes the number the
 * one a load of the bytes with zeros past them gives: what
 * put_keyed_values has after masking a word of an event's text. */
static inline uint64_t tail_word(const unsigned char *s, size_t n)
{
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        return a | (uint64_t)b << (EVB_LE ? 8 * (n - 4) : 32);
    }
    if (n >= 2) {
        uint16_t a, b;
        memcpy(&a, s, 2);
        memcpy(&b, s + n - 2, 2);
        return a | (uint64_t)b << (EVB_LE ? 8 * (n - 2) : 16);
    }
    return s[0];
}

/* A string's first eight bytes (all of a shorter one, zeros past them):
 * the string table keeps it, so that a string of up to eight bytes is
 * compared in one step (str_find). */
static inline uint64_t head_word(const unsigned char *s, size_t n)
{
    uint64_t w;
    if (n >= 8) {
        memcpy(&w, s, 8);
        return w;
    }
    return n ? tail_word(s, n) : 0;
}

/* Sixteen bytes into h: each word multiplied in, the first's high bits
 * rotated down to meet the second's low ones. */
static inline uint64_t hash_step16(uint64_t h, const unsigned char *s)
{
    uint64_t w, z;
    memcpy(&w, s, 8);
    memcpy(&z, s + 8, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return ((h << 31 | h >> 33) ^ z) * 0xc4ceb9fe1a85ec53ull;
}

/* The hash of a string of n <= 8 bytes from its head_word w, which
 * put_keyed_values has without reading the string again: its high half
 * folded onto its low one, then one multiply, whose bits 32 to 44 (the
 * string table's slot) depend on every bit of w (two multiplies and
 * shifts cost more, for every value). */
static inline uint32_t hash_head(uint64_t w, size_t n)
{
    return (uint32_t)(((w ^ w >> 32 ^ n) * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The encoder's own tables' hash (never stored): eight bytes a step, as
 * every key and value of every event goes through it -- byte-wise FNV was
 * a large share of the graph thread's time in an ingest.  In two parts: the
 * long strings' loop out of line, so that the short ones' few loads and
 * multiplies inline into their callers (hash_bytes whole was too big to
 * inline: a call for each value).
 *
 * More than sixteen bytes: an event's attributes (the memo's key; about
 * 100 bytes an event): sixteen bytes a step in two multiplies, the last
 * sixteen overlapping, instead of eight in a multiply and a shift */
static inline uint32_t hash_long_inline(const unsigned char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    const unsigned char *last = s + n - 16;
    for (; last - s > 16; s += 32) /* two steps a turn of the loop: the same hash */
        h = hash_step16(hash_step16(h, s), s + 16);
    if (s < last)
        h = hash_step16(h, s);
    h = hash_step16(h, last);
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

/* A hash of a string of more than EVB_SAMPLED bytes from samples of it:
 * its first 32 bytes, the 16 in its middle and its last 32, and its
 * length.  The memo's key, an event's attributes (about 100 bytes a
 * switch), hashed whole at a fixed cost; strings equal in the samples
 * collide (EVB_MEMO_PROBE bounds what that costs), which makes a few more
 * of the memo's compares fail.  The middle sixteen are kept, though they
 * cost a little, for events that differ only there. */
#define EVB_SAMPLED 64u
static inline uint32_t hash_sampled(const unsigned char *s, size_t n)
{
    uint64_t h = hash_step16(hash_step16(0x9e3779b97f4a7c15ull ^ n, s), s + 16);
    h = hash_step16(h, s + n / 2 - 8);
    h = hash_step16(hash_step16(h, s + n - 32), s + n - 16);
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

/* hash_long_inline out of line, for every string but an event's
 * attributes: the memo's hash of those, once an event, has it inline
 * (memo_hash). */
static __attribute__((noinline)) uint32_t hash_long(const unsigned char *s, size_t n)
{
    return hash_long_inline(s, n);
}

/* The hash of a string of n <= 16 bytes whose head_word is head (a
 * comm, a key: its first and last 8 bytes, no loop): the head multiplied,
 * the last eight bytes added, the high half folded onto the low one and
 * multiplied again, as hash_head (names, keys and comms were hashed by
 * three multiplies and shifts before). */
static inline uint32_t hash_short(const unsigned char *s, size_t n, uint64_t head)
{
    if (n <= 8)
        return hash_head(head, n);
    uint64_t z;
    memcpy(&z, s + n - 8, 8);
    uint64_t h = (head ^ n) * 0xff51afd7ed558ccdull ^ z;
    return (uint32_t)(((h ^ h >> 32) * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The hash of any string, and its head_word (*head). */
static inline uint32_t hash_str(const void *p, size_t n, uint64_t *head)
{
    const unsigned char *s = p;
    *head = head_word(s, n);
    return n > 16 ? hash_long(s, n) : hash_short(s, n, *head);
}

static inline uint32_t hash_bytes(const void *p, size_t n)
{
    uint64_t head;
    return hash_str(p, n, &head);
}

/* n bytes equal?  Eight at a time, inline: the strings are short, and a
 * call to memcmp for each showed in an ftrace ingest's time
 * (docs/PERFORMANCE.md). */
static inline bool bytes_eq(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n > 8 && n <= 16) { /* the first and the last 8 bytes, which overlap */
        uint64_t z, w;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&z, a + n - 8, 8);
        memcpy(&w, b + n - 8, 8);
        return x == y && z == w;
    }
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return false;
    }
    return !n || tail_word((const unsigned char *)a, n) == tail_word((const unsigned char *)b, n);
}

/* canon_dec of 1 to 8 bytes (no leading zero: the caller saw to it),
 * from their head word on a little-endian machine: each byte's digit
 * (its xor with '0') checked to be below 10 at once, then the eight
 * combined in pairs, fours and the whole by three multiplies (the first
 * digit is the low byte; shifted up, the missing ones are leading
 * zeros), not a loop per digit for every new value. */
static inline bool canon_dec_head(uint64_t w, size_t n, uint64_t *out)
{
    uint64_t mask = n == 8 ? ~0ull : (1ull << 8 * n) - 1;
    uint64_t d = w ^ (0x3030303030303030ull & mask);
    /* a byte of 10 or more has its top bit set in d or in d + 0x76 */
    if ((d | (d + (0x7676767676767676ull & mask))) & 0x8080808080808080ull & mask)
        return false;
    d <<= 8 * (8 - n);
    d = (d * 10 + (d >> 8)) & 0x00ff00ff00ff00ffull;
    d = (d * 100 + (d >> 16)) & 0x0000ffff0000ffffull;
    *out = (d * 10000 + (d >> 32)) & 0xffffffffull;
    return true;
}

/* Decimal without sign or leading zeros, below 2^62 (head: the string's
 * head_word). */
static inline bool canon_dec(const char *s, size_t n, uint64_t head, uint64_t *out)
{
    if (n == 0 || n > 18 || (s[0] == '0' && n > 1))
        return false;
    if (EVB_LE && n <= 8)
        return canon_dec_head(head, n, out);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* 0x and lowercase hex digits without leading zeros ("0x0" for zero). */
static inline bool canon_hex(const char *s, size_t n, uint64_t *out)
{
    if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || (s[2] == '0' && n > 3))
        return false;
    uint64_t v = 0;
    for (size_t i = 2; i < n; i++) {
        char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

/* The eight bytes at a + v of the text a[0, alen) (alen >= 8), zeros
 * past its end: near the end, its last eight bytes shifted. */
static inline uint64_t text_word(const char *a, size_t v, size_t alen)
{
    uint64_t x = 0;
    if (alen - v >= 8)
        memcpy(&x, a + v, 8);
    else if (v < alen) {
        memcpy(&x, a + alen - 8, 8);
        x >>= 8 * (8 - (alen - v));
    }
    return x;
}

/* The bytes of x before its first zero, 8 if none. */
static inline size_t word_nul(uint64_t x)
{
    uint64_t z = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull; /* its lowest: the first NUL */
    return z ? (unsigned)__builtin_ctzll(z) >> 3 : 8;
}

/* The value at a + v of the text a[0, alen), up to its NUL or the end,
 * when it is shorter than sixteen bytes (a number, a state, a comm): its
 * length *n and its head_word *w, from one or two loads.  false for a
 * longer value, a text shorter than eight bytes or on a big-endian
 * machine. */
static inline bool short_value(const char *a, size_t v, size_t alen, uint64_t *w, size_t *n)
{
    if (!EVB_LE || alen < 8)
        return false;
    uint64_t x = text_word(a, v, alen);
    size_t k = word_nul(x);
    if (k < 8) {
        *n = k;
        *w = x & ((1ull << 8 * k) - 1);
        return true;
    }
    *w = x; /* eight bytes, so v + 8 <= alen */
    *n = 8 + word_nul(text_word(a, v + 8, alen));
    return *n < 16;
}

/* Where the entry from p ends: its NUL, or end.  Eight bytes a step (a
 * value is mostly shorter: "120", "sleep", "kworker/u16:0"). */
static inline size_t entry_end(const char *a, size_t p, size_t end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - p >= 8; p += 8) {
        uint64_t w;
        memcpy(&w, a + p, 8);
        uint64_t z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull; /* its lowest: the first NUL */
        if (z)
            return p + ((unsigned)__builtin_ctzll(z) >> 3);
    }
#endif
    while (p < end && a[p])
        p++;
    return p;
}

#endif
