/* ingest/perfetto_other.h -- the schema of the FtraceEvents the subset
 * (perfetto.proto) leaves out: perfetto_other_tab.c holds it,
 * perfetto_other.c reads events with it.  Not public. */
#ifndef ARGUSQ_INGEST_PERFETTO_OTHER_H
#define ARGUSQ_INGEST_PERFETTO_OTHER_H

#include <stddef.h>
#include <stdint.h>

/* How a field's value is written.  Perfetto's ftrace protos use
 * int32/int64 for the kernel's signed fields: two's complement varints
 * (a negative int32 takes ten bytes), never zigzag (sint32). */
typedef enum pfo_kind {
    PFO_U32, /* uint32: the varint's low 32 bits, decimal */
    PFO_U64, /* uint64: decimal */
    PFO_I32, /* int32: the low 32 bits as signed, decimal with '-' */
    PFO_I64, /* int64: decimal with '-' */
    PFO_STR, /* string: as it is, to its first NUL, without a trailing newline */
} pfo_kind;

typedef struct pfo_field {
    uint32_t num;     /* the field's number in its message */
    pfo_kind kind;
    const char *name; /* the kernel's format field name: the pair's key */
} pfo_field;

typedef struct pfo_event {
    uint32_t num;     /* its field number in FtraceEvent (ftrace_event.proto) */
    const char *name; /* the kernel's event name */
    const pfo_field *fields;
    size_t nfields;   /* 0 with fields NULL: generic (GenericFtraceEvent) */
} pfo_event;

/* Sorted by num. */
extern const pfo_event pfo_events[];
extern const size_t pfo_nevents;

/* FtraceEvent's field number of GenericFtraceEvent */
#define PFO_GENERIC 327u

#endif
