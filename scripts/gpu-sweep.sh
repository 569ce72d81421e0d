#!/bin/bash
# The GPU sweep run, on a host with two GPUs, from the project root, after:
#   source .gpu/b/env.sh && source .gpu/c/env-sweep.sh
# (or, in a later run on the same warm machine, carrying .gpu/c alone: source .gpu/c/env-sweep.sh)
# (.gpu/b: the DSL wheels, see the shared GPU notes; .gpu/c: scripts/stage-sweep-wheels.sh).
# Writes under $OUT (default ./gpu-out):
#   sweep_scaling.gpu.txt     launch sweep of 64 copy configs, 1 vs 2 GPUs (benchmarks/sweep_scaling.py --launch)
#   sweep_scaling.cpu.txt     the verification sweep, 1 vs 2 workers, on that host's idle cores
#   sweep_gpu_tests.txt       pytest -m gpu tests/sweep
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
python3 -c "import distributed, dask_cuda, pandas, ts_explore" || { echo "source .gpu/b/env.sh and .gpu/c/env-sweep.sh first" >&2; exit 2; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/sweep_gpus.txt"
status=0
python3 benchmarks/sweep_scaling.py --launch 2>"$OUT/sweep_scaling.gpu.log" | tee "$OUT/sweep_scaling.gpu.txt" || status=1
python3 benchmarks/sweep_scaling.py --serial 2>"$OUT/sweep_scaling.cpu.log" | tee "$OUT/sweep_scaling.cpu.txt" || status=1
python3 -m pytest -m gpu -q -p no:cacheprovider tests/sweep 2>&1 | tee "$OUT/sweep_gpu_tests.txt" || status=1
exit $status
