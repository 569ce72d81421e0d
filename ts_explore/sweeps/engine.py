"""``ts_explore.sweep``: verify (and launch) a grid of configurations on a Dask cluster, into a DataFrame.

>>> df = ts_explore.sweep("pipelined_copy", {"stages": [1, 2, 4], "store_warps": [1, 4]})  # doctest: +SKIP
>>> df.pivot(index="stages", columns="store_warps", values="status")                         # doctest: +SKIP

Each cell runs :func:`ts_explore.sweeps.cell.run_cell` on a Dask worker; rows
arrive as cells finish, go to the results cache at once and to ``on_row``.
Refused configs are rows, not errors; a cell that times out, crashes or
kills its worker is a ``failed`` row and the sweep goes on. ``Ctrl-C`` (or
:meth:`Sweep.cancel` from another thread) stops it and keeps every row already
computed.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..scenarios import CATALOG, Scenario, get
from .cache import ResultCache, source_identity
from .cell import FAILED, REFUSED, Shipped, load_check, run_cell
from .cluster import SweepError, gpu_identity, local_client, require_packages
from .identity import CodeIdentity, is_own, scenario_code, ship_by_value
from .grid import Cell, expand
from .table import frame

DEFAULT_TIMEOUT_S = 300.0

RowCallback = Callable[[Cell, dict[str, Any]], None]


def check_timeout(timeout: float | None) -> float | None:
    """``timeout`` as seconds per cell; None (no limit) passes; nan, infinity, 0 and negatives are refused.

    >>> check_timeout(2), check_timeout(None)
    (2.0, None)
    """
    if timeout is None:
        return None
    try:
        seconds = float(timeout)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise SweepError(f"timeout= takes a positive number of seconds per cell, got {timeout!r}; pass e.g. "
                         "timeout=300, or None for no limit")
    return seconds


def _dead_worker_reason(exc: BaseException, timeout: float | None) -> str:
    limit = f"stuck past its {timeout:g} s timeout, " if timeout else ""
    return (f"the worker running it died ({limit}a crash, os._exit or running out of memory); recorded after its "
            f"first failure, not retried ({type(exc).__name__})")


class Progress:
    """Progress on stderr: one rewritten line on a terminal, else a line every ``every`` seconds."""

    def __init__(self, total: int, label: str, enabled: bool, every: float | None = None) -> None:
        self.total, self.label, self.enabled = total, label, enabled
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.every = every if every is not None else (0.5 if self.tty else 10.0)
        self.done = self.cached = self.failed = 0
        self._last = 0.0
        self.start = time.perf_counter()

    def step(self, row: Mapping[str, Any], cached: bool) -> None:
        self.done += 1
        self.cached += int(cached)
        self.failed += int(row.get("status") == FAILED)
        now = time.perf_counter()
        if self.enabled and now - self._last >= self.every and self.done < self.total:
            self._last = now
            self._print()

    def text(self) -> str:
        extra = ", ".join(f"{n} {w}" for n, w in ((self.cached, "cached"), (self.failed, "failed")) if n)
        return (f"{self.label}: {self.done}/{self.total} cells" + (f" ({extra})" if extra else "")
                + f", {time.perf_counter() - self.start:.1f} s")

    def _print(self, note: str = "", final: bool = False) -> None:
        line = self.text() + (f"; {note}" if note else "")
        if self.tty:
            print("\r" + line, end="\n" if final else "", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self, note: str = "") -> None:
        if self.enabled:
            self._print(note, final=True)


class Sweep:
    """One sweep: its cells, where rows go, and how to stop it (``run`` does the work)."""

    def __init__(self, scenario: str | Scenario, grid: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
                 base: Any = None, launch: bool = False, sizes: Iterable[Any] | None = None, reps: int = 20,
                 force: bool = False, client: Any = None, timeout: float | None = DEFAULT_TIMEOUT_S,
                 cache: bool | str = True, progress: bool = True) -> None:
        self.scenario = get(scenario)
        timeout = check_timeout(timeout)
        self.grid, self.base = grid, base
        self.launch = bool(launch)
        self.launch_options: dict[str, Any] | None = None
        if self.launch:
            if self.scenario.kernel is None:
                raise SweepError(f"scenario {self.scenario.name!r} has no GPU kernel; sweep it without launch=True")
            sizes_t = None if sizes is None else tuple(tuple(s) if isinstance(s, list) else s for s in sizes)
            self.launch_options = {"sizes": sizes_t, "reps": int(reps), "force": bool(force),
                                   "timeout": float(timeout or DEFAULT_TIMEOUT_S)}
        elif sizes is not None:
            raise SweepError("sizes= only applies to launch sweeps; pass launch=True or leave sizes out")
        self.client, self.timeout, self.cache_option, self.progress = client, timeout, cache, progress
        self.cells = expand(self.scenario, grid, base=base)
        self.rows: dict[int, dict[str, Any]] = {}
        self.cancelled = False
        self._stop = threading.Event()
        self._futures: list[Any] = []
        self._client: Any = None
        self._slots_at, self._slots_n = -1.0, 1
        self.cache: ResultCache | None = None
        self.code: CodeIdentity = scenario_code(self.scenario)  # the scenario's own code, when it is user code
        self._shipped: Shipped | None = None
        self.label = f"sweep {self.scenario.name}"  # the progress line's name
        # what the last progress line adds after a cancel ("": nothing, when the caller says it once itself)
        self.cancel_note = "cancelled; rows computed so far are kept (re-run to resume)"

    # ---------------------------------------------------------------- control
    def cancel(self) -> None:
        """Stop the sweep (from any thread): running cells are cancelled, finished rows are kept."""
        self._stop.set()
        if self._client is not None and self._futures:
            try:
                self._client.cancel(self._futures)
            except Exception:  # noqa: BLE001 - the cluster may be gone already
                pass

    @property
    def knobs(self) -> list[str]:
        """The swept knob names, in grid order."""
        return list(dict.fromkeys(n for c in self.cells for n in c.values))

    # ---------------------------------------------------------------- running
    def _scenario_ref(self) -> Any:
        """The catalog name for a built-in scenario (every worker registers those), else the shipped Scenario.

        A scenario with user code (registered, from a file, from a notebook)
        travels by value (:meth:`_ship`), so a worker that cannot import its
        modules by name still runs it.
        """
        if self._shipped is not None:
            return self._shipped
        builtin = CATALOG.get(self.scenario.name) is self.scenario and is_own(self.scenario)
        return self.scenario.name if builtin else self.scenario

    def _ship(self, client: Any) -> None:
        """Pickle a user scenario with its user modules by value, and load it on every worker before any cell.

        An import a worker cannot do is then one error up front, not every
        cell's traceback.
        """
        if isinstance(self._scenario_ref(), str):
            return
        ship_by_value(self.code)
        try:
            shipped = Shipped.of(self.scenario)
        except Exception as exc:  # noqa: BLE001 - a closure over a lock, a generator: not sendable
            raise SweepError(f"scenario {self.scenario.name!r} cannot be sent to the sweep's workers "
                             f"({type(exc).__name__}: {exc}); define its functions at module level") from None
        answers = client.run(load_check, shipped, on_error="return")
        failed = {w: e for w, e in answers.items() if isinstance(e, BaseException)}
        if failed:
            worker, exc = next(iter(sorted(failed.items())))
            missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
            fix = (f"install {missing} where the workers run, or put the folder that holds it on their PYTHONPATH"
                   if missing else "make the scenario's module importable where the workers run")
            raise SweepError(f"the sweep's workers cannot load scenario {self.scenario.name!r} ({len(failed)} of "
                             f"{len(answers)}, e.g. {worker}): {type(exc).__name__}: {exc}; {fix}",
                             worker_error=f"{type(exc).__name__}: {exc}")
        self._shipped = shipped

    def _environment(self, client: Any) -> dict[str, Any]:
        env: dict[str, Any] = dict(source_identity())
        if self.code.digest:
            env["scenario_code"] = self.code.digest
        if self.launch_options is not None:
            env.update(client.submit(gpu_identity, pure=False).result(timeout=120))
            env.update({k: v for k, v in self.launch_options.items() if k != "timeout"})
        return env

    def _open_cache(self, client: Any) -> None:
        if self.cache_option is False:
            return
        from pathlib import Path

        root = None if self.cache_option is True else Path(str(self.cache_option))
        self.cache = ResultCache(self.scenario.name, self._environment(client), root)

    def _emit(self, cell: Cell, row: dict[str, Any], cached: bool, on_row: RowCallback | None,
              progress: Progress) -> None:
        # the cell's own knob columns win: a result (cached or not) never relabels its configuration
        result = {k: v for k, v in row.items() if k not in cell.columns and k not in ("cached", "key")}
        full = {**result, **cell.columns, "cached": cached, "key": cell.key}
        self.rows[cell.index] = full
        if not cached and self.cache is not None:
            self.cache.put(cell.key, result, cell.columns)
        progress.step(full, cached)
        if on_row is not None:
            on_row(cell, full)

    def run(self, on_row: RowCallback | None = None) -> Any:
        """Run every cell not already cached; the DataFrame of every row (also after a cancel)."""
        from .bootstrap import refuse_while_bootstrapping

        refuse_while_bootstrapping()  # a worker re-running an unguarded script must not sweep again
        require_packages()
        progress = Progress(len(self.cells), self.label, self.progress)
        refused = [c for c in self.cells if c.refused is not None]
        for cell in refused:
            self._emit(cell, {"status": REFUSED, "reason": cell.refused}, False, on_row, progress)
        todo = [c for c in self.cells if c.refused is None]
        if todo and not self._stop.is_set():
            if self.launch:  # the cache's environment names the workers' GPU: ask the cluster first
                self._client = self.client or local_client(launch=True)
            self._open_cache(self._client)
            if self.cache is not None:
                for cell in list(todo):
                    row = self.cache.get(cell.key, cell.columns)
                    if row is not None:
                        todo.remove(cell)
                        self._emit(cell, row, True, on_row, progress)
            if todo and not self._stop.is_set():  # a verification sweep found in the cache starts no cluster
                self._client = self._client or self.client or local_client(launch=self.launch)
                self._ship(self._client)
                self._compute(todo, on_row, progress)
        # stopped before the cells were handed out: the cells left are not rows
        self.cancelled = self.cancelled or (self._stop.is_set() and len(self.rows) < len(self.cells))
        progress.close(self.cancel_note if self.cancelled else "")
        return self.frame()

    def launch_options_for(self, cell: Cell) -> dict[str, Any] | None:
        """The launch options a cell runs with (the same for every cell here; tuning gives each its shape)."""
        return self.launch_options

    def _slots(self) -> int:
        """Cells to keep in flight: one per worker thread alive now (asked at most once a second).

        Cells are handed to Dask as others finish, so a worker never holds a
        queued cell besides the one it runs: a cell that kills its worker takes
        no innocent cell with it (with allowed failures 0, the scheduler fails
        every cell the dead worker held).
        """
        now = time.monotonic()
        if now - self._slots_at >= 1.0:
            try:
                self._slots_n = max(1, sum(self._client.nthreads().values()))
            except Exception:  # noqa: BLE001 - the scheduler is momentarily unreachable
                self._slots_n = 1
            self._slots_at = now
        return self._slots_n

    def _compute(self, todo: list[Cell], on_row: RowCallback | None, progress: Progress) -> None:
        from collections import deque

        from distributed import as_completed

        client, token = self._client, uuid.uuid4().hex[:8]
        queue, running = deque(todo), {}
        # results travel with the notice; the loop is this client's (the default client may be another one)
        done = as_completed(loop=client.loop, with_results=True, raise_errors=False)
        self._slots_at, self._slots_n = -1.0, 1

        def fill() -> None:
            while queue and len(running) < self._slots() and not self._stop.is_set():
                cell = queue.popleft()
                config = Shipped.of(cell.config) if self._shipped is not None else cell.config
                future = client.submit(run_cell, self._scenario_ref(), config, timeout=self.timeout,
                                       launch=self.launch_options_for(cell), key=f"ts-explore-cell-{cell.index}-{token}",
                                       pure=False, retries=0)
                running[future.key] = cell
                self._futures.append(future)
                done.add(future)

        try:
            fill()
            for future, result in done:
                cell = running.pop(future.key)
                self._futures.remove(future)
                if self._stop.is_set() or future.status == "cancelled":
                    self.cancelled = True
                    break
                if future.status == "error":
                    result = result[1] if isinstance(result, tuple) and len(result) == 3 else result  # exc_info
                    self._slots_at = -1.0  # a worker may have died: count the threads again
                fill()  # the freed worker gets its next cell before this one's row is handled
                self._emit(cell, self._row_of(result), False, on_row, progress)
                future.release()
        except KeyboardInterrupt:
            self.cancelled = True
        finally:
            self.cancelled = self.cancelled or bool(queue) or bool(running)
            if self._futures:
                client.cancel(self._futures)
            self._futures = []

    def _row_of(self, result: Any) -> dict[str, Any]:
        """The cell's row; a failed row when the task erred (its worker died, say)."""
        from distributed import KilledWorker

        if isinstance(result, KilledWorker):
            return {"status": FAILED, "reason": _dead_worker_reason(result, self.timeout),
                    "worker": _last_worker(result)}
        if isinstance(result, BaseException):  # the task raised outside run_cell's own handling
            return {"status": FAILED, "reason": f"{type(result).__name__}: {result}", "worker": None}
        return result

    def frame(self) -> Any:
        """The rows so far, in grid order, as a DataFrame."""
        rows = [self.rows[i] for i in sorted(self.rows)]
        knob_names = list(self.cells[0].columns) if self.cells else []
        return frame(rows, knob_names, swept=self.knobs, launch=self.launch, scenario=self.scenario.name,
                     cancelled=self.cancelled, total=len(self.cells))


