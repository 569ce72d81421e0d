"""Reading a saved timeline back: :func:`load_trace` (Chrome trace-event JSON written by ``Timeline.save``).

A trace file is shared and edited by hand, so anything else (a binary file,
JSON of another schema, an event missing a field or holding a stage no
version wrote) is refused with a :class:`TraceFileError` that names the file,
the event and what is wrong, never a bare ``KeyError`` or ``TypeError``.

>>> timeline_from_chrome({"traceEvents": [{"ph": "X", "name": "smem.wait", "args": {"step": 1, "start_ns": 0}}]})
Traceback (most recent call last):
...
ts_explore.model.trace_file.TraceFileError: traceEvents[0] (smem.wait) has no args.task
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .schedule import Family, Section, Stage
from .timeline import FORMAT, TaskWarps, Timeline, TimelineEvent, TraceSpec

SAVED_BY = "pass a file written by Timeline.save (or a launch's timeline.save(path))"


class TraceFileError(ValueError):
    """A trace document that is not a timeline ts-explore wrote; the message says where and what."""


def _field(where: str, holder: dict[str, Any], key: str, convert: Any, prefix: str = "") -> Any:
    """``convert(holder[key])``, or a TraceFileError naming the event and the field."""
    if key not in holder:
        raise TraceFileError(f"{where} has no {prefix}{key}")
    try:
        return convert(holder[key])
    except (TypeError, ValueError):
        raise TraceFileError(f"{where}: {prefix}{key} is {holder[key]!r}, not a {_kind(convert)}") from None


def _kind(convert: Any) -> str:
    return {int: "whole number", float: "number", str: "string"}.get(convert, f"{convert.__name__} value")


def _event(i: int, e: dict[str, Any]) -> TimelineEvent:
    where = f"traceEvents[{i}] ({e.get('name', 'unnamed')})"
    a = e["args"]
    start = _field(where, a, "start_ns", int, "args.") if "start_ns" in a else round(
        _field(where, e, "ts", float) * 1e3)
    end = _field(where, a, "end_ns", int, "args.") if "end_ns" in a else start + round(
        float(_field(where, {"dur": e.get("dur", 0)}, "dur", float)) * 1e3)
    iteration = a.get("iteration")
    return TimelineEvent(
        task=_field(where, a, "task", str, "args."), cta=_field(where, {"pid": e.get("pid", 0)}, "pid", int),
        warp=_field(where, {"tid": e.get("tid", 0)}, "tid", int), step=_field(where, a, "step", int, "args."),
        label=_field(where, e, "name", str), stage=_field(where, a, "stage", Stage, "args."),
        family=_field(where, a, "family", Family, "args."), section=_field(where, a, "section", Section, "args."),
        iteration=None if iteration is None else _field(where, a, "iteration", int, "args."),
        tile=_field(where, {"tile": a.get("tile", 0)}, "tile", int, "args."), start_ns=start, end_ns=end)


def _tasks_from_events(events: Iterable[TimelineEvent]) -> tuple[TaskWarps, ...]:
    spans: dict[str, list[int]] = {}
    for e in events:
        spans.setdefault(e.task, []).append(e.warp)
    return tuple(TaskWarps(name, min(w), max(w) + 1) for name, w in sorted(spans.items(), key=lambda kv: min(kv[1])))


def timeline_from_chrome(doc: Any) -> Timeline:
    """The :class:`Timeline` a document written by ``Timeline.to_chrome`` holds; TraceFileError otherwise."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceFileError("it is not a Chrome trace-event document (no 'traceEvents' list)")
    other = doc.get("otherData") or {}
    if not isinstance(other, dict):
        raise TraceFileError(f"otherData is {type(other).__name__}, not an object")
    events = []
    for i, e in enumerate(doc["traceEvents"]):
        if not isinstance(e, dict):
            raise TraceFileError(f"traceEvents[{i}] is {type(e).__name__}, not an event object")
        args = e.get("args") or {}
        if e.get("ph") == "X" and isinstance(args, dict) and "step" in args:
            events.append(_event(i, e))
    if not events and other.get("format") != FORMAT:
        raise TraceFileError("the trace holds no ts-explore step events (args.step)")
    try:
        spec = TraceSpec(**other["spec"]) if "spec" in other else TraceSpec()
    except (TypeError, ValueError) as exc:
        raise TraceFileError(f"otherData.spec is not a trace spec ({exc})") from None
    try:
        tasks = tuple(TaskWarps(str(n), int(a), int(b)) for n, a, b in other.get("tasks", ()))
        lost = tuple(tuple(int(v) for v in x) for x in other.get("lost", ()))
        numbers = {"origin_ns": int(other.get("origin_ns", 0)), "undecoded": int(other.get("undecoded", 0))}
    except (TypeError, ValueError) as exc:
        raise TraceFileError(f"otherData holds a malformed tasks, lost, origin_ns or undecoded entry ({exc})") \
            from None
    return Timeline(scenario=str(other.get("scenario", "")), events=tuple(events),
                    tasks=tasks or _tasks_from_events(events), spec=spec, device=str(other.get("device", "")),
                    config=str(other.get("config", "")), kernel_ns=other.get("kernel_ns"),
                    lost=lost, **numbers)  # type: ignore[arg-type]


def load_trace(path: str | Path) -> Timeline:
    """Read a timeline written by :meth:`Timeline.save` (Chrome trace-event JSON).

    FileNotFoundError for a missing file; a :class:`TraceFileError` (a
    ValueError) naming the file and what is wrong for anything else.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no trace file at {path}; write one with timeline.save(path)") from None
    except UnicodeDecodeError as exc:
        raise TraceFileError(f"{path} is not a text file (byte {exc.start} is not UTF-8); {SAVED_BY}") from None
    except IsADirectoryError:
        raise TraceFileError(f"{path} is a folder; {SAVED_BY}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(f"{path} is not JSON ({exc.msg} at line {exc.lineno}); {SAVED_BY}") from None
    try:
        return timeline_from_chrome(doc)
    except TraceFileError as exc:
        raise TraceFileError(f"{path}: {exc}; {SAVED_BY}") from None


__all__ = ["TraceFileError", "load_trace", "timeline_from_chrome"]
