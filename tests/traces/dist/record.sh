#!/usr/bin/env bash
# record.sh [FILE...]: (re)record this folder's traces, as root: each
# FILE is NAME-normal-NN.trace or NAME-anomaly-N.trace (default: all of
# jitterpipe and jitterpool, 12 normal and 4 anomaly each).  The workloads
# are compiled into a temporary folder and recorded from there with
# tests/workloads/record-raw.sh, as tests/eval/eval.py does (no BUF_KB:
# the default buffer).  Before each recording it waits, 20 s at most,
# until the 1-minute load average is below 1.0 and the CPUs were less
# than 25% busy over the last second (/proc/stat).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
bin=$(mktemp -d); trap 'rm -rf "$bin"' EXIT
for w in jitterpipe jitterpool; do
  cc -O2 -pthread -Wall -Wextra -Werror -o "$bin/$w" "$root/tests/workloads/$w.c"
done
if [ $# -eq 0 ]; then
  for w in jitterpipe jitterpool; do
    for i in $(seq -w 1 12); do set -- "$@" "$w-normal-$i.trace"; done
    for i in 1 2 3 4; do set -- "$@" "$w-anomaly-$i.trace"; done
  done
fi
for f in "$@"; do
  f=$(basename "$f"); w=${f%%-*}; mode=$(echo "$f" | cut -d- -f2)
  for _ in $(seq 20); do
    a=$(head -1 /proc/stat); sleep 1; b=$(head -1 /proc/stat)
    busy=$(echo "$a" "$b" | awk '{t0=$2+$3+$4+$5+$6+$7+$8+$9; i0=$5+$6; t1=$13+$14+$15+$16+$17+$18+$19+$20; i1=$16+$17;
                                 print int(100 - 100 * (i1 - i0) / (t1 - t0 + 1))}')
    awk -v b="$busy" '{exit !($1 < 1.0 && b < 25)}' /proc/loadavg && break
  done
  echo "$(date +%T) load $(cut -d' ' -f1 /proc/loadavg), busy $busy%: $f"
  (cd "$bin" && bash "$root/tests/workloads/record-raw.sh" "$here/$f" "$bin/$w" "$mode")
done
