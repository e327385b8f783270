/* base/arch.c -- a machine by its name, and its syscalls by number and by
 * name (base.h). */
#include <assert.h>
#include <string.h>

#include "base_int.h"

/* uname -m's spellings (and Debian's and Go's) of each machine */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"x86-64", "x86_64"}, {"amd64", "x86_64"},  {"aarch64", "arm64"}, {"armv8", "arm64"},
    {"armv7l", "arm"},    {"armv7", "arm"},     {"armv6l", "arm"},    {"armv8l", "arm"},
    {"armhf", "arm"},     {"armel", "arm"},     {"i486", "i386"},     {"i586", "i386"},
    {"i686", "i386"},     {"x86", "i386"},      {"riscv", "riscv64"},
};

const base_arch *base_arch_find(const char *machine)
{
    if (!machine || !*machine)
        return NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(machine, aliases[i].alias) == 0) {
            machine = aliases[i].name;
            break;
        }
    for (size_t i = 0; i < base_narches; i++)
        if (strcmp(machine, base_arches[i].name) == 0)
            return &base_arches[i];
    return NULL;
}

const char *base_arch_name(const base_arch *a) { return a->name; }

size_t base_arch_count(const base_arch *a) { return a->count; }

const char *base_arch_syscall(const base_arch *a, uint64_t nr)
{
    return nr < a->count ? a->names[nr] : NULL;
}

bool base_arch_syscall_nr(const base_arch *a, const char *name, size_t len, uint32_t *nr)
{
    assert(a && name);
    size_t lo = 0, hi = a->nbyname;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = a->byname[mid].name;
        int c = strncmp(name, m, len);
        if (c == 0 && m[len])
            c = -1; /* name is a prefix of m: it sorts first */
        if (c == 0) {
            *nr = a->byname[mid].nr;
            return true;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}
