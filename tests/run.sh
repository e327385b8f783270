#!/bin/sh
# tests/run.sh SANDIR UNIT_TEST...: runs every cmocka unit test binary, the
# fuzzers named in $FUZZERS briefly, the Python bindings' tests (libargusq
# at $ARGUSQ_LIB, the command at $ARGUSQ_CLI), and the end-to-end suite
# against SANDIR/argusq (ASan+UBSan build), then prints one closing line:
# "tests: N passed, N failed".
san=$1; shift
passed=0; failed=0; log=$(mktemp); trap 'rm -f "$log"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in "$@"; do
  echo "== $t"
  if "$t" >"$log" 2>&1; then status=0; else status=1; fi
  cat "$log"
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  # a crash or sanitizer report after the summary still fails the binary
  if [ "$status" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
done
# the libFuzzer harnesses (make fuzz), a few seconds each from their seed
# corpus: a crash, leak or broken promise fails the test
fuzzwork=$(mktemp -d)
for f in $FUZZERS; do
  echo "== $f (${FUZZ_TEST_SECONDS:-5} s)"
  if FUZZ_ARGS=-seed=1 FUZZ_WORK=$fuzzwork sh fuzz/run.sh "${FUZZ_TEST_SECONDS:-5}" "$f"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
rm -rf "$fuzzwork"
# the Python bindings (python/tests) on the optimized libargusq.so: loading
# the sanitizer build into python3 would need ASan preloaded into it
echo "== python (python/tests) with ${ARGUSQ_LIB:-build/libargusq.so}"
# Debian's python3 (its path has python3-distributed, for the fleet tests)
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
if $py python/tests/run_tests.py >"$log" 2>&1; then status=0; else status=1; fi
cat "$log"
p=$(sed -n 's/^python: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log")
f=$(sed -n 's/^python: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log")
[ -n "$p" ] || { p=0; f=1; }
if [ "$status" != 0 ] && [ "$f" = 0 ]; then f=1; fi
passed=$((passed + p)); failed=$((failed + f))
echo "== end-to-end (tests/e2e) with $san/argusq"
if ARGUSQ="$san/argusq" python3 tests/e2e/run_e2e.py >"$log" 2>&1; then status=0; else status=1; fi
cat "$log"
p=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log")
f=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log")
[ -n "$p" ] || { p=0; f=1; }
if [ "$status" != 0 ] && [ "$f" = 0 ]; then f=1; fi
passed=$((passed + p)); failed=$((failed + f))
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
