"""``ts_explore.tune``: measure candidate configs per shape on the sweep's Dask cluster and keep each shape's fastest.

>>> table = ts_explore.tune("hopper_gemm", shapes=["4096x4096x4096", "8192x8192x1024"])  # doctest: +SKIP
>>> table.frame()                                                                          # doctest: +SKIP

Each (shape, candidate) is one cell of a launch sweep (:class:`TuneSweep`, a
:class:`~ts_explore.sweeps.engine.Sweep` whose cells each launch their own
shape): the worker verifies the candidate's CPU view with our checker, launches
it only when SAFE (the launch gate proves the launched instances too), checks
its output and times it. The cluster is the sweep's (one worker per GPU), and
so are the progress line and the handling of a worker that dies (its cell is a
failed row, the others go on); tuning then runs the failed cells once more
(``retries``). Each row goes into the tuning table
(:mod:`ts_explore.gpu.tuning_table`) as it lands; a re-run skips the (shape, candidate) pairs the
table holds, unless ``fresh``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..scenarios import Scenario, get
from ..sweeps.cell import FAILED, REFUSED, SAFE
from ..sweeps.engine import DEFAULT_TIMEOUT_S, Sweep
from ..sweeps.grid import Cell, cell_value
from ..scenarios.knobs import knobs
from .candidates import NoGpuError, TuneError, candidates, parse_shapes, refuse_code
from ..gpu.tuning_table import MEASURED, UNPROVEN, WRONG, TuningTable, config_key, shape_text
from ..gpu.tuning_table import REFUSED as TABLE_REFUSED


class TuneSweep(Sweep):
    """A launch sweep whose cells are (shape, candidate) pairs; each cell launches its own shape."""

    def __init__(self, scenario: Scenario, jobs: list[tuple[tuple[int, int, int], dict[str, Any]]], **kwargs: Any
                 ) -> None:
        engine = kwargs.pop("engine", None)
        super().__init__(scenario, [values for _, values in jobs], launch=True, cache=False, **kwargs)
        self.shapes = [shape for shape, _ in jobs]
        if engine is not None and self.launch_options is not None:
            self.launch_options["engine"] = engine
        self.label = f"tune {self.scenario.name}"

    def launch_options_for(self, cell: Cell) -> dict[str, Any] | None:
        return {**(self.launch_options or {}), "sizes": (self.shapes[cell.index],)}


def table_row(shape: str, values: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tuning table's row for a sweep row; None for a failed cell (not kept: a re-run measures it again).

    >>> table_row("8x8x8", {}, {"status": "unsafe", "reason": "deadlock", "worker": "w"})["outcome"]
    'unproven'
    >>> table_row("8x8x8", {}, {"status": "safe", "launch": "ok", "correct": True, "value": 600.0,
    ...                         "unit": "TFLOP/s"})["tflops"]
    600.0
    """
    status, launched = row.get("status"), row.get("launch")
    base = {"shape": shape, "config": dict(values), "worker": row.get("worker"), "gpu": row.get("gpu"),
            "tflops": None, "ratio": None, "reference": None}
    if status == FAILED:
        return None
    if status == REFUSED:
        return {**base, "outcome": TABLE_REFUSED, "reason": f"refused: {row.get('reason')}"}
    if status != SAFE:
        return {**base, "outcome": UNPROVEN, "reason": f"not proven ({status}): {row.get('reason')}"}
    if launched == "refused":
        return {**base, "outcome": TABLE_REFUSED, "reason": row.get("launch_reason")}
    if launched not in ("ok", "wrong"):
        return None  # failed or skipped launch: try again next time
    measured = {"tflops": float(row["value"]) if row.get("unit") == "TFLOP/s" else None,
                "ratio": row.get("ratio"), "reference": row.get("reference"), "compile_s": row.get("compile_s")}
    if launched == "ok" and row.get("correct") and measured["tflops"] is not None:
        return {**base, **measured, "outcome": MEASURED, "reason": ""}
    return {**base, **measured, "outcome": WRONG, "reason": row.get("launch_reason") or "output differs from the "
            "reference"}


