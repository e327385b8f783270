/* record/record_watch.c -- `argusq record --watch SYMBOL` (paper/003,
 * "Tracing Data Flags": bp_watch).
 *
 * The paper loads a watchpoint handler into the target that calls
 * kdebug_trace with the flag's value.  The Linux counterpart here needs
 * nothing in the target: for each watched variable two hardware
 * watchpoints are opened with perf_event_open on CMD's first thread, with
 * `inherit` so that every thread (and child) it creates has them too --
 * one that fires on writes, one on every access (x86 cannot watch reads
 * alone).  A small BPF program is attached to each.  A watchpoint fires
 * right after the accessing instruction, in the accessing thread; the
 * program reads the variable's value there and writes
 *
 *     argus: flag_write addr=0xADDR value=N sym="NAME"
 *     argus: flag_read addr=0xADDR value=N sym="NAME"
 *
 * into the ftrace ring buffer with bpf_trace_printk (event
 * bpf_trace:bpf_trace_printk).  The line is therefore recorded like any
 * other event: on the thread that made the access, on its CPU, with the
 * trace clock's timestamp of the access, in the trace.dat itself, and the
 * ingest maps it as it maps trace_marker lines of that form.  Nothing is
 * merged after the fact.
 *
 * A write fires both watchpoints.  The write program runs first (it is
 * the group leader, installed in the lower debug register, and the kernel
 * handles the debug registers in order); it notes (thread, instruction) in
 * a per-CPU map, and the access program skips the access it finds noted
 * there, so a write is one flag_write and a read one flag_read.  Only
 * accesses by CMD's own process (its TGID) are recorded; a child process
 * inherits the watchpoints but its accesses are dropped. */
#include <elf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "record_int.h"

typedef struct watch {
    char name[200];
    uint64_t value; /* st_value */
    uint32_t size;  /* 1, 2, 4 or 8 */
    uint64_t addr;  /* in the running CMD */
    int fd_w, fd_rw, prog_w, prog_rw;
} watch;

struct record_watch {
    watch w[RECORD_WATCH_MAX];
    size_t n;
    bool pie;            /* ET_DYN: addresses move with the load base */
    uint64_t min_vaddr;  /* lowest PT_LOAD p_vaddr, page aligned */
    char exe[4096];
    int map_fd;
};

static void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- the ELF symbol table ---- */

static int elf_find(record_watch *rw, const unsigned char *m, size_t sz, char *err, size_t errlen)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (sz < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        errf(err, errlen, "%s: not an ELF file", rw->exe);
        return -1;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64) {
        errf(err, errlen, "%s: --watch needs an x86-64 ELF executable", rw->exe);
        return -1;
    }
    rw->pie = eh->e_type == ET_DYN;
    if (eh->e_phoff > sz || (sz - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum ||
        eh->e_shoff > sz || (sz - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
        errf(err, errlen, "%s: ELF headers out of the file", rw->exe);
        return -1;
    }
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + eh->e_phoff);
    bool first = true;
    for (size_t i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (first || ph[i].p_vaddr < rw->min_vaddr)) {
            rw->min_vaddr = ph[i].p_vaddr;
            first = false;
        }
    rw->min_vaddr &= ~(uint64_t)4095;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    size_t found = 0;
    /* .symtab first (all globals, static ones too), else .dynsym */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (size_t i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum)
                continue;
            const Elf64_Shdr *strs = &sh[sh[i].sh_link];
            if (sh[i].sh_offset > sz || sh[i].sh_size > sz - sh[i].sh_offset || strs->sh_offset > sz ||
                strs->sh_size > sz - strs->sh_offset)
                continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
            size_t nsym = sh[i].sh_size / sizeof *sym;
            const char *str = (const char *)(m + strs->sh_offset);
            for (size_t k = 0; k < nsym; k++) {
                if (sym[k].st_name >= strs->sh_size || ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT ||
                    sym[k].st_shndx == SHN_UNDEF)
                    continue;
                const char *nm = str + sym[k].st_name;
                if (!memchr(nm, '\0', strs->sh_size - sym[k].st_name))
                    continue;
                for (size_t j = 0; j < rw->n; j++) {
                    watch *w = &rw->w[j];
                    if (w->size || strcmp(nm, w->name) != 0)
                        continue;
                    uint64_t s = sym[k].st_size;
                    if (s != 1 && s != 2 && s != 4 && s != 8) {
                        errf(err, errlen, "%s: %s is %llu bytes; --watch takes a variable of 1, 2, 4 or 8 bytes",
                             rw->exe, w->name, (unsigned long long)s);
                        return -1;
                    }
                    if (sym[k].st_value % s) {
                        errf(err, errlen, "%s: %s is not aligned to its size", rw->exe, w->name);
                        return -1;
                    }
                    w->value = sym[k].st_value;
                    w->size = (uint32_t)s;
                    found++;
                }
            }
        }
        if (found == rw->n)
            break;
    }
    for (size_t j = 0; j < rw->n; j++)
        if (!rw->w[j].size) {
            errf(err, errlen, "%s: no global variable %s in its symbol table", rw->exe, rw->w[j].name);
            return -1;
        }
    return 0;
}

