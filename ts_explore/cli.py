"""``ts-explore``: draw, verify and launch TS schedules from a shell or CI job.

Exit codes (one table, also in the README):

====  ==========================================================================
code  meaning
====  ==========================================================================
0     success: ``verify`` proved the instance SAFE, ``render`` wrote the file,
      ``launch`` ran and the results are correct
1     ``verify``: UNSAFE (TS rejects the schedule); ``launch``: the run failed or
      its results are wrong
2     usage, load, factory or config error (one line on stderr, no traceback)
3     ``launch``: this machine cannot run it (no GPU, too old a GPU, the gate
      refused an unproven config)
4     ``verify``: INCONCLUSIVE (nothing found, but not a proof; the reasons are
      printed, or one line when it ran out of memory)
130   interrupted (Ctrl-C): one line on stderr; nothing was proven
====  ==========================================================================
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Sequence

from .cli_targets import UsageError, load_target, parse_settings, resolve, verify_kwargs, drawable  # noqa: F401 - re-exported

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_REFUSED, EXIT_INCONCLUSIVE = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # what shells report for a command ended by SIGINT
VERIFY_EXIT = {"safe": EXIT_OK, "unsafe": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}


def emit(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) ends the output quietly."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush goes nowhere instead of failing


class _SearchProgress:
    """Prints our checker's progress (states, states/s, elapsed) to stderr, at most every ``every`` seconds.

    It is called from the search itself, so it reports even while the search
    keeps the interpreter busy.
    """

    def __init__(self, every: float = 2.0) -> None:
        self.every, self._next = every, time.perf_counter() + every
        self.stream = sys.stderr  # the terminal's, whatever captures TS's printing meanwhile

    def __call__(self, states: int, per_s: float, elapsed: float) -> None:
        now = time.perf_counter()
        if now >= self._next:
            self._next = now + self.every
            print(f"  ... searching: {states:,} states, {per_s:,.0f} states/s, {elapsed:.1f} s in this run",
                  file=self.stream, flush=True)


class _Progress:
    """Prints elapsed time to stderr while a long check runs."""

    def __init__(self, what: str, every: float = 2.0) -> None:
        self.what, self.every = what, every
        self.stream = sys.stderr  # the terminal's, not what a redirect installs meanwhile
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.perf_counter()
        while not self._stop.wait(self.every):
            print(f"  ... still {self.what} ({time.perf_counter() - start:.0f} s)", file=self.stream, flush=True)

    def __enter__(self) -> "_Progress":
        self.start = time.perf_counter()
        print(f"{self.what} ...", file=sys.stderr, flush=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if exc_type is KeyboardInterrupt:  # main() says it in its one line
            return
        ended = "done in" if exc_type is None else "stopped after"  # a refusal is not a finished launch
        print(f"{self.what}: {ended} {time.perf_counter() - self.start:.2f} s", file=sys.stderr, flush=True)


def cmd_render(args: argparse.Namespace) -> int:
    from .app.drawings import save

    obj = drawable(args.target, args.set)
    try:
        out = save(obj, args.output)
    except TypeError as exc:
        raise UsageError(f"cannot draw {args.target}: {exc}") from exc
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    emit(f"wrote {out}")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from .reader.trips import LoopTooLong
    from .verification.verify import verify

    kwargs = verify_kwargs(args.target, args.set)
    if args.max_states is not None and args.max_states < 1:
        raise UsageError(f"--max-states takes a positive number of states, got {args.max_states}")
    if args.cross_check and args.checker == "ts":
        raise UsageError("--cross-check checks ts-explore's own search: use it with --checker auto, reduced or "
                         "unreduced")
    try:  # in this thread: Ctrl-C raises KeyboardInterrupt wherever verify is (TS's reading too); main() says it
        with _Progress(f"verifying {len(kwargs.get('tasks') or [])} task(s)"):
            verdict = verify(**kwargs, checker=args.checker, max_states=args.max_states, progress=_SearchProgress(),
                             cross_check=args.cross_check)
    except (TypeError, LoopTooLong) as exc:
        raise UsageError(str(exc)) from None
    except MemoryError:
        print("ts-explore verify: INCONCLUSIVE: ran out of memory while verifying, so nothing was proven; verify "
              "a smaller instance (fewer tiles or loop iterations) or cap the search with --max-states",
              file=sys.stderr)
        return EXIT_INCONCLUSIVE
    found = _repairs(args, verdict) if args.repair and verdict.status.value == "unsafe" else None
    if args.json:
        out = verdict.to_dict()
        if found is not None:
            out["repairs"] = found.to_dict()
        emit(json.dumps(out, indent=2, sort_keys=True))
    else:
        emit(verdict.status.value.upper() + "\n" + verdict.summary())
        if args.cross_check and verdict.scope is not None:  # whether and how, and both answers where they differ
            emit("cross-check: " + verdict.scope.cross_check_text())
        if found is not None:
            emit(_repairs_text(found))
    return VERIFY_EXIT[verdict.status.value]


def _repairs(args: argparse.Namespace, verdict: Any) -> Any:
    """``--repair``: ranked proven repairs of an UNSAFE verdict (fresh tasks from the same target each time)."""
    from .repair import repairs

    with _Progress("searching for repairs"):
        return repairs(verdict, lambda: verify_kwargs(args.target, args.set), seconds=args.repair_seconds)


def _repairs_text(found: Any) -> str:
    lines = ["", "REPAIRS (each proven SAFE by verify; TS's TaskManager accepts it)"]
    for i, r in enumerate(found, 1):
        cost = f", +{r.added_bytes} B shared memory" if r.added_bytes else ""
        lines += [f"{i}. {r.sentence} ({r.size} step(s) touched{cost})", r.diff(), ""]
    return "\n".join([*lines, found.tried])


# LaunchError reasons that mean "not on this machine / not this config" rather than a failed run.
_REFUSALS = frozenset({"no_kernel", "bad_config", "unverified", "no_cuda_python", "no_driver", "no_device",
                       "probe_failed", "needs_sm100", "needs_newer_gpu", "cannot_run_here",
                       "bad_size", "unpicklable"})


def cmd_launch(args: argparse.Namespace) -> int:
    from . import scenarios

    if args.list or not args.scenario:
        emit("\n".join(f"{name:28} {sc.title}" for name, sc in sorted(scenarios.CATALOG.items())))
        return EXIT_OK if args.list else EXIT_USAGE
    scenario = load_target(args.scenario)
    if not isinstance(scenario, scenarios.Scenario):
        raise UsageError(f"launch takes a scenario; {args.scenario} is a {type(scenario).__name__}")
    config = parse_settings(scenario, args.set)
    from .gpu.sizes import SizeSyntaxError, sizes_from_text

    try:
        sizes = sizes_from_text(scenario, args.size)
    except SizeSyntaxError as exc:
        raise UsageError(str(exc)) from None
    if args.reps < 1:
        raise UsageError(f"--reps takes a positive number of timed repetitions, got {args.reps}")
    from .gpu import LaunchError, launch

    try:
        with _Progress(f"compiling and launching {scenario.name}"):
            result = launch(scenario, config, sizes=sizes, reps=args.reps, force=args.force)
    except LaunchError as exc:
        if exc.reason == "bad_size":  # a size this kernel cannot take is a usage error, like a bad --size
            raise UsageError(exc.args[0]) from None
        refused = exc.reason in _REFUSALS
        print(f"{'cannot launch' if refused else 'launch failed'}: {exc}", file=sys.stderr)
        return EXIT_REFUSED if refused else EXIT_FAIL
    emit(result.summary())
    return EXIT_OK if result.ok else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ts-explore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("render", help="draw a schedule, task, task manager, scenario or (tasks, graph) factory")
    p.add_argument("target", help="a catalog name, or MODULE:ATTR (module name or .py path): anything verify "
                                  "accepts, or a schedule")
    p.add_argument("-o", "--output", required=True, help="output file: .svg .png .pdf .dot")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario setting")
    p.set_defaults(func=cmd_render)
    v = sub.add_parser("verify", help="verify a scenario or a (tasks, graph) factory; exit 0 safe, 1 unsafe, "
                                      "4 inconclusive")
    v.add_argument("target", help="a catalog name, or MODULE:ATTR: a scenario or a zero-argument callable "
                                  "returning (tasks, graph)")
    v.add_argument("--json", action="store_true", help="print the verdict as JSON")
    v.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario setting")
    v.add_argument("--checker", choices=("auto", "reduced", "unreduced", "ts"), default="auto",
                   help="the exhaustive search: ts-explore's own (auto, reduced, unreduced) or TS's BFS (ts)")
    v.add_argument("--max-states", type=int, default=None, metavar="N",
                   help="cap each search run of our checker at N states (a capped run is INCONCLUSIVE)")
    v.add_argument("--cross-check", action="store_true",
                   help="also search every run with an independent second engine; a disagreement is INCONCLUSIVE")
    v.add_argument("--repair", action="store_true",
                   help="when UNSAFE, search small schedule edits and print those proven SAFE, with their diffs")
    v.add_argument("--repair-seconds", type=float, default=2.0, metavar="S", help="time bound of --repair")
    v.set_defaults(func=cmd_verify)
    la = sub.add_parser("launch", help="compile and run a catalog scenario on the GPU")
    la.add_argument("scenario", nargs="?", help="catalog name (see `ts-explore launch --list`) or MODULE:ATTR")
    la.add_argument("--list", action="store_true", help="list the catalog and exit")
    la.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="scenario setting")
    la.add_argument("--size", action="append", metavar="SIZE",
                    help="one launch size (repeatable): int32 elements for the copies (default 16M), MxNxK for "
                         "hopper_gemm (default 4096x4096x4096), BxHxSQxSKVxD for hopper_attention")
    la.add_argument("--reps", type=int, default=20)
    la.add_argument("--force", action="store_true", help="launch even if the verifier says unsafe")
    la.set_defaults(func=cmd_launch)
    from .sweeps import command as sweep_command
    sweep_command.add_parser(sub, load_target)
    from .tuning import command as tune_command
    tune_command.add_parser(sub, load_target)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # argparse itself exits 2 on a bad command line
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"ts-explore {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        proven = "; nothing was proven" if args.command == "verify" else ""
        print(f"ts-explore {args.command}: interrupted (Ctrl-C){proven}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
