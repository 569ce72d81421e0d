"""Read what verification needs from TS ``Task`` objects, once, before any search runs.

:func:`read_instance` is the capture's one call here (:mod:`.capture_set`),
before TaskManager's checks run: it returns an :class:`InstanceRead`, the
:class:`Instance` (the facts that decide which searches an instance needs:
persistent or not, ``skip_if``, the ``when_true``/``when_false`` key
assignments; the per-task trip counts, the one-tile lanes the tile-count
argument reads, what the simulation's text is matched to), the runs it needs
and each run's lanes. The capture adds the credit model and each run's
:class:`~ts_explore.check.problem.SearchProblem` once the checks have run,
making a :class:`SearchInput` per run. :func:`needed_runs` restates
TaskManager's loop over runs (each key assignment, the skipped-tile run, two
tiles for a persistent schedule); :func:`search_inputs` reads the inputs of
runs named later (:mod:`.task_objects`). Everything after the capture
(:mod:`ts_explore.verification`, :mod:`ts_explore.check`) works on these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import OpaqueCondition
from cutlass.experimental.task_scheduling.resources import WorkQueue

from ..check.problem import SearchProblem
from ..model import TaskSet
from ..model.scope import TaskTrips
from ..model.verdict import CreditModel, ExhaustiveRun, Lane
from . import lanes as ln
from .capture import quiet_warnings
from .search_input import search_problem
from .schedule import NameOf
from .simulation import SimulationInput, read_simulation_input
from .trips import read_trips


@dataclass(frozen=True)
class SearchInput:
    """One exhaustive search run: its TS keywords (plain data), the checker's problem and the lanes."""

    kwargs: dict[str, Any]  # num_tiles, skipped_tile, opaque_assignment, assume_pdl_wait_completed
    opaque: tuple[tuple[str, bool], ...]  # the opaque assignment in words
    problem: SearchProblem | None  # None when it could not be read (``Instance.unread`` says why)
    lanes: tuple[Lane, ...] | None  # None when they could not be read
    alone: str = ""  # a projection: this consumer of a shared pipeline, its producer and the other tasks
    credit_model: CreditModel | None = None  # a projection's own (else the instance's)

    @property
    def variant(self) -> str:
        """``normal`` or ``skipped-tile`` (a projection: ``normal (mma1 alone)``)."""
        kind = "skipped-tile" if self.kwargs.get("skipped_tile") else "normal"
        return f"{kind} ({self.alone} alone)" if self.alone else kind

    @property
    def num_tiles(self) -> int:
        return int(self.kwargs.get("num_tiles", 1))


@dataclass(frozen=True)
class Searched:
    """One search run's outcome: what a check and a scope need even when the findings cannot be told."""

    input: SearchInput
    findings: dict[str, int]  # "deadlock" / "race" / "pdl-order" -> how many
    states: int
    capped: bool  # stopped at its state cap or cancelled: not a proof
    run: ExhaustiveRun | None  # None when the lanes could not be read

    @property
    def unsafe(self) -> bool:
        return any(self.findings.values())


@dataclass(frozen=True)
class Instance:
    """The facts of one task set verification decides with; no TS object inside."""

    task_names: tuple[str, ...]  # TS's names, in task order
    display: dict[str, str]  # TS resource name -> the name ts-explore shows
    persistent: bool  # a WorkQueue is present: TS searches several work tiles
    skip: bool  # some task has skip_if: the skipped-tile run is needed too
    assignments: tuple[dict, ...]  # each joint value of the when_true/when_false keys
    opaque_keys: bool
    python_conditions: bool  # when_true/when_false given a plain Python value
    trips: tuple[TaskTrips, ...]
    credit_model: CreditModel | None
    one_tile_lanes: tuple[tuple[tuple[Lane, ...], tuple[Lane, ...]], ...] = ()  # (normal, skipped) per assignment
    unread: str = ""  # why a part could not be read (the verdict is then INCONCLUSIVE)
    names_of_ids: dict[int, str] = field(default_factory=dict)  # resource id -> shown name (opaque keys)
    simulation: SimulationInput = field(default_factory=SimulationInput)  # to tell the simulation's text


def _assignments(tasks: list[Any]) -> list[dict]:
    with quiet_warnings():  # TS warns past 4 keys; TaskManager already said it (this thread's only)
        return ts_tm._opaque_assignments(ts_tm._collect_opaque_keys(tasks))


def _python_conditions(tasks: list[Any]) -> bool:
    for task in tasks:
        for *_rest, guard, _label in task.loop_schedule_list:
            key = getattr(guard, "key", None)
            if isinstance(guard, OpaqueCondition) and isinstance(key, tuple) and key and key[0] == "__opaque__":
                return True
    return False


@dataclass(frozen=True)
class InstanceRead:
    """The instance, the runs it needs and what their search inputs take from the tasks before TaskManager runs."""

    instance: Instance  # its credit model is read with the problems, after TaskManager's checks
    runs: tuple[dict[str, Any], ...]  # the runs the instance needs at TS's tile count (TS keywords)
    tile_runs: tuple[dict[str, Any], ...]  # the runs it needs at the caller's count (``tiles``; () without one)
    read: tuple[dict[str, Any], ...]  # the runs whose inputs are read: ``runs`` and the caller's further counts
    opaque: tuple[tuple[tuple[str, bool], ...], ...]  # per run read, its key assignment in words
    lanes: ln.LaneFacts  # the one-tile lanes and the lanes of each run read