/* Whether a hardware write watchpoint fires here: one armed on a
 * variable of our own, counting, while this thread writes it.  On some
 * virtual machines perf_event_open accepts a breakpoint that never fires
 * (the hypervisor does not pass the debug registers through); a recording
 * would then end with no flag events and no word of why. */
static int probe_fires(char *err, size_t errlen)
{
    enum { WRITES = 64 };
    volatile uint64_t target = 0;
    struct perf_event_attr pe;
    memset(&pe, 0, sizeof pe);
    pe.type = PERF_TYPE_BREAKPOINT;
    pe.size = sizeof pe;
    pe.bp_type = HW_BREAKPOINT_W;
    pe.bp_addr = (uint64_t)(uintptr_t)&target;
    pe.bp_len = HW_BREAKPOINT_LEN_8;
    pe.exclude_kernel = 1;
    pe.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        errf(err, errlen, "--watch: cannot set a hardware watchpoint (perf_event_open: %s)", strerror(errno));
        return -1;
    }
    for (uint64_t i = 1; i <= WRITES; i++)
        target = i;
    uint64_t count = 0;
    ssize_t got = read(fd, &count, sizeof count);
    close(fd);
    if (got != (ssize_t)sizeof count || count == 0) {
        errf(err, errlen,
             "--watch: hardware watchpoints do not fire on this machine (a test watchpoint on a variable of "
             "argusq's own counted 0 of %d writes), so no flag access would be recorded; mark the flag's "
             "writes and reads in the program instead, with argus_flag_write() and argus_flag_read() of "
             "include/argus/argus.h",
             WRITES);
        return -1;
    }
    return 0;
}

record_watch *record_watch_resolve(const char *exe, const char *const *syms, size_t n, char *err,
                                   size_t errlen)
{
    if (n > RECORD_WATCH_MAX) {
        errf(err, errlen, "at most %d --watch (each takes two of the four hardware debug registers)",
             RECORD_WATCH_MAX);
        return NULL;
    }
    record_watch *rw = calloc(1, sizeof *rw);
    if (!rw) {
        errf(err, errlen, "out of memory");
        return NULL;
    }
    rw->map_fd = -1;
    snprintf(rw->exe, sizeof rw->exe, "%s", exe);
    for (size_t i = 0; i < n; i++) {
        watch *w = &rw->w[i];
        w->fd_w = w->fd_rw = w->prog_w = w->prog_rw = -1;
        if (strlen(syms[i]) >= sizeof w->name || !syms[i][0] || strpbrk(syms[i], "\"\\% \t\n")) {
            errf(err, errlen, "bad symbol name for --watch: '%s'", syms[i]);
            free(rw);
            return NULL;
        }
        snprintf(w->name, sizeof w->name, "%s", syms[i]);
    }
    rw->n = n;
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        errf(err, errlen, "%s: %s", exe, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(rw);
        return NULL;
    }
    void *m = st.st_size > 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (m == MAP_FAILED) {
        errf(err, errlen, "%s: cannot map the file: %s", exe, strerror(errno));
        free(rw);
        return NULL;
    }
    int rc = elf_find(rw, m, (size_t)st.st_size, err, errlen);
    munmap(m, (size_t)st.st_size);
    if (rc == 0)
        rc = probe_fires(err, errlen);
    if (rc < 0) {
        free(rw);
        return NULL;
    }
    return rw;
}

