"""Interim verification until ``ts_explore.verify`` exists: run TaskManager quietly, report ok or the error.

Only used by :func:`ts_explore.app.explorer._verify` when ``ts_explore.capture.verify``
cannot be imported; delete once verification is available.
"""

from __future__ import annotations

import contextlib
import html
import io
from dataclasses import dataclass, field
from typing import Any

from ..capture import capture_task_set
from ..model import TaskSet


@dataclass(frozen=True)
class FallbackCheck:
    name: str
    passed: bool
    message: str = ""


@dataclass
class FallbackVerdict:
    """The subset of the Verdict interface the explorer reads."""

    ok: bool
    checks: list[FallbackCheck]
    task_set: TaskSet
    deadlocks: list[Any] = field(default_factory=list)
    races: list[Any] = field(default_factory=list)

    def summary(self) -> str:
        if self.ok:
            return "safe: TaskManager accepted the tasks"
        return "unsafe: " + "; ".join(c.message.splitlines()[0] for c in self.checks if not c.passed)

    def highlight_keys(self) -> list[tuple[str | None, int]]:
        return []

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.summary())}</pre>"


def fallback_verify(tasks: list[Any], resource_dependency_graph: dict[Any, Any], **tm_kwargs: Any) -> FallbackVerdict:
    """Capture the tasks, then construct TaskManager without printing; its first error is the verdict."""
    from cutlass.experimental.task_scheduling.task_manager import TaskManager

    task_set = capture_task_set(tasks, resource_dependency_graph)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            TaskManager(tasks, resource_dependency_graph, verbose=False, **tm_kwargs)
    except Exception as exc:  # noqa: BLE001 - the failure is the data
        return FallbackVerdict(False, [FallbackCheck("TaskManager", False, f"{type(exc).__name__}: {exc}")], task_set)
    return FallbackVerdict(True, [FallbackCheck("TaskManager", True, "")], task_set)
