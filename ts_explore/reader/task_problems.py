"""What ``Task(schedule=...)`` rejects in a schedule that recorded cleanly, found at record time.

TS records a schedule first and lowers it when a ``Task`` is built; some
rules only bite then (two sibling domain loops, no domain loop, a per-tile
bound that is not a ``get_domain`` method of a Task subclass, a callable
start or step, a ``when_true`` block outside the loop, a non-int unroll, a
``skip_if`` of the wrong shape). :func:`task_problem` builds a throwaway Task
from the recording exactly as a user would (with the Task subclass that owns
the per-tile bound, if any) and turns its error into a :class:`Problem`
pointing at the ``with`` line that broke the rule. :class:`OpenedBlocks`
notes those lines while the schedule records.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import schedule_builder as sb
from cutlass.experimental.task_scheduling.resources import WorkQueue
from cutlass.experimental.task_scheduling.task import Task

from ..model import Problem
from .capture import quiet_warnings
from .problems import is_user_code, located, problem_from_exception

# Task-time problems: the Problem rule slugs a Task build raises for a schedule (not for the resources a caller picks)
TASK_TIME_PROBLEMS = frozenset({
    "two-domain-loops", "no-domain-loop", "dynamic-domain-name", "dynamic-start-step", "guard-outside-loop",
    "unroll-not-int", "skip-if-shape", "skip-if-not-queue-method",
})


class OpenedBlocks:
    """Remembers, while a schedule records, the user's line that opened each block (``with ...:``)."""

    def __init__(self) -> None:
        self.lines: dict[int, tuple[str, int, Any]] = {}  # id(node) -> (filename, line, node)

    @contextlib.contextmanager
    def watching(self) -> Iterator[OpenedBlocks]:
        original = sb.ScheduleBuilder.open_scope
        lines = self.lines

        def open_scope(builder: Any, container: Any) -> None:
            frame = sys._getframe(1)
            while frame is not None and not is_user_code(frame.f_code.co_filename):
                frame = frame.f_back
            if frame is not None:
                lines[id(container)] = (frame.f_code.co_filename, frame.f_lineno, container)
            original(builder, container)

        sb.ScheduleBuilder.open_scope = open_scope  # type: ignore[method-assign]
        try:
            yield self
        finally:
            sb.ScheduleBuilder.open_scope = original  # type: ignore[method-assign]

    def where(self, node: Any) -> tuple[str, int] | None:
        hit = self.lines.get(id(node))
        return (hit[0], hit[1]) if hit is not None and hit[2] is node else None


def _nodes(nodes: list[Any]) -> Iterator[tuple[Any, bool]]:
    """Every node with whether it sits inside a domain loop."""
    def walk(items: list[Any], in_loop: bool) -> Iterator[tuple[Any, bool]]:
        for node in items:
            yield node, in_loop
            if not isinstance(node, sb.Step):
                yield from walk(node.body, in_loop or isinstance(node, sb.DomainLoop))

    return walk(nodes, False)


def _culprit(rule: str, schedule: Any) -> Any | None:
    """The node whose ``with`` line breaks ``rule``."""
    nodes = list(_nodes(schedule.body))
    loops = [n for n, _ in nodes if isinstance(n, sb.DomainLoop)]
    if rule == "two-domain-loops" and len(loops) > 1:
        return loops[1]
    if rule in ("dynamic-domain-name", "dynamic-start-step", "unroll-not-int") and loops:
        return loops[0]
    if rule == "guard-outside-loop":
        return next((n for n, in_loop in nodes if isinstance(n, sb.ConditionalBlock) and not in_loop
                     and n.condition is not ts_enums.SKIPPABLE), None)
    if rule == "skip-if-shape":
        return next((n for n, _ in nodes if isinstance(n, sb.WorkTileLoop)), None)
    return None


def _task_class(schedule: Any) -> type:
    """The Task subclass that owns the per-tile ``get_domain`` bound (plain Task when there is none)."""
    loop = next((n for n, _ in _nodes(schedule.body) if isinstance(n, sb.DomainLoop)), None)
    end = getattr(loop, "end", None)
    if not callable(end):
        return Task
    pending = list(Task.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__dict__.get("get_domain") is end:
            return cls
        pending.extend(cls.__subclasses__())
    return Task


def task_problem(schedule: Any, opened: OpenedBlocks, fn: Callable[..., Any] | None) -> Problem | None:
    """The Problem ``Task(schedule=...)`` would raise for this recorded schedule, or None."""
    queues = [r for r in schedule.resources if isinstance(r, WorkQueue)][:1]
    cls = _task_class(schedule)
    task = object.__new__(cls)  # the owner of get_domain, without its own __init__ arguments
    try:
        with quiet_warnings():  # this thread's only
            Task.__init__(task, src_resources=queues, dst_resources=[], warp_idx=0, num_warps=1, schedule=schedule,
                          name=schedule.name)
    except Exception as exc:  # noqa: BLE001 - the failure is the data
        problem = problem_from_exception(exc)
        if problem.rule not in TASK_TIME_PROBLEMS:
            return None
        where = opened.where(_culprit(problem.rule, schedule))
        if where is None and fn is not None:
            code = getattr(fn, "__code__", None)
            where = (code.co_filename, code.co_firstlineno) if code is not None else None
        return located(problem, *where) if where is not None else problem
    return None


__all__ = ["OpenedBlocks", "TASK_TIME_PROBLEMS", "task_problem"]
