/* ingest/perfetto/perfetto_names.c -- the Perfetto reader's first pass: what a
 * trace says about its tasks and machine, read before any event is handed
 * on so that every thread can be named from its first event on.
 * process_tree (processes and threads, with their tgids), system_info (the
 * kernel release, the machine, traced's version and the Android build),
 * inside compressed_packets too; every other field is skipped unparsed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

static int cmp_pair(const void *a, const void *b)
{
    uint32_t x = ((const uint32_t *)a)[0], y = ((const uint32_t *)b)[0];
    return (x > y) - (x < y);
}

static int add_tgid(pf_reader *d, int32_t tid, int32_t tgid)
{
    if (tid <= 0 || tgid <= 0)
        return 0;
    if (d->ntgids == d->tgcap) {
        size_t c = d->tgcap ? d->tgcap * 2 : 1024;
        void *p = realloc(d->tgids, c * sizeof *d->tgids);
        if (!p)
            return -1;
        d->tgids = p;
        d->tgcap = c;
    }
    d->tgids[d->ntgids][0] = (uint32_t)tid;
    d->tgids[d->ntgids][1] = (uint32_t)tgid;
    d->ntgids++;
    return 0;
}

/* process_tree: a process is named after its command's first word (the
 * path's last part), a thread by its own name.  ingest_ft_full_comm names
 * a thread before it is seen, as a field naming it would. */
static int do_process_tree(pf_reader *d, const ArgusqPf__ProcessTree *pt, uint64_t off)
{
    for (size_t i = 0; i < pt->n_processes; i++) {
        const ArgusqPf__ProcessTree__Process *p = pt->processes[i];
        if (!p->has_pid || p->pid <= 0)
            continue;
        if (add_tgid(d, p->pid, p->pid) < 0)
            return ingest_pf_fail(d, off, "out of memory");
        if (p->n_cmdline > 0 && p->cmdline[0][0]) {
            const char *c = p->cmdline[0], *base = strrchr(c, '/');
            base = base && base[1] ? base + 1 : c;
            size_t n = strcspn(base, " ");
            if (n && ingest_pf_name(d, (uint32_t)p->pid, base, n) < 0)
                return -1;
        }
    }
    for (size_t i = 0; i < pt->n_threads; i++) {
        const ArgusqPf__ProcessTree__Thread *t = pt->threads[i];
        if (!t->has_tid || t->tid <= 0)
            continue;
        if (t->has_tgid && add_tgid(d, t->tid, t->tgid) < 0)
            return ingest_pf_fail(d, off, "out of memory");
        if (t->name && t->name[0] && t->tid != t->tgid &&
            ingest_pf_name(d, (uint32_t)t->tid, t->name, strlen(t->name)) < 0)
            return -1;
    }
    return 0;
}

static void do_system_info(pf_reader *d, const ArgusqPf__SystemInfo *si)
{
    ingest_meta *m = &d->fr.st->meta;
    if (si->utsname) {
        if (si->utsname->release)
            snprintf(m->kernel, sizeof m->kernel, "%s", si->utsname->release);
        if (si->utsname->machine)
            snprintf(m->arch, sizeof m->arch, "%s", si->utsname->machine);
        /* raw syscall numbers are named only on a machine whose table we have */
        d->fr.arch = base_arch_find(si->utsname->machine);
    }
    /* the recorder: traced's own version when it wrote it ("Perfetto
     * v30.0 ..."), else "perfetto"; the Android build it ran on after */
    const char *v = si->tracing_service_version && si->tracing_service_version[0] ? si->tracing_service_version
                                                                                   : "perfetto";
    const char *fp = si->android_build_fingerprint;
    if (fp && fp[0])
        snprintf(m->recorder, sizeof m->recorder, "%.50s, Android %.60s", v, fp);
    else
        snprintf(m->recorder, sizeof m->recorder, "%.120s", v);
}

int ingest_pf_names_packet(pf_reader *d, const unsigned char *p, size_t len, uint64_t off, int depth)
{
    if (len == 0) /* an empty packet or Trace: nothing (and p may be NULL) */
        return 0;
    const unsigned char *q = p, *e = p + len;
    while (q < e) {
        uint32_t num;
        int wt;
        const unsigned char *val;
        size_t vl;
        if (!ingest_pf_buf_field(&q, e, &num, &wt, &val, &vl))
            return ingest_pf_fail(d, off, "packet %llu: corrupt protobuf (bad varint, wire type or a length past the end)",
                           (unsigned long long)d->npackets);
        if (wt != 2)
            continue;
        if (num == 2) {
            ArgusqPf__ProcessTree *pt = argusq_pf__process_tree__unpack(NULL, vl, val);
            if (!pt)
                return ingest_pf_fail(d, off, "packet %llu: corrupt process_tree", (unsigned long long)d->npackets);
            int rc = do_process_tree(d, pt, off);
            argusq_pf__process_tree__free_unpacked(pt, NULL);
            if (rc < 0)
                return -1;
        } else if (num == 45) {
            ArgusqPf__SystemInfo *si = argusq_pf__system_info__unpack(NULL, vl, val);
            if (!si)
                return ingest_pf_fail(d, off, "packet %llu: corrupt system_info", (unsigned long long)d->npackets);
            do_system_info(d, si);
            argusq_pf__system_info__free_unpacked(si, NULL);
        } else if (num == 50 && depth == 0) {
            ProtobufCBinaryData in = {vl, (uint8_t *)val};
            if (ingest_pf_compressed(d, &in, off, depth, ingest_pf_names_packet) < 0)
                return -1;
        }
    }
    return 0;
}

void ingest_pf_names_done(pf_reader *d)
{
    if (d->ntgids)
        qsort(d->tgids, d->ntgids, sizeof *d->tgids, cmp_pair);
    d->fr.tgids = (const uint32_t(*)[2])d->tgids;
    d->fr.ntgids = d->ntgids;
}
