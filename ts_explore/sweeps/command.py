"""``ts-explore sweep SCENARIO --grid key=v1,v2 ... [--launch] [--scheduler ADDRESS] -o results.csv``.

Exit codes: 0 every cell has a result (refused configs included), 1 some
cells failed (or the sweep was interrupted), 2 usage errors, refused before
any cell runs (unknown scenario or knob, a malformed ``--grid``, an output
name that is not .csv/.parquet or whose folder is missing, ``--workers`` or
``--timeout`` that is not a positive number, missing packages, an
unreachable scheduler, workers that cannot start or load the scenario).
Each prints one line.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2  # the CLI's codes


class UsageError(Exception):
    """A problem with the command line or what it names (exit 2)."""


def add_parser(sub: Any, load_target: Any = None) -> argparse.ArgumentParser:
    """Register ``sweep`` on the ``ts-explore`` sub-command parser.

    ``load_target`` is the CLI's ``MODULE:ATTR`` loader (passed in, so this
    module does not import the CLI that imports it).
    """
    p = sub.add_parser("sweep", help="verify (and launch) a grid of scenario configs on a Dask cluster")
    p.add_argument("scenario", help="catalog name (see `ts-explore launch --list`) or MODULE:ATTR of a Scenario")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a knob and the values to try (repeatable; every combination is a cell)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a fixed setting for every cell")
    p.add_argument("-o", "--output", required=True, help="results file: .csv or .parquet")
    p.add_argument("--launch", action="store_true", help="also compile, run and time each safe config on a GPU")
    p.add_argument("--size", type=parse_size, action="append", metavar="SIZE",
                   help="launch size: elements, or a shape MxNxK (repeatable; default: the kernel's own)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions per launch")
    p.add_argument("--force", action="store_true", help="launch configs the verifier does not prove safe")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (default: a local cluster)")
    p.add_argument("--workers", help="local cluster workers, a positive number (default: one per core, or per GPU)")
    p.add_argument("--timeout", default="300", help="seconds per cell, a positive number (verification, each "
                   "launch step)")
    p.add_argument("--no-cache", action="store_true", help="recompute every cell (and do not store results)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run, load_target=load_target)
    return p


def parse_size(text: str) -> Any:
    """``"16777216"`` -> 16777216; ``"4096x4096x4096"`` -> ``(4096, 4096, 4096)``.

    >>> parse_size("1024"), parse_size("64x32x16")
    (1024, (64, 32, 16))
    """
    parts = text.lower().split("x")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: give elements (16777216) or a shape "
                                         "(4096x4096x4096)") from None
    return values[0] if len(values) == 1 else values


def parse_grid(pairs: Sequence[str]) -> dict[str, list[str]]:
    """``["stages=1,2", "loader=tma"]`` -> ``{"stages": ["1", "2"], "loader": ["tma"]}``.

    >>> parse_grid(["stages=1, 2,4", "loader=tma"])
    {'stages': ['1', '2', '4'], 'loader': ['tma']}
    """
    grid: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        values = [v.strip() for v in raw.split(",") if v.strip()]
        if not sep or not key.strip() or not values:
            raise UsageError(f"--grid takes KEY=V1,V2,... (e.g. --grid stages=1,2,4), got {pair!r}")
        if key.strip() in grid:
            raise UsageError(f"--grid names {key.strip()!r} twice; list all its values in one --grid")
        grid[key.strip()] = values
    if not grid:
        raise UsageError("give at least one --grid KEY=V1,V2,... (e.g. --grid stages=1,2,4)")
    return grid


def _scenario(spec: str, load_target: Any) -> Any:
    from ..scenarios import Scenario, get

    if load_target is not None or ":" in spec:  # the command line's one resolver: catalog names and MODULE:ATTR
        if load_target is None:
            raise UsageError(f"{spec}: MODULE:ATTR needs the ts-explore command line; pass a catalog name")
        try:
            obj = load_target(spec)
        except Exception as exc:  # noqa: BLE001 - the CLI's own usage error: bad spec, import failure
            raise UsageError(str(exc)) from None
        if not isinstance(obj, Scenario):
            raise UsageError(f"{spec} is a {type(obj).__name__}, not a Scenario")
        return obj
    try:
        return get(spec)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None


def parse_workers(text: str | None) -> int | None:
    """``--workers``: a positive whole number, or None when not given.

    >>> parse_workers("2"), parse_workers(None)
    (2, None)
    """
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"--workers takes a positive number of worker processes, got {text!r}; e.g. --workers 2, "
                         "or leave it out for one per core")
    return value


def parse_timeout(text: str) -> float:
    """``--timeout``: a positive, finite number of seconds (nan, 0, negatives and infinity are refused).

    >>> parse_timeout("1.5")
    1.5
    """
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"--timeout takes a positive number of seconds per cell, got {text!r}; e.g. --timeout 300")
    return value


def check_output(path: str) -> None:
    """Refuse an output file whose folder is missing or not writable, before any cell runs."""
    import os
    from pathlib import Path

    folder = Path(path).parent
    if not folder.is_dir():
        raise UsageError(f"-o {path}: the folder {folder} does not exist; create it or write elsewhere")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"-o {path}: the folder {folder} is not writable; write elsewhere")
    if Path(path).is_dir():
        raise UsageError(f"-o {path} is a folder; give a file name ending in .csv or .parquet")


def _client(address: str | None) -> Any:
    if address is None:
        return None
    from distributed import Client

    try:
        return Client(address, timeout="20s")  # with the security of the Dask configuration (distributed.comm.tls)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}; start one with "
                         "`dask scheduler` (and `dask worker ADDRESS`), or leave --scheduler out") from None


def run(args: argparse.Namespace) -> int:
    """The ``sweep`` command; returns the exit code (usage problems print one line and return 2)."""
    import sys

    try:
        return _run(args)
    except UsageError as exc:
        print(f"ts-explore sweep: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _one_line_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
    """A warning during ``ts-explore sweep`` is one line on stderr (no source line)."""
    import sys

    print(f"ts-explore sweep: warning: {message}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    import importlib.util
    import sys
    import warnings
    from pathlib import Path

    from ..scenarios.knobs import ConfigError, configure
    from .cache import CacheWarning
    from .cluster import INSTALL_HINT, SweepError, require_packages, start_cluster
    from .engine import Sweep
    from .grid import GridError
    from .table import write

    suffix = Path(args.output).suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise UsageError(f"-o {args.output}: use a .csv or .parquet file name")
    if suffix != ".csv" and importlib.util.find_spec("pyarrow") is None:
        raise UsageError(f"-o {args.output}: writing Parquet needs pyarrow ({INSTALL_HINT}); or write a .csv")
    check_output(args.output)
    workers, timeout = parse_workers(args.workers), parse_timeout(args.timeout)
    try:
        require_packages()
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    scenario = _scenario(args.scenario, getattr(args, "load_target", None))
    grid = parse_grid(args.grid)
    base_values = dict(p.partition("=")[::2] for p in args.set)
    try:
        base = configure(scenario, base_values, check=False)
    except ConfigError as exc:
        raise UsageError(f"--set: {exc}") from None
    client = _client(args.scheduler)
    own = None
    connected = client
    try:
        sweep = Sweep(scenario, grid, base=base, launch=args.launch, sizes=args.size, reps=args.reps,
                      force=args.force, client=client, timeout=timeout, cache=not args.no_cache,
                      progress=not args.quiet)
        sweep.cancel_note = ""  # an interrupted sweep is said once, below
        if client is None and workers:
            sweep.client = own = start_cluster(launch=args.launch, workers=workers)
        with warnings.catch_warnings():
            warnings.simplefilter("always", CacheWarning)
            warnings.showwarning = _one_line_warning
            try:
                df = sweep.run()
            except KeyboardInterrupt:  # before the cells ran (starting the cluster): the rows so far, if any
                sweep.cancelled = True
                df = sweep.frame()
    except (GridError, SweepError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if own is not None:
            own.close()
            own.cluster.close()
        if connected is not None:
            connected.close()
    try:
        out = write(df, args.output)
    except (ValueError, OSError) as exc:
        raise UsageError(f"-o {args.output}: {exc}; the rows are cached, so a re-run with another -o is quick"
                         ) from None
    counts = df["status"].value_counts()
    summary = ", ".join(f"{int(counts[s])} {s}" for s in counts.index if counts[s])
    cached = int(df["cached"].sum()) if len(df) else 0
    print(f"wrote {out}: {len(df)} of {df.attrs['total']} cells ({summary}; {cached} from the cache)")
    if df.attrs.get("cancelled"):
        print("interrupted: the rows computed so far are written and cached; run again to resume", file=sys.stderr)
        return EXIT_FAIL
    failed = df[df["status"] == "failed"]
    for _, row in failed.head(5).iterrows():
        print(f"failed: {', '.join(f'{k}={row[k]}' for k in df.attrs['knobs'])}: {row['reason']}", file=sys.stderr)
    return EXIT_FAIL if len(failed) else EXIT_OK


__all__ = ["EXIT_FAIL", "EXIT_OK", "EXIT_USAGE", "UsageError", "add_parser", "parse_grid", "run"]
