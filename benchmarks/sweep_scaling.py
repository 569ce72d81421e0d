"""How well does a sweep scale with Dask workers? 1 vs 2 CPU workers (verification), 1 vs 2 GPUs (launch).

CPU part (default): a verification sweep of >= 100 ``pipelined_copy`` configs
(stages x store warps x tiles per CTA, one CTA so each proof walks its whole
tile loop) on a local cluster with 1 worker and on one with 2 workers, timed in
alternating rounds (``--repeat``, median reported, so a change in the
machine's load hits both alike); the ratio of the medians is the speed-up
(target >= 1.7x on 2 cores). Cluster
start-up and the workers' imports (DSL, TS, verifier) are measured separately
and left out of the sweep times; the results cache is off. ``--serial`` also
times the same cells one by one in this process (no Dask), to show the
engine's own overhead.

GPU part (``--launch``): a launch sweep of >= 16 copy configs on one GPU, then
on two GPUs of the same host (one Dask worker per GPU, each with its own
launch worker process and watchdog; target >= 1.8x). Each worker compiles
its cells (compilation runs in parallel across GPUs) and times them one at a
time on its own GPU. Start-up (cluster, launch worker processes, CUDA
contexts) is measured separately and left out.

    python benchmarks/sweep_scaling.py [--serial] [--repeat 3]   # CPU: 1 vs 2 workers
    python benchmarks/sweep_scaling.py --launch            # GPU: 1 vs 2 GPUs (needs 2 GPUs)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CPU_GRID = {"stages": [1, 2, 3, 4, 5, 6, 7, 8], "store_warps": [1, 2, 4, 8],
            "elements": [96 * 4096, 128 * 4096, 160 * 4096, 192 * 4096]}  # 128 cells, ~0.1-0.4 s each
CPU_BASE = {"ctas": 1, "tile": 4096}
GPU_GRID = {"stages": [1, 2, 3, 4, 5, 6, 7, 8], "store_warps": [1, 2, 4, 8], "loader": ["tma", "threads"]}  # 64 cells
GPU_BASE = {"ctas": 0}


def _warm(client: Any, launch: bool) -> float:
    """Import the DSL/TS/verifier on every worker (and start each launch worker with its CUDA context)."""
    from ts_explore.sweeps.cell import warm_up

    start = time.perf_counter()
    client.run(warm_up)
    if launch:
        client.run(_open_gpu)
    return time.perf_counter() - start


def _open_gpu() -> str:
    from ts_explore.gpu import device_info

    return device_info().name


def _timed_sweeps(counts: tuple[int, ...], launch: bool, grid: dict[str, Any], base: Any, sizes: Any,
                  repeat: int) -> list[dict[str, Any]]:
    """Start one cluster per worker count, warm them, then time the sweep on each in turn, ``repeat`` rounds.

    Alternating the clusters round by round spreads any change in the machine's
    load over all of them; each count reports its median sweep time.
    """
    import statistics

    import ts_explore
    from ts_explore.sweeps import start_cluster

    runs = []
    try:
        for n in counts:
            t0 = time.perf_counter()
            client = start_cluster(workers=n, launch=launch)
            runs.append({"workers": n, "client": client, "start_s": time.perf_counter() - t0, "times": []})
            runs[-1]["warm_s"] = _warm(client, launch)
        for _ in range(repeat):
            for run in runs:
                t1 = time.perf_counter()
                run["df"] = ts_explore.sweep("pipelined_copy", grid, base=base, client=run["client"], launch=launch,
                                             sizes=sizes, cache=False, progress=False, timeout=600)
                run["times"].append(time.perf_counter() - t1)
    finally:
        for run in runs:
            cluster = run["client"].cluster
            run["client"].close()
            cluster.close()
    for run in runs:
        run["sweep_s"] = statistics.median(run["times"])
    return runs


def _spin(n: int) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i
    return time.perf_counter() - start


def machine_parallelism(n: int = 12_000_000) -> float:
    """How many cores' worth two busy processes get right now (2.0 on an idle 2-core machine).

    Other jobs on a shared machine cap what any speed-up can reach; this says
    by how much, measured next to the sweeps.
    """
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # start both processes first
        one = pool.map(_spin, [n])[0]
        both = pool.map(_spin, [n, n])
    return 2 * one / max(both)


def _serial(grid: dict[str, Any], base: Any) -> float:
    from ts_explore import scenarios
    from ts_explore.sweeps.cell import run_cell
    from ts_explore.sweeps.grid import expand

    sc = scenarios.get("pipelined_copy")
    cells = [c for c in expand(sc, grid, base=base) if c.config is not None]
    run_cell(sc, cells[0].config)  # imports
    start = time.perf_counter()
    for cell in cells:
        run_cell(sc, cell.config)
    return time.perf_counter() - start


def _report(title: str, runs: list[dict[str, Any]], unit: str, serial: float | None = None) -> None:
    one, two = runs
    df = two["df"]
    counts = ", ".join(f"{n} {s}" for s, n in df["status"].value_counts().items() if n)
    print(f"# {title}")
    print(f"cells: {len(df)} ({counts}); cores: {os.cpu_count()}")
    print(f"{'':>4} {unit:>8} {'start-up s':>11} {'imports/warm s':>15} {'sweep s (median)':>17} {'cells/s':>8}  "
          "each round")
    for r in runs:
        rounds = " ".join(f"{t:.2f}" for t in r["times"])
        print(f"{'':>4} {r['workers']:>8} {r['start_s']:>11.2f} {r['warm_s']:>15.2f} {r['sweep_s']:>17.2f} "
              f"{len(r['df']) / r['sweep_s']:>8.2f}  {rounds}")
    if serial is not None:
        print(f"one by one in this process (no Dask): {serial:.2f} s")
    print(f"speed-up {unit} 1 -> 2: {one['sweep_s'] / two['sweep_s']:.2f}x (median sweep times; start-up and "
          "imports excluded)")
    if len(one["times"]) > 1:
        print("round by round (each pair timed back to back): "
              + ", ".join(f"{a / b:.2f}x" for a, b in zip(one["times"], two["times"])))
    try:
        print(f"load average while measuring: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    except OSError:
        pass
    for r in runs:
        busy = r["df"]["elapsed_s"].sum() / (r["workers"] * r["times"][-1])
        print(f"{r['workers']} worker(s), last round: cells ran {r['df']['elapsed_s'].sum():.2f} s in all, workers "
              f"busy {100 * busy:.0f}% of the sweep (the rest is Dask and messaging)")
    per_worker = df["worker"].value_counts()
    print("cells per worker (2-worker run): " + ", ".join(f"{n}" for n in per_worker.tolist()))


def _launch_table(df: Any) -> None:
    cols = ["stages", "store_warps", "loader", "status", "launch", "value", "unit", "ratio", "correct", "compile_s",
            "worker"]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    for _, row in df[df["status"] != "safe"].head(3).iterrows():
        print(f"not safe: stages={row['stages']} store_warps={row['store_warps']} loader={row['loader']}: "
              f"{row['reason'][:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch", action="store_true", help="the GPU part: 1 vs 2 GPUs")
    parser.add_argument("--serial", action="store_true", help="also time the CPU cells one by one in-process")
    parser.add_argument("--size", type=int, default=1 << 24, help="int32 elements per launch")
    parser.add_argument("--repeat", type=int, help="timed rounds per worker count, median reported (default: 3 for "
                        "the CPU part; 1 for launches, whose later rounds would hit the compile cache)")
    args = parser.parse_args()
    from ts_explore import scenarios

    sc = scenarios.get("pipelined_copy")
    if args.launch:
        base = sc.config(**GPU_BASE)
        runs = _timed_sweeps((1, 2), True, GPU_GRID, base, [args.size], args.repeat or 1)
        _report(f"launch sweep, pipelined_copy, {args.size} int32 elements per launch", runs, "GPUs")
        for r in runs:
            d = r["df"]
            print(f"{r['workers']} GPU(s): compiling took {d['compile_s'].sum():.2f} s in all, launches (compile, "
                  f"check, timing) {d['launch_s'].sum():.2f} s in all")
        _launch_table(runs[1]["df"])
        return
    base = sc.config(**CPU_BASE)
    serial = _serial(CPU_GRID, base) if args.serial else None
    before = machine_parallelism()
    runs = _timed_sweeps((1, 2), False, CPU_GRID, base, None, args.repeat or 3)
    after = machine_parallelism()
    _report("verification sweep, pipelined_copy, 1 CTA", runs, "workers", serial)
    print(f"cores' worth two busy processes got (2.00 on an idle 2-core machine): {before:.2f} before the sweeps, "
          f"{after:.2f} after")


if __name__ == "__main__":
    main()
