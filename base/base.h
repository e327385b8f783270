/* base/base.h -- what every stage shares and no stage owns: the machines
 * argusq knows, each with its kernel's syscall table.
 *
 * A raw syscall event gives a number; its name is the machine's (NR 240 is
 * futex on 32-bit ARM and i386, mq_open on x86-64), so a reader names it
 * only when the trace's machine is known (paper/000 1.b: a syscall is a
 * node's event by name).  The tables are generated at build time from the
 * kernel's headers (base/syscalls.sh). */
#ifndef ARGUSQ_BASE_H
#define ARGUSQ_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the machines, as `ingest --arch` and the messages list them */
#define BASE_ARCH_LIST "x86_64, arm64, arm, i386, riscv64"

typedef struct base_arch base_arch; /* static: never freed */

/* The machine called `machine` ("x86_64", or as uname -m, a trace.dat or
 * a Perfetto trace name it: "amd64", "aarch64", "armv7l", "i686", ...);
 * NULL for NULL, "" or a machine argusq has no table of. */
const base_arch *base_arch_find(const char *machine);
/* Its one name: "x86_64", "arm64", "arm", "i386", "riscv64". */
const char *base_arch_name(const base_arch *a);
/* One past a's highest syscall number. */
size_t base_arch_count(const base_arch *a);
/* The name of syscall nr on a, NULL if a has none of that number. */
const char *base_arch_syscall(const base_arch *a, uint64_t nr);
/* The number of the syscall called name (len bytes) on a: true and *nr,
 * or false if a has none of that name. */
bool base_arch_syscall_nr(const base_arch *a, const char *name, size_t len, uint32_t *nr);

#endif
