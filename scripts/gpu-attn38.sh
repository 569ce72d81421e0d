#!/usr/bin/env bash
# Issue 38 on the H200: the attention GPU tests, then benchmarks/attention.py (ours against FlashAttention-4 and
# every torch SDPA backend), in one run of at most 5 minutes: the tests include causal under static persistence,
# and every benchmark row times the default tile with static persistence and without.
#
#   source .gpu/b/env.sh && bash scripts/gpu-attn38.sh
#
# FlashAttention-4 (flash-attn-4 and its wheels) must be importable (installed into /tmp/site beside the DSL);
# without it the benchmark says so on every row and times the rest. What lands in $OUT (4 files):
#   gpu-attn38.log           this script's output, timestamped
#   attention_gpu_tests.txt  pytest -m gpu tests/gpu/test_attention_gpu.py, its shards' summaries and failures
#   attention.h200.txt       the benchmark's report (written row by row; its last line is the issue's)
#   attention_bench.log      the benchmark's stderr (capture fallbacks, tracebacks)
# The tests run in SHARDS processes side by side (they check results, they do not time); the benchmark runs alone
# after them, a failing test does not stop it, and it starts no new row once its budget of what is left is spent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-attn38.log") 2>&1
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
TOTAL_S=285     # the whole run, tests and benchmark (5 minutes less a margin for the copies)
TESTS_S=125     # the tests' limit
ROW_S=35        # the longest a benchmark row may take once started (a 16k row with its compiles and references)
BENCH_S=150     # the benchmark starts no row after this (its 8k rows come first)
SHARDS=10
start=$(date +%s)
stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - start ))s] $*"; }

python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
stamp "$gpu; $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-90)"
python3 -c "import flash_attn.cute, importlib.metadata as m; print('FA4', m.version('flash-attn-4'))" 2>&1 | tail -1

stamp "tests: tests/gpu/test_attention_gpu.py in $SHARDS processes (limit ${TESTS_S}s)"
bash scripts/gpu-test-shards.sh attn38 "$SHARDS" "$TESTS_S" "$OUT/attention_gpu_tests.txt" tests/gpu/test_attention_gpu.py
stamp "tests: exit $? (5: none collected, 123: a test failed, 124: a shard ran past ${TESTS_S}s)"
grep -h "passed\|failed\|error" /tmp/attn38-shard.??.log | tail -"$SHARDS"
stamp "tests done"

left=$(( TOTAL_S - ($(date +%s) - start) ))
budget=$(( left - ROW_S < BENCH_S ? left - ROW_S : BENCH_S ))
if (( budget < 30 )); then budget=30; fi
stamp "benchmark: python3 benchmarks/attention.py --budget $budget (limit $(( left - 5 ))s)"
timeout $(( left - 5 )) python3 benchmarks/attention.py --budget "$budget" --out "$OUT/attention.h200.txt" \
  2> "$OUT/attention_bench.log"
echo "benchmark exit status $? (0: at least 1.0x FA4 at hd128 8k causal and not; 1: below; 2: no GPU; 124: cut off)"
tail -3 "$OUT/attention_bench.log"
stamp "done"
