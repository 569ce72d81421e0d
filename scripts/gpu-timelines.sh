#!/usr/bin/env bash
# The GPU session for per-warp timelines, run on the device machine from the project root
# (after the two-part wheel staging of the GPU README: part A copied to /root/gpu-a first).
#   part 1: bash scripts/gpu-timelines.sh tests      -> $OUT/tests.txt (trace + hang tests first, then all GPU tests)
#   part 2: bash scripts/gpu-timelines.sh artefacts  -> traces, hang diagnoses, overhead table, executed notebook
set -uo pipefail
source .gpu/b/env.sh
cd "${WORKTREE:-.}"
export PYTHONPATH=$PWD:${PYTHONPATH:-}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
case "${1:-all}" in
  tests|all)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/tests.txt"
    python3 -m pytest -q -x -m gpu tests/gpu/test_trace_gpu.py -k "deadlocking" -s 2>&1 | tail -40 | tee -a "$OUT/tests.txt"
    python3 -m pytest -q -m gpu tests/gpu 2>&1 | tail -60 | tee -a "$OUT/tests.txt"
    ;;&
  artefacts|all)
    python3 scripts/trace_examples.py "$OUT" 2>&1 | tee "$OUT/examples.txt" | tail -80
    python3 benchmarks/trace_overhead.py 2>&1 | tee "$OUT/trace_overhead.h200.txt"
    python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
      --output-dir "$OUT" --output 10_timelines.h200.ipynb notebooks/10_timelines.ipynb 2>&1 | tail -5
    ;;
esac