def read_instance(tasks: list[Any], task_set: TaskSet | None, resources: list[Any], name_of: NameOf, *,
                  tm_kwargs: dict[str, Any], tiles: int | None = None, search: bool = True) -> InstanceRead:
    """The :class:`Instance` of ``tasks``, the runs it needs and, when ``search``, the lanes of each of them (and,
    with ``tiles``, of the runs of the tile counts :func:`tile_counts` adds). Raises
    :class:`~ts_explore.reader.trips.LoopTooLong` for a loop too long to unroll."""
    persistent = any(isinstance(r, WorkQueue) for t in tasks for r in [*t.src_resources, *t.dst_resources])
    display: dict[str, str] = {}
    for r in resources:
        display.setdefault(getattr(r, "name", ""), name_of[id(r)])
    facts = Instance(
        task_names=tuple(t.name for t in tasks), display=display, persistent=persistent,
        skip=any(getattr(t, "skip_if", None) is not None for t in tasks), assignments=tuple(_assignments(tasks)),
        opaque_keys=bool(ts_tm._collect_opaque_keys(tasks)), python_conditions=_python_conditions(tasks),
        trips=(), credit_model=None, names_of_ids={id(r): name_of[id(r)] for r in resources},
    )
    needed = needed_runs(facts, tm_kwargs)
    tile_runs = needed_runs(facts, tm_kwargs, tiles) if persistent and tiles else []
    extra = [kw for k in tile_counts(tiles, facts.skip) if persistent and k != needed[0]["num_tiles"]
             for kw in needed_runs(facts, tm_kwargs, k)]
    runs = [*needed, *extra] if search else []
    opaque = tuple(_opaque_text(kwargs.get("opaque_assignment"), facts.names_of_ids) for kwargs in runs)
    with quiet_warnings():  # repeats of TaskManager's own warnings (this thread's only)
        trips = read_trips(tasks, task_set, tiles)
        lanes = ln.read_lanes(tasks, trips, task_set, name_of, runs=runs, assignments=facts.assignments,
                              persistent=persistent)
    instance = replace(facts, trips=trips, one_tile_lanes=lanes.one_tile, unread=lanes.error,
                       simulation=read_simulation_input(tasks, tuple(t.task for t in trips), name_of))
    return InstanceRead(instance, tuple(needed), tuple(tile_runs), tuple(runs), opaque, lanes)


def _opaque_text(assignment: dict | None, id_names: dict[int, str]) -> tuple[tuple[str, bool], ...]:
    items = []
    for key, value in (assignment or {}).items():
        if isinstance(key, tuple) and len(key) == 3 and key[0] in id_names:
            text = f"{id_names[key[0]]}.{key[1]}.{key[2]}"
        else:
            text = str(key)
        items.append((text, bool(value)))
    return tuple(items)


def search_inputs(tasks: list[Any], task_set: TaskSet | None, instance: Instance, name_of: NameOf,
                  runs: list[dict[str, Any]], *, problems: bool = True) -> tuple[tuple[SearchInput, ...], str]:
    """A :class:`SearchInput` per run in ``runs`` (TS keywords), and why a part could not be read ('' if read).

    ``problems=False`` leaves out our checker's input (TS's reference search reads the tasks itself).
    """
    infos = {id(t): info for t, info in zip(tasks, task_set.tasks)} if task_set else {}
    opaque = [_opaque_text(kwargs.get("opaque_assignment"), instance.names_of_ids) for kwargs in runs]
    out, unread = [], instance.unread
    with quiet_warnings():  # repeats of TaskManager's own warnings (this thread's only)
        for kwargs, text in zip(runs, opaque):
            problem = lanes = None
            try:
                problem = search_problem(tasks, **kwargs) if problems else None
            except Exception as exc:  # noqa: BLE001 - the run is then missing from the scope, and said why
                unread = unread or f"{type(exc).__name__}: {exc}"
            if not unread:
                try:
                    lanes = ln.lanes_for(tasks, instance.trips, infos, name_of,
                                         skipped_tile=bool(kwargs.get("skipped_tile")),
                                         opaque_assignment=kwargs.get("opaque_assignment"),
                                         num_tiles=int(kwargs.get("num_tiles", 1)))
                except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
                    unread = f"{type(exc).__name__}: {exc}"
            out.append(SearchInput(dict(kwargs), text, problem, lanes))
    return tuple(out), unread


MAX_TILES = 6  # with tiles=N and skip_if, shorter counts are searched up to this N (beyond: not proven)


def needed_runs(instance: Instance, tm_kwargs: dict[str, Any], num_tiles: int | None = None) -> list[dict[str, Any]]:
    """The search runs an instance needs at one tile count (TaskManager's own loop, restated)."""
    tiles = num_tiles if num_tiles is not None else (2 if instance.persistent else 1)
    base = {"num_tiles": tiles, "assume_pdl_wait_completed": tm_kwargs.get("assume_pdl_wait_completed", False)}
    out = []
    for assignment in instance.assignments:
        out.append({**base, "opaque_assignment": assignment})
        if instance.skip:
            out.append({**base, "skipped_tile": True, "opaque_assignment": assignment})
    return out


def tile_counts(tiles: int | None, skip: bool) -> tuple[int, ...]:
    """The tile counts to search unrolled when the caller names a CTA's count (plus, with ``skip_if``, the shorter
    ones: a sequence mixing skipped and normal tiles reduces to a run of fewer normal tiles)."""
    if not tiles:
        return ()
    counts = {tiles}
    if skip and 1 < tiles <= MAX_TILES:
        counts |= set(range(1, tiles + 1))
    return tuple(sorted(counts))


__all__ = ["Instance", "InstanceRead", "MAX_TILES", "SearchInput", "Searched", "needed_runs", "read_instance",
           "search_inputs", "tile_counts"]
