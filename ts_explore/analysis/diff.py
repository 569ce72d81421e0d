"""What changed between two schedules: steps added, removed or moved.

Pure: compares our frozen model (``ScheduleTree`` / ``TaskSet``), so the
explorer can show how a knob changed the schedule relative to the last
configuration that verified. Steps are matched by what they do (resource,
stage, work method, Constexpr literals), not by uid, because inserting one
step renumbers every later uid. The two step sequences are aligned with
``difflib``; a step present on both sides counts as *moved* when it left the
alignment (its order changed) or now sits in a different block (the work-tile
loop itself does not count: gaining or losing the queue is one note per task).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum
from typing import Iterator

from ..model import Block, DomainLoop, Node, ScheduleTree, Step, TaskSet, WorkTileLoop


class Change(str, Enum):
    """How one step differs from the baseline."""

    ADDED = "added"
    REMOVED = "removed"
    MOVED = "moved"
    SAME = "same"


StepKey = tuple[str, str, str, tuple[tuple[str, str], ...]]  # resource, stage, method, literals


def step_key(step: Step) -> StepKey:
    """What a step does, independent of its uid."""
    return (step.resource, step.stage.value, step.method, tuple((lit.name, lit.text) for lit in step.literals))


def _container(node: Node) -> str:
    if isinstance(node, WorkTileLoop):
        return "work_tile_loop"
    if isinstance(node, DomainLoop):
        return "domain_loop"
    if isinstance(node, Block):
        return node.title
    return ""


def placed_steps(tree: ScheduleTree) -> list[tuple[Step, str]]:
    """Every step in execution order with its place: the chain of enclosing blocks."""
    out: list[tuple[Step, str]] = []

    def walk(nodes: tuple[Node, ...], path: tuple[str, ...]) -> None:
        for node in nodes:
            if isinstance(node, Step):
                out.append((node, " > ".join(path) or "top level"))
            else:
                walk(node.body, (*path, _container(node)))

    walk(tree.body, ())
    return out


@dataclass(frozen=True)
class StepChange:
    """One step of a task and how it changed; uids refer to the old and new trees."""

    change: Change
    title: str  # resource.method
    stage: str
    old_uid: int | None
    new_uid: int | None
    old_place: str | None
    new_place: str | None

    @property
    def description(self) -> str:
        """A one-line human account of the change."""
        if self.change is Change.ADDED:
            return f"+ {self.title} ({self.stage}) in {self.new_place}"
        if self.change is Change.REMOVED:
            return f"- {self.title} ({self.stage}) from {self.old_place}"
        if self.change is Change.MOVED:
            if self.old_place != self.new_place:
                return f"~ {self.title} ({self.stage}) moved from {self.old_place} to {self.new_place}"
            return f"~ {self.title} ({self.stage}) changed order in {self.new_place}"
        return f"  {self.title} ({self.stage})"


@dataclass(frozen=True)
class TaskDiff:
    """The changes inside one task (matched by name); ``status`` is added, removed, changed or same."""

    task: str
    status: str
    steps: tuple[StepChange, ...]
    notes: tuple[str, ...] = ()  # loop bounds, queue kind, skip predicate changes

    def of(self, change: Change) -> tuple[StepChange, ...]:
        return tuple(s for s in self.steps if s.change is change)

    def change_of(self, new_uid: int) -> Change:
        """How the step ``new_uid`` of the new tree changed (SAME when it did not)."""
        for s in self.steps:
            if s.new_uid == new_uid:
                return s.change
        return Change.SAME

    @property
    def changed(self) -> bool:
        return self.status != "same"


@dataclass(frozen=True)
class ScheduleDiff:
    """Per-task changes from a baseline (the last safe configuration) to the current schedule."""

    tasks: tuple[TaskDiff, ...]
    notes: tuple[str, ...] = ()  # resource changes: pipeline stages, queue kind, added/removed resources

    def count(self, change: Change) -> int:
        return sum(len(t.of(change)) for t in self.tasks)

    @property
    def is_empty(self) -> bool:
        return not self.notes and not any(t.changed for t in self.tasks)

    def task(self, name: str) -> TaskDiff:
        for t in self.tasks:
            if t.task == name:
                return t
        raise KeyError(f"no task named {name!r} in this diff")

    def summary(self) -> str:
        """E.g. ``+3 added, -1 removed, ~2 moved``, or ``no changes``."""
        if self.is_empty:
            return "no changes"
        parts = [
            f"+{self.count(Change.ADDED)} added",
            f"-{self.count(Change.REMOVED)} removed",
            f"~{self.count(Change.MOVED)} moved",
        ]
        tasks_added = [t.task for t in self.tasks if t.status == "added"]
        tasks_removed = [t.task for t in self.tasks if t.status == "removed"]
        if tasks_added:
            parts.append("new task " + ", ".join(tasks_added))
        if tasks_removed:
            parts.append("task gone: " + ", ".join(tasks_removed))
        other = sum(len(t.notes) for t in self.tasks) + len(self.notes)
        if other:
            parts.append(f"{other} loop/resource change{'s' if other > 1 else ''}")
        return ", ".join(parts)

    def lines(self) -> Iterator[str]:
        """Readable lines: one per changed step and per context note."""
        for note in self.notes:
            yield f"* {note}"
        for t in self.tasks:
            if not t.changed:
                continue
            yield f"{t.task} ({t.status})"
            for note in t.notes:
                yield f"  * {note}"
            for s in t.steps:
                if s.change is not Change.SAME:
                    yield f"  {s.description}"


def _context(tree: ScheduleTree) -> dict[str, str]:
    out: dict[str, str] = {}
    wtl = tree.work_tile_loop()
    if wtl is not None:
        out["work tile loop"] = wtl.title
    loop = tree.domain_loop()
    if loop is not None:
        trip = loop.trip_count()
        out["domain loop"] = loop.title + (f" [{trip} iterations]" if trip is not None else "")
    return out


def _notes(old: ScheduleTree, new: ScheduleTree) -> tuple[str, ...]:
    before, after = _context(old), _context(new)
    notes = []
    for what in sorted(set(before) | set(after)):
        a, b = before.get(what), after.get(what)
        if a != b:
            notes.append(f"{what}: {a or 'none'} -> {b or 'none'}")
    return tuple(notes)


def _comparable(place: str) -> str:
    """A place without the enclosing work-tile loop: adding or removing the queue is noted once per task,
    not as a move of every step."""
    parts = [p for p in place.split(" > ") if p != "work_tile_loop"]
    return " > ".join(parts) or "top level"


def _change(change: Change, old: tuple[Step, str] | None, new: tuple[Step, str] | None) -> StepChange:
    step = (new or old)[0]  # type: ignore[index]
    return StepChange(
        change=change,
        title=step.title,
        stage=step.stage.value,
        old_uid=old[0].uid if old else None,
        new_uid=new[0].uid if new else None,
        old_place=old[1] if old else None,
        new_place=new[1] if new else None,
    )


def diff_trees(old: ScheduleTree | None, new: ScheduleTree | None, task: str = "") -> TaskDiff:
    """Align two schedule trees step by step (``None`` on one side: the task was added or removed)."""
    name = task or (new or old).name  # type: ignore[union-attr]
    if old is None or new is None:
        side = new if old is None else old
        assert side is not None
        change = Change.ADDED if old is None else Change.REMOVED
        placed = placed_steps(side)
        steps = tuple(_change(change, None if old is None else p, p if old is None else None) for p in placed)
        return TaskDiff(name, change.value, steps)

    a, b = placed_steps(old), placed_steps(new)
    ka, kb = [step_key(s) for s, _ in a], [step_key(s) for s, _ in b]
    matcher = difflib.SequenceMatcher(a=ka, b=kb, autojunk=False)
    pairs: dict[int, int] = {}  # new index -> old index, aligned in order
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            pairs[block.b + k] = block.a + k
    old_left = [i for i in range(len(a)) if i not in set(pairs.values())]
    moved: dict[int, int] = {}  # new index -> old index, matched out of order
    for j in range(len(b)):
        if j in pairs:
            continue
        hit = next((i for i in old_left if ka[i] == kb[j]), None)
        if hit is not None:
            moved[j] = hit
            old_left.remove(hit)

    steps: list[StepChange] = []
    for j, placed in enumerate(b):
        if j in pairs:
            old_placed = a[pairs[j]]
            change = Change.SAME if _comparable(old_placed[1]) == _comparable(placed[1]) else Change.MOVED
            steps.append(_change(change, old_placed, placed))
        elif j in moved:
            steps.append(_change(Change.MOVED, a[moved[j]], placed))
        else:
            steps.append(_change(Change.ADDED, None, placed))
    steps.extend(_change(Change.REMOVED, a[i], None) for i in old_left)
    notes = _notes(old, new)
    status = "changed" if notes or any(s.change is not Change.SAME for s in steps) else "same"
    return TaskDiff(name, status, tuple(steps), notes)


def diff_task_sets(old: TaskSet, new: TaskSet) -> ScheduleDiff:
    """Per-task diffs, tasks matched by name; new tasks first in their new order, then removed ones."""
    old_by_name = {t.name: t for t in old.tasks}
    new_names = {t.name for t in new.tasks}
    out = [
        diff_trees(old_by_name[t.name].schedule if t.name in old_by_name else None, t.schedule, t.name)
        for t in new.tasks
    ]
    out.extend(diff_trees(t.schedule, None, t.name) for t in old.tasks if t.name not in new_names)
    return ScheduleDiff(tuple(out), _resource_notes(old, new))


def _resource_notes(old: TaskSet, new: TaskSet) -> tuple[str, ...]:
    before = {r.name: r.subtitle for r in old.resources}
    after = {r.name: r.subtitle for r in new.resources}
    notes = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        if a is None:
            notes.append(f"new resource {name}: {b}")
        elif b is None:
            notes.append(f"resource {name} removed (was {a})")
        else:
            notes.append(f"resource {name}: {a} -> {b}")
    return tuple(notes)


__all__ = [
    "Change",
    "ScheduleDiff",
    "StepChange",
    "TaskDiff",
    "diff_task_sets",
    "diff_trees",
    "placed_steps",
    "step_key",
]
