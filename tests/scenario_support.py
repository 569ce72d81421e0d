"""Helpers the scenarios' CPU tests share: test ids for control overrides, a config's captured task set."""

from __future__ import annotations

from typing import Any

from ts_explore.model import TaskSet
from ts_explore.reader import capture_task_set


def ident(overrides: dict[str, Any]) -> str:
    """A readable test id for control overrides (enum members by name).

    >>> ident({}), ident({"stages": 2})
    ('default', 'stages=2')
    """
    return ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in overrides.items()) or "default"


def captured(scenario: Any, cfg: Any) -> TaskSet:
    """The task set ``scenario`` builds for ``cfg``, as our model."""
    built = scenario.build(cfg)
    return capture_task_set(built.tasks, built.resource_dependency_graph)
