#!/usr/bin/env bash
# Issue 39 on the H200: the GEMM's fitted tile widths (tile_n), which trim the tails of N at the awkward shapes.
# Their GPU tests, then benchmarks/gemm.py --suite tails: at 5000x3080x4136 and 1000x1032x520, tile 'by shape'
# (now 128x240 and 64x144) beside the tile it picked before (128x256 and 128x128, 2x1), the fitted variants,
# torch.matmul and QuACK (its default, and its autotuned pick at 5000x3080x4136).
#
# Run on the GPU machine from the project root, after QuACK (quack-kernels and its wheels) is installed into
# /tmp/site:
#   source .gpu/b/env.sh && bash scripts/gpu-tails39.sh
# Writes five files to $OUT, each step's log as it runs:
#   tails39_env.txt           GPU, driver, package versions, each step's start, end and exit status
#   tails39_gpu_tests.txt     pytest tests/gpu/test_gemm_fitted_gpu.py (the fp32 product with C poisoned first, at
#                             the awkward shapes and at tails in M, N and K, K shorter than a k-block, N's last
#                             column 8 wide; 128x240 and 64x144 alone, in 2x1 and 1x2 clusters, with the hand-off,
#                             without a queue, in fp8; 'by shape'; the planted fault refused; launch() through the
#                             gate; a traced launch aligned with the schedule) in 6 processes side by side
#   tails39_bench.txt         python3 benchmarks/gemm.py --suite tails --no-diagnosis --budget-s 160
#   tails39_bench_stderr.txt  the benchmark's compile times, QuACK's autotuning, failures
#   tails39_summary.txt       the test tally, the benchmark's rows and its best config per shape
# Budget: at most 6 minutes in all (tests 150 s, benchmark 190 s, each under `timeout`; the benchmark starts no
# shape or config after 160 s). A failing or timed-out step does not stop the next one; the exit status is the
# worst.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
ENV="$OUT/tails39_env.txt"
stamp() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$ENV"; }
python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }

bash scripts/gpu-versions.sh >> "$ENV" 2>&1
status=0

stamp "gpu tests: start"
TESTS="$OUT/tails39_gpu_tests.txt"
bash scripts/gpu-test-shards.sh tails39 6 150 "$TESTS" tests/gpu/test_gemm_fitted_gpu.py
rc=$?
stamp "gpu tests: exit $rc$([ $rc = 124 ] && echo ' (a shard timed out at 150 s)')"
[ $rc -ne 0 ] && status=1

stamp "benchmark: start"
timeout 190 python3 benchmarks/gemm.py --suite tails --no-diagnosis --budget-s 160 \
  > "$OUT/tails39_bench.txt" 2> "$OUT/tails39_bench_stderr.txt"
rc=$?
stamp "benchmark: exit $rc$([ $rc = 124 ] && echo ' (timed out at 190 s)') (0: issue 39's targets met, 1: one missed, 2: no GPU)"
[ $rc -gt 1 ] && status=1

{
  echo "gpu tests: $(cat /tmp/tails39-shard.??.log 2> /dev/null | grep -E ' in [0-9.]+s' | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR) " "$TESTS" | head -20
  echo "benchmark rows:"
  grep -E "^ *(5000x3080x4136|1000x1032x520) " "$OUT/tails39_bench.txt" || echo "  none; see tails39_bench_stderr.txt"
  grep -A3 "^Best correct config per shape" "$OUT/tails39_bench.txt"
  grep -E "^stopped|QuACK not installed" "$OUT/tails39_bench.txt" | head -3
} > "$OUT/tails39_summary.txt"
cat "$OUT/tails39_summary.txt"
stamp "done (exit $status)"
exit $status
