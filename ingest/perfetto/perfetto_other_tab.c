/* ingest/perfetto/perfetto_other_tab.c -- the fields of the FtraceEvent messages
 * that perfetto.proto (the subset protobuf-c unpacks) leaves out, the
 * ones Android traces commonly hold, so that perfetto_other.c can give
 * their pairs.
 *
 * Facts from Perfetto's published schema (google/perfetto,
 * protos/perfetto/trace/ftrace/): the event numbers are FtraceEvent's
 * oneof fields (ftrace_event.proto); the field numbers, names and types
 * are the messages' (the file named above each group).  Perfetto
 * generates those messages from the kernel's format files, so the field
 * names are the kernel's, which the ftrace readers' pairs use too.  A
 * field a later schema adds is not lost: perfetto_other.c writes it as
 * fN=.  Where the copy of a file read for this predates a message or a
 * field (gpu_frequency, wakeup_source_*, sched_pi_setprio, mark_victim,
 * rss_stat_throttled, lowmemory_kill, cgroup_attach_task's dst_level and
 * dst_path), they were taken from a descriptor generated from a later
 * version of the same file; the Android 13 trace of ../shared holds
 * those of them it has with exactly these numbers and wire types. */
#include "perfetto_int.h"
#include "perfetto_other_int.h"

#define U32 PFO_U32
#define U64 PFO_U64
#define I32 PFO_I32
#define I64 PFO_I64
#define STR PFO_STR
#define N(s) s, sizeof s - 1 /* an event's name and its length */
#define F(a) a, sizeof a / sizeof *a
#define P(a) a, sizeof a / sizeof *a /* an event's print formats */
#define NP NULL, 0                   /* none: pairs by field name */
#define A(n) {n, PFO_AS_IS, NULL, 0}
#define SYM(n, t) {n, PFO_SYMBOLIC, t, sizeof t / sizeof *t}
#define CHOICE(n, t) {n, PFO_CHOICE, t, 2}
#define GFP(n) {n, PFO_GFP, NULL, 0}
#define CPUMASK(n) {n, PFO_CPUMASK, NULL, 0}

/* ---- power.proto ---- */
static const pfo_field cpu_frequency_limits[] = {{1, U32, "min_freq"}, {2, U32, "max_freq"}, {3, U32, "cpu_id"}};
/* clock_enable, clock_disable, clock_set_rate */
static const pfo_field clock[] = {{1, STR, "name"}, {2, U64, "state"}, {3, U64, "cpu_id"}};
static const pfo_field suspend_resume[] = {{1, STR, "action"}, {2, I32, "val"}, {3, U32, "start"}};
static const pfo_field gpu_frequency[] = {{1, U32, "gpu_id"}, {2, U32, "state"}};
/* wakeup_source_activate, wakeup_source_deactivate */
static const pfo_field wakeup_source[] = {{1, STR, "name"}, {2, U64, "state"}};

/* ---- sched.proto ---- */
static const pfo_field sched_cpu_hotplug[] = {{1, I32, "affected_cpu"}, {2, I32, "error"}, {3, I32, "status"}};
static const pfo_field sched_process_hang[] = {{1, STR, "comm"}, {2, I32, "pid"}};
static const pfo_field sched_process_wait[] = {{1, STR, "comm"}, {2, I32, "pid"}, {3, I32, "prio"}};
static const pfo_field sched_pi_setprio[] = {{1, STR, "comm"}, {2, I32, "newprio"}, {3, I32, "oldprio"}, {4, I32, "pid"}};

/* ---- ipi.proto ---- */
/* ipi_entry, ipi_exit */
static const pfo_field ipi[] = {{1, STR, "reason"}};
static const pfo_field ipi_raise[] = {{1, U32, "target_cpus"}, {2, STR, "reason"}};

/* ---- irq.proto ---- */
static const pfo_field softirq_raise[] = {{1, U32, "vec"}};

