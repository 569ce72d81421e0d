#!/usr/bin/env bash
# The GPU run of the GEMM variants and the attention kernel: benchmarks, tests, traces, a hang, notebooks.
#
# Run on the GPU machine from the project root, right after installing part A of the staged wheels (as the
# GPU notes describe), with .gpu/b present; each step fits one 10-minute run (side by side, one per GPU,
# on a machine with two):
#   bash scripts/gpu-kernels.sh gemm        # benchmarks/gemm.py --suite full      -> gemm.h200.txt
#   bash scripts/gpu-kernels.sh fp8         # benchmarks/gemm_fp8.py, GEMM GPU tests -> gemm_fp8.h200.txt, gemm_tests.txt
#   bash scripts/gpu-kernels.sh attention   # attention GPU tests, traces, the hang -> attention_tests.txt, ...
#   bash scripts/gpu-kernels.sh notebooks   # notebooks 09 and 13 executed           -> *.h200.ipynb
# Everything lands in $OUT (at most 8 files a step). Tuning needs Dask there too: scripts/stage-sweep-wheels.sh.
set -uo pipefail
source .gpu/b/env.sh || exit 3
cd "$(dirname "$0")/.." || exit 3
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
header() { echo "# $1   ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"; }
case "${1:-}" in
  gemm)
    header "python3 benchmarks/gemm.py --suite full --no-diagnosis" > "$OUT/gemm.h200.txt"
    timeout 560 python3 benchmarks/gemm.py --suite full --no-diagnosis 2>&1 | grep -v "^compiled" >> "$OUT/gemm.h200.txt"
    tail -30 "$OUT/gemm.h200.txt"
    ;;
  fp8)
    header "python3 benchmarks/gemm_fp8.py" > "$OUT/gemm_fp8.h200.txt"
    timeout 280 python3 benchmarks/gemm_fp8.py >> "$OUT/gemm_fp8.h200.txt" 2>&1
    header "python3 -m pytest -m gpu tests/gpu/test_gemm_gpu.py" > "$OUT/gemm_tests.txt"
    timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests/gpu/test_gemm_gpu.py 2>&1 | tail -30 \
      >> "$OUT/gemm_tests.txt"
    tail -5 "$OUT/gemm_fp8.h200.txt" "$OUT/gemm_tests.txt"
    ;;
  attention)
    header "python3 -m pytest -m gpu tests/gpu/test_attention_gpu.py" > "$OUT/attention_tests.txt"
    timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests/gpu/test_attention_gpu.py 2>&1 | tail -30 \
      >> "$OUT/attention_tests.txt"
    timeout 200 python3 scripts/kernel_evidence.py "$OUT" > "$OUT/kernel_evidence.txt" 2>&1
    tail -5 "$OUT/attention_tests.txt" "$OUT/kernel_evidence.txt"
    ;;
  notebooks)
    for nb in notebooks/09_gemm.ipynb notebooks/13_attention.ipynb; do
      timeout 280 python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=260 --output-dir "$OUT" \
        --output "$(basename "$nb" .ipynb).h200.ipynb" "$nb" > /dev/null 2>&1 && echo "executed $nb" || echo "FAILED $nb"
    done
    ;;
  *)
    echo "usage: bash scripts/gpu-kernels.sh gemm|fp8|attention|notebooks" >&2
    exit 2
    ;;
esac
