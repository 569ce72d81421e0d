"""Record a schedule function outside a kernel, turning TS errors into data.

``record`` calls a ``@schedule`` function (or a plain function, which it
decorates) with real resources and returns a :class:`Recording` that either
holds the TS ``Schedule`` or a :class:`Problem`. It never raises for a grammar
error. ``cutlass.range_constexpr`` only works inside a JIT trace; while
recording it is swapped for Python's ``range`` (it is a trace-time unroll in
both worlds, so the recorded steps are the same).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import cutlass
from cutlass.experimental.task_scheduling import schedule_builder as sb

from ..model import Problem, ScheduleTree
from .problems import problem_from_exception
from .schedule import capture_schedule

_TRACED_CODE = sb.schedule(lambda: None).__code__
_ORIGINAL_RANGE_CONSTEXPR = cutlass.range_constexpr


def _trace_time_range(*args: Any, **_: Any) -> range:
    """Stand-in for ``cutlass.range_constexpr`` outside a JIT trace."""
    return range(*(int(a) for a in args))


@contextlib.contextmanager
def trace_time_range_constexpr(*namespaces: dict[str, Any]) -> Iterator[None]:
    """Make ``range_constexpr`` a plain ``range`` in cutlass modules and the given globals."""
    patched: list[tuple[Any, str, Any, bool]] = []
    modules = [m for name, m in list(sys.modules.items()) if name == "cutlass" or name.startswith("cutlass.")]
    for mod in modules:
        if getattr(mod, "range_constexpr", None) is _ORIGINAL_RANGE_CONSTEXPR:
            patched.append((mod, "range_constexpr", _ORIGINAL_RANGE_CONSTEXPR, True))
            mod.range_constexpr = _trace_time_range
    for ns in namespaces:
        for key, value in list(ns.items()):
            if value is _ORIGINAL_RANGE_CONSTEXPR:
                patched.append((ns, key, value, False))
                ns[key] = _trace_time_range
    try:
        yield
    finally:
        for target, key, value, is_attr in reversed(patched):
            if is_attr:
                setattr(target, key, value)
            else:
                target[key] = value


def is_schedule_function(fn: Any) -> bool:
    """True for the wrapper ``@schedule`` returns."""
    return getattr(fn, "__code__", None) is _TRACED_CODE


@dataclass(frozen=True)
class Recording:
    """The outcome of :func:`record`: a TS ``Schedule`` or the :class:`Problem` that stopped it."""

    schedule: Any = None  # cutlass Schedule, passable to Task(schedule=...)
    error: Problem | None = None
    warnings: tuple[str, ...] = ()
    _tree: list[ScheduleTree] = field(default_factory=list, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def tree(self) -> ScheduleTree | None:
        """The captured model (None when recording failed)."""
        if self.schedule is None:
            return None
        if not self._tree:
            self._tree.append(capture_schedule(self.schedule))
        return self._tree[0]

    def __repr__(self) -> str:
        if self.error is not None:
            return f"Recording(error={self.error.rule!r}: {self.error.message!r})"
        tree = self.tree
        assert tree is not None
        return f"Recording(schedule={tree.name!r}, steps={len(tree.steps())}, routes={len(tree.routes)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from ..render.display import mimebundle

        if self.error is not None:
            return {"text/html": self.error.to_html(), "text/plain": str(self.error)}
        return mimebundle(self.tree, text=str(self.schedule))


def record(schedule_fn: Callable[..., Any], *resources: Any) -> Recording:
    """Call a schedule function with resources; return the Schedule or the Problem.

    >>> from ts_explore.seed_examples.resources import GmemSink, GmemSource
    >>> def copy(src, dst):
    ...     dst.set_item(data=src.get_item())
    >>> rec = record(copy, GmemSource(name="src"), GmemSink(name="dst"))
    >>> rec.ok, rec.error
    (True, None)
    >>> record(copy, GmemSource(name="src")).ok   # a missing resource is a Problem, not an exception
    False
    """
    fn = schedule_fn if is_schedule_function(schedule_fn) else sb.schedule(schedule_fn)
    user_fn = getattr(fn, "__wrapped__", schedule_fn)
    namespaces = [getattr(user_fn, "__globals__", {})]
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught_list, trace_time_range_constexpr(*namespaces):
            warnings.simplefilter("always")
            schedule = fn(*resources)
            caught = list(caught_list)
    except Exception as exc:  # noqa: BLE001 - the failure is the data
        return Recording(error=problem_from_exception(exc))
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, UserWarning))
    return Recording(schedule=schedule, warnings=notes)


__all__ = ["Recording", "is_schedule_function", "record", "trace_time_range_constexpr"]