/* ---- lowmemorykiller.proto ---- */
static const pfo_field lowmemory_kill[] = {
    {1, STR, "comm"}, {2, I32, "pid"}, {3, I64, "pagecache_size"}, {4, I64, "pagecache_limit"}, {5, I64, "free"}};

/* ---- sync.proto ---- */
static const pfo_field sync_pt[] = {{1, STR, "timeline"}, {2, STR, "value"}};
static const pfo_field sync_timeline[] = {{1, STR, "name"}, {2, STR, "value"}};
static const pfo_field sync_wait[] = {{1, STR, "name"}, {2, I32, "status"}, {3, U32, "begin"}};

/* ---- vmscan.proto ---- */
static const pfo_field direct_reclaim_begin[] = {{1, I32, "order"}, {2, I32, "may_writepage"}, {3, U32, "gfp_flags"}};
static const pfo_field direct_reclaim_end[] = {{1, U64, "nr_reclaimed"}};
static const pfo_field kswapd_wake[] = {{1, I32, "nid"}, {2, I32, "order"}, {3, I32, "zid"}};
static const pfo_field kswapd_sleep[] = {{1, I32, "nid"}};

/* ---- binder.proto ---- */
static const pfo_field binder_set_priority[] = {
    {1, I32, "proc"}, {2, I32, "thread"}, {3, U32, "old_prio"}, {4, U32, "new_prio"}, {5, U32, "desired_prio"}};
/* binder_lock, binder_locked, binder_unlock */
static const pfo_field binder_lock[] = {{1, STR, "tag"}};
static const pfo_field binder_alloc_buf[] = {
    {1, U64, "data_size"}, {2, I32, "debug_id"}, {3, U64, "offsets_size"}, {4, U64, "extra_buffers_size"}};

/* ---- cgroup.proto ---- */
static const pfo_field cgroup_attach_task[] = {{1, I32, "dst_root"}, {2, I32, "dst_id"}, {3, I32, "pid"},
                                               {4, STR, "comm"},     {5, STR, "cname"},  {6, I32, "dst_level"},
                                               {7, STR, "dst_path"}};

/* ---- mdss.proto (Qualcomm's tracing_mark_write, not ftrace's print) ---- */
static const pfo_field mdss_mark_write[] = {{1, I32, "pid"}, {2, STR, "trace_name"}, {3, U32, "trace_begin"}};

/* ---- kmem.proto ---- */
static const pfo_field kfree[] = {{1, U64, "call_site"}, {2, U64, "ptr"}};
static const pfo_field kmalloc[] = {
    {1, U64, "bytes_alloc"}, {2, U64, "bytes_req"}, {3, U64, "call_site"}, {4, U32, "gfp_flags"}, {5, U64, "ptr"}};
static const pfo_field mm_page_alloc[] = {
    {1, U32, "gfp_flags"}, {2, I32, "migratetype"}, {3, U32, "order"}, {4, U64, "page"}, {5, U64, "pfn"}};
static const pfo_field mm_page_free[] = {{1, U32, "order"}, {2, U64, "page"}, {3, U64, "pfn"}};
static const pfo_field rss_stat[] = {{1, I32, "member"}, {2, I64, "size"}, {3, U32, "curr"}, {4, U32, "mm_id"}};

/* ---- synthetic.proto ---- */
static const pfo_field rss_stat_throttled[] = {{1, U32, "curr"}, {2, I32, "member"}, {3, U32, "mm_id"}, {4, I64, "size"}};

/* ---- fence.proto, dma_fence.proto: fence_*, dma_fence_* ---- */
static const pfo_field fence[] = {{1, U32, "context"}, {2, STR, "driver"}, {3, U32, "seqno"}, {4, STR, "timeline"}};

/* ---- clk.proto ---- */
/* clk_enable, clk_disable */
static const pfo_field clk[] = {{1, STR, "name"}};
static const pfo_field clk_set_rate[] = {{1, STR, "name"}, {2, U64, "rate"}};

