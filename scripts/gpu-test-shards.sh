#!/usr/bin/env bash
# Run selected GPU tests in several pytest processes side by side, each under a time limit, and write one report.
#
#   bash scripts/gpu-test-shards.sh NAME SHARDS LIMIT_S REPORT FILE [-k EXPR]
#
# FILE may be several test files in one argument, space-separated.
# Collects the `gpu`-marked tests of FILE (with -k EXPR when given), sorted so the ids of one config stay together in
# one shard and compile once, splits them into SHARDS lists and runs each in its own pytest process under
# `timeout LIMIT_S`: each process compiles its own kernels, so the CPU work spreads; the tests check results and do
# not time, so they may share the GPU. REPORT gets a header line and the tail of each shard's log. Exit status: 0
# when every shard passed, 5 when nothing was collected (no torch or no GPU), 124 when a shard ran past LIMIT_S,
# else 123 (a test failed). Used by the scripts/gpu-*.sh runs of the device machine.
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: $0 NAME SHARDS LIMIT_S REPORT FILE [-k EXPR]" >&2; exit 2; }
name=$1 shards=$2 limit=$3 report=$4 file=$5
shift 5
select=()
[ "${1:-}" = "-k" ] && [ -n "${2:-}" ] && select=(-k "$2")
ids="/tmp/$name-ids.txt"
read -r -a files <<< "$file"  # FILE may name several test files, space-separated
python3 -m pytest -q -p no:cacheprovider --collect-only -m gpu "${files[@]}" "${select[@]}" 2> /dev/null \
  | grep '::' | sort > "$ids"
echo "# python3 -m pytest -m gpu $file ${select[*]}: $(wc -l < "$ids") tests in $shards processes side by side," \
  "each under ${limit} s" > "$report"
if [ ! -s "$ids" ]; then
  echo "no tests collected (is torch importable, and the GPU visible? python3 -m pytest -m gpu $file -rs says why)" \
    >> "$report"
  exit 5
fi
rm -f "/tmp/$name-shard."*
split -n "l/$shards" -d "$ids" "/tmp/$name-shard."
pids=()
for f in "/tmp/$name-shard."??; do  # -r: an empty shard runs nothing (not the whole suite)
  timeout "$limit" xargs -r -d "\n" -a "$f" python3 -m pytest -q -p no:cacheprovider -m gpu -rfE > "$f.log" 2>&1 &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do  # the shards only: a bare wait would also wait for a caller's tee
  wait "$pid" || { code=$?; (( code > rc )) && rc=$code; }
done
for f in "/tmp/$name-shard."??.log; do echo "## $(basename "$f" .log)"; tail -40 "$f"; done >> "$report"
exit $rc
