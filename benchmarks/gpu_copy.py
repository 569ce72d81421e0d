"""Copy bandwidth of catalog configs vs a device-to-device copy, measured side by side at 512 MiB.

    python benchmarks/gpu_copy.py [--mib 512] [--reps 30]

Every row is one launch (a fresh compile per config, then warm-up and timed
repetitions with CUDA events); the cudaMemcpyAsync and torch.copy_ lines are
timed in the same worker process right after the kernel. GB/s count bytes read
plus bytes written. The exit status is 1 when the best config stays below
0.90x of the device-to-device copy.
"""

from __future__ import annotations

import argparse
import sys

from ts_explore.gpu import MEMCPY, TORCH, LaunchError, launch
from ts_explore.model import QueueKind
from ts_explore.scenarios import Loader

CONFIGS = [
    ("grid-stride scalar (vector=1)", "grid_stride_copy", dict(vector=1, warps=8, ctas=0)),
    ("grid-stride 128-bit", "grid_stride_copy", dict(vector=4, warps=8, ctas=0)),
    ("grid-stride 128-bit x2 in flight", "grid_stride_copy", dict(vector=4, per_thread=2, warps=8, ctas=0)),
    ("grid-stride 128-bit x4 in flight", "grid_stride_copy", dict(vector=4, per_thread=4, warps=8, ctas=0)),
    ("grid-stride 128-bit x4, 4 warps", "grid_stride_copy", dict(vector=4, per_thread=4, warps=4, ctas=0)),
    ("grid-stride 128-bit x8, 264 CTAs", "grid_stride_copy", dict(vector=4, per_thread=8, warps=8, ctas=264)),
    ("pipelined TMA 4x16 KiB", "pipelined_copy", dict(tile=4096, stages=4, ctas=0)),
    ("pipelined TMA 6x32 KiB, 8 store warps", "pipelined_copy", dict(tile=8192, stages=6, store_warps=8, ctas=0)),
    ("pipelined threads 4x16 KiB", "pipelined_copy",
     dict(loader=Loader.THREADS, load_warps=4, tile=4096, stages=4, ctas=0)),
    ("persistent static, 128-bit x4", "persistent_copy",
     dict(queue=QueueKind.STATIC, overlaunch=0, tile=32768, per_thread=4, warps=8, ctas=0)),
    ("one CTA per tile, 128-bit x4", "persistent_copy",
     dict(queue=QueueKind.NONE, overlaunch=0, tile=32768, per_thread=4, warps=8)),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=512, help="bytes copied per launch, in MiB")
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args(argv)
    elements = args.mib * 2**20 // 4
    rows = []
    for label, name, overrides in CONFIGS:
        try:
            r = launch(name, sizes=[elements], reps=args.reps, warmup=5, **overrides)
        except LaunchError as exc:
            print(f"{label}: {exc}", file=sys.stderr)
            if exc.reason in ("no_device", "no_cuda_python"):
                return 2
            continue
        rows.append((label, r.runs[0], r))
    if not rows:
        return 2
    device = rows[0][2].device
    print(f"{args.mib} MiB copy on {device.name} ({device.arch}, {device.sms} SMs); GB/s = (read + written) / time;"
          f" device peak {device.peak_gbps or float('nan'):.0f} GB/s")
    head = f"{'config':40s} {'GB/s':>7s} {'min-max GB/s':>15s} {'memcpy':>7s} {'x memcpy':>9s} {'torch':>7s} {'x torch':>8s}  ok"
    print(head)
    print("-" * len(head))
    for label, run, res in rows:
        memcpy, torch = run.reference(MEMCPY), run.reference(TORCH)
        spread = f"{run.kernel.gbps(run.kernel.max_ms):.0f}-{run.kernel.gbps(run.kernel.min_ms):.0f}"
        print(f"{label:40s} {run.gbps:7.0f} {spread:>15s} {memcpy.gbps() if memcpy else float('nan'):7.0f} "
              f"{run.ratio(MEMCPY) or float('nan'):9.2f} {torch.gbps() if torch else float('nan'):7.0f} "
              f"{run.ratio(TORCH) or float('nan'):8.2f}  {'yes' if res.ok else 'NO'}")
    best_label, best, _ = max(rows, key=lambda row: row[1].gbps if row[2].ok else 0.0)
    ratio = best.ratio(MEMCPY) or 0.0
    torch_ratio = best.ratio(TORCH)
    print(f"best: {best_label}: {best.gbps:.0f} GB/s = {ratio:.2f}x cudaMemcpyAsync"
          + (f", {torch_ratio:.2f}x torch.copy_" if torch_ratio else "")
          + ("  [meets 0.90x]" if ratio >= 0.90 else "  [BELOW 0.90x]"))
    return 0 if ratio >= 0.90 else 1


if __name__ == "__main__":
    sys.exit(main())