/* ---- signal.proto ---- */
static const pfo_field signal_deliver[] = {{1, I32, "code"}, {2, U64, "sa_flags"}, {3, I32, "sig"}};
static const pfo_field signal_generate[] = {{1, I32, "code"}, {2, STR, "comm"},   {3, I32, "group"},
                                            {4, I32, "pid"},  {5, I32, "result"}, {6, I32, "sig"}};

/* ---- oom.proto ---- */
static const pfo_field oom_score_adj_update[] = {{1, STR, "comm"}, {2, I32, "oom_score_adj"}, {3, I32, "pid"}};
static const pfo_field mark_victim[] = {{1, I32, "pid"}};

/* ---- mm_event.proto ---- */
static const pfo_field mm_event_record[] = {{1, U32, "avg_lat"}, {2, U32, "count"}, {3, U32, "max_lat"}, {4, U32, "type"}};

/* ---- systrace.proto (the kernel's event "0") ---- */
static const pfo_field zero[] = {{1, I32, "flag"}, {2, STR, "name"}, {3, I32, "pid"}, {4, I64, "value"}};

/* ---- sde.proto ---- */
static const pfo_field sde_mark_write[] = {
    {1, I32, "pid"}, {2, STR, "trace_name"}, {3, U32, "trace_type"}, {4, I32, "value"}, {5, U32, "trace_begin"}};

/* ---- gpu_mem.proto ---- */
static const pfo_field gpu_mem_total[] = {{1, U32, "gpu_id"}, {2, U32, "pid"}, {3, U64, "size"}};

/* ---- thermal.proto ---- */
static const pfo_field thermal_temperature[] = {
    {1, I32, "id"}, {2, I32, "temp"}, {3, I32, "temp_prev"}, {4, STR, "thermal_zone"}};
static const pfo_field cdev_update[] = {{1, U64, "target"}, {2, STR, "type"}};

/* ---- dpu.proto, g2d.proto, mali.proto: the GPU and display drivers'
 * own tracing_mark_write ---- */
static const pfo_field dpu_mark_write[] = {{1, I32, "pid"}, {2, STR, "trace_name"}, {3, U32, "trace_begin"},
                                           {4, STR, "name"}, {5, U32, "type"},       {6, I32, "value"}};
static const pfo_field g2d_mark_write[] = {{1, I32, "pid"}, {4, STR, "name"}, {5, U32, "type"}, {6, I32, "value"}};
static const pfo_field mali_mark_write[] = {{1, STR, "name"}, {2, I32, "pid"}, {3, U32, "type"}, {4, I32, "value"}};

/* ---- dmabuf_heap.proto ---- */
static const pfo_field dma_heap_stat[] = {{1, U64, "inode"}, {2, I64, "len"}, {3, U64, "total_allocated"}};

