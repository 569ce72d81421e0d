"""TS's exhaustive checker's lanes, read into our model.

The checker walks each task's HEAD + loop x N + TAIL list (repeated for
``num_tiles`` tiles when a WorkQueue is present), with non-pipelined work
split in two entries. :func:`lanes_for` rebuilds exactly those lists through
TS's own helpers and tags every entry with its tree step, iteration and tile
(the credit pools they are told with: :func:`.search_input.credit_model`).
Our checker's findings and TS's are told in these lanes. :func:`read_lanes` is the
capture's one call here (:mod:`.capture_set`, through :func:`.instance.read_instance`), before TaskManager's
checks unroll anything and after :func:`.trips.read_trips` refused a loop too long to unroll: it reads the
one-tile lanes and every run's lanes at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import guard_fires
from cutlass.experimental.task_scheduling.resources import WorkQueue

from ..model import Family, Section, Stage, TaskInfo, TaskSet
from ..model.scope import TaskTrips
from ..model.verdict import CheckerStep, Lane
from .schedule import STAGE_FAMILY, NameOf

LOCK = threading.RLock()  # guards TS's verbose reporter while the reference engine records paths

_SECTION_OF_TAG = {"H": Section.HEAD, "SH": Section.HEAD, "T": Section.TAIL, "ST": Section.TAIL}


def _iterations(task: Any, n: int, entries: list[Any], skipped: bool, assignment: dict | None) -> list[int | None]:
    """Loop iteration of each entry (``n``: the task's iterations per tile), recomputed with TS's guard rule and
    checked against TS's list."""
    if skipped and getattr(task, "skip_if", None) is not None:
        return [None] * len(entries)
    mine: list[tuple[Any, int | None]] = [(e, None) for e in task.head_schedule_list]
    for i in range(n):
        for res, stage, cid, guard, lbl in task.loop_schedule_list:
            if guard_fires(guard, i, n, opaque_assignment=assignment):
                mine.append(((res, stage, cid, lbl), i))
    mine += [(e, None) for e in task.tail_schedule_list]
    same = len(mine) == len(entries) and all(
        a[0] is b[0] and a[1] == b[1] and a[2] == b[2] for (a, _), b in zip(mine, entries)
    )
    return [it for _, it in mine] if same else [None] * len(entries)


_PARTS = {2: ("write phase", "read phase"), -2: ("1/2", "2/2"), 1: ("",)}


def _split(entry: tuple) -> int:
    """How TS's ``_explode_sync_work`` splits an entry: 2 read/write phases, -2 doubled, 1 kept."""
    if len(ec._consumer_work_phase_entries(entry)) > 1:
        return 2
    return -2 if ec._should_double_nonpipeline_producer_work(entry[0], entry[1]) else 1


@dataclass(frozen=True)
class _ResourceStage:
    """What a lane step needs from one (resource, stage) pair; TS resources are slow to query."""

    name: str
    stage: Stage
    split: int
    tracked: bool
    family: Family


def lanes_for(
    tasks: list[Any],
    trips: tuple[TaskTrips, ...],
    infos: dict[int, TaskInfo],
    name_of: NameOf,
    *,
    skipped_tile: bool = False,
    opaque_assignment: dict | None = None,
    num_tiles: int = 1,
) -> tuple[Lane, ...]:
    """Each task's checker schedule as :class:`Lane` s (same order and length as TS's); ``trips``: each task's
    name and iterations per tile, in the tasks' order (:func:`.trips.read_trips`)."""
    facts: dict[tuple[int, Any], _ResourceStage] = {}

    def fact(entry: tuple) -> _ResourceStage:
        key = (id(entry[0]), entry[1])
        found = facts.get(key)
        if found is None:
            res, stage = entry[0], Stage(entry[1].value)
            found = facts[key] = _ResourceStage(
                name_of[id(res)], stage, _split(entry), not isinstance(res, WorkQueue),
                name_of.fixed_family.get(id(res)) or STAGE_FAMILY[stage],
            )
        return found

    per_task: list[list[tuple[tuple, int | None, str]]] = []
    for task, trip in zip(tasks, trips):
        entries = ec._expand_task_for_check(task, skipped_tile, opaque_assignment)
        iters = _iterations(task, trip.iterations, entries, skipped_tile, opaque_assignment)
        per_task.append(
            [(e, it, part) for e, it in zip(entries, iters) for part in _PARTS[fact(e).split]] * num_tiles
        )
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    if domain_rids:  # per-physical-stage credit pools: ask TS which slot each entry uses
        keys = ts_tm._precompute_stage_credit_keys(tasks, [[e for e, _, _ in lane] for lane in per_task], domain_rids)
    else:
        keys = [[(0, 0)] * len(lane) for lane in per_task]
    lanes = []
    for task, trip, lane, lane_keys in zip(tasks, trips, per_task, keys):
        info = infos.get(id(task))
        labels = _labels(task)
        uids = {}
        if info is not None:
            uids = {(s.section, s.resource, s.stage, s.call_index): s.uid for s in info.schedule.steps()}
        name = trip.task
        per_tile = len(lane) // max(num_tiles, 1)
        steps = []
        for idx, ((entry, it, part), key) in enumerate(zip(lane, lane_keys)):
            f = fact(entry)
            cid, tag = entry[2], entry[3]
            section = _SECTION_OF_TAG.get(tag, Section.LOOP)
            steps.append(
                CheckerStep(
                    name, idx, f.name, f.stage, cid, section, tag, it, idx // per_tile if per_tile else 0, part,
                    uids.get((section, f.name, f.stage, cid)), labels.get((section, id(entry[0]), entry[1], cid)),
                    key[1], f.tracked, f.family,
                )
            )
        lanes.append(Lane(name, tuple(steps)))
    return tuple(lanes)


def _labels(task: Any) -> dict[tuple[Section, int, Any, int], str | None]:
    """Work-method label of every (section, resource id, stage, call id) of a task."""
    out = {(Section.HEAD, id(r), s, c): lbl for r, s, c, lbl in task.head_schedule_list}
    out.update({(Section.LOOP, id(r), s, c): lbl for r, s, c, _g, lbl in task.loop_schedule_list})
    out.update({(Section.TAIL, id(r), s, c): lbl for r, s, c, lbl in task.tail_schedule_list})
    return out


@dataclass(frozen=True)
class LaneFacts:
    """What the lanes of one instance say, read in one pass (:func:`read_lanes`)."""

    one_tile: tuple[tuple[tuple[Lane, ...], tuple[Lane, ...]], ...]  # (normal, skipped) per key assignment
    error: str  # why the one-tile lanes could not be read ("" when read)
    runs: tuple[tuple[Lane, ...] | None, ...]  # per run; None when not readable
    run_errors: tuple[str, ...]  # per run: why its lanes could not be read


def read_lanes(tasks: list[Any], trips: tuple[TaskTrips, ...], task_set: TaskSet | None, name_of: NameOf, *,
               runs: list[dict[str, Any]], assignments: tuple[dict, ...], persistent: bool) -> LaneFacts:
    """The one-tile lanes (persistent schedules) and each run's lanes (``trips``: :func:`.trips.read_trips`)."""
    one_tile, error = (), ""
    try:
        if persistent:
            one_tile = tuple(
                (lanes_for(tasks, trips, {}, name_of, opaque_assignment=a, num_tiles=1),
                 lanes_for(tasks, trips, {}, name_of, skipped_tile=True, opaque_assignment=a, num_tiles=1))
                for a in assignments
            )
    except Exception as exc:  # noqa: BLE001 - the searches still run; their findings cannot be told
        one_tile, error = (), f"{type(exc).__name__}: {exc}"
    infos = {id(t): info for t, info in zip(tasks, task_set.tasks)} if task_set else {}
    out: list[tuple[Lane, ...] | None] = []
    errors: list[str] = []
    for kwargs in runs:
        lanes, why = None, ""
        try:
            lanes = lanes_for(tasks, trips, infos, name_of, skipped_tile=bool(kwargs.get("skipped_tile")),
                              opaque_assignment=kwargs.get("opaque_assignment"),
                              num_tiles=int(kwargs.get("num_tiles", 1)))
        except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
            why = f"{type(exc).__name__}: {exc}"
        out.append(lanes)
        errors.append(why)
    return LaneFacts(one_tile, error, tuple(out), tuple(errors))


__all__ = ["LOCK", "LaneFacts", "lanes_for", "read_lanes"]
