#!/usr/bin/env bash
# What limits our GEMM and attention beside their references, read by Nsight Compute on the H200.
#
#   source .gpu/b/env.sh && bash scripts/gpu-ncu-limits.sh [gemm] [attn] [attn_causal] [attn64_causal] [attn_source]   (default: the first three)
#
# Each step profiles one launch of ours and of each reference (benchmarks/ncu_limits.py says which) with the
# clocks left as they are (--clock-control none) and writes ncu's CSV details to $OUT/ncu_<step>.csv; every
# step's stderr (which kernel was profiled in which order, ncu's own notes) goes to $OUT/ncu.log. A step that
# fails with the extra metrics (an ncu without them) is run again with the sections alone.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine" | tee -a "$OUT/ncu.log"; exit 4; }
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section WarpStateStats --section LaunchStats)
BASE_METRICS="sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__cycles_elapsed.avg.per_second,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active"
STALLS=$(python3 -c "from benchmarks.ncu_limits import STALLS; print(','.join(f'smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio' for r in STALLS))" 2>/dev/null)
profile() {  # profile NAME ARGS...: one ncu run of benchmarks/ncu_limits.py ARGS, with the stall reasons, else with
  # the first metrics only, else with the sections alone (an ncu that lacks some metric)
  local name=$1; shift
  local metrics rc=1
  echo "== $name: ncu ${*} ($(date -u +%H:%M:%S))" >> "$OUT/ncu.log"
  for metrics in "$BASE_METRICS${STALLS:+,$STALLS}" "$BASE_METRICS" ""; do
    (( rc == 0 )) && break
    [ -n "$metrics" ] || echo "== $name: again with the sections alone" >> "$OUT/ncu.log"
    timeout 150 "$NCU" --profile-from-start off --clock-control none "${SECTIONS[@]}" \
      ${metrics:+--metrics "$metrics"} --csv --page details python3 benchmarks/ncu_limits.py "$@" \
      > "$OUT/ncu_$name.csv" 2>> "$OUT/ncu.log"
    rc=$?
  done
  echo "== $name: exit $rc ($(date -u +%H:%M:%S))" >> "$OUT/ncu.log"
}
source_page() {  # source_page NAME ARGS...: ours alone (the first launch profiled), per SASS instruction with its
  # sampled stall reasons, so the instructions warps wait at are named
  local name=$1; shift
  echo "== $name: ncu --page source ${*} ($(date -u +%H:%M:%S))" >> "$OUT/ncu.log"
  timeout 200 "$NCU" --profile-from-start off --clock-control none --launch-count 1 --section SourceCounters \
    --section WarpStateStats --import-source no --page source --print-source sass --csv \
    python3 benchmarks/ncu_limits.py "$@" > "$OUT/ncu_$name.csv" 2>> "$OUT/ncu.log"
  echo "== $name: exit $? ($(date -u +%H:%M:%S))" >> "$OUT/ncu.log"
}
steps=${*:-gemm attn attn_causal}
for step in $steps; do
  case $step in
    gemm) profile gemm gemm --shape 8192x8192x8192 ;;
    attn) profile attn attention --head-dim 128 --seqlen 8192 ;;
    attn_causal) profile attn_causal attention --head-dim 128 --seqlen 8192 --causal ;;
    attn64_causal) profile attn64_causal attention --head-dim 64 --seqlen 2048 --causal ;;
    attn_source) source_page attn_source attention --head-dim 128 --seqlen 8192 ;;
    *) echo "unknown step $step (gemm, attn, attn_causal, attn64_causal, attn_source)" >&2; exit 2 ;;
  esac
done
tail -5 "$OUT/ncu.log"
