#!/usr/bin/env bash
# Issue 38, the TMA-store O epilogue and overlap on by default, on the device machine, in two runs of at most
# 9.5 minutes each:
#
#   source .gpu/b/env.sh && bash scripts/gpu-store38.sh tests   # the attention and ops GPU tests
#   source .gpu/b/env.sh && bash scripts/gpu-store38.sh twins   # the benchmark rows that time every twin
#   source .gpu/b/env.sh && bash scripts/gpu-store38.sh bench   # every row of the benchmark, then notebook 13
#   source .gpu/b/env.sh && bash scripts/gpu-store38.sh final   # the tests, hd128 8k (--quick), notebook 13
#
# `tests`: tests/gpu/test_attention_gpu.py, test_attention_overlap_gpu.py and test_ops_gpu.py in SHARDS processes
# side by side (they check results, they do not time). `twins`: benchmarks/attention.py --overlap (hd128 8k causal
# and not, hd64 8k, hd128 1k causal: the default pair beside its twins in order and with O stored from registers).
# `bench`: benchmarks/attention.py over every row, then notebooks/13_attention.ipynb executed (nbconvert).
# FlashAttention-4 must be importable (the anchors staged into /tmp/site); without it the rows say so.
# What lands in $OUT: gpu-store38.<mode>.log (this script's output, timestamped) and
#   tests: attention_gpu_tests.txt, ops_gpu_tests.txt; twins: attention_store.<card>.txt, attention_store_bench.log
#   bench: attention.<card>.txt, attention_bench.log, 13_attention.<card>.ipynb
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
mode=${1:?usage: $0 tests|twins|bench|final}
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-store38.$mode.log") 2>&1
export PYTHONPATH=$PWD:${PYTHONPATH:-} MPLBACKEND=Agg PYTHONUNBUFFERED=1
TOTAL_S=${TOTAL_S:-540}  # the whole run (9 minutes: the call's limit less a margin for the copies)
ROW_S=50     # the longest a benchmark row may take once started
SHARDS=14
start=$(date +%s)
stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - start ))s] $*"; }
left() { echo $(( TOTAL_S - ($(date +%s) - start) )); }

python3 -c "import cutlass, ts_explore" || { echo "source .gpu/b/env.sh first" >&2; exit 3; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
card=$(case "$gpu" in *H200*) echo h200 ;; *H100*) echo h100 ;; *) echo gpu ;; esac)
stamp "$gpu; $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-90)"
python3 -c "import flash_attn.cute, importlib.metadata as m; print('FA4', m.version('flash-attn-4'))" 2>&1 | tail -1

bench() {  # bench REPORT BUDGET_CAP [ARGS...]: the benchmark with what is left, starting no row past the budget
  local report=$1 cap=$2; shift 2
  local l budget; l=$(left); budget=$(( l - ROW_S < cap ? l - ROW_S : cap ))
  (( budget < 30 )) && budget=30
  stamp "benchmark: python3 benchmarks/attention.py $* --budget $budget (limit $(( l - 5 ))s)"
  timeout $(( l - 5 )) python3 benchmarks/attention.py "$@" --budget "$budget" --out "$OUT/$report.$card.txt" \
    2> "$OUT/${report}_bench.log"
  echo "benchmark exit status $? (0: at least 1.0x FA4 at hd128 8k causal and not; 1: below; 2: no GPU; 124: cut off)"
  tail -3 "$OUT/${report}_bench.log"
}

tests() {  # the attention and overlap GPU tests in SHARDS processes, the ops' beside them
  stamp "tests: attention and overlap GPU tests, $SHARDS processes (limit 250s), the ops' beside them"
  bash scripts/gpu-test-shards.sh att38 "$SHARDS" 250 "$OUT/attention_gpu_tests.txt" \
    "tests/gpu/test_attention_gpu.py tests/gpu/test_attention_overlap_gpu.py" &
  local att=$!
  timeout 250 python3 -m pytest -q -p no:cacheprovider -m gpu -rfE tests/gpu/test_ops_gpu.py \
    > "$OUT/ops_gpu_tests.txt" 2>&1
  stamp "ops tests: $(tail -1 "$OUT/ops_gpu_tests.txt")"
  wait "$att"
  stamp "attention tests: exit $? (5: none collected, 123: a test failed, 124: a shard ran past 250s)"
  grep -h "passed\|failed\|error" /tmp/att38-shard.??.log | tail -"$SHARDS"
}

notebook13() {  # notebooks/13_attention.ipynb executed with what is left (its diagrams need Graphviz's dot)
  if ! command -v dot > /dev/null; then
    stamp "notebook 13 NOT executed: no dot on PATH (source .gpu/b/env.sh after staging --with-jupyter)"
    return
  fi
  local l; l=$(left)
  stamp "notebook 13 (limit $(( l - 5 ))s)"
  timeout $(( l - 5 )) python3 -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=180 \
    --output-dir "$OUT" --output "13_attention.$card.ipynb" notebooks/13_attention.ipynb > /tmp/nb13.log 2>&1 \
    && stamp "executed notebook 13" || { stamp "notebook 13 FAILED"; tail -20 /tmp/nb13.log; }
}

case "$mode" in
  tests) tests ;;
  twins) bench attention_store 400 --overlap ;;  # only the rows that time every twin (shorter than bench)
  bench) bench attention 330
         export TS_EXPLORE_ATTENTION_TABLE="$OUT/attention.$card.txt"  # the notebook's table cell shows this run's
         notebook13 ;;
  final) tests; bench attention_quick 200 --quick; notebook13 ;;  # after a last change: all three, shortened
  *) echo "usage: $0 tests|twins|bench|final" >&2; exit 2 ;;
esac
stamp "done"
