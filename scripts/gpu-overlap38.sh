#!/usr/bin/env bash
# Issue 38, intra-warpgroup overlap, on the H200: the overlap GPU tests, then benchmarks/attention.py --overlap
# (hd128 8k causal and not, hd64 8k, hd128 1k causal: the default pair, with static persistence and without, beside
# its twins with overlap on, against FlashAttention-4 and every torch SDPA backend), in one run of at most 6 minutes.
#
#   source .gpu/b/env.sh && bash scripts/gpu-overlap38.sh
#
# FlashAttention-4 (flash-attn-4 and its wheels) must be importable (installed into /tmp/site beside the DSL);
# without it the benchmark says so on every row and times the rest. What lands in $OUT (5 files):
#   gpu-overlap38.log               this script's output, timestamped
#   attention_overlap_gpu_tests.txt pytest -m gpu tests/gpu/test_attention_overlap_gpu.py: shards' summaries, failures
#   ptxas_overlap.txt               ptxas's report on the overlapped kernel's PTX (the device's CUDA toolkit, if any)
#   attention_overlap.h200.txt      the benchmark's report (written row by row; its last line is the issue's)
#   attention_overlap_bench.log     the benchmark's stderr (capture fallbacks, tracebacks)
# The tests run in SHARDS processes side by side (they check results, they do not time); the benchmark runs alone
# after them, a failing test does not stop it, and it starts no new row once its budget of what is left is spent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-overlap38.log") 2>&1
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
TOTAL_S=340     # the whole run, tests and benchmark (6 minutes less a margin for the copies)
TESTS_S=130     # the tests' limit (55 tests, 14 kernel compiles spread over the shards)
ROW_S=45        # the longest a benchmark row may take once started (an 8k row with 4 compiles and FA4's)
BENCH_S=170     # the benchmark starts no row after this
SHARDS=10
start=$(date +%s)
stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - start ))s] $*"; }

python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
stamp "$gpu; $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-90)"
python3 -c "import flash_attn.cute, importlib.metadata as m; print('FA4', m.version('flash-attn-4'))" 2>&1 | tail -1

stamp "tests: tests/gpu/test_attention_overlap_gpu.py in $SHARDS processes (limit ${TESTS_S}s)"
bash scripts/gpu-test-shards.sh ovl38 "$SHARDS" "$TESTS_S" "$OUT/attention_overlap_gpu_tests.txt" \
  tests/gpu/test_attention_overlap_gpu.py
stamp "tests: exit $? (5: none collected, 123: a test failed, 124: a shard ran past ${TESTS_S}s)"
grep -h "passed\|failed\|error" /tmp/ovl38-shard.??.log | tail -"$SHARDS"

ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$ptxas" ]; then  # the default tier's ptxas test, on the device's toolkit (10-20 s; skipped without one)
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/unit/test_attention_overlap_ptxas.py -k default \
    > "$OUT/ptxas_overlap.txt" 2>&1
  stamp "ptxas ($ptxas): $(tail -1 "$OUT/ptxas_overlap.txt")"
fi

left=$(( TOTAL_S - ($(date +%s) - start) ))
budget=$(( left - ROW_S < BENCH_S ? left - ROW_S : BENCH_S ))
if (( budget < 30 )); then budget=30; fi
stamp "benchmark: python3 benchmarks/attention.py --overlap --budget $budget (limit $(( left - 5 ))s)"
timeout $(( left - 5 )) python3 benchmarks/attention.py --overlap --budget "$budget" \
  --out "$OUT/attention_overlap.h200.txt" 2> "$OUT/attention_overlap_bench.log"
echo "benchmark exit status $? (0: at least 1.0x FA4 at hd128 8k causal and not; 1: below; 2: no GPU; 124: cut off)"
tail -3 "$OUT/attention_overlap_bench.log"
stamp "done"
