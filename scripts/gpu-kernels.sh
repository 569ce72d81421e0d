#!/usr/bin/env bash
# The GPU run of the GEMM variants and the attention kernel: tests, notebooks, tuning, benchmarks, traces, a hang.
#
# Run on the GPU machine from the project root, each step one 10-minute run, back to back on one warm machine
# (the shared GPU notes: the first run copies part A of the DSL's wheels; when the project's own files leave too
# little room for the two parts, scripts/gpu-stage-three.sh re-splits them into three carries):
#   source .gpu/b/env.sh && bash scripts/gpu-kernels.sh tests       # GEMM, attention, trace GPU tests, 6 processes
#                                                                  # side by side; then notebook 09 executed
#   source .gpu/c/env-sweep.sh && bash scripts/gpu-kernels.sh bench # (carrying .gpu/c alone) the tuning test, a tune
#                                                                  # of the awkward shapes, benchmarks/gemm.py full
#   source .gpu/c/env-sweep.sh && bash scripts/gpu-kernels.sh evidence  # traces, trace overhead, attention's hang,
#                                                                  # notebook 13 executed
#   source .gpu/b/env.sh && bash scripts/gpu-kernels.sh retrace     # after a change to the recorder: trace tests,
#                                                                  # the evidence, the small shape with every config
#   source .gpu/b/env.sh && bash scripts/gpu-kernels.sh align       # the awkward shape beside aligned
#                                                                  # neighbours; the hand-off at short K
# Everything lands in $OUT (a few files a step). The tests share the GPU (they check results, they do not time);
# the benchmarks run alone.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh (or .gpu/c/env-sweep.sh) first" >&2; exit 3; }
notebook() {  # executed alone (its timings are real), kept as <name>.h200.ipynb
  # without Graphviz's dot the diagrams would be kept as DOT text: stage graphviz-pure (.gpu/g) first
  command -v dot > /dev/null || { echo "NOT executed $1: no dot on PATH (carry .gpu/g, then source .gpu/b/env.sh)"; \
    return 1; }
  timeout 200 python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=190 --output-dir "$OUT" \
    --output "$(basename "$1" .ipynb).h200.ipynb" "$1" > "/tmp/$(basename "$1").log" 2>&1 \
    && echo "executed $1" || { echo "FAILED $1"; tail -20 "/tmp/$(basename "$1").log"; }
}
header() { echo "# $1   ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"; }
SHARDS=6
TUNE_SHAPES="5000x3080x4136 16384x1024x4096"
# 8192^3: the configs that led there before, beside the suite's; every other shape: the suite's, plus its tuned pick
BENCH_CONFIGS=("by shape" "128x256 2wg 4st static swz8" "256x128 2wg 4st static" "128x256 2wg 4st static 2x1 swz8"
               "128x256 2wg 4st static 1x2 swz8" "128x256 2wg 4st static swz8 handoff"
               "128x256 2wg 4st static 2x1 swz8 handoff" "pingpong 128x128 6st static swz8")
# the hand-off beside its inline partner where the epilogue weighs most (few k-blocks per tile)
HANDOFF_CONFIGS=("128x256 2wg 4st static swz8" "128x256 2wg 4st static swz8 handoff" "128x256 2wg 4st static 2x1 swz8"
                 "128x256 2wg 4st static 2x1 swz8 handoff")
