"""Render time of every seed (golden) schedule: record, capture, DOT, and `dot -Tsvg`.

Run:  .venv/bin/python benchmarks/render_time.py
Prints one row per case (median of N runs, SVG cache cleared each time), largest first.
"""

from __future__ import annotations

import statistics
import time

import ts_explore
from ts_explore.seed_examples.seed import SEED
from ts_explore.render import display

RUNS = 15


def main() -> None:
    rows = []
    for name, make in SEED.items():
        rec_t, dot_t, svg_t = [], [], []
        for _ in range(RUNS):
            display._svg_for_source.cache_clear()
            t0 = time.perf_counter()
            rec = make()
            t1 = time.perf_counter()
            graph = ts_explore.schedule_graph(rec)
            t2 = time.perf_counter()
            display.to_svg(graph)
            t3 = time.perf_counter()
            rec_t.append(t1 - t0)
            dot_t.append(t2 - t1)
            svg_t.append(t3 - t2)
        steps = len(rec.tree.steps())
        rows.append((steps, name, statistics.median(rec_t), statistics.median(dot_t), statistics.median(svg_t)))
    rows.sort(reverse=True)
    print(f"{'case':24} {'steps':>5} {'record ms':>10} {'capture+DOT ms':>15} {'dot->SVG ms':>12} {'total ms':>9}")
    for steps, name, r, d, s in rows:
        print(f"{name:24} {steps:5d} {r*1e3:10.1f} {d*1e3:15.1f} {s*1e3:12.1f} {(r+d+s)*1e3:9.1f}")


if __name__ == "__main__":
    main()
