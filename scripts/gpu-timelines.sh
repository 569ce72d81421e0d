#!/usr/bin/env bash
# The GPU run of the timeline work: tests, example traces, the overhead table, the executed notebook.
#
# Run on the GPU machine from the project root, right after installing part A of the staged wheels (as the
# GPU notes describe), with .gpu/b present, in two steps of at most 10 minutes each (or side by side, one per
# GPU, on a machine with two):
#   bash scripts/gpu-timelines.sh tests
#   bash scripts/gpu-timelines.sh artefacts
# Everything lands in $OUT (at most 8 files): tests.txt; examples.txt, <scenario>.h200.trace.json (2),
# hang_diagnoses.h200.txt, trace_overhead.h200.txt, 10_timelines.h200.ipynb.
set -uo pipefail
source .gpu/b/env.sh || exit 3
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-}
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
case "${1:-}" in
  tests)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/tests.txt"
    timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_trace_gpu.py -rA 2>&1 \
      | grep -v "^\s*$" | tail -60 >> "$OUT/tests.txt"
    timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu --ignore=tests/gpu/test_trace_gpu.py 2>&1 \
      | tail -30 >> "$OUT/tests.txt"
    tail -40 "$OUT/tests.txt"
    ;;
  artefacts)
    timeout 120 python3 scripts/trace_examples.py "$OUT" > "$OUT/examples.txt" 2>&1
    timeout 300 python3 benchmarks/trace_overhead.py --reps 20 > "$OUT/trace_overhead.h200.txt" 2>&1
    timeout 150 python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=140 \
      --output-dir "$OUT" --output 10_timelines.h200.ipynb notebooks/10_timelines.ipynb > /dev/null 2>&1
    tail -5 "$OUT/examples.txt"; cat "$OUT/trace_overhead.h200.txt"; ls -la "$OUT"
    ;;
  *)
    echo "usage: bash scripts/gpu-timelines.sh tests|artefacts" >&2
    exit 2
    ;;
esac
