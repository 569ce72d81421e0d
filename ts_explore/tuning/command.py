"""``ts-explore tune SCENARIO --shapes MxNxK ... [--configs FILE|PRESET] [--workers N] [--fresh]``.

Exit codes: 0 every shape has a pick, 1 some shape has none (nothing proven and
correct measured there) or cells still failed after their retry, 2 usage errors (bad ``--shapes``,
unknown scenario, bad ``--configs``, missing packages), 3 no GPU to measure on.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3


def add_parser(sub: Any, load_target: Any = None) -> argparse.ArgumentParser:
    """Register ``tune`` on the ``ts-explore`` sub-command parser (``load_target``: the CLI's ``MODULE:ATTR`` loader)."""
    p = sub.add_parser("tune", help="measure proven configs per GEMM shape on the GPU(s); keep each shape's fastest")
    p.add_argument("scenario", help="catalog name of a scenario with a GPU kernel (e.g. hopper_gemm), or "
                                    "MODULE:ATTR of a Scenario")
    p.add_argument("--shapes", nargs="+", required=True, metavar="MxNxK", help="shapes to tune, e.g. 4096x4096x4096")
    p.add_argument("--configs", metavar="FILE|PRESET", default=None,
                   help="candidate configs: a preset (hopper_gemm: quick, default) or a JSON list of settings")
    p.add_argument("--workers", type=int, help="GPUs to use (default: every visible one, one Dask worker each)")
    p.add_argument("--fresh", action="store_true", help="forget the table's rows and measure everything again")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions per launch")
    p.add_argument("--retries", type=int, default=1, help="times a failed cell (its worker died) is run again")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per cell (verification, each launch step)")
    p.add_argument("--cache-dir", help="where tuning/ goes (default: $XDG_CACHE_HOME/ts-explore or ~/.cache/...)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run, load_target=load_target)
    return p


def run(args: argparse.Namespace) -> int:
    """The ``tune`` command; usage problems print one line naming the fix and return 2."""
    from ..sweeps.cluster import SweepError
    from ..sweeps.command import UsageError, _scenario
    from .candidates import NoGpuError, TuneError, candidates, parse_shapes, refuse_code

    try:
        try:
            sc = _scenario(args.scenario, getattr(args, "load_target", None))  # the command line's one resolver
        except UsageError as exc:
            raise TuneError(str(exc)) from None
        shapes = parse_shapes(args.shapes)
        refuse_code(sc, candidates(sc.name, args.configs))  # a bad --configs is a usage error before any cluster starts
        from ..sweeps.cluster import require_packages

        require_packages()
        from .run import tune

        table = tune(sc, shapes, args.configs, workers=args.workers, cache_dir=args.cache_dir,
                     progress=not args.quiet, fresh=args.fresh, reps=args.reps, timeout=args.timeout, retries=args.retries)
    except (TuneError, SweepError) as exc:
        print(f"ts-explore tune: error: {exc}", file=sys.stderr)
        return EXIT_NO_GPU if isinstance(exc, NoGpuError) else EXIT_USAGE
    print(table.summary())
    from ..gpu.tuning_table import shape_text

    missing = [shape_text(s) for s in shapes if table.pick(s) is None]
    failed = 0
    if table.last_run is not None and len(table.last_run):
        final = table.last_run[table.last_run["attempt"] == table.last_run["attempt"].max()]  # after the retries
        failed = int((final["status"] == "failed").sum())
        for _, row in final[final["status"] == "failed"].head(5).iterrows():
            print(f"failed: {row['shape']}: {row['reason']} (re-run to measure it again)", file=sys.stderr)
    if missing:
        print(f"no pick for {', '.join(missing)}: no candidate there was proven, correct and measured",
              file=sys.stderr)
    return EXIT_FAIL if missing or failed else EXIT_OK


__all__ = ["EXIT_FAIL", "EXIT_NO_GPU", "EXIT_OK", "EXIT_USAGE", "add_parser", "run"]
