"""Record a schedule function outside a kernel, turning TS errors into data.

``record`` calls a ``@schedule`` function (or a plain function, which it
decorates) with real resources and returns a :class:`Recording`. It never
raises for a schedule's mistake:

- TS refuses to record it (a grammar error): ``error`` holds the Problem and
  there is no schedule;
- it records, but ``Task(schedule=...)`` would reject it (two sibling domain
  loops, no domain loop, a per-tile bound not named ``get_domain``, a
  ``when_true`` outside the loop...): ``error`` holds that Problem *and*
  ``schedule`` holds what was recorded, so the drawing shows what was copied
  under the error box;
- not a schedule at all (None, async, a generator...): a Problem.

``cutlass.range_constexpr`` works while recording (see
:mod:`ts_explore.reader.constexpr`); the switch is off again afterwards.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from cutlass.experimental.task_scheduling import schedule_builder as sb

from ..model import Problem, ScheduleTree
from .constexpr import range_constexpr_on_cpu
from .problems import located, not_a_schedule, problem_from_exception
from .schedule import capture_schedule
from .task_rules import OpenedBlocks, task_problem

_TRACED_CODE = sb.schedule(lambda: None).__code__


def is_schedule_function(fn: Any) -> bool:
    """True for the wrapper ``@schedule`` returns."""
    return getattr(fn, "__code__", None) is _TRACED_CODE


@dataclass(frozen=True)
class Recording:
    """The outcome of :func:`record`: the TS ``Schedule``, the :class:`Problem` that stops it, or both.

    ``ok`` is True only when TS recorded the schedule and a ``Task`` accepts
    it. With a Task-time problem both ``schedule`` and ``error`` are set.
    """

    schedule: Any = None  # cutlass Schedule, passable to Task(schedule=...)
    error: Problem | None = None
    warnings: tuple[str, ...] = ()
    _tree: list[ScheduleTree] = field(default_factory=list, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.schedule is not None

    @property
    def tree(self) -> ScheduleTree | None:
        """The captured model (None when TS did not record anything)."""
        if self.schedule is None:
            return None
        if not self._tree:
            self._tree.append(capture_schedule(self.schedule))
        return self._tree[0]

    @property
    def unrouted(self) -> tuple[str, ...]:
        """TS's warnings about outputs no later step uses (also badged on the producing step)."""
        return tuple(w for w in self.warnings if "never routed" in w)

    def __repr__(self) -> str:
        tree = self.tree
        if self.error is not None:
            recorded = f", recorded {len(tree.steps())} steps" if tree is not None else ""
            return f"Recording(error={self.error.rule!r}: {self.error.message!r}{recorded})"
        assert tree is not None
        return f"Recording(schedule={tree.name!r}, steps={len(tree.steps())}, routes={len(tree.routes)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from ..render.display import mimebundle
        from ..render.recording import recording_html

        if self.schedule is None:
            assert self.error is not None
            return {"text/html": self.error.to_html(), "text/plain": str(self.error)}
        bundle = mimebundle(self.tree, text=str(self.schedule))
        bundle["text/html"] = recording_html(self.error, self.unrouted, bundle.get("text/html", ""))
        if self.error is not None:
            bundle["text/plain"] = f"{self.error}\n\n{bundle['text/plain']}"
        return bundle


def record(schedule_fn: Callable[..., Any], *resources: Any) -> Recording:
    """Call a schedule function with resources; return the Schedule, the Problem, or both.

    >>> from cutlass.experimental.task_scheduling import domain_loop
    >>> from ts_explore.seed_examples.resources import GmemSink, GmemSource
    >>> def copy(src, dst):
    ...     with domain_loop(0, 4, 1):
    ...         dst.set_item(data=src.get_item())
    >>> rec = record(copy, GmemSource(name="src"), GmemSink(name="dst"))
    >>> rec.ok, rec.error
    (True, None)
    >>> def unlooped(src, dst):  # records, but Task() would refuse it: a Problem, with the tree still drawn
    ...     dst.set_item(data=src.get_item())
    >>> later = record(unlooped, GmemSource(name="src"), GmemSink(name="dst"))
    >>> later.ok, later.error.rule, later.schedule is not None
    (False, 'no-domain-loop', True)
    >>> record(copy, GmemSource(name="src")).ok   # a missing resource is a Problem, not an exception
    False
    """
    refused = not_a_schedule(schedule_fn)
    if refused is not None:
        if refused.line is None:  # point at the call: the argument is what is wrong
            caller = sys._getframe(1)
            refused = located(refused, caller.f_code.co_filename, caller.f_lineno)
        return Recording(error=refused)
    fn = schedule_fn if is_schedule_function(schedule_fn) else sb.schedule(schedule_fn)
    user_fn = getattr(fn, "__wrapped__", schedule_fn)
    opened = OpenedBlocks()
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught_list, range_constexpr_on_cpu(), opened.watching():
            warnings.simplefilter("always")
            schedule = fn(*resources)
            caught = list(caught_list)
    except Exception as exc:  # noqa: BLE001 - the failure is the data
        return Recording(error=problem_from_exception(exc))
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, UserWarning))
    return Recording(schedule=schedule, error=task_problem(schedule, opened, user_fn), warnings=notes)


__all__ = ["Recording", "is_schedule_function", "record"]
