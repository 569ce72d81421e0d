"""The outcome of recording a schedule function: the TS ``Schedule``, the :class:`Problem` that stops it, or both.

:func:`ts_explore.record` (in :mod:`ts_explore.reader.record`) fills a
:class:`Recording`; the schedule is kept as TS's object (it can be passed on
to ``Task(schedule=...)``) and captured into a :class:`ScheduleTree` by the
reader the first time ``tree`` is asked for. How a notebook shows it is
attached in :mod:`ts_explore.app.hooks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .problem import Problem
from .schedule import ScheduleTree


@dataclass(frozen=True)
class Recording:
    """The outcome of :func:`ts_explore.record`: the TS ``Schedule``, the :class:`Problem` that stops it, or both.

    ``ok`` is True only when TS recorded the schedule and a ``Task`` accepts
    it. With a Task-time problem both ``schedule`` and ``error`` are set.
    """

    schedule: Any = None  # cutlass Schedule, passable to Task(schedule=...)
    error: Problem | None = None
    warnings: tuple[str, ...] = ()
    capture: Callable[[Any], ScheduleTree] | None = field(default=None, repr=False, compare=False)
    _tree: list[ScheduleTree] = field(default_factory=list, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.schedule is not None

    @property
    def tree(self) -> ScheduleTree | None:
        """The captured model (None when TS did not record anything)."""
        if self.schedule is None or self.capture is None:
            return None
        if not self._tree:
            self._tree.append(self.capture(self.schedule))
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


__all__ = ["Recording"]
