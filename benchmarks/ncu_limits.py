"""One launch each of our kernel and the references, for Nsight Compute to read side by side.

    ncu --profile-from-start off --clock-control none --section SpeedOfLight --csv --page details \\
        python3 benchmarks/ncu_limits.py gemm [--shape 8192x8192x8192]
    ncu ... python3 benchmarks/ncu_limits.py attention [--head-dim 128 --seqlen 8192 [--causal]]

What limits a kernel that is slower than a reference is read from counters,
not guessed: the tensor pipe's busy share, the SM clock the kernel ran at,
DRAM and L2 throughput, issue-slot use and warp stalls, for ours and each
reference on the same inputs. Every kernel is compiled and run three times
first (compiles, autotuning and caches stay out); then the profiler is
switched on around exactly one call of each, in the order the script prints
(``profiled: <name>`` lines on stderr), so the report's kernels map to names.
``scripts/gpu-ncu-limits.sh`` runs both and keeps the reports;
``python3 benchmarks/ncu_limits.py table --csv REPORT --names ...`` prints a
report's kernels side by side.

gemm: ours (``tile='by shape'``, as the ops run it), QuACK's default config,
torch.matmul. attention: ours (the ops' config for the mask), FlashAttention-4's
CuTe DSL forward (with the LSE), SDPA's cuDNN backend.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable


def gemm_calls(shape: tuple[int, int, int]) -> list[tuple[str, Callable[[], Any]]]:
    """(name, one launch) for ours, QuACK's default and torch.matmul at ``shape``, on the same A and B."""
    import torch

    from ts_explore.kernels import gemm
    from ts_explore.ops.compiled import default_gemm_config
    from ts_explore.scenarios import get

    m, n, _ = shape
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cfg = default_gemm_config().resolved(shape, sms)
    a, w = gemm.make_inputs(shape, seed=0)
    c = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
    calls = [(f"ours ({cfg.tile.value}, {cfg.mode.value}, {cfg.cluster.value})",
              gemm.launcher(gemm.compile(get("hopper_gemm"), cfg), a, w, c, cfg, sms))]
    try:
        from quack.gemm_interface import gemm as quack

        c2 = torch.empty_like(c)
        calls.append(("QuACK default", lambda: quack(a, w.T, out=c2, tuned=False)))
    except Exception as exc:  # not staged: the others are profiled all the same
        print(f"QuACK not importable ({type(exc).__name__}: {exc})", file=sys.stderr)
    c3 = torch.empty_like(c)
    calls.append(("torch.matmul", lambda: torch.matmul(a, w.T, out=c3)))
    return calls