/* ---- The kernel's print formats (TP_printk), as tracefs prints them ----
 *
 * Each is the format of the header named above it, its arguments the
 * fields of Perfetto's message in the kernel's order; an event whose
 * message lacks a field a format names tries the next form (an older or
 * newer kernel's), and with none left keeps the pairs by field name.
 * The line is then read by the text reader (ingest_ft_text_pairs), so
 * whatever it makes of the kernel's text -- `raw=` for a format that
 * starts without a key (clock_*, clk_*, suspend_resume, wakeup_source_*,
 * ipi_entry/exit, sched_cpu_hotplug, lowmemory_kill), `old=120 =>` for
 * binder_set_priority's arrow -- a Perfetto event gets alike.
 *
 * Where the text cannot be matched, the nearest honest form is kept:
 *   - %pS (kmalloc/kfree call_site) prints a kernel symbol; Perfetto has
 *     the address only, written as %pS writes an address it finds no
 *     symbol for: 0x%lx.
 *   - %p (ptr, page) prints a hashed pointer unless the kernel boots with
 *     no_hash_pointers; the trace has the real one, written as %p writes
 *     it unhashed on a 64-bit kernel: 16 hex digits, no 0x.
 *   - gfp_flags (show_gfp_flags, include/trace/events/mmflags.h) are
 *     printed by flag names whose bits change between kernel versions;
 *     kept in hex, 0x%x ("none" for 0, as the kernel prints it).
 *   - mm_page_alloc/free: kernels from 5.x keep pfn and print page=%p
 *     from it (vmemmap + pfn, not in the trace): page= is left out;
 *     older ones keep page and print pfn=%lu from it: pfn= is left out.
 *   - signal_generate/deliver print errno= (and deliver sa_handler=),
 *     which Perfetto's messages do not carry: left out.
 *   - cgroup_attach_task: dst_id= when the trace has it (below).
 *   - kmalloc: 6.x kernels add node= and accounted=, which Perfetto's
 *     message does not carry; the 5.x form is kept.
 *   - rss_stat: kernels 5.5 to 6.0 printed member=%d where later ones
 *     print type=%s (MM_FILEPAGES...); the later form is kept.
 *   - ipi_raise's target_mask is a cpumask (64 bits on arm64/x86-64),
 *     Perfetto's target_cpus its first 32: 00000000,%08x.
 * A field a format does not show (cgroup_attach_task's cname, of older
 * kernels) follows the line's pairs by its field name. */

static const char *const begin_end[] = {"end", "begin"};          /* start ? "begin" : "end" */
static const char *const online[] = {"offline", "online"};         /* status ? "online" : "offline" */
/* TRACE_MM_PAGES, include/trace/events/kmem.h (mm_types_task.h's order) */
static const char *const mm_pages[] = {"MM_FILEPAGES", "MM_ANONPAGES", "MM_SWAPENTS", "MM_SHMEMPAGES"};

/* include/trace/events/power.h */
static const pfo_print p_cpu_frequency_limits[] = {{"min=%lu max=%lu cpu_id=%lu", {A(1), A(2), A(3)}}};
static const pfo_print p_clock[] = {{"%s state=%lu cpu_id=%lu", {A(1), A(2), A(3)}}}; /* class clock */
static const pfo_print p_suspend_resume[] = {{"%s[%u] %s", {A(1), A(2), CHOICE(3, begin_end)}}};
static const pfo_print p_wakeup_source[] = {{"%s state=0x%lx", {A(1), A(2)}}}; /* class wakeup_source */
/* gpu_frequency: Android's include/trace/events/power.h (the Mali
 * driver's mali_linux_trace_power.h prints the same) */
static const pfo_print p_gpu_frequency[] = {{"state=%lu gpu_id=%lu", {A(2), A(1)}}};

/* include/trace/events/sched.h (sched_cpu_hotplug: Android's 4.x kernels) */
static const pfo_print p_sched_cpu_hotplug[] = {{"cpu %d %s error=%d", {A(1), CHOICE(3, online), A(2)}}};
static const pfo_print p_sched_process_hang[] = {{"comm=%s pid=%d", {A(1), A(2)}}};
static const pfo_print p_sched_process_wait[] = {{"comm=%s pid=%d prio=%d", {A(1), A(2), A(3)}}};
static const pfo_print p_sched_pi_setprio[] = {{"comm=%s pid=%d oldprio=%d newprio=%d", {A(1), A(4), A(3), A(2)}}};

/* include/trace/events/ipi.h */
static const pfo_print p_ipi[] = {{"(%s)", {A(1)}}}; /* class ipi_handler */
static const pfo_print p_ipi_raise[] = {{"target_mask=%s (%s)", {CPUMASK(1), A(2)}}};

/* include/trace/events/irq.h: class softirq, show_softirq_name */
static const pfo_print p_softirq_raise[] = {{"vec=%u [action=%s]", {A(1), SYM(1, ingest_ft_softirq_names)}}};

