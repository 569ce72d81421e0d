#!/usr/bin/env bash
# The GPU run for copies of any size, on the device machine from the project root, after the
# two-part wheel staging of the GPU README (part A copied by the call right before this one):
#   bash scripts/gpu-copies.sh tests   -> $OUT/gpu-copies-tests.txt   (tests/gpu/test_launch_gpu.py, ~5 min)
#   bash scripts/gpu-copies.sh bench   -> $OUT/gpu_copy.h200.txt      (benchmarks/gpu_copy.py, ~3 min)
#                                         $OUT/gpu_copy.progress.txt  (rows as they finish, refusals, errors)
#   bash scripts/gpu-copies.sh         -> both (may exceed one 10-minute call: prefer two calls)
set -uo pipefail
source .gpu/b/env.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
dsl=$(python3 -c "import importlib.metadata as m; print(m.version('nvidia-cutlass-dsl'))" 2>/dev/null)
torch=$(python3 -c "import torch; print(torch.__version__)" 2>/dev/null || echo absent)
case "${1:-all}" in
  tests|all)
    echo "# python3 -m pytest -m gpu tests/gpu/test_launch_gpu.py   ($gpu, nvidia-cutlass-dsl $dsl)" \
      | tee "$OUT/gpu-copies-tests.txt"
    python3 -m pytest -q -m gpu -rs --durations=8 tests/gpu/test_launch_gpu.py 2>&1 | tail -80 \
      | tee -a "$OUT/gpu-copies-tests.txt"
    ;;&
  bench|all)
    echo "# python benchmarks/gpu_copy.py   ($gpu, nvidia-cutlass-dsl $dsl, torch $torch)" > "$OUT/gpu_copy.h200.txt"
    python3 benchmarks/gpu_copy.py 2> "$OUT/gpu_copy.progress.txt" | tee -a "$OUT/gpu_copy.h200.txt"
    echo "exit status $?" >> "$OUT/gpu_copy.progress.txt"
    ;;
esac
