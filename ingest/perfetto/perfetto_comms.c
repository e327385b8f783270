/* ingest/perfetto/perfetto_comms.c -- the Perfetto reader's interned comms: the
 * comms of held events by a 32-bit id (perfetto_int.h's pf_comms), so a
 * held event is self-contained and its packet's arena goes back to the
 * pool when the packet is decoded, not 65,536 events later when its last
 * event is handed on (perfetto.c).  An Android trace has a few hundred
 * distinct comms; the table holds PF_COMMS_MAX, in 84 KiB made at the
 * first, and says PF_COMM_NONE past that (the event then stays in its
 * arena form, whose output is the same).  Lookups are inline
 * (ingest_pf_comm_id); here the insert, once a comm. */
#include <stdlib.h>

#include "perfetto_int.h"

_Static_assert(PF_COMMS_MAX <= 65536 && 2 * PF_COMMS_MAX <= PF_COMMS_SLOTS, "ids in the slots' 16 bits, the table half full at most");
_Static_assert((PF_COMMS_SLOTS & (PF_COMMS_SLOTS - 1)) == 0, "slots: a power of two");

uint32_t ingest_pf_comm_add(pf_comms *t, const uint64_t w[2], size_t n, size_t at)
{
    if (!t->slot) {
        t->slot = calloc(PF_COMMS_SLOTS, sizeof *t->slot);
        t->s = malloc(PF_COMMS_MAX * sizeof *t->s);
        t->len = malloc(PF_COMMS_MAX);
        if (!t->slot || !t->s || !t->len) {
            ingest_pf_comms_free(t);
            return PF_COMM_NONE;
        }
        memset(t->s[0], 0, sizeof t->s[0]);
        t->len[0] = 0;
        t->n = 1; /* "" */
        at = (size_t)(pf_comm_hash(w) >> 40) & (PF_COMMS_SLOTS - 1);
    }
    if (t->n == PF_COMMS_MAX)
        return PF_COMM_NONE;
    uint32_t id = t->n++;
    memcpy(t->s[id], w, 16);
    t->len[id] = (uint8_t)n;
    t->slot[at] = (uint16_t)id;
    return id;
}

void ingest_pf_comms_free(pf_comms *t)
{
    free(t->slot);
    free(t->s);
    free(t->len);
    memset(t, 0, sizeof *t);
}
