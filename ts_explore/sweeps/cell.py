"""What a Dask worker runs for one cell: build, verify and (optionally) launch one config into a row.

The row is a plain dict of scalars (it travels back to the client, into a
JSON cache and a DataFrame). Nothing here imports Dask at module level, so
``run_cell`` also runs in-process.

Timeouts are ours (Dask has none): building and verifying run under a
watchdog that raises :class:`CellTimeout` inside the worker's thread once
``timeout`` seconds pass (TS's exhaustive search is Python, so it stops at the
next bytecode). A thread that does not stop within a grace period is stuck in
native code: when the worker runs under a Dask nanny, the watchdog ends the
worker process, the nanny starts a fresh one, and the scheduler (allowed
failures 0) records the cell as failed instead of retrying it elsewhere. A
launch keeps its own watchdog (the launch worker process is killed when it
does not answer in time).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import pickle
import threading
import time
from dataclasses import dataclass
from typing import Any

# Seconds a timed-out thread gets to stop before its worker process is ended (at most the timeout itself).
GRACE_S = 5.0

# Statuses of a row.
SAFE, UNSAFE, INCONCLUSIVE, REFUSED, FAILED = "safe", "unsafe", "inconclusive", "refused", "failed"
STATUSES = (SAFE, UNSAFE, INCONCLUSIVE, REFUSED, FAILED)


class CellTimeout(BaseException):
    """Raised inside a cell's thread when it exceeds its timeout (a BaseException: user code cannot swallow it)."""


class Watchdog:
    """Interrupt the calling thread after ``timeout`` s; end the process if it does not stop (``hard``)."""

    def __init__(self, timeout: float | None, *, hard: bool, what: str) -> None:
        self.timeout, self.hard, self.what = timeout, hard, what
        self.thread_id = threading.get_ident()
        self.done = threading.Event()
        self.fired = False
        self._lock = threading.Lock()  # the exception is only sent while the body still runs
        self._timer: threading.Thread | None = None

    def __enter__(self) -> "Watchdog":
        if self.timeout is not None and self.timeout > 0:
            self._timer = threading.Thread(target=self._watch, name="ts-explore-cell-watchdog", daemon=True)
            self._timer.start()
        return self

    def _watch(self) -> None:
        if self.done.wait(self.timeout):
            return
        with self._lock:
            if self.done.is_set():
                return
            self.fired = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread_id), ctypes.py_object(CellTimeout))
        if self.done.wait(max(1.0, min(GRACE_S, float(self.timeout or GRACE_S)))) or not self.hard:
            return
        # stuck in native code: only a fresh process frees the worker (the nanny starts one)
        os._exit(75)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.done.set()
        if self._timer is not None:
            self._timer.join(1.0)


def _worker_identity() -> tuple[str, bool]:
    """(the Dask worker's name, whether a nanny restarts it); ("local", False) outside Dask."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return "local", False
    name = worker.name if isinstance(worker.name, str) else str(worker.address)
    return name, getattr(worker, "nanny", None) is not None


def _first_lines(text: str, limit: int = 600) -> str:
    text = " ".join(line.strip() for line in str(text).strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def verify_row(scenario: Any, config: Any) -> dict[str, Any]:
    """Build and verify ``config``: status, reason, states explored, seconds."""
    from ..verification.verify import verify

    start = time.perf_counter()
    try:
        built = scenario.build(config)
    except Exception as exc:  # noqa: BLE001 - a schedule TS refuses to record is a result of this cell
        return {"status": FAILED, "reason": f"not recorded: {type(exc).__name__}: {_first_lines(exc)}",
                "states": None, "verify_s": time.perf_counter() - start}
    verdict = verify(**built.verify_kwargs())
    status = verdict.status.value
    return {"status": status, "reason": "" if status == SAFE else _first_lines(verdict.summary().replace("\n", "; ")),
            "states": int(sum(r.states_explored for r in verdict.runs)), "verify_s": time.perf_counter() - start}


def measure(run: Any) -> dict[str, Any]:
    """A size's figure of merit (TFLOP/s for arithmetic, GB/s for copies) and its ratio to the first reference."""
    rate, unit = getattr(run, "rate", None), getattr(run, "unit", None)
    if callable(rate):
        rate = rate()
    if rate is None or not isinstance(unit, str):  # a result that reports bandwidth only
        tflops = getattr(run, "tflops", None)
        tflops = tflops() if callable(tflops) else tflops
        rate, unit = (tflops, "TFLOP/s") if tflops is not None else (run.gbps, "GB/s")
    ratio = run.ratio() if callable(getattr(run, "ratio", None)) else None
    refs = getattr(run, "references", ())
    return {"metric": "throughput" if unit == "TFLOP/s" else "bandwidth", "value": float(rate), "unit": unit,
            "ratio": None if ratio is None else float(ratio), "reference": refs[0].label if refs else None,
            "launched_elements": int(getattr(run, "elements", 0) or 0), "size": str(getattr(run, "label", "") or "")}


