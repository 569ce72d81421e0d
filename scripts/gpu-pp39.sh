#!/usr/bin/env bash
# Issue 39 on the H200: the ping-pong GEMM with each k-block's WGMMA group committed right after its WGMMAs
# (one group in flight, as the cooperative kernel keeps). Its GPU tests, then benchmarks/gemm.py at three shapes:
# the ping-pong configs beside the best cooperative ones, against torch.matmul and QuACK's default.
#
# Run on the GPU machine from the project root, after QuACK (quack-kernels and its wheels) is installed into
# /tmp/site:
#   source .gpu/b/env.sh && bash scripts/gpu-pp39.sh
# Writes five files to $OUT, each step's log as it runs:
#   pp39_env.txt           GPU, driver, package versions, each step's start, end and exit status
#   pp39_gpu_tests.txt     pytest tests/gpu/test_gemm_gpu.py -k 'pingpong or ping_pong or turns' (correctness at
#                          aligned and tail shapes, the 8192^3 launches, the traces; 'turns': the shared epilogue,
#                          whose two consumers take one set of C buffers in turns) in 6 processes side by side
#   pp39_bench.txt         benchmarks/gemm.py --shapes 8192x8192x8192 4096x4096x4096 8192x28672x4096
#                          --configs (the 2x1 ping-pong with 4 stages and with the shared epilogue's 5, two
#                          cooperative) --no-diagnosis --no-quack-tuned
#   pp39_bench_stderr.txt  the benchmark's compile times and failures
#   pp39_summary.txt       the test tally and the ping-pong rows beside the cooperative ones
# Budget: at most 4 minutes in all (tests 100 s, benchmark 120 s, each under `timeout`; the benchmark starts no
# shape or config after 90 s). A failing or timed-out step does not stop the next one; the exit status is the
# worst.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
ENV="$OUT/pp39_env.txt"
stamp() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$ENV"; }
python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }

bash scripts/gpu-versions.sh >> "$ENV" 2>&1
status=0

stamp "gpu tests: start"
TESTS="$OUT/pp39_gpu_tests.txt"
SELECT="pingpong or ping_pong or turns"
bash scripts/gpu-test-shards.sh pp39 6 100 "$TESTS" tests/gpu/test_gemm_gpu.py -k "$SELECT"
rc=$?
stamp "gpu tests: exit $rc$([ $rc = 124 ] && echo ' (a shard timed out at 100 s)')"
[ $rc -ne 0 ] && status=1

stamp "benchmark: start"
timeout 120 python3 benchmarks/gemm.py --shapes 8192x8192x8192 4096x4096x4096 8192x28672x4096 \
  --configs "pingpong 128x192 4st static 2x1 swz8" "pingpong 128x192 5st static 2x1 swz8 shared" "by shape" \
            "128x256 2wg 4st static 2x1 swz8" \
  --no-diagnosis --no-quack-tuned --budget-s 90 > "$OUT/pp39_bench.txt" 2> "$OUT/pp39_bench_stderr.txt"
rc=$?
stamp "benchmark: exit $rc$([ $rc = 124 ] && echo ' (timed out at 120 s)') (0: targets met, 1: one missed, 2: no GPU)"
[ $rc -gt 1 ] && status=1

{
  echo "gpu tests: $(cat /tmp/pp39-shard.??.log 2> /dev/null | grep -E ' in [0-9.]+s' | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR) " "$TESTS" | head -20
  echo "benchmark rows (before this change at 8192^3: ping-pong 128x192 504 TFLOP/s = 0.745x torch, 2x1 swz8 457;"
  echo "cooperative by shape 677, 128x256 2x1 swz8 670):"
  grep -E "pingpong|by shape|2wg" "$OUT/pp39_bench.txt" | grep -vE "^ *(Best|---)" | head -20
  grep -E "^8192³|^stopped|QuACK not installed" "$OUT/pp39_bench.txt" | head -3
} > "$OUT/pp39_summary.txt"
cat "$OUT/pp39_summary.txt"
stamp "done (exit $status)"
exit $status
