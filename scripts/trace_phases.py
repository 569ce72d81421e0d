"""Print when each consumer of a GEMM or attention kernel ran what, from a saved trace: the overlap read off the clock.

    python scripts/trace_phases.py benchmarks/results/hopper_gemm_pingpong.h200.trace.json
    python scripts/trace_phases.py benchmarks/results/hopper_attention.h200.trace.json
    python scripts/trace_phases.py benchmarks/results/hopper_gemm.h200.trace.json

Cooperative GEMM (one consumer task of two warpgroups): per tile, the mainloop and the epilogue, and the
share of the time from the first WGMMA to the last during which no mainloop runs (the epilogue and the
hand-over to the next tile): what an epilogue overlapped with the next tile's mainloop could win at most.

Ping-pong GEMM: each unit of two tiles is one k-loop of 2·K/64 ring stages, the upper tile's first. Every
consumer waits for every stage and issues WGMMA only on its own tile's, so a consumer's "mma" steps on its
own stages are its mainloop and the rest pass stages through. The table gives, per unit and consumer, the
window of its mainloop and of its epilogue (the c*.stage / c*.store steps) on CTA 0: one consumer's
epilogue lies inside the other's mainloop, and the mainloops take turns.

Attention: the first K/V blocks of CTA 0's first tile, warp 0 of each consumer, step by step: the turn
pipelines order the S GEMMs, and one consumer's softmax runs while the other's S GEMM does.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from ts_explore import load_trace


def gemm_phases(timeline) -> list[str]:
    """Per (unit, consumer): mainloop window (own stages) and epilogue window, in µs from the trace's start."""
    events = [e for e in timeline.events if e.cta == timeline.ctas[0] and e.task.startswith("mma")]
    stages = 1 + max(e.iteration for e in events if e.label == "smem_ab.mma")
    half = stages // 2
    spans: dict[tuple[int, str, str], list[int]] = defaultdict(lambda: [1 << 62, -1])
    for e in events:
        upper = e.task == "mma0"
        if e.label == "smem_ab.mma" and (e.iteration < half) == upper:
            kind = "mainloop"
        elif e.label.endswith((".stage", ".store")):
            kind = "epilogue"
        else:
            continue
        span = spans[(e.tile, e.task, kind)]
        span[0], span[1] = min(span[0], e.start_ns), max(span[1], e.end_ns)
    lines = [f"{'unit':>5s}  {'consumer':8s} {'step':9s} {'from µs':>8s} {'to µs':>8s}"]
    for (tile, task, kind), (a, b) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        lines.append(f"{tile:5d}  {task:8s} {kind:9s} {a / 1000:8.2f} {b / 1000:8.2f}")
    return lines


def cooperative_phases(timeline) -> list[str]:
    """Per tile of CTA 0: mainloop and epilogue windows, then the share of time with no mainloop running."""
    events = [e for e in timeline.events if e.cta == timeline.ctas[0] and e.task == "mma"]
    spans: dict[tuple[int, str], list[int]] = defaultdict(lambda: [1 << 62, -1])
    for e in events:
        kind = "mainloop" if e.label.endswith(".mma") else "epilogue" if e.label.endswith((".stage", ".store")) \
            else None
        if kind is not None:
            span = spans[(e.tile, kind)]
            span[0], span[1] = min(span[0], e.start_ns), max(span[1], e.end_ns)
    loops = sorted(v for (_, kind), v in spans.items() if kind == "mainloop")
    lines = [f"{'tile':>5s}  {'step':9s} {'from µs':>8s} {'to µs':>8s}"]
    for (tile, kind), (a, b) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        lines.append(f"{tile:5d}  {kind:9s} {a / 1000:8.2f} {b / 1000:8.2f}")
    if len(loops) > 1:
        idle = sum(nxt[0] - cur[1] for cur, nxt in zip(loops, loops[1:]))
        lines.append(f"no mainloop running: {idle / 1000:.2f} of {(loops[-1][1] - loops[0][0]) / 1000:.2f} µs "
                     f"({100 * idle / (loops[-1][1] - loops[0][0]):.1f} %) between the first WGMMA and the last")
    return lines


def attention_steps(timeline, blocks: int = 4) -> list[str]:
    """Warp 0 of each consumer, CTA 0's first tile, the first ``blocks`` K/V blocks, step by step."""
    cta = timeline.ctas[0]
    first = {t.name: t.warp_start for t in timeline.tasks if t.name.startswith("mma")}
    rows = [e for e in timeline.events if e.cta == cta and e.warp in first.values() and e.tile == min(
        x.tile for x in timeline.events if x.cta == cta) and (e.iteration is None or e.iteration < blocks)]
    lines = [f"{'consumer':8s} {'step':18s} {'block':>5s} {'from µs':>8s} {'to µs':>8s}"]
    for e in sorted(rows, key=lambda e: e.start_ns):
        block = "-" if e.iteration is None else str(e.iteration)
        lines.append(f"{e.task:8s} {e.label:18s} {block:>5s} {e.start_ns / 1000:8.2f} {e.end_ns / 1000:8.2f}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    timeline = load_trace(argv[0])
    tasks = {t.name for t in timeline.tasks}
    labels = {e.label for e in timeline.events}
    if "mma" in tasks and "smem_ab.mma" in labels:
        lines = cooperative_phases(timeline)
    elif {"mma0", "mma1"} <= tasks:
        lines = gemm_phases(timeline) if "smem_ab.mma" in labels else attention_steps(timeline)
    else:
        print(f"{argv[0]}: neither a cooperative GEMM (task mma) nor two consumers mma0 and mma1 in this trace "
              f"(tasks: {', '.join(sorted(tasks))})", file=sys.stderr)
        return 2
    print(f"{timeline.summary().splitlines()[0]}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
