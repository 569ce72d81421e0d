"""Persistent task sets against brute force: how many SAFE answers are wrong, and how many race-free sets are proven.

The sets are :mod:`tests/tile_sets.py`'s (aliased rings of 1-4 stages used 1-3
times per tile, token pipes, gates, PipelineGroups, skipped tiles, HEAD/TAIL
work). Each is verified (``verify``, and ``verify(..., cross_check=True)``
where that says SAFE) and searched unrolled to every tile count 1..N with
N = max(8, 2 * longest ring period + largest lead) (:mod:`tests/tile_brute.py`).
It prints the counts: sets, race-free sets, SAFE answers some tile count
contradicts (each with its seed and the set), and the share of race-free
sets proven SAFE (target >= 90 %).

    python benchmarks/tile_proof_rate.py [--sets 300] [--first 0] [--max-states 20000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tile_brute import VERIFY_STATES, tally  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=300, help="how many seeds (default 300)")
    parser.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--max-states", type=int, default=VERIFY_STATES,
                        help=f"cap on each of verify's searches (default {VERIFY_STATES:,}; capped is never SAFE)")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.sets < 1:
        parser.error(f"--sets takes a positive count, got {args.sets}")
    start = time.perf_counter()
    counts = tally(range(args.first, args.first + args.sets), args.max_states)
    wall = time.perf_counter() - start
    header = (f"# benchmarks/tile_proof_rate.py --sets {args.sets} --first {args.first} --max-states {args.max_states}\n"
              f"# cpu cores available: {len(os.sched_getaffinity(0))}; wall {wall:.0f} s\n")
    report = header + counts.text() + "\n"
    print(report, end="")
    if args.out is not None:
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