/* drivers/staging/android/trace/lowmemorykiller.h */
static const pfo_print p_lowmemory_kill[] = {
    {"%s (%d), page cache %ldkB (limit %ldkB), free %ldKb", {A(1), A(2), A(3), A(4), A(5)}}};

/* drivers/staging/android/trace/sync.h */
static const pfo_print p_sync_pt[] = {{"name=%s value=%s", {A(1), A(2)}}};
static const pfo_print p_sync_wait[] = {{"%s name=%s state=%d", {CHOICE(3, begin_end), A(1), A(2)}}};

/* include/trace/events/vmscan.h: 4.x kernels print may_writepage= and
 * kswapd_wake's zid=, later ones not */
static const pfo_print p_direct_reclaim_begin[] = {
    {"order=%d may_writepage=%d gfp_flags=%s", {A(1), A(2), GFP(3)}},
    {"order=%d gfp_flags=%s", {A(1), GFP(3)}}};
static const pfo_print p_direct_reclaim_end[] = {{"nr_reclaimed=%lu", {A(1)}}};
static const pfo_print p_kswapd_wake[] = {{"nid=%d zid=%d order=%d", {A(1), A(3), A(2)}},
                                          {"nid=%d order=%d", {A(1), A(2)}}};
static const pfo_print p_kswapd_sleep[] = {{"nid=%d", {A(1)}}};

/* drivers/android/binder_trace.h (Android's kernels); alloc_buf: class
 * binder_buffer_class, extra_buffers_size since 4.x */
static const pfo_print p_binder_set_priority[] = {
    {"proc=%d thread=%d old=%d => new=%d desired=%d", {A(1), A(2), A(3), A(4), A(5)}}};
static const pfo_print p_binder_lock[] = {{"tag=%s", {A(1)}}};
static const pfo_print p_binder_alloc_buf[] = {
    {"transaction=%d data_size=%zd offsets_size=%zd extra_buffers_size=%zd", {A(2), A(1), A(3), A(4)}},
    {"transaction=%d data_size=%zd offsets_size=%zd", {A(2), A(1), A(3)}}};

/* include/trace/events/cgroup.h: class cgroup_migrate.  Since 5.5 dst_id
 * is a u64, which Perfetto's int32 field does not take: the trace then
 * has none, and dst_id= is left out */
static const pfo_print p_cgroup_attach_task[] = {
    {"dst_root=%d dst_id=%llu dst_level=%d dst_path=%s pid=%d comm=%s", {A(1), A(2), A(6), A(7), A(3), A(4)}},
    {"dst_root=%d dst_level=%d dst_path=%s pid=%d comm=%s", {A(1), A(6), A(7), A(3), A(4)}}};

/* include/trace/events/kmem.h */
static const pfo_print p_kfree[] = {{"call_site=%pS ptr=%p", {A(1), A(2)}}};
static const pfo_print p_kmalloc[] = {
    {"call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s", {A(3), A(5), A(2), A(1), GFP(4)}}};
static const pfo_print p_mm_page_alloc[] = {
    {"page=%p pfn=0x%lx order=%d migratetype=%d gfp_flags=%s", {A(4), A(5), A(3), A(2), GFP(1)}},
    {"pfn=0x%lx order=%d migratetype=%d gfp_flags=%s", {A(5), A(3), A(2), GFP(1)}},
    {"page=%p order=%d migratetype=%d gfp_flags=%s", {A(4), A(3), A(2), GFP(1)}}};
static const pfo_print p_mm_page_free[] = {{"page=%p pfn=0x%lx order=%d", {A(2), A(3), A(1)}},
                                           {"pfn=0x%lx order=%d", {A(3), A(1)}},
                                           {"page=%p order=%d", {A(2), A(1)}}};
static const pfo_print p_rss_stat[] = {{"mm_id=%u curr=%d type=%s size=%ldB", {A(4), A(3), SYM(1, mm_pages), A(2)}}};

