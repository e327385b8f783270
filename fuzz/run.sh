#!/bin/sh
# fuzz/run.sh SECONDS FUZZER...: runs each libFuzzer harness (build/fuzz/fuzz_NAME)
# for SECONDS on a working copy of its seed corpus, so the committed seeds
# (fuzz/corpus/NAME) only change by hand, with the dictionary fuzz/NAME.dict.
# Prints one line per harness ("fuzz NAME: N executions, ...") and exits 1
# if any of them crashed, leaked, hung or broke a promise; the input that
# did it is kept as build/fuzz/artifacts/NAME-crash-... to replay with
#   build/fuzz/fuzz_NAME build/fuzz/artifacts/NAME-crash-...
# FUZZ_ARGS adds libFuzzer options (make test passes -seed=1); FUZZ_WORK is
# where the working corpora are (build/fuzz/corpus; make test: a fresh one).
secs=$1; shift
status=0
for f in "$@"; do
  name=$(basename "$f" | sed 's/^fuzz_//')
  work=${FUZZ_WORK:-build/fuzz/corpus}/$name; art=build/fuzz/artifacts
  mkdir -p "$work" "$art"
  dict=; [ -f "fuzz/$name.dict" ] && dict="-dict=fuzz/$name.dict"
  log=$work.log # beside the working corpus: runs of make test and make fuzz keep apart
  # -timeout: a single input that runs 10 s is a hang; -rss_limit_mb: a
  # bound on memory, so huge allocations count as findings
  if "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$art/$name-" $dict $FUZZ_ARGS "$work" "fuzz/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -a -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz $name: ${runs:-?} executions in ${secs} s, $cov, corpus $(ls "$work" | wc -l) inputs: no crash"
  else
    echo "fuzz $name: FAILED (log: $log)"
    grep -a -E 'ERROR|SUMMARY|broken promise|runtime error|Test unit written' "$log" | head -20
    status=1
  fi
done
exit $status
