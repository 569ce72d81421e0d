#!/usr/bin/env bash
# Issue 39 on the H200: the GPU tests of the 192-wide GEMM tiles, then benchmarks/gemm.py's full suite against
# torch.matmul and QuACK (default and, at three shapes, autotuned).
#
# Run on the GPU machine from the project root, after QuACK (quack-kernels 0.6.5 and its wheels) is installed
# into /tmp/site:
#   source .gpu/b/env.sh && bash scripts/gpu-gemm39.sh
# Writes five files to $OUT, each step's log as it runs:
#   gemm39_env.txt           GPU, driver, package versions, each step's start, end and exit status
#   gemm39_gpu_tests.txt     pytest tests/gpu/test_gemm_gpu.py -k 'wide_tiles or 128x192 or by_shape_ping_pong' in 4 processes
#                            side by side (each under a 110 s timeout)
#   gemm39_bench.txt         python3 benchmarks/gemm.py --suite full --no-diagnosis --budget-s 260 (its table,
#                            the best config per shape and the closing line)
#   gemm39_bench_stderr.txt  the benchmark's compile times, QuACK's autotuning, failures
#   gemm39_summary.txt       the test tally and the closing line
# Budget: at most 7 minutes in all (tests 110 s, benchmark 290 s, each under `timeout`; the benchmark starts no
# shape after 260 s). A failing or timed-out step does not stop the next one; the exit status is the worst.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
ENV="$OUT/gemm39_env.txt"
stamp() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$ENV"; }
python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }

bash scripts/gpu-versions.sh >> "$ENV" 2>&1
status=0

stamp "gpu tests: start"
TESTS="$OUT/gemm39_gpu_tests.txt"
bash scripts/gpu-test-shards.sh gemm39 4 110 "$TESTS" tests/gpu/test_gemm_gpu.py \
  -k "wide_tiles or 128x192 or by_shape_ping_pong"
rc=$?
stamp "gpu tests: exit $rc$([ $rc = 124 ] && echo ' (a shard timed out at 110 s)')"
[ $rc -ne 0 ] && status=1

stamp "benchmark: start"
timeout 290 python3 benchmarks/gemm.py --suite full --no-diagnosis --budget-s 260 \
  > "$OUT/gemm39_bench.txt" 2> "$OUT/gemm39_bench_stderr.txt"
rc=$?
stamp "benchmark: exit $rc$([ $rc = 124 ] && echo ' (timed out at 290 s)') (0: issue 39's targets met, 1: one missed, 2: no GPU)"
[ $rc -gt 1 ] && status=1

{
  echo "gpu tests: $(cat /tmp/gemm39-shard.??.log 2> /dev/null | grep -E ' in [0-9.]+s' | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR) " "$TESTS" | head -20
  echo "benchmark: $(grep -E '^8192³' "$OUT/gemm39_bench.txt" | tail -1 \
    || echo "no closing line; see gemm39_bench_stderr.txt")"
  grep -E "^stopped|QuACK not installed" "$OUT/gemm39_bench.txt" | head -3
} > "$OUT/gemm39_summary.txt"
cat "$OUT/gemm39_summary.txt"
stamp "done (exit $status)"
exit $status
