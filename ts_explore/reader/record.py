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
from typing import Any, Callable

from cutlass.experimental.task_scheduling import schedule_builder as sb

from ..model.recording import Recording
from .capture import recorded_warnings
from .constexpr import range_constexpr_on_cpu
from .problems import located, not_a_schedule, problem_from_exception
from .schedule import capture_schedule
from .task_problems import OpenedBlocks, task_problem

_TRACED_CODE = sb.schedule(lambda: None).__code__


def is_schedule_function(fn: Any) -> bool:
    """True for the wrapper ``@schedule`` returns."""
    return getattr(fn, "__code__", None) is _TRACED_CODE


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
        return Recording(error=refused, capture=capture_schedule)
    fn = schedule_fn if is_schedule_function(schedule_fn) else sb.schedule(schedule_fn)
    user_fn = getattr(fn, "__wrapped__", schedule_fn)
    opened = OpenedBlocks()
    caught: list[warnings.WarningMessage] = []
    try:
        with recorded_warnings() as caught_list, range_constexpr_on_cpu(), opened.watching():
            schedule = fn(*resources)
            caught = list(caught_list)
    except Exception as exc:  # noqa: BLE001 - the failure is the data
        return Recording(error=problem_from_exception(exc), capture=capture_schedule)
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, UserWarning))
    return Recording(schedule=schedule, error=task_problem(schedule, opened, user_fn), warnings=notes,
                     capture=capture_schedule)


__all__ = ["Recording", "is_schedule_function", "record"]