def _canonical(scenario: Scenario, values: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate's settings as the table keeps them: through the coercion, only those off the defaults."""
    from ..scenarios.knobs import ConfigError, configure

    base = scenario.default_config()
    try:
        config = configure(scenario, values, base=base, check=False)
    except ConfigError:
        return dict(values)  # the sweep refuses it with the coercion's message; keep it as given
    return {k.name: cell_value(k, getattr(config, k.name)) for k in knobs(type(base))
            if getattr(config, k.name) != getattr(base, k.name)}


def _identity(client: Any, gpu: Mapping[str, str] | None) -> dict[str, str]:
    if gpu is not None:
        return {"gpu": str(gpu["gpu"]), "driver": str(gpu["driver"])}
    from ..sweeps.cluster import gpu_identity

    return client.submit(gpu_identity, pure=False).result(timeout=120)


def _require_gpu() -> None:
    from ..gpu.probe import probe

    found = probe()
    if not found.ok:
        raise NoGpuError(f"tuning measures on a GPU and this machine has none usable ({found.message}); run it where "
                        "an NVIDIA GPU is visible, or pass client= a Dask cluster with GPU workers")


def tune(scenario: str | Scenario = "hopper_gemm", shapes: Iterable[Any] = (), configs: Any = None, *,
         workers: int | None = None, cache_dir: str | Path | None = None, progress: bool = True,
         fresh: bool = False, client: Any = None, reps: int = 20, timeout: float = DEFAULT_TIMEOUT_S,
         retries: int = 1, gpu: Mapping[str, str] | None = None, engine: Any = None) -> TuningTable:
    """Measure every candidate config of ``scenario`` at every shape; the tuning table with each shape's pick.

    ``shapes``: ``MxNxK`` text or ``(M, N, K)``. ``configs``: a preset name of
    :data:`~.candidates.PRESETS` (None: ``default``), a JSON file, or a list of
    settings mappings. A candidate the checker does not prove SAFE on its CPU
    view is skipped (its row says why); one whose output is wrong is kept with
    ``outcome='wrong'`` and never picked. ``workers``: GPUs of the local
    cluster (default: every visible one); ``client``: a running Dask cluster
    instead. ``cache_dir``: where ``tuning/`` goes (default: the user's cache).
    ``fresh`` forgets the table's rows first. A cell that failed (its worker
    died, it timed out) is run again up to ``retries`` times, in a sweep of its
    own after the others; one still failing is left out of the table (the next
    run measures it). ``table.last_run`` is the DataFrame of every cell run,
    with its ``attempt``. ``gpu`` (``{"gpu", "driver"}``)
    names the table instead of asking a worker; ``engine`` replaces
    :func:`ts_explore.launch` on the workers (tests measure with a fake one).
    """
    sc = get(scenario)
    if sc.kernel is None:
        raise TuneError(f"scenario {sc.name!r} has no GPU kernel to time; tune a scenario that launches "
                        "(e.g. hopper_gemm)")
    wanted = parse_shapes(shapes)
    given = candidates(sc.name, configs)
    refuse_code(sc, given)  # text where a function goes is refused before anything runs
    cands = list({config_key(c): c for c in (_canonical(sc, c) for c in given)}.values())
    own = None
    if client is None:
        _require_gpu()
        from ..sweeps.cluster import local_client, start_cluster

        client = own = start_cluster(launch=True, workers=workers) if workers else local_client(launch=True)
    try:
        table = TuningTable(sc.name, **_identity(client, gpu), cache_dir=cache_dir)
        if fresh:
            table.clear()
        jobs = [(shape, values) for shape in wanted for values in cands if not table.has(shape_text(shape), values)]
        if progress:
            import sys

            print(f"tune {sc.name}: {len(wanted)} shape(s) x {len(cands)} candidate(s); {len(jobs)} to measure, "
                  f"{len(wanted) * len(cands) - len(jobs)} already in {table.path}", file=sys.stderr, flush=True)
        frames = []
        for attempt in range(max(0, int(retries)) + 1):
            if not jobs:
                break
            run = TuneSweep(sc, jobs, client=client, reps=reps, timeout=timeout, progress=progress, engine=engine)

            def land(cell: Cell, row: dict[str, Any], run: TuneSweep = run,
                     jobs: list[tuple[tuple[int, int, int], dict[str, Any]]] = jobs) -> None:
                kept = table_row(shape_text(run.shapes[cell.index]), jobs[cell.index][1], row)
                if kept is not None:
                    table.put(kept)

            df = run.run(on_row=land)
            df.insert(0, "shape", [shape_text(run.shapes[i]) for i in sorted(run.rows)])
            df.insert(1, "attempt", attempt)
            frames.append(df)
            if run.cancelled:
                break
            jobs = [jobs[i] for i in sorted(run.rows) if run.rows[i].get("status") == FAILED]
        if frames:
            import pandas as pd

            table.last_run = pd.concat(frames, ignore_index=True)
    finally:
        _forget_op_defaults()
        if own is not None and workers:
            own.close()
            own.cluster.close()
    return table


def _forget_op_defaults() -> None:
    """``ops.gemm`` remembers, per process, which config each shape runs by default; a table just written may
    change that, so the op chooses again on its next call (looked up, not imported: no torch for tuning)."""
    import sys

    op = sys.modules.get("ts_explore.ops.gemm_op")
    if op is not None:
        op.forget_defaults()


__all__ = ["TuneSweep", "table_row", "tune"]
