"""Copy bandwidth of catalog configs vs a device-to-device copy, side by side, at 512 MiB and at an odd size.

    python benchmarks/gpu_copy.py [--mib 512] [--odd 134217727] [--reps 40] [--only grid-stride]

Each row is one config launched at both sizes (one compile; each size checked
exactly against the host reference, warmed up, then timed with CUDA events);
cudaMemcpyAsync and torch.copy_ of the same bytes are timed in the same worker
process right after the kernel, at each size. GB/s count bytes read plus
bytes written. The odd size (default 2**27 - 1 int32) is not a multiple of any
vector width, so it runs the kernels' tail paths. The last two lines name the
best correct config at each size:

    best 512MiB: <config>: <GB/s> = N.NNx cudaMemcpyAsync
    best odd size: <config>: <GB/s> = N.NNx cudaMemcpyAsync

Exit status: 0 when the best reaches 0.97x at 512 MiB and 0.95x at the odd
size, 1 when not, 2 when nothing could run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ts_explore.gpu import MEMCPY, TORCH, LaunchError, launch
from ts_explore.gpu.errors import NO_GPU
from ts_explore.kernels.access import CacheHint
from ts_explore.kernels.pipelined import Storer
from ts_explore.model import QueueKind

TARGET_512, TARGET_ODD = 0.97, 0.95
FAST, STREAM, EVICT, NC = CacheHint.NORMAL, CacheHint.STREAMING, CacheHint.EVICT_FIRST, CacheHint.READ_ONLY


def _grid(per_thread: int, warps: int, ctas: int, cache: CacheHint = FAST, unroll: int = 1) -> dict[str, Any]:
    return dict(vector=4, per_thread=per_thread, warps=warps, ctas=ctas, cache=cache, unroll=unroll)


def _bulk(tile: int, stages: int, in_flight: int, cache: CacheHint = FAST) -> dict[str, Any]:
    return dict(storer=Storer.TMA, store_warps=1, tile=tile, stages=stages, bulk_stores=in_flight, cache=cache,
                ctas=0)


def _tiles(tile: int, warps: int, per_thread: int, cache: CacheHint = FAST) -> dict[str, Any]:
    return dict(queue=QueueKind.NONE, overlaunch=0, tile=tile, warps=warps, per_thread=per_thread, vector=4,
                cache=cache)


# (label, scenario, overrides). CTAs 0 = as many as fit on the GPU at once.
CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    ("grid-stride 128-bit x4, fill", "grid_stride_copy", _grid(4, 8, 0)),
    ("grid-stride 128-bit x8, 264 CTAs", "grid_stride_copy", _grid(8, 8, 264)),
    ("grid-stride x8, 264 CTAs, streaming", "grid_stride_copy", _grid(8, 8, 264, STREAM)),
    ("grid-stride x8, 264 CTAs, L2 evict-first", "grid_stride_copy", _grid(8, 8, 264, EVICT)),
    ("grid-stride x8, 528 CTAs, streaming", "grid_stride_copy", _grid(8, 8, 528, STREAM)),
    ("grid-stride x8, 4 warps, fill, evict-first", "grid_stride_copy", _grid(8, 4, 0, EVICT)),
    ("grid-stride x8, unroll 2, 264 CTAs, ld.nc", "grid_stride_copy", _grid(8, 8, 264, NC, unroll=2)),
    ("pipelined TMA load, threads store 4x16 KiB", "pipelined_copy", dict(tile=4096, stages=4, ctas=0)),
    ("pipelined bulk both ways 4x16 KiB, 1 store", "pipelined_copy", _bulk(4096, 4, 1)),
    ("pipelined bulk both ways 4x16 KiB, 2 stores", "pipelined_copy", _bulk(4096, 4, 2)),
    ("pipelined bulk 3x32 KiB, 2 stores", "pipelined_copy", _bulk(8192, 3, 2)),
    ("pipelined bulk 3x64 KiB, 2 stores", "pipelined_copy", _bulk(16384, 3, 2)),
    ("persistent static x4, streaming", "persistent_copy",
     dict(queue=QueueKind.STATIC, overlaunch=0, tile=32768, per_thread=4, warps=8, ctas=0, cache=STREAM)),
    ("one CTA per tile x4, streaming", "persistent_copy",
     dict(queue=QueueKind.NONE, overlaunch=0, tile=32768, per_thread=4, warps=8, cache=STREAM)),
    # Many short-lived CTAs, each moving one small contiguous tile: the grid itself sweeps memory in order.
    ("one CTA per 512-int32 tile, 4 warps x1", "persistent_copy", _tiles(512, 4, 1)),
    ("one CTA per 1024-int32 tile, 4 warps x2", "persistent_copy", _tiles(1024, 4, 2)),
    ("one CTA per 1024-int32 tile, 8 warps x1", "persistent_copy", _tiles(1024, 8, 1)),
    ("one CTA per 2048-int32 tile, 4 warps x4", "persistent_copy", _tiles(2048, 4, 4)),
    ("one CTA per 2048-int32 tile, 4 warps x1, 4 rows", "persistent_copy", _tiles(2048, 4, 1)),
    ("one CTA per 4096-int32 tile, 8 warps x4", "persistent_copy", _tiles(4096, 8, 4)),
    ("one CTA per 1024-int32 tile, 4 warps x2, ld.nc", "persistent_copy", _tiles(1024, 4, 2, NC)),
    ("grid-stride x1, 4 warps, fill", "grid_stride_copy", _grid(1, 4, 0)),
    ("grid-stride x2, 4 warps, 8192 CTAs", "grid_stride_copy", _grid(2, 4, 8192)),
]


def _ratio(run: Any, label: str) -> float:
    value = run.ratio(label)
    return float("nan") if value is None else value


def _row(label: str, size: str, run: Any, ok: bool) -> str:
    memcpy, torch = run.reference(MEMCPY), run.reference(TORCH)
    spread = f"{run.kernel.gbps(run.kernel.max_ms):.0f}-{run.kernel.gbps(run.kernel.min_ms):.0f}"
    return (f"{label:48s} {size:>8s} {run.gbps:7.0f} {spread:>11s} "
            f"{memcpy.gbps() if memcpy else float('nan'):7.0f} {_ratio(run, MEMCPY):6.2f} "
            f"{torch.gbps() if torch else float('nan'):7.0f} {_ratio(run, TORCH):6.2f}  {'yes' if ok else 'NO'}")


def _best(rows: list[tuple[str, Any, bool]], what: str, target: float) -> tuple[str, bool]:
    correct = [(label, run) for label, run, ok in rows if ok]
    if not correct:
        return f"best {what}: no config ran correctly", False
    label, run = max(correct, key=lambda row: row[1].gbps)
    ratio = run.ratio(MEMCPY) or 0.0
    torch = run.ratio(TORCH)
    met = ratio >= target
    return (f"best {what}: {label}: {run.gbps:.0f} GB/s = {ratio:.2f}x cudaMemcpyAsync"
            + (f", {torch:.2f}x torch.copy_" if torch else "")
            + (f"  [meets {target:.2f}x]" if met else f"  [BELOW {target:.2f}x]")), met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=512, help="bytes copied at the round size, in MiB")
    parser.add_argument("--odd", type=int, default=(1 << 27) - 1, help="the odd size, in int32 elements")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--only", default="", help="run only configs whose label contains this text")
    args = parser.parse_args(argv)
    round_size = args.mib * 2**20 // 4
    sizes = (round_size, args.odd)
    by_size: dict[int, list[tuple[str, Any, bool]]] = {s: [] for s in sizes}
    device = None
    table: list[str] = []
    for label, name, overrides in CONFIGS:
        if args.only and args.only not in label:
            continue
        try:
            result = launch(name, sizes=sizes, reps=args.reps, warmup=5, timeout=90, **overrides)
        except LaunchError as exc:
            print(f"{label}: {exc}", file=sys.stderr, flush=True)
            if exc.reason in NO_GPU:
                return 2
            continue
        device = result.device
        for size, run in zip(sizes, result.runs):
            by_size[size].append((label, run, run.ok))
            table.append(_row(label, f"{args.mib}MiB" if size == round_size else "odd", run, run.ok))
        print(table[-2] + "\n" + table[-1], file=sys.stderr, flush=True)  # progress while the sweep runs
    if device is None:
        return 2
    peak = device.peak_gbps or float("nan")
    print(f"copies on {device.name} ({device.arch}, {device.sms} SMs); sizes {round_size:,} and {args.odd:,} int32; "
          f"GB/s = (read + written) / median time of {args.reps}; device peak {peak:.0f} GB/s")
    head = (f"{'config':48s} {'size':>8s} {'GB/s':>7s} {'min-max':>11s} {'memcpy':>7s} {'x mcpy':>6s} "
            f"{'torch':>7s} {'x trch':>6s}  ok")
    print(head)
    print("-" * len(head))
    print("\n".join(table))
    line_512, met_512 = _best(by_size[round_size], f"{args.mib}MiB", TARGET_512)
    line_odd, met_odd = _best(by_size[args.odd], "odd size", TARGET_ODD)
    print(line_512)
    print(line_odd + f"  ({args.odd:,} int32)")
    return 0 if met_512 and met_odd else 1


if __name__ == "__main__":
    sys.exit(main())