size_t record_watch_count(const record_watch *w) { return w ? w->n : 0; }

const char *record_watch_describe(const record_watch *rw, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "%s at 0x%llx (%u bytes)", rw->w[i].name, (unsigned long long)rw->w[i].addr,
             rw->w[i].size);
    return buf;
}

/* ---- the load address of CMD (ET_DYN: position independent) ---- */

static int load_base(record_watch *rw, pid_t pid, uint64_t *base, char *err, size_t errlen)
{
    *base = 0;
    if (!rw->pie)
        return 0;
    char path[64], exe[4096], line[4608];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n <= 0) {
        errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off;
        int pos = 0;
        if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) < 3 || pos == 0)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        if (off == 0 && strcmp(p, exe) == 0) {
            *base = lo - rw->min_vaddr;
            rc = 0;
            break;
        }
    }
    fclose(f);
    if (rc < 0)
        errf(err, errlen, "cannot find where %s is loaded in process %d", exe, (int)pid);
    return rc;
}

/* ---- the BPF programs ---- */

typedef struct prog {
    struct bpf_insn in[256];
    int n;
    int fix[8], fix_label[8], nfix; /* jumps to patch: insn index -> label */
    int label[4];
} prog;

static void emit(prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    if (p->n < (int)(sizeof p->in / sizeof p->in[0]))
        p->in[p->n] = (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
    p->n++;
}

static void ld_imm64(prog *p, uint8_t dst, uint8_t src, uint64_t v)
{
    emit(p, BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (int32_t)(uint32_t)v);
    emit(p, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

/* a jump to a label fixed up by finish() */
static void jmp(prog *p, uint8_t op, uint8_t dst, uint8_t src, int32_t imm, int label)
{
    if (p->nfix < 8) {
        p->fix[p->nfix] = p->n;
        p->fix_label[p->nfix++] = label;
    }
    emit(p, BPF_JMP | op | (src ? BPF_X : BPF_K), dst, src, 0, imm);
}

static void here(prog *p, int label) { p->label[label] = p->n; }

static void finish(prog *p)
{
    for (int i = 0; i < p->nfix; i++)
        p->in[p->fix[i]].off = (int16_t)(p->label[p->fix_label[i]] - p->fix[i] - 1);
}

enum { L_OUT, L_PRINT };
#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R6 BPF_REG_6
#define R7 BPF_REG_7
#define FP BPF_REG_10
#define CTX_IP 128 /* offsetof(struct bpf_perf_event_data, regs.ip) on x86-64 */

/* Reads the variable, and bpf_trace_printk's the marker line. */
static void emit_print(prog *p, const watch *w, bool write)
{
    char fmt[320];
    int fl = snprintf(fmt, sizeof fmt, "argus: %s addr=0x%llx value=%%lld sym=\"%s\"",
                      write ? "flag_write" : "flag_read", (unsigned long long)w->addr, w->name);
    size_t fsz = (size_t)fl + 1, rounded = (fsz + 7) & ~(size_t)7;
    char buf[328];
    memset(buf, 0, sizeof buf);
    memcpy(buf, fmt, fsz);
    int base = -16 - (int)rounded; /* the value at fp-16, the format below it */
    emit(p, BPF_ST | BPF_MEM | BPF_DW, FP, 0, -16, 0);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R1, FP, 0, 0);
    emit(p, BPF_ALU64 | BPF_ADD | BPF_K, R1, 0, 0, -16);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R2, 0, 0, (int32_t)w->size);
    ld_imm64(p, R3, 0, w->addr);
    emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_user);
    for (size_t i = 0; i < rounded; i += 8) {
        uint64_t v;
        memcpy(&v, buf + i, 8);
        ld_imm64(p, R1, 0, v);
        emit(p, BPF_STX | BPF_MEM | BPF_DW, FP, R1, (int16_t)(base + (int)i), 0);
    }
    emit(p, BPF_LDX | BPF_MEM | BPF_DW, R3, FP, -16, 0);
    if (w->size < 8) { /* a C integer: sign-extend */
        emit(p, BPF_ALU64 | BPF_LSH | BPF_K, R3, 0, 0, 64 - 8 * (int32_t)w->size);
        emit(p, BPF_ALU64 | BPF_ARSH | BPF_K, R3, 0, 0, 64 - 8 * (int32_t)w->size);
    }
    emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R1, FP, 0, 0);
    emit(p, BPF_ALU64 | BPF_ADD | BPF_K, R1, 0, 0, base);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R2, 0, 0, (int32_t)fsz);
    emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_trace_printk);
}

