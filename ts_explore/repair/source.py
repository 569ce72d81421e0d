"""The source diff of a repair: the ``@schedule`` function's text with the edit applied, as a unified diff.

Generated from the edit, not from the drawing: each recorded step of the
task is matched to the call statement that recorded it (in order, inside
the same ``with`` blocks), then moves, inserts, removals and loop bounds are
applied to those lines. A function whose body uses Python control flow
(``if``/``for``), or an edit with no place in the function's text (a guard
change, a stage added where the resource is made) raises
:class:`SourceUnavailable` saying which.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..model import DomainLoop, Node, ScheduleTree, Step
from .edits import InsertStep, MoveSteps, RemoveStep
from .structure_edits import MatchLoopBounds, SwapPdl


class SourceUnavailable(ValueError):
    """The repair cannot be written into this function's source; the message says why."""


@dataclass
class _Line:
    text: str
    uid: int | None = None  # the step a call statement recorded (its continuation lines too)
    loop: bool = False  # the ``with domain_loop(...)`` header


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


class _Matcher:
    """Pairs the function's statements with the tree's steps, in order and nesting."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.tags: dict[int, int] = {}  # line index -> step uid
        self.loop_line: int | None = None

    def match(self, stmts: list[ast.stmt], nodes: tuple[Node, ...]) -> None:
        flat = list(nodes)
        i = 0
        for stmt in stmts:
            if i >= len(flat):
                raise SourceUnavailable("the function has more calls than the recorded schedule")
            node = flat[i]
            if isinstance(stmt, ast.With):
                if isinstance(node, Step):
                    raise SourceUnavailable(f"line {stmt.lineno}: a with block where the schedule records a call")
                if isinstance(node, DomainLoop):
                    self.loop_line = stmt.lineno - 1
                self.match(stmt.body, node.body)
            elif isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(stmt.value, ast.Call):
                call = stmt.value.func
                if not isinstance(node, Step) or not isinstance(call, ast.Attribute) or call.attr != node.method:
                    raise SourceUnavailable(f"line {stmt.lineno}: the call does not match the recorded step")
                for k in range(stmt.lineno - 1, (stmt.end_lineno or stmt.lineno)):
                    self.tags[k] = node.uid
            elif isinstance(stmt, ast.Pass):
                continue
            else:
                raise SourceUnavailable(f"line {stmt.lineno}: Python control flow ({type(stmt).__name__}) decides "
                                        "what is recorded; the diff cannot be placed")
            i += 1
        if i != len(flat):
            raise SourceUnavailable("the recorded schedule has steps the function's text does not show")


def _receiver(lines: list[_Line], tree: ScheduleTree, resource: str) -> str:
    for step in tree.steps():
        if step.resource == resource:
            for line in lines:
                if line.uid == step.uid:
                    return line.text.strip().split("=")[-1].strip().split(".")[0]
    raise SourceUnavailable(f"the function never calls a method of {resource}; the inserted call has no receiver")


class _Patch:
    def __init__(self, lines: list[_Line], tree: ScheduleTree) -> None:
        self.lines = lines
        self.tree = tree

    def span(self, uid: int) -> tuple[int, int]:
        idx = [i for i, line in enumerate(self.lines) if line.uid == uid]
        if not idx:
            raise SourceUnavailable(f"step #{uid} has no line in the function")
        return idx[0], idx[-1] + 1

    def block_end(self, header: int) -> int:
        base = _indent(self.lines[header].text)
        end = header + 1
        while end < len(self.lines) and (not self.lines[end].text.strip() or _indent(self.lines[end].text) > base):
            end += 1
        return end

    def enclosing(self, index: int, level: int) -> int:
        """The header line of the ``level``-th with block around line ``index``."""
        want = _indent(self.lines[index].text)
        for _ in range(level):
            index -= 1
            while index >= 0 and (not self.lines[index].text.strip() or _indent(self.lines[index].text) >= want):
                index -= 1
            if index < 0:
                raise SourceUnavailable("the place is outside the function")
            want = _indent(self.lines[index].text)
        return index

    def place(self, target: int, after: bool, level: int) -> tuple[int, int]:
        """(line index to insert at, indentation) for a place next to a step or around its blocks."""
        start, end = self.span(target)
        if level == 0:
            return (end if after else start), _indent(self.lines[start].text)
        header = self.enclosing(start, level)
        return (self.block_end(header) if after else header), _indent(self.lines[header].text)

    def insert(self, at: int, indent: int, moved: list[_Line]) -> None:
        base = min(_indent(line.text) for line in moved if line.text.strip())
        for k, line in enumerate(moved):
            text = " " * indent + line.text[base:] if line.text.strip() else line.text
            self.lines.insert(at + k, _Line(text, line.uid))

    def move(self, edit: MoveSteps) -> None:
        first, _ = self.span(edit.uids[0])
        _, last = self.span(edit.uids[-1])
        at, indent = self.place(edit.target, edit.after, edit.level)
        moved = self.lines[first:last]
        if first <= at < last:
            raise SourceUnavailable("the move's place is inside the moved lines")
        del self.lines[first:last]
        if at > first:
            at -= last - first
        self.insert(at, indent, moved)

    def apply(self, edit: Any, before: Any) -> None:
        if isinstance(edit, SwapPdl):
            edit = edit._move(before)
        if isinstance(edit, MoveSteps):
            self.move(edit)
        elif isinstance(edit, InsertStep):
            at, indent = self.place(edit.target, edit.after, edit.level)
            receiver = _receiver(self.lines, self.tree, edit.resource)
            self.lines.insert(at, _Line(" " * indent + f"{receiver}.{edit.stage.method}()", -1))
        elif isinstance(edit, RemoveStep):
            start, end = self.span(edit.uid)
            del self.lines[start:end]
        elif isinstance(edit, MatchLoopBounds):
            loop = before.task(edit.partner).schedule.domain_loop()
            header = next((i for i, line in enumerate(self.lines) if line.loop), None)
            if header is None or loop is None:
                raise SourceUnavailable("no domain_loop line to change")
            text = self.lines[header].text
            call = text.index("domain_loop(")
            close = text.index(")", call)
            bounds = f"{loop.start.text}, {loop.end.text}, {loop.step.text}"
            self.lines[header] = _Line(text[:call] + f"domain_loop({bounds}" + text[close:], loop=True)
        else:
            raise SourceUnavailable(f"a {edit.kind} edit has no place in the schedule function's text")


def _patched(repair: Any, function: Callable[..., Any], name: str) -> tuple[list[str], list[str], str]:
    """(old lines, new lines, a label naming the file and function) of one schedule function."""
    fn = inspect.unwrap(function)
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        path = inspect.getsourcefile(fn) or "<schedule>"
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(f"inspect cannot get the source of {getattr(fn, '__name__', fn)!r}: {exc}") from exc
    tree = repair.before.task(name).schedule
    func = next((n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        raise SourceUnavailable(f"{getattr(fn, '__name__', fn)!r} is not a def statement")
    raw = source.splitlines()
    matcher = _Matcher(raw)
    matcher.match(func.body, tree.body)
    lines = [_Line(text, matcher.tags.get(i), i == matcher.loop_line) for i, text in enumerate(raw)]
    patch = _Patch(lines, tree)
    model = repair.before
    for edit in repair.edits:
        if getattr(edit, "task", None) == name:
            patch.apply(edit, model)
        model = edit.apply(model)
    return raw, [line.text for line in patch.lines], f"{path} ({fn.__name__})"


def source_diff(repair: Any, functions: Mapping[str, Callable[..., Any]]) -> str:
    """The unified diff of the ``@schedule`` functions (``{task name: function}``) the repair changes.

    Raises :class:`SourceUnavailable` when ``inspect`` cannot get a
    function's source, when its statements do not line up with the recorded
    steps, or when an edit has no place in its text.
    """
    if any(not hasattr(e, "task") for e in repair.edits):
        raise SourceUnavailable("the repair adds a pipeline stage: that is set where the resource is made, not in "
                                "a schedule function")
    out: list[str] = []
    for name in sorted({e.task for e in repair.edits}):
        if name not in functions:
            raise SourceUnavailable(f"no schedule function given for task {name!r}")
        old, new, label = _patched(repair, functions[name], name)
        out += difflib.unified_diff(old, new, label, label + ", repaired", lineterm="")
    return "\n".join(out)


def patched_source(repair: Any, function: Callable[..., Any], task: str) -> str:
    """The repaired text of one task's schedule function (what :func:`source_diff` shows the diff of)."""
    return "\n".join(_patched(repair, function, task)[1]) + "\n"


__all__ = ["SourceUnavailable", "patched_source", "source_diff"]
