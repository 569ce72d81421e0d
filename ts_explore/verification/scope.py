"""What a verification searched, read from the TS tasks and the checker runs: the Verdict's :class:`Scope`.

Besides describing the runs, this module runs the extra tile counts a
persistent schedule needs (:mod:`ts_explore.analysis.tiles` says which and
why), so that SAFE covers every number of work tiles a CTA may run, or the
exact number the caller names with ``verify(tiles=...)``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import OpaqueCondition
from cutlass.experimental.task_scheduling.resources import WorkQueue

from ..analysis.tiles import INDEPENDENT, INERT, MAX_TILES, MIXED_SENTENCES, TileCoverage, mixed_tiles, tile_coverage
from ..model import TaskSet
from ..model.scope import TS_ENGINE, WORK_QUEUE_NOT_MODELLED, Abstraction, Scope, TaskTrips
from ..model.verdict import ExhaustiveRun, run_scope
from ..reader import ts_search as ck

NameOf = Callable[[Any], str]

OPAQUE_ASSUMPTION = ("each when_true/when_false key keeps one value for the whole run: TS searches every "
                     "assignment of the keys, not values that change from one iteration or tile to the next")
PYTHON_CONDITION = ("when_true/when_false given a plain Python value: the kernel runs the block unconditionally, "
                    "yet both branches were searched")


def is_persistent(tasks: list[Any]) -> bool:
    """True when a WorkQueue is present (TS then searches several work tiles)."""
    return any(isinstance(r, WorkQueue) for t in tasks for r in [*t.src_resources, *t.dst_resources])


def assignments(tasks: list[Any]) -> list[dict]:
    """One dict per joint value of the ``when_true``/``when_false`` keys (TS's own enumeration)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TS warns past 4 keys; TaskManager already said it
        return ts_tm._opaque_assignments(ts_tm._collect_opaque_keys(tasks))


def needed_runs(tasks: list[Any], tm_kwargs: dict[str, Any], num_tiles: int | None = None) -> list[dict[str, Any]]:
    """The checker calls an instance needs at one tile count (TaskManager's own loop, restated)."""
    tiles = num_tiles if num_tiles is not None else (2 if is_persistent(tasks) else 1)
    base = {"num_tiles": tiles, "assume_pdl_wait_completed": tm_kwargs.get("assume_pdl_wait_completed", False)}
    skip = any(getattr(t, "skip_if", None) is not None for t in tasks)
    out = []
    for assignment in assignments(tasks):
        out.append({**base, "opaque_assignment": assignment})
        if skip:
            out.append({**base, "skipped_tile": True, "opaque_assignment": assignment})
    return out


def same_call(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two checker calls search the same variant, assignment and tile count."""
    return (
        bool(a.get("skipped_tile")) == bool(b.get("skipped_tile"))
        and (a.get("opaque_assignment") or {}) == (b.get("opaque_assignment") or {})
        and int(a.get("num_tiles", 1)) == int(b.get("num_tiles", 1))
    )


def timed_run(tasks: list[Any], kwargs: dict[str, Any], run: Callable[..., Any] | None = None,
              engine: str = TS_ENGINE) -> ck.RunRecord:
    """One checker call by ts-explore, timed, its warnings swallowed (they repeat TaskManager's)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (run or ec.check_all_interleavings)(tasks, **kwargs)
    return ck.RunRecord(kwargs, result, run_by="ts-explore", paths=getattr(result, "paths", None),
                        seconds=time.perf_counter() - start, engine=engine)


def trips(tasks: list[Any], task_set: TaskSet | None) -> tuple[TaskTrips, ...]:
    """Per task: the loop iterations the checker unrolls, and whether that is the real count."""
    out = []
    for task in tasks:
        name = ck.task_name(task)
        loop = None
        if task_set is not None:
            loop = next((t.schedule.domain_loop() for t in task_set.tasks if t.name == name), None)
        bounds = loop.title.split(", unroll=")[0] + ")" if loop is not None else "its domain_loop"
        out.append(TaskTrips(name, bounds, ck.loop_iterations(task), ck.static_domain(task),
                             len(task.loop_schedule_list)))
    return tuple(out)


def coverage(tasks: list[Any], name_of: NameOf) -> tuple[TileCoverage, str]:
    """The tile counts a persistent schedule needs (for every key assignment), and why tile kinds may mix."""
    model = ck.credit_model(tasks, name_of)
    found: list[TileCoverage] = []
    mixed: list[str] = []
    for assignment in assignments(tasks):
        lanes = ck.lanes_for(tasks, {}, name_of, opaque_assignment=assignment, num_tiles=1)
        cov = tile_coverage(lanes, model)
        found.append(cov)
        skipped = ck.lanes_for(tasks, {}, name_of, skipped_tile=True, opaque_assignment=assignment, num_tiles=1)
        mixed.append(mixed_tiles(cov, skipped, model))
    worst = next((c for c in found if not c.sufficient), None)
    if worst is None:
        worst = max(found, key=lambda c: len(c.tiles))
    kinds = set(mixed)
    return worst, INDEPENDENT if kinds == {INDEPENDENT} else INERT if kinds <= {INERT, INDEPENDENT} else ""


def tile_counts(plan: tuple[TileCoverage, str], tiles: int | None, skip: bool) -> tuple[int, ...]:
    """The tile counts to search: the plan's, or the caller's count (plus, with ``skip_if``, the shorter ones)."""
    cov, _ = plan
    if tiles is None:
        return cov.tiles
    if tiles == 0:
        return ()
    counts = {tiles}
    if skip and tiles > 1:  # mixed sequences reduce to runs of fewer normal tiles
        counts |= set(cov.tiles) if cov.sufficient else set(range(1, tiles + 1)) if tiles <= MAX_TILES else set()
    return tuple(sorted(counts))


def extra_tile_runs(tasks: list[Any], records: list[ck.RunRecord], tm_kwargs: dict[str, Any],
                    counts: tuple[int, ...], run: Callable[..., Any] | None = None,
                    engine: str = TS_ENGINE) -> None:
    """Search the tile counts in ``counts`` that no record covers yet (every variant and assignment)."""
    for k in counts:
        for kwargs in needed_runs(tasks, tm_kwargs, k):
            if not any(same_call(kwargs, r.kwargs) for r in records):
                records.append(timed_run(tasks, kwargs, run, engine))


def build_scope(
    tasks: list[Any],
    task_set: TaskSet | None,
    runs: list[ExhaustiveRun],
    calls: list[dict[str, Any]],
    tm_kwargs: dict[str, Any],
    *,
    tiles: int | None,
    tile_plan: tuple[TileCoverage, str] | None,
    instance: str | None,
    not_modelled: tuple[str, ...],
    unread: str = "",
    engine: str = TS_ENGINE,
) -> Scope:
    """The Verdict's scope from the tasks, the runs (and their checker ``calls``) and what the caller said."""
    searched = tm_kwargs.get("exhaustive_deadlock_race_check", True) is not False
    persistent = is_persistent(tasks)
    needed: list[dict[str, Any]] = []
    if searched:
        needed = needed_runs(tasks, tm_kwargs)
        if persistent and tiles is not None:
            needed = needed_runs(tasks, tm_kwargs, tiles) if tiles > 0 else []
    missing = tuple(_label(kw, persistent) for kw in needed if not any(same_call(kw, c) for c in calls))
    abstractions: list[Abstraction] = []
    skip = any(getattr(t, "skip_if", None) is not None for t in tasks)
    if persistent and searched and tile_plan is not None:
        cov, mixed = tile_plan
        searched_counts = {r.num_tiles for r in runs}
        if tiles is None and cov.sufficient and not set(cov.tiles) <= searched_counts:
            done = ", ".join(map(str, sorted(searched_counts))) or "no"
            abstractions.append(Abstraction("two-tile", f"searched {done} work tile(s) only: a failure ended the "
                                                        "search before the other tile counts", False))
        elif tiles is None:
            abstractions.append(Abstraction("two-tile", cov.sentence, cov.sufficient))
        if skip and (tiles is None or tiles > 1):
            shorter = (cov.sufficient and set(cov.tiles) <= searched_counts) or (
                tiles is not None and set(range(1, tiles + 1)) <= searched_counts)
            ok = mixed == INDEPENDENT or (mixed == INERT and shorter)
            abstractions.append(Abstraction("skipped-tile", MIXED_SENTENCES[mixed if ok else ""], ok))
    extra = tuple(not_modelled)
    if _python_conditions(tasks):
        extra = (PYTHON_CONDITION, *extra)
    if persistent:
        extra = (WORK_QUEUE_NOT_MODELLED, *extra)
    scope = Scope(
        searched=searched, instance=instance or "", tasks=trips(tasks, task_set),
        runs=tuple(run_scope(r) for r in runs), missing=missing,
        tiles=tuple(sorted({r.num_tiles for r in runs})) if persistent else (),
        tiles_per_cta=tiles if persistent else None, abstractions=tuple(abstractions),
        assumptions=(OPAQUE_ASSUMPTION,) if ts_tm._collect_opaque_keys(tasks) else (), unread=unread,
        engine=engine,
    )
    return scope.extended(not_modelled=extra)


def _label(kwargs: dict[str, Any], persistent: bool) -> str:
    details = []
    if persistent:
        n = int(kwargs.get("num_tiles", 1))
        details.append(f"{n} tile{'' if n == 1 else 's'}")
    details += [f"{k}={v}" for k, v in (kwargs.get("opaque_assignment") or {}).items()]
    return ("skipped-tile" if kwargs.get("skipped_tile") else "normal") + (f" ({', '.join(details)})" if details else "")


def _python_conditions(tasks: list[Any]) -> bool:
    for task in tasks:
        for *_rest, guard, _label in task.loop_schedule_list:
            key = getattr(guard, "key", None)
            if isinstance(guard, OpaqueCondition) and isinstance(key, tuple) and key and key[0] == "__opaque__":
                return True
    return False


__all__ = ["build_scope", "coverage", "extra_tile_runs", "tile_counts", "is_persistent", "needed_runs", "same_call", "trips"]