/* write: note (thread, instruction) for the access program, then print.
 * access: skip what the write program noted, else print a read. */
static void build(prog *p, const watch *w, int map_fd, uint32_t key, uint32_t tgid, bool write)
{
    memset(p, 0, sizeof *p);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R6, R1, 0, 0);
    emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R7, R0, 0, 0);
    emit(p, BPF_ALU64 | BPF_RSH | BPF_K, R0, 0, 0, 32);
    jmp(p, BPF_JNE, R0, 0, (int32_t)tgid, L_OUT);
    /* the per-CPU slot of this watch */
    emit(p, BPF_ST | BPF_MEM | BPF_W, FP, 0, -4, (int32_t)key);
    ld_imm64(p, R1, BPF_PSEUDO_MAP_FD, (uint32_t)map_fd);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R2, FP, 0, 0);
    emit(p, BPF_ALU64 | BPF_ADD | BPF_K, R2, 0, 0, -4);
    emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
    jmp(p, BPF_JEQ, R0, 0, 0, L_PRINT);
    if (write) {
        emit(p, BPF_STX | BPF_MEM | BPF_DW, R0, R7, 0, 0);
        emit(p, BPF_LDX | BPF_MEM | BPF_DW, R1, R6, CTX_IP, 0);
        emit(p, BPF_STX | BPF_MEM | BPF_DW, R0, R1, 8, 0);
    } else {
        emit(p, BPF_LDX | BPF_MEM | BPF_DW, R1, R0, 0, 0);
        jmp(p, BPF_JNE, R1, R7, 0, L_PRINT);
        emit(p, BPF_LDX | BPF_MEM | BPF_DW, R1, R0, 8, 0);
        emit(p, BPF_LDX | BPF_MEM | BPF_DW, R2, R6, CTX_IP, 0);
        jmp(p, BPF_JNE, R1, R2, 0, L_PRINT);
        emit(p, BPF_ST | BPF_MEM | BPF_DW, R0, 0, 8, 0); /* consumed */
        jmp(p, BPF_JA, 0, 0, 0, L_OUT);
    }
    here(p, L_PRINT);
    emit_print(p, w, write);
    here(p, L_OUT);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0);
    emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    finish(p);
}

static int sys_bpf(int cmd, union bpf_attr *a) { return (int)syscall(SYS_bpf, cmd, a, sizeof *a); }

