"""How long :func:`ts_explore.analysis.stalls.stalls` takes on long traces (the stall report and its critical path).

A simulated producer/consumer ring of one CTA (the ring the stall tests use:
one load warp, four store warps, four slots) is traced at 40k to 320k events
and ``stalls()`` timed on each (wall and CPU seconds, best of ``--repeat``).
Before the releases were indexed by their end time, finding the release that
let each acquire on the critical path through scanned every release of the
pipeline, so the walk grew with the square of the trace: 320k events took
about 58 s of CPU; it now grows as n log n.

    python benchmarks/stalls_time.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout, and the ring the stall tests simulate

from ring_sim import Ring, simulate  # noqa: E402

from ts_explore.analysis.stalls import stalls  # noqa: E402

EVENTS_PER_ITEM = 15  # load: acquire, load, commit; four store warps: wait, work, release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per size (the best is printed)")
    args = parser.parse_args()
    print(f"{'events':>8s} {'wall s':>7s} {'cpu s':>7s} {'path steps':>10s}")
    for events in (40_000, 80_000, 160_000, 320_000):
        timeline = simulate(Ring(items=events // EVENTS_PER_ITEM, stages=4))
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            found = stalls(timeline)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(f"{len(timeline.events):8d} {min(walls):7.2f} {min(cpus):7.2f} {len(found.path.steps):10d}", flush=True)


if __name__ == "__main__":
    main()