def _last_worker(exc: BaseException) -> str | None:
    worker = getattr(exc, "last_worker", None)
    return getattr(worker, "name", None) or getattr(worker, "address", None)


def sweep(scenario: str | Scenario, grid: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
          launch: bool = False, sizes: Iterable[Any] | None = None, client: Any = None,
          timeout: float | None = DEFAULT_TIMEOUT_S, progress: bool = True, base: Any = None, reps: int = 20,
          force: bool = False, cache: bool | str = True, on_row: RowCallback | None = None) -> Any:
    """Verify (and with ``launch=True`` compile, run and time) every config of ``grid``; one DataFrame row each.

    ``grid`` maps knob names to values (every combination is a cell) or lists
    cells as mappings. Columns: one per knob; ``status`` (safe, unsafe,
    inconclusive, refused, failed) and ``reason``; ``states`` explored and
    ``verify_s``; with ``launch=True`` (``sizes`` as ``launch`` takes them;
    None: the kernel's default) also ``launch`` (ok, wrong, refused,
    failed, skipped), ``metric``/``value``/``unit`` (GB/s, or TFLOP/s for a
    kernel that reports FLOP/s), ``ratio`` to the ``reference``, ``correct``,
    ``compile_s``, ``gpu``; ``worker`` (the Dask worker that ran it),
    ``elapsed_s``, ``cached`` and the cell ``key``.

    ``client=None`` starts (once per process) a local cluster: one worker
    process per core, or with ``launch=True`` one per visible GPU, reachable
    by this process only (TLS on 127.0.0.1, see :mod:`.cluster`); a given
    ``distributed.Client`` is used as is, with whatever security its cluster
    has: anyone who can reach its scheduler can run code on its workers
    (start its scheduler with ``distributed.scheduler.allowed-failures: 0``,
    as :func:`~ts_explore.sweeps.start_cluster` does, or a cell that kills
    its worker is retried on other workers first). A user scenario
    (registered, from a file, from a notebook) is sent to the workers by
    value. ``timeout`` bounds each cell's verification (and each launch
    step): a positive number of seconds, or None for no limit. ``cache``
    keeps rows in the user's cache folder (False: off; a path: there) so a
    re-run computes only new cells; the cache is keyed by everything that
    decides a row, the scenario's own code included (:mod:`.cache`). Ctrl-C
    returns the rows computed so far (``df.attrs["cancelled"]``).
    """
    return Sweep(scenario, grid, base=base, launch=launch, sizes=sizes, reps=reps, force=force, client=client,
                 timeout=timeout, cache=cache, progress=progress).run(on_row)


__all__ = ["DEFAULT_TIMEOUT_S", "Progress", "Sweep", "sweep"]
