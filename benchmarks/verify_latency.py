"""How much does ``ts_explore.verify`` (plus drawing) cost next to a bare ``TaskManager``?

For every gallery case (broken and fixed) and every seed schedule that makes a
complete task set on its own, this prints the median (p50) wall time of

* ``TaskManager``: TS's own verification, output discarded; it stops at the first
  failing check, so on a broken schedule it does much less than ``verify``;
* ``TM all``: ``TaskManager(skip_validation=True)``, which runs every check like
  ``verify`` does (the baseline of the ratio);
* ``verify(...)``: ts-explore's verdict (all checks, every checker variant, paths);
* ``+ DOT``: verify plus building the wait-for graph and swimlanes (Graphviz source);
* ``+ SVG``: the same plus rendering both with ``dot`` (uncached, what a first display costs);

and the ratio ``(verify + DOT) / TM all``. Larger domains (``x32`` rows) show
how the ratio behaves when TS's own search dominates. Objects are rebuilt before every
timed call (TS mutates them) and the build is not timed.

    python benchmarks/verify_latency.py [--repeat 30] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cutlass.experimental.task_scheduling.task import Task  # noqa: E402
from cutlass.experimental.task_scheduling.task_manager import TaskManager  # noqa: E402

import ts_explore  # noqa: E402
from ts_explore import gallery  # noqa: E402
from ts_explore.verification.verify import verify  # noqa: E402
from ts_explore.seed_examples import seed  # noqa: E402
from ts_explore.render.display import _svg_for_source  # noqa: E402

Build = Callable[[], dict[str, Any]]


def seed_task_set(name: str) -> Build | None:
    """One task running a seed schedule: consumed resources in src, produced ones in dst."""

    def build() -> dict[str, Any]:
        rec = seed.SEED[name]()
        tree = rec.tree
        objects = dict(zip(tree.resources, rec.schedule.resources))
        produced = {s.resource for s in tree.steps() if s.stage.is_producer}
        src = [r for n, r in objects.items() if n not in produced or type(r).__name__.endswith("Queue")]
        dst = [r for n, r in objects.items() if n in produced and r not in src]
        cls = seed.VarlenTask if name == "dynamic_domain" else Task
        task = cls(src, dst, 0, 1, schedule=rec.schedule, name=name)
        data_src = [r for r in src if "Queue" not in type(r).__name__]
        graph = {r: list(data_src) for r in dst}
        for r in src:
            graph.setdefault(r, [])
        return {"tasks": [task], "resource_dependency_graph": graph}

    try:
        kwargs = build()
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            TaskManager(**kwargs, verbose=False)
    except Exception:  # noqa: BLE001 - not a complete task set on its own (needs partner tasks)
        return None
    return build


def p50(fn: Callable[[dict[str, Any]], Any], build: Build, repeat: int) -> float:
    """Median wall time of ``fn(build())``; the build is not timed."""
    times = []
    for _ in range(repeat):
        kwargs = build()
        start = time.perf_counter()
        fn(kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def raw_task_manager(kwargs: dict[str, Any], **extra: Any) -> None:
    """A bare TaskManager, output discarded (stops at the first failing check)."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            TaskManager(**kwargs, verbose=False, **extra)
        except (ValueError, RuntimeError, AssertionError):
            pass


def all_checks_task_manager(kwargs: dict[str, Any]) -> None:
    """TaskManager in warn-only mode: every check runs, as in verify."""
    raw_task_manager(kwargs, skip_validation=True)


def verify_and_dot(kwargs: dict[str, Any]) -> Any:
    """verify, then build the wait-for graph and the swimlanes (DOT source only)."""
    v = verify(**kwargs)
    return v, ts_explore.deadlock_graph(v), ts_explore.swimlanes(v)


def verify_and_svg(kwargs: dict[str, Any]) -> None:
    """verify, draw, and render both drawings to SVG with an empty cache."""
    _svg_for_source.cache_clear()
    _v, g1, g2 = verify_and_dot(kwargs)
    _svg_for_source(g1.source, g1.engine)
    _svg_for_source(g2.source, g2.engine)


def main(argv: list[str] | None = None) -> int:
    """Print the latency table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--svg-repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)

    cases: list[tuple[str, Build]] = []
    for name, case in gallery.CASES.items():
        cases.append((f"gallery {name} (broken)", case.broken))
        cases.append((f"gallery {name} (fixed)", case.fixed))
    for name in ("cross_wait", "cycle_of_three", "missing_release", "smem_alias_race"):
        case = gallery.get(name)
        cases.append((f"gallery {name} x32 (broken)", lambda c=case: c.broken(trip_count=32)))
        cases.append((f"gallery {name} x32 (fixed)", lambda c=case: c.fixed(trip_count=32)))
    pipeline = gallery.get("missing_release")  # a producer and a consumer task on one pipeline
    target = "2-task pipeline x64 (fixed)"
    cases.append((target, lambda: pipeline.fixed(trip_count=64)))
    skipped = []
    for name in seed.SEED:
        build = seed_task_set(name)
        if build is None:
            skipped.append(name)
        else:
            cases.append((f"seed {name}", build))
    if args.only:
        cases = [c for c in cases if any(o in c[0] for o in args.only)]

    for _label, build in cases[:2]:  # warm caches and imports
        verify_and_dot(build())

    print(f"cores: {os.cpu_count()}   repeat: {args.repeat} (SVG: {args.svg_repeat})   times are p50 in ms")
    header = (f"{'case':44} {'TaskManager':>11} {'TM all':>8} {'verify':>8} {'+DOT':>8} {'+SVG':>8} "
              f"{'ratio':>6}")
    print(header)
    print("-" * len(header))
    ratios, worst, against_tm = [], 0.0, {}
    for label, build in cases:
        first = p50(raw_task_manager, build, args.repeat)
        base = p50(all_checks_task_manager, build, args.repeat)
        ver = p50(lambda kw: verify(**kw), build, args.repeat)
        dot = p50(verify_and_dot, build, args.repeat)
        svg = p50(verify_and_svg, build, args.svg_repeat)
        ratio = dot / base
        ratios.append(ratio)
        against_tm[label] = (ratio, dot / first)
        worst = max(worst, svg)
        print(f"{label:44} {first * 1e3:11.2f} {base * 1e3:8.2f} {ver * 1e3:8.2f} {dot * 1e3:8.2f} "
              f"{svg * 1e3:8.1f} {ratio:6.2f}")
    print("-" * len(header))
    print(f"ratio (verify + DOT) / TM all: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
          f"slowest verify + DOT + SVG: {worst * 1e3:.1f} ms")
    if target in against_tm:
        vs_all, vs_bare = against_tm[target]
        print(f"{target}: (verify + DOT) / TM all = {vs_all:.2f} (target <= 1.5), / bare TaskManager = {vs_bare:.2f}; "
              f"verify searches with {verify(**pipeline.fixed(trip_count=64)).scope.engine}")
    if skipped:
        print(f"seed schedules that need partner tasks (not benchmarked): {', '.join(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