def launch_row(scenario: Any, config: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Compile, run, check and time ``config`` on this worker's GPU; the launch columns of its row.

    ``options["engine"]`` (optional) replaces :func:`ts_explore.launch` (same call, same result's fields).
    """
    from ..gpu import LaunchError, launch

    start = time.perf_counter()
    engine = options.get("engine") or launch  # tests measure with a fake engine of the same signature
    try:
        sizes = {} if options["sizes"] is None else {"sizes": options["sizes"]}  # None: the kernel's own default
        # tuned=False: a cell measures exactly its config, never a tuning table's pick for the default config
        result = engine(scenario, config, reps=options["reps"], timeout=options["timeout"], force=options["force"],
                        tuned=False, **sizes)
    except LaunchError as exc:
        refused = exc.reason in ("unverified", "bad_size", "no_kernel", "needs_sm100", "needs_newer_gpu")
        return {"launch": "refused" if refused else "failed", "launch_reason": f"[{exc.reason}] "
                f"{_first_lines(exc.args[0])}", "launch_s": time.perf_counter() - start}
    headline = max(result.runs, key=lambda r: r.elements)
    return {"launch": "ok" if result.ok else "wrong", "launch_reason": "" if result.ok else "output differs from "
            "the host reference", **measure(headline), "correct": bool(result.ok), "compile_s": result.compile_s,
            "first_compile_s": result.first_compile_s, "gpu": result.device.name,
            "launch_s": time.perf_counter() - start}


def run_cell(scenario: Any, config: Any, *, timeout: float | None = None,
             launch: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row: verification (under our watchdog), then the launch when asked and the config verified safe.

    ``scenario`` is a Scenario, a catalog name or a :class:`Shipped` one;
    ``launch`` holds the launch options (``sizes``, ``reps``, ``timeout``,
    ``force``) or is None.
    """
    sc = resolve(scenario)
    config = unpack(config)
    worker, nanny = _worker_identity()
    start = time.perf_counter()
    row: dict[str, Any] = {"worker": worker}
    try:
        with Watchdog(timeout, hard=nanny, what=sc.name):
            row.update(verify_row(sc, config))
    except CellTimeout:
        row.update(status=FAILED, reason=f"timed out: verification took longer than {timeout:g} s; raise timeout= or "
                   "shrink the instance", states=None, verify_s=time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - any failure is this cell's row, the sweep goes on
        row.update(status=FAILED, reason=f"{type(exc).__name__}: {_first_lines(exc)}", states=None,
                   verify_s=time.perf_counter() - start)
    if launch is not None:
        if row["status"] == SAFE or (launch.get("force") and row["status"] in (UNSAFE, INCONCLUSIVE)):
            row.update(launch_row(sc, config, launch))
            if row["launch"] == "failed":
                row["status"], row["reason"] = FAILED, row["launch_reason"]
        else:
            row.update(launch="skipped", launch_reason=f"not launched: the configuration is {row['status']}")
    row["elapsed_s"] = time.perf_counter() - start
    return row


@dataclass(frozen=True)
class Shipped:
    """A user scenario (or one cell's config of it) on its way to a worker, pickled by cloudpickle.

    Dask pickles a task's arguments by reference whenever plain pickle
    manages, so a Scenario or config whose code lives in a file the worker
    cannot import would fail there; these bytes, made with the user modules
    registered by value, unpickle anywhere ts-explore does.
    """

    name: str
    blob: bytes
    digest: str

    @classmethod
    def of(cls, value: Any, name: str = "") -> "Shipped":
        import cloudpickle

        blob = cloudpickle.dumps(value)
        return cls(name or getattr(value, "name", type(value).__name__), blob, hashlib.sha256(blob).hexdigest())


_LOADED: dict[str, Any] = {}  # Shipped.digest -> the Scenario, once per worker process


def resolve(ref: Any) -> Any:
    """The Scenario a cell names: a catalog name, a Scenario, or a :class:`Shipped` one (unpickled once)."""
    from ..scenarios import get

    if isinstance(ref, Shipped):
        if ref.digest not in _LOADED:
            _LOADED[ref.digest] = pickle.loads(ref.blob)
        return _LOADED[ref.digest]
    return get(ref)


def unpack(value: Any) -> Any:
    """A cell's config as sent: unpickled when it travelled as :class:`Shipped`, else as is."""
    return pickle.loads(value.blob) if isinstance(value, Shipped) else value


def load_check(ref: Any) -> str:
    """Load a shipped scenario as each cell's task will; this worker's name.

    Run on every worker before a user scenario's cells, so a module the
    workers cannot import is one error up front instead of every cell's
    traceback.
    """
    resolve(ref)
    return _worker_identity()[0]


def warm_up() -> str:
    """Import what a cell needs (the DSL, TS, the verifier) so timing a sweep leaves imports out."""
    from ..verification import verify  # noqa: F401
    from .. import scenarios  # noqa: F401

    return _worker_identity()[0]


__all__ = ["CellTimeout", "FAILED", "INCONCLUSIVE", "REFUSED", "SAFE", "STATUSES", "UNSAFE", "Watchdog",
           "Shipped", "launch_row", "load_check", "measure", "resolve", "unpack", "run_cell", "verify_row", "warm_up"]
