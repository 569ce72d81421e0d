"""One capture of a TS task set for verification: the TS objects read once, into model values.

:func:`capture_set` takes what ``verify`` is given (tasks, graph,
TaskManager's keywords) and reads, in this order: the arguments' shape
(:func:`.checks.check_arguments`); the schedule trees and resources
(:func:`.tasks.read_set`), before TS touches the tasks; the instance
(:func:`.instance.read_instance`: which runs it needs, key assignments,
python conditions, the simulation's input, and through
:func:`.lanes.read_lanes` the refusal of a loop too long to unroll, the trip
counts and every run's lanes), before TaskManager unrolls anything;
TaskManager's checks (:func:`.checks.run_checks`, run once, here); then, as
TaskManager left the tasks, the way TS's own search sees them, each run's
checker input and the credit model (:func:`.search_input.read_problems`) and a
persistent schedule's tile-loop tables (:func:`.tile_loop.read_tile_loops`).
What comes back is one frozen :class:`CapturedSet`; verification, scope,
outcomes and rules take it and no TS object.

Some answers need the TS objects themselves, later: TS's own BFS (``checker="ts"``
runs ``check_all_interleavings`` on the tasks; the capture builds that runner),
and the search input at a tile count nobody could name before the searches ran
(the count a tile-loop finding needs, the tile cross-check's counts).
:class:`~.task_objects.TaskObjects` keeps the tasks for exactly these, and
nothing else after the capture reads them.

``verify`` holds :func:`remembered_domains` around the whole verification:
each task's ``get_domain`` answers each work tile once, whoever reads the tasks.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Iterator

from ..model import TaskSet
from .capture import quiet_warnings
from .checks import CheckRecord, check_arguments, run_checks
from .instance import Instance, InstanceRead, SearchInput, read_instance
from .trips import LoopTooLong
from .search_input import read_problems
from .reference import reference_search
from .task_objects import TaskObjects
from .tasks import read_set
from .tile_loop import TileLoopRead, read_tile_loops


@dataclass(frozen=True)
class CapturedSet:
    """Everything verification needs of one task set, as model values (no TS object inside)."""

    task_set: TaskSet | None  # the schedule trees, resources and edges; None when capturing them failed
    capture_error: str  # why ``task_set`` is None ("" when captured)
    checks: CheckRecord  # TaskManager's checks, run once
    instance: Instance | None  # None when the instance could not be read (``unreadable`` says why)
    unreadable: tuple[str, str] | None = None  # (error type, message) of that failure
    runs: tuple[dict[str, Any], ...] = ()  # the runs the instance needs at TS's tile count (TS keywords)
    tile_runs: tuple[dict[str, Any], ...] = ()  # the runs it needs at the caller's count (``tiles``)
    inputs: tuple[SearchInput, ...] = ()  # the search input of each of ``runs`` (when a search will run)
    extra: tuple[SearchInput, ...] = ()  # of the caller's further tile counts (``tiles`` with ``skip_if``)
    unread: str = ""  # why a run's input could not be read ("" when every one was)
    tile_loops: tuple[TileLoopRead, ...] = ()  # a persistent schedule's tile loops (no ``tiles`` given)


@contextlib.contextmanager
def remembered_domains(tasks: Any) -> Iterator[None]:
    """While reading, each task's ``get_domain`` answers each work tile once.

    TS probes a dynamic bound (``get_domain`` on tile (0, 0, 0)) in every
    expansion of a task, and a probe may trace DSL code; a capture expands
    each task once per check and per search run. The memo is an attribute
    of each task object (no TS class or module is patched) and is removed
    again on the way out. ``verify`` holds it around the whole verification
    (the capture, TS's own search, inputs read later from the kept tasks).
    Anything but a list or tuple of tasks is left to
    :func:`.checks.check_arguments` to refuse.
    """
    added = []
    for task in tasks if isinstance(tasks, (list, tuple)) else ():
        if getattr(task, "domain_getter", None) is None or "get_domain" in vars(task):
            continue
        method = task.get_domain
        answers: dict[Any, Any] = {}

        def remembered(tile: Any, _method: Any = method, _answers: dict[Any, Any] = answers) -> Any:
            try:
                hash(tile)
            except TypeError:
                return _method(tile)
            if tile not in _answers:
                try:
                    _answers[tile] = (True, _method(tile))
                except Exception as exc:  # noqa: BLE001 - a bound that cannot be probed fails the same way again
                    _answers[tile] = (False, exc)
            ok, answer = _answers[tile]
            if not ok:
                raise answer
            return answer

        task.get_domain = remembered
        added.append(task)
    try:
        yield
    finally:
        for task in added:
            vars(task).pop("get_domain", None)


def capture_set(tasks: Any, graph: Any, tm_kwargs: dict[str, Any], *, tiles: int | None = None,
                task_set: TaskSet | None = None, search: bool = True, problems: bool = True
                ) -> tuple[CapturedSet, TaskObjects]:
    """Read ``verify``'s tasks once (see the module docstring); the capture, and the tasks kept for TS's own answers.

    ``tiles``: the caller's work tiles per CTA (their runs are read too);
    ``task_set``: the caller's capture of these very tasks; ``search``: an
    exhaustive search will run (else no search input is read);
    ``problems=False``: TS's BFS searches (``checker="ts"``), so our
    checker's input is left out and TS's search is kept ready instead.
    Raises ``TypeError`` for arguments that are not TS tasks and a graph, and
    :class:`~ts_explore.reader.trips.LoopTooLong` for a loop too long to unroll.
    """
    task_list = check_arguments(tasks, graph, tm_kwargs)
    graph = dict(graph)
    resources, name_of, task_set, capture_error = read_set(task_list, graph, task_set)
    try:  # the instance and its lanes, before TaskManager's checks unroll anything
        with quiet_warnings():  # repeats of what TaskManager's checks warn (kept there)
            facts: InstanceRead | None = read_instance(task_list, task_set, resources, name_of, tm_kwargs=tm_kwargs,
                                                       tiles=tiles, search=search)
        unreadable = None
    except LoopTooLong:
        raise
    except Exception as exc:  # noqa: BLE001 - told as the analysis check, as any other failure
        facts, unreadable = None, (type(exc).__name__, str(exc))
    record = run_checks(task_list, graph, tm_kwargs)
    if facts is None:
        return CapturedSet(task_set, capture_error, record, None, unreadable), TaskObjects(task_list, task_set, name_of)
    searching = search and record.reached_search
    runs = list(facts.read) if searching else []
    with quiet_warnings():
        read = read_problems(task_list, runs, name_of, problems=problems)
        loops: tuple[TileLoopRead, ...] = ()
        if searching and facts.instance.persistent and tiles is None:  # the tile-loop proof's tables
            loops = read_tile_loops(task_list, facts.instance.assignments, facts.instance.skip,
                                    bool(tm_kwargs.get("assume_pdl_wait_completed", False)))
    model = read.credit_model if not facts.instance.unread else None  # findings are told with both or neither
    one_tile = facts.instance.one_tile_lanes if model is not None else ()
    instance = replace(facts.instance, credit_model=model, one_tile_lanes=one_tile,
                       unread=read.credit_error or facts.instance.unread)
    inputs: list[SearchInput] = []
    unread = instance.unread
    for kwargs, text, problem, error, lanes, why in zip(runs, facts.opaque, read.problems, read.errors,
                                                       facts.lanes.runs, facts.lanes.run_errors):
        unread = unread or error  # after the first thing that could not be read, no lanes: as TS's order has it
        inputs.append(SearchInput(dict(kwargs), text, problem, None if unread else lanes))
        unread = unread or why
    reference = None
    if searching and not problems:  # TS's own search runs on the tasks
        reference = reference_search(task_list, instance, stalled=record.simulation_error is not None)
    needed = len(facts.runs) if searching else 0
    return (CapturedSet(task_set, capture_error, record, instance, None, facts.runs, facts.tile_runs,
                        tuple(inputs[:needed]), tuple(inputs[needed:]), unread, loops),
            TaskObjects(task_list, task_set, name_of, reference))


__all__ = ["CapturedSet", "capture_set", "remembered_domains"]
