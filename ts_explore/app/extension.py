"""``%load_ext ts_explore``: TS schedules, tasks and task managers display as diagrams.

Formatters are registered by type name, so TS classes need not be imported
first; unloading restores whatever printers were there before. Loading also
turns on :func:`ts_explore.range_constexpr_on_cpu` for the notebook, so the
guide's schedules that unroll with ``cutlass.range_constexpr`` can be called
(and passed to ``Task``) in cells; unloading turns it off.
"""

from __future__ import annotations

import html
from typing import Any, Callable

from ..model import Problem, ScheduleTree, TaskInfo, TaskSet

_TS = "cutlass.experimental.task_scheduling"
# (module, class name) pairs that get a diagram.
TS_TYPES: tuple[tuple[str, str], ...] = (
    (f"{_TS}.schedule_builder", "Schedule"),
    (f"{_TS}.task", "Task"),
    (f"{_TS}.task_manager", "TaskManager"),
)
MODEL_TYPES: tuple[type, ...] = (ScheduleTree, TaskInfo, TaskSet)
MIMES = ("text/html", "image/svg+xml")

_previous: dict[tuple[str, str, str], Any] = {}
_previous_types: dict[tuple[str, type], Any] = {}
_constexpr_on = False  # this extension holds the range_constexpr switch


def _error_html(exc: BaseException) -> str:
    return (
        "<div style='border:1px solid #c0392b;padding:6px;color:#c0392b'>"
        f"ts-explore could not draw this object: {html.escape(type(exc).__name__)}: "
        f"{html.escape(str(exc))}</div>"
    )


def _bundle(obj: Any) -> dict[str, Any]:
    from .drawings import dependency_graph, schedule_graph
    from ..render.display import graph_mimebundle

    bundle = graph_mimebundle(schedule_graph(obj))
    if type(obj).__name__ == "TaskManager" or isinstance(obj, TaskSet):
        deps = graph_mimebundle(dependency_graph(obj))
        if "text/html" in bundle and "text/html" in deps:
            bundle["text/html"] = deps["text/html"] + bundle["text/html"]
    return bundle


def _formatter(mime: str) -> Callable[[Any], Any]:
    def fmt(obj: Any) -> Any:
        try:
            return _bundle(obj).get(mime)
        except Exception as exc:  # noqa: BLE001 - a display must never raise
            return _error_html(exc) if mime == "text/html" else None

    return fmt


def _problem_html(problem: Problem) -> str:
    return problem.to_html()


def load_ipython_extension(ip: Any) -> None:
    """Register the diagram formatters and turn on range_constexpr for CPU calls (idempotent)."""
    global _constexpr_on
    from ..reader import constexpr

    if not _constexpr_on:
        constexpr.enable()
        _constexpr_on = True
    formatters = ip.display_formatter.formatters
    for mime in MIMES:
        fmt = formatters[mime]
        fn = _formatter(mime)
        for module, name in TS_TYPES:
            key = (mime, module, name)
            prev = fmt.for_type_by_name(module, name, fn)
            if key not in _previous:
                _previous[key] = prev
        for cls in MODEL_TYPES:
            prev = fmt.for_type(cls, fn)
            if (mime, cls) not in _previous_types:
                _previous_types[(mime, cls)] = prev
    html_fmt = formatters["text/html"]
    if (("text/html", Problem)) not in _previous_types:
        _previous_types[("text/html", Problem)] = html_fmt.for_type(Problem, _problem_html)
    else:
        html_fmt.for_type(Problem, _problem_html)


def unload_ipython_extension(ip: Any) -> None:
    """Put back the printers that were registered before loading; range_constexpr is the DSL's again."""
    global _constexpr_on
    from ..reader import constexpr

    if _constexpr_on:
        constexpr.disable()
        _constexpr_on = False
    formatters = ip.display_formatter.formatters
    for (mime, module, name), prev in list(_previous.items()):
        fmt = formatters[mime]
        fmt.pop(f"{module}.{name}", None)
        for cls in list(fmt.type_printers):
            if cls.__module__ == module and cls.__name__ == name:
                del fmt.type_printers[cls]
        if prev is not None:
            fmt.for_type_by_name(module, name, prev)
    for (mime, cls), prev in list(_previous_types.items()):
        fmt = formatters[mime]
        fmt.type_printers.pop(cls, None)
        if prev is not None:
            fmt.for_type(cls, prev)
    _previous.clear()
    _previous_types.clear()


__all__ = ["load_ipython_extension", "unload_ipython_extension"]
