"""Public entry points that accept TS objects: capture first, then render.

The renderers in ``render/`` only know the model; these wrappers let a user
pass whatever they hold (a ``Schedule``, ``Task``, ``TaskManager``, a
:class:`Recording` or our model objects).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

import graphviz

from ..reader import capture, capture_task_set
from ..model import TaskInfo, TaskSet
from ..render import deps as _deps
from ..render import display as _display
from ..render import tree as _tree


def schedule_graph(
    obj: Any,
    *,
    verdict: Any = None,
    highlight: Iterable[tuple[str | None, int]] = (),
) -> graphviz.Digraph:
    """Draw a schedule tree with routes (one tree per task for a TaskManager).

    ``verdict`` (from :func:`ts_explore.verify`) marks the steps its checks
    found blocked; ``highlight`` marks any ``(task name or None, step uid)``.
    """
    model = capture(obj)
    marks = list(highlight)
    if verdict is not None:
        marks.extend(verdict.highlight_keys())
    return _display.fitted(_tree.schedule_graph(model, highlight=marks))


def task_set(obj: Any, resource_dependency_graph: Mapping[Any, Any] | None = None) -> TaskSet:
    """A TaskSet from a TaskManager, a TaskSet, a task list plus graph, or ``dict(tasks=..., ...)``."""
    if isinstance(obj, Mapping) and "tasks" in obj:
        return capture_task_set(obj["tasks"], obj.get("resource_dependency_graph", {}))
    if isinstance(obj, (list, tuple)):
        return capture_task_set(obj, resource_dependency_graph or {})
    model = capture(obj)
    if isinstance(model, TaskInfo):
        return TaskSet(tasks=(model,), resources=(), edges=())
    if not isinstance(model, TaskSet):
        raise TypeError(
            "a dependency graph needs tasks: pass a TaskManager, a list of Tasks with a "
            f"resource_dependency_graph, or dict(tasks=..., resource_dependency_graph=...); got {type(obj).__name__}"
        )
    return model


def dependency_graph(
    obj: Any, resource_dependency_graph: Mapping[Any, Any] | None = None
) -> graphviz.Digraph:
    """Resources (name, pipeline type, stages) and dependency edges labelled with their tasks."""
    return _display.fitted(_deps.dependency_graph(task_set(obj, resource_dependency_graph)))


def save(obj: Any, path: str | Path) -> Path:
    """Write a drawing to ``path``; the suffix picks the format: .svg .png .pdf .dot/.gv.

    ``obj`` is a ``graphviz.Digraph`` or anything :func:`schedule_graph` draws.
    """
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        raise FileNotFoundError(
            f"cannot write {path}: the folder {folder} does not exist; create it first (e.g. mkdir -p {folder})"
        )
    graph = obj if isinstance(obj, graphviz.Digraph) else schedule_graph(obj)
    return _display.save_graph(graph, path)


__all__ = ["dependency_graph", "save", "schedule_graph", "task_set"]
