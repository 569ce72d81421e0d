"""How far each exhaustive checker gets on the GEMM-shaped family: TS's BFS, ours reduced, ours unreduced.

    python benchmarks/checker_reach.py [--quick] [--loaders 1 2 3 4 5] [--iterations 8 16 32 64]

The family (``ts_explore.gallery.gemm_family``): n loader tasks, an MMA task
and an epilogue (n + 2 tasks), every loop N iterations. Each cell runs in a
fresh subprocess so its peak RSS (``ru_maxrss``) is its own; "s" is the
CPU time of the checker call (setup included, task building not), which a
busy shared machine does not inflate; the target lines also give wall time. TS runs at its
default cap (1,000,000 states), ours unreduced at ``--unreduced-cap``
(default 2,000,000), ours reduced at 10,000,000. Verdicts: SAFE (finished,
nothing found), DEADLOCK, "cap" (stopped at the cap: not proven).

Then every deadlocking variant (the MMA task never releases the last
loader's buffer) is searched by ours; its counterexample is replayed move
by move under the engine's step rules and through ts-explore's credit
replay (the stepper's), and must end with the Mma task and the last loader
blocked. One more cell measures peak RSS at 10,000,000 states (unreduced).

The last two columns: how much sooner the reduced search answers than TS,
and the unreduced engine's states per second over TS's (same states).

Then the tile-loop search (every number of work tiles of a persistent schedule at once) on the
catalog's persistent kernels: ``verify``'s wall time with it, and the states it explored.

Targets (2 cores, one process): 5 tasks x 32 iterations proven SAFE in
<= 1 s, 7 tasks x 16 in <= 1 s (stretch: 7 x 64 in <= 60 s), peak RSS <=
1 GB at 10M states. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_cell(engine: str, loaders: int, iterations: int, deadlock: bool, cap: int) -> dict[str, Any]:
    """One checker run in this process: states, seconds, verdict, peak RSS (MB)."""
    warnings.simplefilter("ignore")
    from cutlass.experimental.task_scheduling import exhaustive_checker as ec

    from ts_explore.check import search
    from ts_explore.gallery.gemm_family import gemm_family
    from ts_explore.reader.search_input import search_problem

    tasks = gemm_family(loaders, iterations, deadlock=deadlock)["tasks"]
    base = _rss_now_mb()
    start, cpu = time.perf_counter(), time.process_time()
    if engine == "ts":
        result = ec.check_all_interleavings(tasks, max_states=cap)
        deadlocked, capped, safe = bool(result.deadlock_states), result.hit_state_limit, result.is_safe
    else:
        # unreduced in TS-parity mode: the same states as TS's search (the family has no aliasing, so the
        # exact identity would give the same states anyway); reduced with the default exact identity.
        # Reading the instance is timed too, as TS's search reads it inside its call.
        result = search(search_problem(tasks), reduce=engine == "reduced", ts_parity=engine == "unreduced",
                        max_states=cap)
        deadlocked, capped, safe = bool(result.deadlocks), result.hit_cap or result.cancelled, result.proven_safe
    seconds, wall = time.process_time() - cpu, time.perf_counter() - start
    if deadlocked:
        verdict = "DEADLOCK"
    elif capped:
        verdict = "cap"
    else:
        verdict = "SAFE" if safe else "UNSAFE"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"states": result.states_explored, "seconds": seconds, "wall": wall, "verdict": verdict, "rss_mb": peak,
            "base_mb": base}


def _cell_in_subprocess(engine: str, loaders: int, iterations: int, deadlock: bool, cap: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--cell", engine, str(loaders), str(iterations), str(int(deadlock)), str(cap)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_counterexample(loaders: int, iterations: int) -> dict[str, Any]:
    """Search a deadlocking variant with ours; replay its counterexample two ways."""
    warnings.simplefilter("ignore")
    from ts_explore.check import search
    from ts_explore.check.tables import compile_problem
    from ts_explore.gallery.gemm_family import gemm_family
    from ts_explore.reader import ts_search as ck
    from ts_explore.reader.schedule import resource_namer
    from ts_explore.reader.search_input import search_problem

    case = gemm_family(loaders, iterations, deadlock=True)
    tasks = case["tasks"]
    cpu = time.process_time()
    problem = search_problem(tasks)
    run = search(problem)
    seconds = time.process_time() - cpu
    found = run.deadlocks[0]
    t = compile_problem(problem)
    state = t.initial
    for task, step in found.path:  # every move must be the task's next step and have its credit
        assert t.cursors(state)[task] == step and (not t.need[task][step] or state & t.need[task][step])
        state = t.advance(state, problem, task, step)
    assert t.cursors(state) == found.cursors
    name_of = resource_namer([r for task in tasks for r in [*task.src_resources, *task.dst_resources]])
    lanes = ck.lanes_for(tasks, ck.task_trips(tasks, None), {}, name_of)
    words = [(problem.tasks[m.task], problem.step_text(m.task, m.step)) for m in found.path]  # as TS's recorder
    moves = ck.moves_of(words, lanes, [x.name for x in tasks])
    from ts_explore.analysis.paths import replay

    inter = replay(moves, lanes, ck.credit_model(tasks, name_of))
    blocked = {problem.tasks[k] for k in found.blocked}
    ok = not inter.approximate and {"Mma", f"Loader{loaders - 1}"} <= blocked
    return {"moves": len(found.path), "states": run.states_explored, "seconds": seconds, "replays": ok}


TILE_LOOP_CASES = (
    ("hopper_gemm", {}), ("hopper_gemm", {"mode": "PINGPONG", "tile": "T128x128", "stages": 6}), ("hopper_gemm", {"epilogue": "HANDOFF"}),
    ("hopper_gemm", {"persistence": "CLC"}), ("hopper_attention", {"persistence": "STATIC"}),
    ("persistent_copy", {}), ("varlen_copy", {}),
)


def tile_loop_rows() -> list[str]:
    """One markdown row per persistent catalog case: verdict, verify wall time, the tile-loop search's states."""
    import enum
    import re

    from ts_explore import scenarios
    from ts_explore.verification.verify import verify

    warnings.simplefilter("ignore")
    rows = []
    for name, overrides in TILE_LOOP_CASES:
        sc = scenarios.get(name)
        default = sc.default_config()
        values = {k: type(getattr(default, k))[v] if isinstance(getattr(default, k), enum.Enum) else v
                  for k, v in overrides.items()}
        kwargs = sc.build(sc.config(**values)).verify_kwargs()
        start = time.perf_counter()
        v = verify(**kwargs)
        wall = time.perf_counter() - start
        loop = next((a.sentence for a in v.scope.abstractions if a.name == "tile-loop"), "")
        states = re.search(r"(\d+) states, closed", loop)
        label = name + "".join(f" {k}={x}" for k, x in overrides.items())
        rows.append(f"| {label} | {v.status.value.upper()} | {v.scope.tiles_covered} | "
                    f"{states.group(1) if states else '-'} | {wall:.2f} |")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loaders", type=int, nargs="*", default=[1, 2, 3, 4, 5])
    p.add_argument("--iterations", type=int, nargs="*", default=[8, 16, 32, 64])
    p.add_argument("--unreduced-cap", type=int, default=2_000_000)
    p.add_argument("--quick", action="store_true", help="n = 1, 3, 5 and N = 8, 32 only; no 10M-state cell")
    p.add_argument("--cell", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.cell:
        engine, loaders, iterations, deadlock, cap = args.cell
        print(json.dumps(run_cell(engine, int(loaders), int(iterations), bool(int(deadlock)), int(cap))))
        return
    loaders_list = [1, 3, 5] if args.quick else args.loaders
    iterations_list = [8, 32] if args.quick else args.iterations
    caps = {"ts": 1_000_000, "reduced": 10_000_000, "unreduced": args.unreduced_cap}

    print("| tasks | N | TS states | TS s | TS RSS MB | TS | ours red. states | red. s | red. RSS MB | red. "
          "| unred. states | unred. s | unred. RSS MB | unred. | TS s / red. s | unred. states/s / TS states/s |")
    print("|---:|---:|---:|---:|---:|:--|---:|---:|---:|:--|---:|---:|---:|:--|---:|---:|")
    for n in loaders_list:
        for iters in iterations_list:
            cells = {e: _cell_in_subprocess(e, n, iters, False, caps[e]) for e in ("ts", "reduced", "unreduced")}
            row = [str(n + 2), str(iters)]
            for e in ("ts", "reduced", "unreduced"):
                c = cells[e]
                row += [f"{c['states']:,}", f"{c['seconds']:.2f}", f"{c['rss_mb']:.0f}", c["verdict"]]
            ts, red, unred = cells["ts"], cells["reduced"], cells["unreduced"]
            row.append(f"{ts['seconds'] / max(red['seconds'], 1e-9):.0f}x")
            row.append(f"{(unred['states'] / unred['seconds']) / (ts['states'] / ts['seconds']):.1f}x")
            print("| " + " | ".join(row) + " |", flush=True)

    print("\nDeadlocking variant (Mma never releases the last loader's buffer), ours reduced:\n")
    print("| tasks | N | states | s | counterexample moves | replays to Mma + last loader blocked |")
    print("|---:|---:|---:|---:|---:|:--|")
    for n in loaders_list:
        for iters in iterations_list:
            c = check_counterexample(n, iters)
            print(f"| {n + 2} | {iters} | {c['states']:,} | {c['seconds']:.2f} | {c['moves']} | "
                  f"{'yes' if c['replays'] else 'NO'} |", flush=True)

    print("\nTile-loop search (every number of work tiles), persistent catalog kernels:\n")
    print("| scenario | verdict | work tiles covered | tile-loop states | verify s (wall) |")
    print("|:--|:--|:--|---:|---:|")
    for row in tile_loop_rows():
        print(row, flush=True)

    if not args.quick:
        print("\nMemory at 10,000,000 states (ours unreduced, 7 tasks x 32, capped at 10M):\n")
        c = _cell_in_subprocess("unreduced", 5, 32, False, 10_000_000)
        print(f"states {c['states']:,} in {c['seconds']:.1f} s ({c['states'] / c['seconds']:,.0f} states/s), "
              f"peak RSS {c['rss_mb']:.0f} MB (after imports and setup: {c['base_mb']:.0f} MB)")

    print("\nTargets (ours reduced):")
    for n, iters, limit in ((3, 32, 1), (5, 16, 1), (5, 64, 60)):
        c = _cell_in_subprocess("reduced", n, iters, False, caps["reduced"])
        met = c["verdict"] == "SAFE" and c["seconds"] <= limit
        print(f"  {n + 2} tasks x {iters}: {c['verdict']} in {c['seconds']:.2f} s CPU, {c['wall']:.2f} s wall, "
              f"{c['states']:,} states (<= {limit} s: {'met' if met else 'MISSED'})")


if __name__ == "__main__":
    main()