def attention_calls(d: int, s: int, causal: bool) -> list[tuple[str, Callable[[], Any]]]:
    """(name, one launch) for ours, FA4 and cuDNN at (batch, heads) = (16k / s, 2048 / d), seqlen ``s``."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from ts_explore.kernels import attention
    from ts_explore.ops.compiled import attention_config
    from ts_explore.scenarios import get

    b, h = max(1, 16384 // s), 2048 // d
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cfg = attention_config(d, causal, seqlen_q=s)
    q, k, v = attention.make_inputs((b, h, s, s, d))
    o = torch.empty_like(q)
    lse = torch.empty((b, h, s), device="cuda", dtype=torch.float32)
    calls = [(f"ours (hd{d}, {cfg.persistence.value} persistence)",
              attention.launcher(attention.compile(get("hopper_attention"), cfg), q, k, v, o, lse, cfg, sms))]
    try:
        from flash_attn.cute import flash_attn_func

        calls.append(("FlashAttention-4", lambda: flash_attn_func(q, k, v, causal=causal, return_lse=True)))
    except Exception as exc:  # not staged: the others are profiled all the same
        print(f"FlashAttention-4 not importable ({type(exc).__name__}: {exc})", file=sys.stderr)
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))

    def cudnn() -> Any:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return sdpa(qt, kt, vt, is_causal=causal)

    calls.append(("SDPA cuDNN", cudnn))
    return calls


# What the side-by-side table shows of each profiled kernel (ncu's metric names, our labels).
TABLE = (("Duration", "duration"), ("SM Frequency", "SM clock"),
         ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "tensor pipe busy"),
         ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue slots busy"),
         ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "XU pipe (exp2, rcp) busy"),
         ("DRAM Throughput", "DRAM throughput"), ("Memory Throughput", "memory bytes / s"),
         ("L2 Hit Rate", "L2 hit rate"), ("Warp Cycles Per Issued Instruction", "cycles per issued instruction"),
         ("Registers Per Thread", "registers per thread"), ("Grid Size", "grid"),
         ("Dynamic Shared Memory Per Block", "dynamic shared memory"))
# Where a warp's cycles between two issued instructions go (ncu's Warp State Statistics, cycles per issued
# instruction by stall reason; scripts/gpu-ncu-limits.sh asks for them): the reasons FA3-style kernels meet.
STALLS = ("wait", "barrier", "long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle",
          "dispatch_stall", "no_instruction", "membar", "sleeping", "branch_resolving", "selected", "not_selected")
TABLE += tuple((f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", f"  stalled: {r.replace('_', ' ')}")
               for r in STALLS)


def _columns(rows: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns two spaces apart, trailing spaces trimmed."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def table(csv_text: str, names: list[str]) -> str:
    """ncu's ``--csv --page details`` output as one column per profiled kernel (``names``, in profile order).

    >>> rows = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"',
    ...         '"0","k","Duration","ns","1,000"', '"1","q","Duration","ns","900"']
    >>> print(table("\\n".join(rows), ["ours", "theirs"]))
    metric    ours      theirs
    duration  1,000 ns  900 ns
    """
    import csv
    import io

    lines = [line for line in csv_text.splitlines() if line.startswith('"')]
    values: dict[str, dict[str, str]] = {}
    ids: list[str] = []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row["ID"] not in ids:
            ids.append(row["ID"])
        unit = f" {row['Metric Unit']}" if row["Metric Unit"] else ""
        values.setdefault(row["Metric Name"], {})[row["ID"]] = row["Metric Value"] + unit
    heads = [names[i] if i < len(names) else f"kernel {k}" for i, k in enumerate(ids)]
    body = [[label] + [values[metric].get(k, "-") for k in ids] for metric, label in TABLE if metric in values]
    return _columns([["metric"] + heads] + body)


def hot_lines(csv_text: str, count: int = 25) -> str:
    """ncu's ``--page source --print-source sass --csv`` output as the ``count`` SASS lines with the most warp stall
    samples: each line's share of every sample, its two largest stall reasons, how often it ran, and the SASS.

    >>> head = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
    ...         '"stall_wait","stall_long_sb"')
    >>> rows = [head, '"0x10","FMNMX R1, R2, R3","30","4","20","10"', '"0x20","BRA 0x10","10","4","0","10"']
    >>> print(hot_lines(chr(10).join(rows), 1))
    share  samples  executed  reasons              SASS
    75.0%  30       4         wait 20, long_sb 10  FMNMX R1, R2, R3
    """
    import csv
    import io

    lines = csv_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))

    def num(text: str | None) -> float:
        try:
            return float((text or "").replace(",", ""))
        except ValueError:
            return 0.0

    reasons = [k for k in rows[0] if k.startswith("stall_") and "(Not" not in k] if rows else []
    total = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in rows) or 1.0
    top = sorted(rows, key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))[:count]
    out = [["share", "samples", "executed", "reasons", "SASS"]]
    for r in top:
        samples = num(r["Warp Stall Sampling (All Samples)"])
        why = sorted(((num(r[k]), k[6:]) for k in reasons), reverse=True)[:2]
        out.append([f"{100 * samples / total:.1f}%", f"{samples:.0f}", r["Instructions Executed"],
                    ", ".join(f"{name} {value:.0f}" for value, name in why if value), r["Source"].strip()[:90]])
    return _columns(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("gemm", "attention", "table", "hot"))
    parser.add_argument("--csv", help="table, hot: ncu's CSV output to read (hot: its source page)")
    parser.add_argument("--names", nargs="*", default=[], help="table: the profiled kernels' names, in order")
    parser.add_argument("--shape", default="8192x8192x8192", help="the GEMM's MxNxK")
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--seqlen", type=int, default=8192)
    parser.add_argument("--causal", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "hot":
        if not args.csv:
            parser.error("hot reads ncu's source-page CSV: pass --csv FILE")
        print(hot_lines(Path(args.csv).read_text()))
        return 0
    if args.what == "table":
        if not args.csv:
            parser.error("table reads ncu's CSV: pass --csv FILE")
        print(table(Path(args.csv).read_text(), args.names))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU visible: run this on the H200", file=sys.stderr)
        return 2
    if args.what == "gemm":
        calls = gemm_calls(tuple(int(v) for v in args.shape.lower().split("x")))  # type: ignore[arg-type]
    else:
        calls = attention_calls(args.head_dim, args.seqlen, args.causal)
    for _, call in calls:
        for _ in range(3):
            call()
    torch.cuda.synchronize()
    cudart = torch.cuda.cudart()
    for name, call in calls:
        print(f"profiled: {name}", file=sys.stderr, flush=True)
        cudart.cudaProfilerStart()
        call()
        torch.cuda.synchronize()
        cudart.cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
