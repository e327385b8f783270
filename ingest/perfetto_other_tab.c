/* ingest/perfetto_other_tab.c -- the fields of the FtraceEvent messages
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
#include "perfetto_other.h"

#define U32 PFO_U32
#define U64 PFO_U64
#define I32 PFO_I32
#define I64 PFO_I64
#define STR PFO_STR
#define F(a) a, sizeof a / sizeof *a

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

/* FtraceEvent's fields (ftrace_event.proto), sorted by number. */
const pfo_event pfo_events[] = {
    {12, "cpu_frequency_limits", F(cpu_frequency_limits)},
    {14, "clock_enable", F(clock)},
    {15, "clock_disable", F(clock)},
    {16, "clock_set_rate", F(clock)},
    {19, "sched_cpu_hotplug", F(sched_cpu_hotplug)},
    {21, "ipi_entry", F(ipi)},
    {22, "ipi_exit", F(ipi)},
    {23, "ipi_raise", F(ipi_raise)},
    {26, "softirq_raise", F(softirq_raise)},
    {35, "lowmemory_kill", F(lowmemory_kill)},
    {38, "sync_pt", F(sync_pt)},
    {39, "sync_timeline", F(sync_timeline)},
    {40, "sync_wait", F(sync_wait)},
    {46, "mm_vmscan_direct_reclaim_begin", F(direct_reclaim_begin)},
    {47, "mm_vmscan_direct_reclaim_end", F(direct_reclaim_end)},
    {48, "mm_vmscan_kswapd_wake", F(kswapd_wake)},
    {49, "mm_vmscan_kswapd_sleep", F(kswapd_sleep)},
    {52, "binder_set_priority", F(binder_set_priority)},
    {53, "binder_lock", F(binder_lock)},
    {54, "binder_locked", F(binder_lock)},
    {55, "binder_unlock", F(binder_lock)},
    {67, "cgroup_attach_task", F(cgroup_attach_task)},
    {80, "tracing_mark_write", F(mdss_mark_write)},
    {113, "suspend_resume", F(suspend_resume)},
    {241, "sched_process_hang", F(sched_process_hang)},
    {242, "sched_process_wait", F(sched_process_wait)},
    {298, "kfree", F(kfree)},
    {299, "kmalloc", F(kmalloc)},
    {307, "mm_page_alloc", F(mm_page_alloc)},
    {310, "mm_page_free", F(mm_page_free)},
    {313, "rss_stat", F(rss_stat)},
    {316, "fence_init", F(fence)},
    {317, "fence_destroy", F(fence)},
    {318, "fence_enable_signal", F(fence)},
    {319, "fence_signaled", F(fence)},
    {320, "clk_enable", F(clk)},
    {321, "clk_disable", F(clk)},
    {322, "clk_set_rate", F(clk_set_rate)},
    {323, "binder_transaction_alloc_buf", F(binder_alloc_buf)},
    {324, "signal_deliver", F(signal_deliver)},
    {325, "signal_generate", F(signal_generate)},
    {326, "oom_score_adj_update", F(oom_score_adj_update)},
    {PFO_GENERIC, "generic", NULL, 0}, /* generic.proto: its name and fields are in the message */
    {328, "mm_event_record", F(mm_event_record)},
    {331, "zero", F(zero)},
    {332, "gpu_frequency", F(gpu_frequency)},
    {333, "sde_tracing_mark_write", F(sde_mark_write)},
    {334, "mark_victim", F(mark_victim)},
    {340, "gpu_mem_total", F(gpu_mem_total)},
    {341, "thermal_temperature", F(thermal_temperature)},
    {342, "cdev_update", F(cdev_update)},
    {348, "dpu_tracing_mark_write", F(dpu_mark_write)},
    {349, "g2d_tracing_mark_write", F(g2d_mark_write)},
    {350, "mali_tracing_mark_write", F(mali_mark_write)},
    {351, "dma_heap_stat", F(dma_heap_stat)},
    {353, "sched_pi_setprio", F(sched_pi_setprio)},
    {359, "rss_stat_throttled", F(rss_stat_throttled)},
    {404, "wakeup_source_activate", F(wakeup_source)},
    {405, "wakeup_source_deactivate", F(wakeup_source)},
    {414, "dma_fence_init", F(fence)},
    {415, "dma_fence_emit", F(fence)},
    {416, "dma_fence_signaled", F(fence)},
    {417, "dma_fence_wait_start", F(fence)},
    {418, "dma_fence_wait_end", F(fence)},
};
const size_t pfo_nevents = sizeof pfo_events / sizeof *pfo_events;
