/* ingest/perfetto/perfetto_other_int.h -- the schema of the FtraceEvents
 * the subset (perfetto.proto) leaves out: perfetto_other_tab.c holds it,
 * perfetto_other.c reads events with it.  Not public. */
#ifndef ARGUSQ_INGEST_PERFETTO_OTHER_INT_H
#define ARGUSQ_INGEST_PERFETTO_OTHER_INT_H

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

/* How a print format's argument is shown: by its conversion (AS_IS), or
 * by one of the kernel's print helpers, whose text goes to a %s. */
typedef enum pfo_show {
    PFO_AS_IS,    /* %d %i %u %x with h, hh, l, ll, z; %s a string; %p; %pS */
    PFO_SYMBOLIC, /* __print_symbolic: names[v], a value past them 0x%lx as the kernel prints it */
    PFO_CHOICE,   /* `v ? "a" : "b"`: names[0] for 0, names[1] else */
    PFO_GFP,      /* show_gfp_flags: "none" for 0, else 0x%x (see perfetto_other_tab.c) */
    PFO_CPUMASK,  /* __get_bitmask of a cpumask of 64 bits (arm64, x86-64): 00000000,%08x */
} pfo_show;

typedef struct pfo_arg {
    uint32_t num; /* the field; 0 ends the list */
    pfo_show show;
    const char *const *names; /* PFO_SYMBOLIC, PFO_CHOICE */
    uint32_t nnames;
} pfo_arg;

#define PFO_ARGS_MAX 8

/* A kernel print format (TP_printk) and the fields of its arguments, in
 * order: the event's tracefs text is written with it and read with the
 * text reader's own pairs (ingest_ft_text_pairs), so a Perfetto event has
 * the pairs its tracefs line has.  Used when every field it names is in
 * the message with a wire type that fits. */
typedef struct pfo_print {
    const char *fmt;
    pfo_arg args[PFO_ARGS_MAX];
} pfo_print;

typedef struct pfo_event {
    uint32_t num;     /* its field number in FtraceEvent (ftrace_event.proto) */
    const char *name; /* the kernel's event name */
    uint8_t name_len; /* its length (sizeof of the literal) */
    const pfo_field *fields;
    size_t nfields;   /* 0 with fields NULL: generic (GenericFtraceEvent) */
    const pfo_print *prints; /* the forms kernels print it in, the first that fits is used; NULL: none */
    size_t nprints;
} pfo_event;

/* Sorted by num. */
extern const pfo_event pfo_events[];
extern const size_t pfo_nevents;

/* FtraceEvent's field number of GenericFtraceEvent */
#define PFO_GENERIC 327u

#endif
