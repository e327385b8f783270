#!/usr/bin/env bash
# record-raw.sh OUT.trace CMD...: a system-wide recording as tracefs text
# (the format of /sys/kernel/tracing/trace) while CMD runs, with the events
# `argusq record` enables by default (../shared/traces/record.sh with RAW=1
# has no block events).  As root.  Takes argusq record's lock, so that
# it never shares tracefs with an `argusq record` (or another of itself).
set -euo pipefail
out=$1; shift
T=/sys/kernel/tracing
lock=/run/lock/argusq-record.lock; [ -w /run/lock ] || lock=/tmp/argusq-record.lock
exec 9>>"$lock"; flock 9
mountpoint -q $T || mount -t tracefs nodev $T
echo 0 > $T/tracing_on
echo mono > $T/trace_clock
echo 1 > $T/options/record-tgid
echo ${BUF_KB:-40000} > $T/buffer_size_kb
echo > $T/trace
echo > $T/set_event
for e in sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new sched:sched_waking \
         sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit \
         task:task_newtask task:task_rename \
         irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit irq:softirq_raise \
         timer:hrtimer_start timer:hrtimer_cancel timer:hrtimer_expire_entry timer:hrtimer_expire_exit \
         workqueue:workqueue_queue_work workqueue:workqueue_activate_work \
         workqueue:workqueue_execute_start workqueue:workqueue_execute_end \
         block:block_bio_queue block:block_rq_insert block:block_rq_issue block:block_rq_complete \
         raw_syscalls:sys_enter raw_syscalls:sys_exit; do
  echo "$e" >> $T/set_event
done
echo 1 > $T/tracing_on
"$@" 9>&- >/dev/null 2>&1 || true
echo 0 > $T/tracing_on
cat $T/trace > "$out"
echo > $T/set_event
echo > $T/trace
echo "$out: $(wc -l < "$out") lines"
