#!/usr/bin/env bash
# Every GPU result the project commits, from one machine with two GPUs (or one, run twice as long):
# the GPU tests, the copy and trace-overhead benchmarks and the executed notebooks, in two lanes that run
# side by side, one per GPU. Run from the project root on the GPU machine after installing the staged
# wheels (`source .gpu/b/env.sh`, see the GPU notes); everything lands in $OUT:
#   bash scripts/gpu-evidence.sh            -> gpu_tests.h200.txt, gpu_copy.h200.txt, trace_overhead.h200.txt,
#                                              06_gpu_launch.h200.ipynb, 09_gemm.h200.ipynb, 10_timelines.h200.ipynb,
#                                              lane-a.log, lane-b.log
# The sweep's two-GPU benchmark is scripts/gpu-sweep.sh.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
second=$(( gpus > 1 ? 1 : 0 ))
header() { echo "# $1   ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"; }

execute() {  # notebook -> $OUT/<name>.h200.ipynb
  local nb=$1 name
  name=$(basename "$nb" .ipynb)
  timeout 240 python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=200 \
    --output-dir "$OUT" --output "$name.h200.ipynb" "$nb" > /dev/null 2>&1 \
    && echo "executed $nb" || echo "FAILED to execute $nb"
}

lane_a() {  # copies (tests and benchmark) and the GEMM tests
  header "python3 -m pytest -m gpu tests/gpu/test_launch_gpu.py tests/gpu/test_gemm_gpu.py" > "$OUT/gpu_tests.a.txt"
  timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu -rs --durations=5 \
    tests/gpu/test_launch_gpu.py tests/gpu/test_gemm_gpu.py 2>&1 | tail -40 >> "$OUT/gpu_tests.a.txt"
  header "python3 benchmarks/gpu_copy.py --reps 20" > "$OUT/gpu_copy.h200.txt"
  timeout 240 python3 benchmarks/gpu_copy.py --reps 20 2>> "$OUT/lane-a.log" | tee -a "$OUT/gpu_copy.h200.txt"
}

lane_b() {  # traces, the explorer's launch tab, the overhead table, the executed notebooks
  header "python3 -m pytest -m gpu tests/gpu/test_trace_gpu.py tests/gpu/test_explorer_launch_gpu.py" \
    > "$OUT/gpu_tests.b.txt"
  timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu -rs --durations=5 \
    tests/gpu/test_trace_gpu.py tests/gpu/test_explorer_launch_gpu.py 2>&1 | tail -40 >> "$OUT/gpu_tests.b.txt"
  header "python3 benchmarks/trace_overhead.py --reps 20" > "$OUT/trace_overhead.h200.txt"
  timeout 200 python3 benchmarks/trace_overhead.py --reps 20 >> "$OUT/trace_overhead.h200.txt" 2>&1
  for nb in notebooks/06_gpu_launch.ipynb notebooks/09_gemm.ipynb notebooks/10_timelines.ipynb; do execute "$nb"; done
}

CUDA_VISIBLE_DEVICES=0 lane_a > "$OUT/lane-a.log" 2>&1 &
CUDA_VISIBLE_DEVICES=$second lane_b > "$OUT/lane-b.log" 2>&1 &
wait
cat "$OUT/gpu_tests.a.txt" "$OUT/gpu_tests.b.txt" > "$OUT/gpu_tests.h200.txt" && rm "$OUT/gpu_tests.a.txt" "$OUT/gpu_tests.b.txt"
tail -n 3 "$OUT/gpu_tests.h200.txt" "$OUT/gpu_copy.h200.txt" "$OUT/trace_overhead.h200.txt" "$OUT"/lane-*.log
ls -la "$OUT"