static int load(const prog *p, char *err, size_t errlen, const char *what)
{
    static char log[16384];
    if (p->n > (int)(sizeof p->in / sizeof p->in[0])) {
        errf(err, errlen, "watch program for %s too long", what);
        return -1;
    }
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
    a.insns = (uint64_t)(uintptr_t)p->in;
    a.insn_cnt = (uint32_t)p->n;
    a.license = (uint64_t)(uintptr_t)"GPL";
    log[0] = '\0';
    a.log_buf = (uint64_t)(uintptr_t)log;
    a.log_size = sizeof log;
    a.log_level = 1;
    int fd = sys_bpf(BPF_PROG_LOAD, &a);
    if (fd < 0) {
        int e = errno;
        const char *last = log; /* the verifier's last line says why */
        for (char *q = log; *q; q++)
            if (*q == '\n' && q[1])
                last = q + 1;
        errf(err, errlen, "cannot load the watch program for %s (bpf: %s)%s%.200s", what, strerror(e),
             *last ? ": " : "", last);
        return -1;
    }
    return fd;
}

static int open_bp(pid_t pid, const watch *w, uint32_t type, int group, char *err, size_t errlen)
{
    struct perf_event_attr pe;
    memset(&pe, 0, sizeof pe);
    pe.type = PERF_TYPE_BREAKPOINT;
    pe.size = sizeof pe;
    pe.bp_type = type;
    pe.bp_addr = w->addr;
    pe.bp_len = w->size;
    pe.sample_period = 1;
    pe.inherit = 1;
    pe.exclude_kernel = 1;
    pe.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &pe, pid, -1, group, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        errf(err, errlen, "cannot set a hardware watchpoint on %s at 0x%llx (perf_event_open: %s)", w->name,
             (unsigned long long)w->addr, strerror(errno));
    return fd;
}

int record_watch_arm(record_watch *rw, pid_t pid, char *err, size_t errlen)
{
    uint64_t base;
    if (load_base(rw, pid, &base, err, errlen) < 0)
        return -1;
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
    a.key_size = 4;
    a.value_size = 16;
    a.max_entries = (uint32_t)rw->n;
    rw->map_fd = sys_bpf(BPF_MAP_CREATE, &a);
    if (rw->map_fd < 0) {
        errf(err, errlen, "cannot create the watch map (bpf: %s)", strerror(errno));
        return -1;
    }
    static prog p; /* large; one at a time */
    for (size_t i = 0; i < rw->n; i++) {
        watch *w = &rw->w[i];
        w->addr = base + w->value;
        build(&p, w, rw->map_fd, (uint32_t)i, (uint32_t)pid, true);
        if ((w->prog_w = load(&p, err, errlen, w->name)) < 0)
            return -1;
        build(&p, w, rw->map_fd, (uint32_t)i, (uint32_t)pid, false);
        if ((w->prog_rw = load(&p, err, errlen, w->name)) < 0)
            return -1;
        /* the write watchpoint leads the group: installed first, so it
         * takes the lower debug register and its program runs first */
        if ((w->fd_w = open_bp(pid, w, HW_BREAKPOINT_W, -1, err, errlen)) < 0)
            return -1;
        if ((w->fd_rw = open_bp(pid, w, HW_BREAKPOINT_RW, w->fd_w, err, errlen)) < 0)
            return -1;
        if (ioctl(w->fd_w, PERF_EVENT_IOC_SET_BPF, w->prog_w) < 0 ||
            ioctl(w->fd_rw, PERF_EVENT_IOC_SET_BPF, w->prog_rw) < 0) {
            errf(err, errlen, "cannot attach the watch program for %s: %s", w->name, strerror(errno));
            return -1;
        }
    }
    return 0;
}

void record_watch_free(record_watch *rw)
{
    if (!rw)
        return;
    for (size_t i = 0; i < rw->n; i++) {
        watch *w = &rw->w[i];
        int *fds[] = {&w->fd_rw, &w->fd_w, &w->prog_rw, &w->prog_w};
        for (size_t k = 0; k < 4; k++)
            if (*fds[k] >= 0)
                close(*fds[k]);
    }
    if (rw->map_fd >= 0)
        close(rw->map_fd);
    free(rw);
}
