/* base/base_int.h -- the shape of a machine's table, shared by base/arch.c
 * and the tables base/syscalls.sh generates; nothing else includes it. */
#ifndef ARGUSQ_BASE_INT_H
#define ARGUSQ_BASE_INT_H

#include "base.h"

typedef struct base_syscall {
    const char *name;
    uint32_t nr;
} base_syscall;

struct base_arch {
    const char *name;
    const char *const *names; /* by number; NULL where none */
    size_t count;             /* one past the highest number */
    const base_syscall *byname; /* sorted by name (strcmp) */
    size_t nbyname;
};

/* the generated tables (build/gen/syscalls.c), in BASE_ARCH_LIST's order */
extern const struct base_arch base_arches[];
extern const size_t base_narches;

#endif