case "${1:-}" in
  tests)
    # one pytest process per shard of the collected tests (each compiles its own kernels: the CPU work spreads)
    files="tests/gpu/test_gemm_gpu.py tests/gpu/test_attention_gpu.py tests/gpu/test_trace_gpu.py"
    python3 -m pytest -q -p no:cacheprovider --collect-only -m gpu $files 2>/dev/null | grep '::' > /tmp/ids.txt
    split -n l/$SHARDS -d /tmp/ids.txt /tmp/shard.
    start=$(date +%s)
    for f in /tmp/shard.*; do
      xargs -d "\n" -a "$f" timeout 400 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE > "$f.log" 2>&1 &
    done
    wait
    {
      header "python3 -m pytest -m gpu $files   ($(wc -l < /tmp/ids.txt) tests in $SHARDS processes side by side, $(( $(date +%s) - start )) s)"
      for f in /tmp/shard.*.log; do echo "## $(basename "$f" .log)"; tail -25 "$f"; done
    } > "$OUT/kernel_gpu_tests.txt"
    grep -h "passed\|failed\|error" /tmp/shard.*.log | tail -8
    notebook notebooks/09_gemm.ipynb
    ;;
  bench)
    python3 -c "import distributed" || { echo "source .gpu/c/env-sweep.sh first (tuning runs on Dask)" >&2; exit 3; }
    header "python3 -m pytest -m gpu tests/gpu/test_tune_gpu.py" > "$OUT/tune.h200.txt"
    timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests/gpu/test_tune_gpu.py 2>&1 | tail -8 \
      >> "$OUT/tune.h200.txt"
    header "ts-explore tune hopper_gemm --shapes $TUNE_SHAPES" >> "$OUT/tune.h200.txt"
    timeout 130 python3 -c "from ts_explore.cli import main; raise SystemExit(main())" tune hopper_gemm \
      --shapes $TUNE_SHAPES >> "$OUT/tune.h200.txt" 2>&1
    tail -12 "$OUT/tune.h200.txt"
    header "python3 benchmarks/gemm.py --suite full --tuned --no-diagnosis --configs $(printf "'%s' " "${BENCH_CONFIGS[@]}")" \
      > "$OUT/gemm.h200.txt"
    timeout 360 python3 benchmarks/gemm.py --suite full --tuned --no-diagnosis --configs "${BENCH_CONFIGS[@]}" \
      >> "$OUT/gemm.h200.txt" 2> "$OUT/gemm.h200.log"
    tail -30 "$OUT/gemm.h200.txt"
    ;;
  evidence)
    timeout 200 python3 scripts/kernel_evidence.py "$OUT" > "$OUT/kernel_evidence.txt" 2>&1
    tail -6 "$OUT/kernel_evidence.txt"
    header "python3 benchmarks/trace_overhead.py --only ping-pong attention --default-only --reps 30" \
      > "$OUT/trace_overhead.kernels.h200.txt"
    timeout 130 python3 benchmarks/trace_overhead.py --only ping-pong attention --default-only --reps 30 \
      >> "$OUT/trace_overhead.kernels.h200.txt" 2>&1
    tail -6 "$OUT/trace_overhead.kernels.h200.txt"
    notebook notebooks/13_attention.ipynb
    ;;
  retrace)  # after a change to the recorder: its GPU tests, the evidence again, the small shape with every config
    header "python3 -m pytest -m gpu tests/gpu/test_trace_gpu.py" > "$OUT/trace_gpu_tests.txt"
    timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests/gpu/test_trace_gpu.py 2>&1 | tail -12 \
      >> "$OUT/trace_gpu_tests.txt"
    tail -3 "$OUT/trace_gpu_tests.txt"
    timeout 150 python3 scripts/kernel_evidence.py "$OUT" > "$OUT/kernel_evidence.txt" 2>&1
    tail -12 "$OUT/kernel_evidence.txt"
    header "python3 benchmarks/trace_overhead.py --only ping-pong attention 'Hopper GEMM' --default-only --reps 30" \
      > "$OUT/trace_overhead.kernels.h200.txt"
    timeout 120 python3 benchmarks/trace_overhead.py --only ping-pong attention "Hopper GEMM" --default-only --reps 30 \
      >> "$OUT/trace_overhead.kernels.h200.txt" 2>&1
    tail -7 "$OUT/trace_overhead.kernels.h200.txt"
    header "python3 benchmarks/gemm.py --shapes 1000x1032x520 --no-diagnosis" > "$OUT/gemm_small.h200.txt"
    timeout 90 python3 benchmarks/gemm.py --shapes 1000x1032x520 --no-diagnosis >> "$OUT/gemm_small.h200.txt" 2>/dev/null
    tail -14 "$OUT/gemm_small.h200.txt"
    ;;
  align)  # the hand-off beside its inline partner at short K; the awkward shape beside neighbours that remove one cause each: K rows 128-byte aligned (4160: the
          # same 65 k-blocks), no N tail (3072), no M tail (5120)
    shapes="5000x3080x4136 5000x3080x4160 5000x3072x4136 5000x3072x4160 5120x3072x4096"
    header "python3 benchmarks/gemm.py --shapes $shapes --no-diagnosis --configs 'by shape' '256x128 2wg 4st static'" \
      > "$OUT/gemm_alignment.h200.txt"
    timeout 200 python3 benchmarks/gemm.py --shapes $shapes --no-diagnosis --configs "by shape" "256x128 2wg 4st static" \
      >> "$OUT/gemm_alignment.h200.txt" 2> "$OUT/gemm_alignment.log"
    tail -16 "$OUT/gemm_alignment.h200.txt"
    shapes="8192x8192x1024 4096x4096x4096 16384x1024x4096"
    header "python3 benchmarks/gemm.py --shapes $shapes --no-diagnosis --configs $(printf "'%s' " "${HANDOFF_CONFIGS[@]}")" \
      > "$OUT/gemm_handoff.h200.txt"
    timeout 200 python3 benchmarks/gemm.py --shapes $shapes --no-diagnosis --configs "${HANDOFF_CONFIGS[@]}" \
      >> "$OUT/gemm_handoff.h200.txt" 2> "$OUT/gemm_handoff.log"
    tail -20 "$OUT/gemm_handoff.h200.txt"
    ;;
  *)
    echo "usage: bash scripts/gpu-kernels.sh tests|bench|evidence|retrace|align" >&2
    exit 2
    ;;
esac
