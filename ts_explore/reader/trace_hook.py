"""The one place that hooks into TS's task runner: every step a traced kernel runs goes through here.

TS runs each schedule step through ``Task._run_profiled_step(resource,
stage_info, schedule_stage, work_method, routing_slot)`` (its IKET hook),
where ``routing_slot`` is ``(id(resource), stage, ScheduleStageType, call_id)``.
That slot names exactly one step of the captured schedule, because our
model's :class:`~ts_explore.model.Step` keeps TS's section and call id:
:func:`step_ids` maps every slot to the step's uid while the kernel is
traced, so measured events carry the id of the step the diagrams draw.

The hook is private TS API, so it is used only here, per task instance (no
class or module of TS is patched), and ``tests/unit/test_timeline_kernel.py``
fails loudly if TS renames it, changes its arguments or stops passing the slot.

:func:`python_state` and :func:`restore` walk the TS objects a TaskManager
reaches, so a kernel that emits its schedule twice (instrumented and plain)
starts the second emission from the bindings the first one started from.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import TYPE_CHECKING, Any, Iterator, Iterable, Mapping

import cutlass
from cutlass.experimental.task_scheduling.enums import ScheduleStage, ScheduleStageType

from ..model import Section, Stage, TaskSet
from .schedule import resource_namer
from .tasks import _all_resources

if TYPE_CHECKING:
    from ..kernels.trace import Recorder

HOOK = "_run_profiled_step"
HOOK_ARGS = ("self", "resource", "stage_info", "schedule_stage", "work_method", "routing_slot")
SECTION_TYPES = {Section.HEAD: ScheduleStageType.Head, Section.LOOP: ScheduleStageType.Loop,
                 Section.TAIL: ScheduleStageType.Tail}
COUNTER = "_ts_explore_events"  # per-task event counter, threaded by TS's own loop-state handling
_EMITTED: contextvars.ContextVar[set[tuple[str, int]] | None] = contextvars.ContextVar("emitted", default=None)


@contextlib.contextmanager
def collect_emitted() -> Iterator[set[tuple[str, int]]]:
    """Collect ``(task name, step uid)`` of every step an instrumented kernel traced in this block emits."""
    seen: set[tuple[str, int]] = set()
    token = _EMITTED.set(seen)
    try:
        yield seen
    finally:
        _EMITTED.reset(token)


def step_ids(tasks: list[Any], graph: Mapping[Any, Iterable[Any]], task_set: TaskSet) -> dict[tuple[int, Any], int]:
    """``(id(task), routing slot) -> step uid`` for every step of every task (``task_set`` captured from them)."""
    resources = _all_resources(tasks, graph)
    name_of = resource_namer(resources)
    by_name = {name_of(r): r for r in resources}
    ids: dict[tuple[int, Any], int] = {}
    for task, info in zip(tasks, task_set.tasks):
        for step in info.schedule.steps():
            res = by_name[step.resource]
            slot = (id(res), ScheduleStage(step.stage.value), SECTION_TYPES[step.section], step.call_index)
            ids[(id(task), slot)] = step.uid
    return ids


def instrument(tasks: list[Any], ids: dict[tuple[int, Any], int], recorder: Recorder) -> None:
    """Route every step of ``tasks`` through the recorder (call before TaskManager runs them)."""
    seen = _EMITTED.get()
    for task in tasks:
        original = getattr(type(task), HOOK).__get__(task)
        setattr(task, HOOK, functools.partial(_traced_step, task, original, ids, recorder, seen))


def uninstrument(tasks: list[Any]) -> None:
    """Take the recorder and its event counter off ``tasks`` again (their steps run TS's own hook).

    The counter must go too: TS threads a task's staged attributes through
    its loops, and one created in the recording branch does not exist in the other.
    """
    for task in tasks:
        for name in (HOOK, COUNTER):
            if name in vars(task):
                delattr(task, name)


def start_counters(tasks: list[Any]) -> None:
    """Give each task its event counter before its schedule runs, so TS threads it like its own state."""
    for task in tasks:
        setattr(task, COUNTER, cutlass.Int32(0))


def _traced_step(task: Any, original: Any, ids: dict[tuple[int, Any], int], recorder: Recorder,
                 seen: set[tuple[str, int]] | None, resource: Any, stage_info: Any, schedule_stage: Any,
                 work_method: Any = None, routing_slot: Any = None) -> None:
    uid = ids.get((id(task), routing_slot))
    stage = Stage(schedule_stage.value)
    if uid is not None and seen is not None:
        seen.add((task.name, uid))
    event = uid is not None and recorder.records_event(stage)
    mark = uid is not None and recorder.records_progress(stage)
    if not (event or mark):
        original(resource, stage_info, schedule_stage, work_method, routing_slot)
        return
    assert uid is not None
    loop = routing_slot[2] == ScheduleStageType.Loop
    if mark:
        where = (_iteration(task, stage_info, loop), _tile(stage_info))
        recorder.mark(uid, *where, recorder.ENTERED)
    if event:
        recording = recorder.recording()
        zero = cutlass.Int32(0)
        offset, first, step = (stage_info.loop_offset, task.domain_start, task.step) if loop else (zero, zero, zero)
        recorder.begin(recording, getattr(task, COUNTER), uid, cutlass.Int32(offset), _tile(stage_info))
    original(resource, stage_info, schedule_stage, work_method, routing_slot)
    if event:
        n = recorder.end(recording, getattr(task, COUNTER), loop, cutlass.Int32(first), cutlass.Int32(step))
        setattr(task, COUNTER, n)
    if mark:
        recorder.mark(uid, *where, recorder.LEFT)


def _iteration(task: Any, stage_info: Any, loop: bool) -> Any:
    """The step's loop iteration (-1 outside the loop), as a DSL value."""
    if not loop:
        return cutlass.Int32(-1)
    return cutlass.Int32((stage_info.loop_offset - task.domain_start) // task.step)


def _tile(stage_info: Any) -> Any:
    """The work tile the step runs on (0 without a work-tile loop)."""
    return cutlass.Int32(0) if stage_info.work_tile is None else cutlass.Int32(stage_info.work_tile.tile_idx[0])


_OURS = ("cutlass.experimental.task_scheduling", "ts_explore")


def python_state(root: Any) -> list[tuple[Any, Any]]:
    """Shallow copies of every TS or ts-explore object (and plain container) reachable from ``root``.

    Only the Python-level bindings are copied: the staged values they hold
    stay as they are, which is what lets a second emission of the schedule
    start from exactly the bindings the first one started from.
    """
    saved: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, dict):
            saved.append((obj, dict(obj)))
            todo.extend(obj.values())
        elif isinstance(obj, list):
            saved.append((obj, list(obj)))
            todo.extend(obj)
        elif isinstance(obj, tuple):
            todo.extend(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type) and type(obj).__module__.startswith(_OURS):
            saved.append((obj, dict(vars(obj))))
            todo.extend(vars(obj).values())
    return saved


def restore(saved: list[tuple[Any, Any]]) -> None:
    """Put back the bindings :func:`python_state` copied."""
    for obj, copy in saved:
        target = obj if isinstance(obj, (dict, list)) else vars(obj)
        target.clear()
        if isinstance(obj, list):
            obj.extend(copy)
        else:
            target.update(copy)


__all__ = ["COUNTER", "HOOK", "HOOK_ARGS", "collect_emitted", "instrument", "python_state", "restore",
           "start_counters", "step_ids", "uninstrument"]
