"""What tracing costs: plain vs instrumented kernel time per launchable scenario, measured side by side.

    python benchmarks/trace_overhead.py [--mib 256] [--reps 30] [--only TEXT ...] [--default-only]

Each cell is one launch with ``time_trace=True``: the worker launches the
plain build and the instrumented build of the same config in turn, one of
each per round (CUDA events, warm-up then ``reps`` rounds), so each ratio
compares two medians taken over the same seconds. Columns: tracing only the
producer/consumer work steps of two CTAs (what ``trace="work"`` does: CTAs the launch picks so that
their instrumentation does not set the kernel's end; the
other CTAs run an uninstrumented copy of the schedule), the
work steps of every CTA, every step of every CTA (full tracing), and only
the progress writes a hang diagnosis reads (every CTA, system-scope stores to
host memory). The exit status is 1 when the work-step column exceeds 1.05x
for any scenario or could not be measured for one (a failed launch or a wrong
output), 2 when this machine cannot launch at all.
"""

from __future__ import annotations

import argparse
import sys

from ts_explore.gpu import LaunchError, launch
from ts_explore.gpu.errors import NO_GPU
from ts_explore.model import QueueKind
from ts_explore.model.timeline import TraceSpec
from ts_explore.scenarios import Loader

# (label, scenario, overrides, size (None: --mib MiB; an int: MiB; a tuple: a GEMM's (M, N, K)),
#  events kept per warp when every CTA records)
CONFIGS = [
    ("grid-stride 128-bit x4", "grid_stride_copy", dict(vector=4, per_thread=4, warps=8, ctas=0), None, 256),
    ("pipelined TMA 4x16 KiB", "pipelined_copy", dict(tile=4096, stages=4, ctas=0), None, 512),
    ("pipelined threads 4x16 KiB", "pipelined_copy", dict(loader=Loader.THREADS, load_warps=4, ctas=0), None, 512),
    ("persistent static 128-bit x4", "persistent_copy",
     dict(queue=QueueKind.STATIC, overlaunch=0, tile=32768, per_thread=4, warps=8, ctas=0), None, 256),
    ("one CTA per tile 128-bit x4", "persistent_copy",
     dict(queue=QueueKind.NONE, overlaunch=0, tile=32768, per_thread=4, warps=8), None, 64),
    ("varlen, static queue", "varlen_copy", dict(ctas=0), 4, 512),
    ("guards demo", "guards_demo", dict(), 4, 64),
    ("Hopper GEMM 128x256, 4 stages", "hopper_gemm", dict(), (4096, 4096, 4096), 2048),
    ("GEMM ping-pong 128x128, 6 stages", "hopper_gemm", dict(mode="ping-pong", tile="128x128x64", stages=6),
     (4096, 4096, 4096), 2048),
    ("attention hd128, 2 consumers", "hopper_attention", dict(), (4, 16, 2048, 2048, 128), 2048),
]


def columns(capacity: int) -> list[tuple[str, TraceSpec]]:
    return [
        ("work, 2 CTAs", TraceSpec(stages="work", ctas=2, capacity=4 * capacity, progress=False)),
        ("work, all CTAs", TraceSpec(stages="work", ctas=0, capacity=capacity, progress=False)),
        ("all, all CTAs", TraceSpec(stages="all", ctas=0, capacity=capacity, progress=False)),
        ("progress only", TraceSpec(stages="none", ctas=0, progress=True)),
    ]


COLUMNS = [label for label, _ in columns(1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=256, help="bytes copied per launch, in MiB")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", nargs="+", default=[""], metavar="TEXT",
                        help="measure only the scenarios whose label contains one of the TEXTs (e.g. threads)")
    parser.add_argument("--default-only", action="store_true",
                        help="measure only the default trace's column (work steps of 2 CTAs)")
    args = parser.parse_args(argv)
    chosen = [c for c in CONFIGS if any(text.lower() in c[0].lower() for text in args.only)]
    if not chosen:
        parser.error(f"no scenario label contains any of {args.only!r}; labels: {', '.join(c[0] for c in CONFIGS)}")
    wanted = COLUMNS[:1] if args.default_only else COLUMNS
    table = []
    device = ""
    for label, name, overrides, size, capacity in chosen:
        if isinstance(size, tuple):
            problem, shown = size, "x".join(map(str, size))
        else:
            problem, shown = (size or args.mib) * 2**20 // 4, f"{size or args.mib} MiB"
        row: list[tuple[float, float, bool]] = []
        cap = "-"
        for _, spec in columns(capacity)[:len(wanted)]:
            try:
                r = launch(name, sizes=[problem], reps=args.reps, warmup=5, trace=spec, time_trace=True,
                           references=False, **overrides)
            except LaunchError as exc:
                print(f"{label} / {spec}: {exc}", file=sys.stderr)
                if exc.reason in NO_GPU:
                    return 2
                row.append((float("nan"), float("nan"), False))
                continue
            run = r.runs[0]
            device = device or f"{r.device.name} ({r.device.arch})"
            lost = bool(run.timeline is not None and run.timeline.lost)
            row.append((run.kernel.median_ms, run.overhead() or float("nan"), r.ok and not lost))
            if len(row) == 1 and run.timeline is not None:  # the default trace: which build the launch kept
                cap = "none" if run.timeline.spec.registers is None else str(run.timeline.spec.registers)
        table.append((f"{label} ({shown})", row, cap))
    print(f"On {device}: instrumented / plain median kernel time of the same launch, {args.reps} reps each")
    head = f"{'scenario':48s} {'plain ms':>9s}" + "".join(f" {c:>16s}" for c in wanted) + f" {'cap':>5s}"
    print(head)
    print("-" * len(head))
    worst = 0.0
    unmeasured = []
    for label, row, cap in table:
        plain = next((ms for ms, _, _ in row if ms == ms), float("nan"))
        cells = "".join(f" {ratio:15.3f}x" + ("" if ok else "!") for _, ratio, ok in row)
        print(f"{label:48s} {plain:9.4f}{cells} {cap:>5s}")
        ratio, ok = row[0][1], row[0][2]
        if ratio == ratio and ok:
            worst = max(worst, ratio)
        else:
            unmeasured.append(label)
    print("! = wrong output or events past the capacity; cap = the register cap of the default trace's build "
          "(the launch times the uncapped build and ones capped at the plain kernel's count and at 255, and keeps a "
          "capped one when it is faster than the uncapped by more than 2% of the plain time)")
    if unmeasured:
        print(f"work-step overhead (2 CTAs) NOT MEASURED for {', '.join(unmeasured)}: see the errors above")
        return 1
    print(f"worst work-step overhead (2 CTAs): {worst:.3f}x " + ("[meets 1.05x]" if worst <= 1.05 else
                                                                   "[ABOVE 1.05x]"))
    return 0 if worst <= 1.05 else 1

if __name__ == "__main__":
    sys.exit(main())
