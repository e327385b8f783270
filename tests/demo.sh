#!/bin/sh
# make demo: ingest a real kernel trace shipped in the repo into a fresh
# archive and show the causal chain behind the main thread's longest wait.
set -e
argusq=$1
db=build/demo.db
trace=tests/traces/lockchain-anomaly.txt
rm -f "$db" "$db-lock"
echo "\$ argusq -d $db ingest $trace --arch x86_64   # recorded on an x86-64 machine; text does not say"
"$argusq" -d "$db" ingest "$trace" --arch x86_64
q='find nodes where thread = "ui-main" order by blocked desc limit 1'
echo
echo "\$ argusq -d $db '$q'"
"$argusq" -d "$db" "$q"
node=$("$argusq" -d "$db" --json "$q" | sed -n 's/^{"nodes":\[{"id":\([0-9]*\),.*/\1/p')
[ -n "$node" ] || { echo "demo: no ui-main node found" >&2; exit 1; }
echo
echo "\$ argusq -d $db 'slice back from node $node depth 6'"
"$argusq" -d "$db" "slice back from node $node depth 6"
