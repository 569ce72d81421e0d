#!/usr/bin/env bash
# The GPU batch for ts_explore.ops: its GPU tests, the host-overhead benchmark and notebook 14, logs under $OUT.
#
# Run on the GPU machine from the project root, after the three staging calls of scripts/gpu-stage-three.sh
# (the staged extras must include apache-tvm-ffi):
#   source .gpu/b/env.sh && bash scripts/gpu-ops.sh [tests] [bench] [notebook] [launch]   (default: all)
# tests:    tests/gpu/test_ops_gpu.py                         -> $OUT/ops_gpu_tests.h200.txt
# bench:    benchmarks/host_overhead.py                       -> $OUT/host_overhead.h200.txt
# notebook: notebooks/14_pytorch.ipynb executed with nbconvert -> $OUT/14_pytorch.h200.ipynb
# launch:   launch() tests of the copies, GEMM, attention  -> $OUT/launch_gpu_tests.h200.txt
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu-ops-out}
mkdir -p "$OUT"
steps=${*:-tests bench notebook launch}
python3 -c "import torch, tvm_ffi, cutlass; print('torch', torch.__version__, 'tvm_ffi', tvm_ffi.__version__, \
'gpu', torch.cuda.get_device_name(0))" 2>&1 | tee "$OUT/env.txt"
status=0
for step in $steps; do
  case $step in
    tests) python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_ops_gpu.py 2>&1 \
             | tee "$OUT/ops_gpu_tests.h200.txt" || status=1 ;;
    bench) python3 benchmarks/host_overhead.py --out "$OUT/host_overhead.h200.txt" 2>&1 \
             | tee "$OUT/host_overhead.log" || status=1 ;;
    notebook) command -v dot >/dev/null || { echo "no dot on PATH: the notebook's drawings would be missing" >&2; exit 3; }
              python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 --output-dir "$OUT" \
                --output 14_pytorch.h200.ipynb notebooks/14_pytorch.ipynb 2>&1 | tee "$OUT/notebook.log" || status=1 ;;
    launch) python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_launch_gpu.py tests/gpu/test_gemm_gpu.py \
              tests/gpu/test_attention_gpu.py -k "launch" 2>&1 | tee "$OUT/launch_gpu_tests.h200.txt" || status=1 ;;
    *) echo "unknown step $step (tests, bench, notebook, launch)" >&2; exit 2 ;;
  esac
done
exit $status