/* include/trace/events/dma_fence.h (and fence.h of 4.x): class dma_fence */
static const pfo_print p_fence[] = {{"driver=%s timeline=%s context=%u seqno=%u", {A(2), A(4), A(1), A(3)}}};

/* include/trace/events/clk.h: classes clk and clk_rate */
static const pfo_print p_clk[] = {{"%s", {A(1)}}};
static const pfo_print p_clk_set_rate[] = {{"%s %lu", {A(1), A(2)}}};

/* include/trace/events/signal.h, without errno= (and sa_handler=) */
static const pfo_print p_signal_deliver[] = {{"sig=%d code=%d sa_flags=%lx", {A(3), A(1), A(2)}}};
static const pfo_print p_signal_generate[] = {
    {"sig=%d code=%d comm=%s pid=%d grp=%d res=%d", {A(6), A(1), A(2), A(4), A(3), A(5)}}};

/* include/trace/events/oom.h (mark_victim: before 6.5 added its fields) */
static const pfo_print p_oom_score_adj_update[] = {{"pid=%d comm=%s oom_score_adj=%hd", {A(3), A(1), A(2)}}};
static const pfo_print p_mark_victim[] = {{"pid=%d", {A(1)}}};

/* include/trace/events/gpu_mem.h */
static const pfo_print p_gpu_mem_total[] = {{"gpu_id=%u pid=%u size=%llu", {A(1), A(2), A(3)}}};

/* include/trace/events/thermal.h */
static const pfo_print p_thermal_temperature[] = {
    {"thermal_zone=%s id=%d temp_prev=%d temp=%d", {A(4), A(1), A(3), A(2)}}};
static const pfo_print p_cdev_update[] = {{"type=%s target=%lu", {A(2), A(1)}}};

