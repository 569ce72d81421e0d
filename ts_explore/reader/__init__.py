"""The only package that reads TS objects: it turns them into ts_explore's model.

:func:`capture` turns one TS object (a ``Schedule``, ``Task`` or
``TaskManager``) into a frozen model value for drawing. Verification reads a
task set once, through :func:`ts_explore.reader.capture_set.capture_set`:
every reader module it needs is entered once and the result, a frozen
:class:`~ts_explore.reader.capture_set.CapturedSet`, is all that
:mod:`ts_explore.verification` reads (the tasks themselves stay behind in a
:class:`~ts_explore.reader.task_objects.TaskObjects`, for TS's own search and
inputs at tile counts named only later).
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling import schedule_builder as _sb

from ..model import ScheduleTree, TaskInfo, TaskSet
from .problems import classify, problem_from_exception
from .record import Recording, record
from .schedule import capture_schedule
from .tasks import (
    capture_task,
    capture_task_manager,
    capture_task_set,
    is_task,
    is_task_manager,
)


def capture(obj: Any) -> ScheduleTree | TaskInfo | TaskSet:
    """Turn a TS ``Schedule``, ``Task`` or ``TaskManager`` into the frozen model.

    Our own model objects and :class:`Recording` pass through (a Recording
    yields its tree), so every renderer can take whatever the user holds.
    """
    if isinstance(obj, (ScheduleTree, TaskInfo, TaskSet)):
        return obj
    if isinstance(obj, Recording):
        if obj.tree is None:
            raise ValueError(f"the recording failed, nothing to capture: {obj.error}")
        return obj.tree
    if isinstance(obj, _sb.Schedule):
        return capture_schedule(obj)
    if is_task(obj):
        return capture_task(obj)
    if is_task_manager(obj):
        return capture_task_manager(obj)
    raise TypeError(
        "capture() takes a TS Schedule (what a @schedule function returns), a Task, "
        f"a TaskManager or a Recording; got {type(obj).__name__}"
    )


__all__ = [
    "Recording",
    "capture",
    "capture_schedule",
    "capture_task",
    "capture_task_manager",
    "capture_task_set",
    "classify",
    "problem_from_exception",
    "record",
]