/* FtraceEvent's fields (ftrace_event.proto), sorted by number. */
const pfo_event pfo_events[] = {
    {12, N("cpu_frequency_limits"), F(cpu_frequency_limits), P(p_cpu_frequency_limits)},
    {14, N("clock_enable"), F(clock), P(p_clock)},
    {15, N("clock_disable"), F(clock), P(p_clock)},
    {16, N("clock_set_rate"), F(clock), P(p_clock)},
    {19, N("sched_cpu_hotplug"), F(sched_cpu_hotplug), P(p_sched_cpu_hotplug)},
    {21, N("ipi_entry"), F(ipi), P(p_ipi)},
    {22, N("ipi_exit"), F(ipi), P(p_ipi)},
    {23, N("ipi_raise"), F(ipi_raise), P(p_ipi_raise)},
    {26, N("softirq_raise"), F(softirq_raise), P(p_softirq_raise)},
    {35, N("lowmemory_kill"), F(lowmemory_kill), P(p_lowmemory_kill)},
    {38, N("sync_pt"), F(sync_pt), P(p_sync_pt)},
    {39, N("sync_timeline"), F(sync_timeline), P(p_sync_pt)},
    {40, N("sync_wait"), F(sync_wait), P(p_sync_wait)},
    {46, N("mm_vmscan_direct_reclaim_begin"), F(direct_reclaim_begin), P(p_direct_reclaim_begin)},
    {47, N("mm_vmscan_direct_reclaim_end"), F(direct_reclaim_end), P(p_direct_reclaim_end)},
    {48, N("mm_vmscan_kswapd_wake"), F(kswapd_wake), P(p_kswapd_wake)},
    {49, N("mm_vmscan_kswapd_sleep"), F(kswapd_sleep), P(p_kswapd_sleep)},
    {52, N("binder_set_priority"), F(binder_set_priority), P(p_binder_set_priority)},
    {53, N("binder_lock"), F(binder_lock), P(p_binder_lock)},
    {54, N("binder_locked"), F(binder_lock), P(p_binder_lock)},
    {55, N("binder_unlock"), F(binder_lock), P(p_binder_lock)},
    {67, N("cgroup_attach_task"), F(cgroup_attach_task), P(p_cgroup_attach_task)},
    {80, N("tracing_mark_write"), F(mdss_mark_write), NP},
    {113, N("suspend_resume"), F(suspend_resume), P(p_suspend_resume)},
    {241, N("sched_process_hang"), F(sched_process_hang), P(p_sched_process_hang)},
    {242, N("sched_process_wait"), F(sched_process_wait), P(p_sched_process_wait)},
    {298, N("kfree"), F(kfree), P(p_kfree)},
    {299, N("kmalloc"), F(kmalloc), P(p_kmalloc)},
    {307, N("mm_page_alloc"), F(mm_page_alloc), P(p_mm_page_alloc)},
    {310, N("mm_page_free"), F(mm_page_free), P(p_mm_page_free)},
    {313, N("rss_stat"), F(rss_stat), P(p_rss_stat)},
    {316, N("fence_init"), F(fence), P(p_fence)},
    {317, N("fence_destroy"), F(fence), P(p_fence)},
    {318, N("fence_enable_signal"), F(fence), P(p_fence)},
    {319, N("fence_signaled"), F(fence), P(p_fence)},
    {320, N("clk_enable"), F(clk), P(p_clk)},
    {321, N("clk_disable"), F(clk), P(p_clk)},
    {322, N("clk_set_rate"), F(clk_set_rate), P(p_clk_set_rate)},
    {323, N("binder_transaction_alloc_buf"), F(binder_alloc_buf), P(p_binder_alloc_buf)},
    {324, N("signal_deliver"), F(signal_deliver), P(p_signal_deliver)},
    {325, N("signal_generate"), F(signal_generate), P(p_signal_generate)},
    {326, N("oom_score_adj_update"), F(oom_score_adj_update), P(p_oom_score_adj_update)},
    {PFO_GENERIC, N("generic"), NULL, 0, NP}, /* generic.proto: its name and fields are in the message */
    {328, N("mm_event_record"), F(mm_event_record), NP},
    {331, N("zero"), F(zero), NP},
    {332, N("gpu_frequency"), F(gpu_frequency), P(p_gpu_frequency)},
    {333, N("sde_tracing_mark_write"), F(sde_mark_write), NP},
    {334, N("mark_victim"), F(mark_victim), P(p_mark_victim)},
    {340, N("gpu_mem_total"), F(gpu_mem_total), P(p_gpu_mem_total)},
    {341, N("thermal_temperature"), F(thermal_temperature), P(p_thermal_temperature)},
    {342, N("cdev_update"), F(cdev_update), P(p_cdev_update)},
    {348, N("dpu_tracing_mark_write"), F(dpu_mark_write), NP},
    {349, N("g2d_tracing_mark_write"), F(g2d_mark_write), NP},
    {350, N("mali_tracing_mark_write"), F(mali_mark_write), NP},
    {351, N("dma_heap_stat"), F(dma_heap_stat), NP},
    {353, N("sched_pi_setprio"), F(sched_pi_setprio), P(p_sched_pi_setprio)},
    {359, N("rss_stat_throttled"), F(rss_stat_throttled), NP},
    {404, N("wakeup_source_activate"), F(wakeup_source), P(p_wakeup_source)},
    {405, N("wakeup_source_deactivate"), F(wakeup_source), P(p_wakeup_source)},
    {414, N("dma_fence_init"), F(fence), P(p_fence)},
    {415, N("dma_fence_emit"), F(fence), P(p_fence)},
    {416, N("dma_fence_signaled"), F(fence), P(p_fence)},
    {417, N("dma_fence_wait_start"), F(fence), P(p_fence)},
    {418, N("dma_fence_wait_end"), F(fence), P(p_fence)},
};
const size_t pfo_nevents = sizeof pfo_events / sizeof *pfo_events;
