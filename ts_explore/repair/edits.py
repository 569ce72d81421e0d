"""The edit language of repairs: small frozen edits of a captured task set, each a pure model -> model function.

An edit names steps by their uid in the task's :class:`~ts_explore.model.ScheduleTree`
(uids stay stable while edits are applied, inserted steps get fresh ones), so
two edits compose. ``apply`` raises :class:`EditError` when the edit does not
fit the schedule (no such step, a slice that is not contiguous ...); the
search skips such candidates. ``sentence`` says the edit in the kernel
author's words. A new edit kind is one class with ``apply``, ``sentence``,
``touched`` and, when it adds a stage, ``adds_stage``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ..model import Block, DomainLoop, Family, Node, ResourceInfo, ScheduleTree, Stage, Step
from ..model import TaskInfo, TaskSet
from .tree_ops import insert_at, next_uid, node_at, path_of, replace_at


class EditError(ValueError):
    """The edit does not fit this schedule (the search skips it)."""


class Edit(Protocol):
    """What every edit kind provides."""

    kind: ClassVar[str]

    def apply(self, task_set: TaskSet) -> TaskSet: ...

    def sentence(self, task_set: TaskSet) -> str: ...

    def touched(self) -> tuple[tuple[str, int], ...]: ...


# -- helpers ------------------------------------------------------------------------------

def call_text(step: Step) -> str:
    """``smem.release()``: a step as the user typed it."""
    return f"{step.resource}.{step.method}()"


def _info(task_set: TaskSet, task: str) -> TaskInfo:
    try:
        return task_set.task(task)
    except KeyError:
        raise EditError(f"no task named {task!r}") from None


def _step(tree: ScheduleTree, uid: int) -> Step:
    try:
        return tree.step(uid)
    except KeyError as exc:
        raise EditError(str(exc)) from None


def with_tree(task_set: TaskSet, task: str, tree: ScheduleTree) -> TaskSet:
    """``task_set`` with one task's schedule replaced."""
    tasks = tuple(dataclasses.replace(t, schedule=tree) if t.name == task else t for t in task_set.tasks)
    return dataclasses.replace(task_set, tasks=tasks)


def _family(resource: ResourceInfo, stage: Stage) -> Family:
    if resource.is_work_queue:
        return Family.QUEUE
    if resource.is_barrier:
        return Family.BARRIER
    return {Stage.PRODUCER_ACQUIRE: Family.ACQUIRE, Stage.PRODUCER_TRY_ACQUIRE: Family.ACQUIRE,
            Stage.PRODUCER_COMMIT: Family.COMMIT, Stage.CONSUMER_WAIT: Family.WAIT,
            Stage.CONSUMER_TRY_WAIT: Family.WAIT, Stage.CONSUMER_RELEASE: Family.RELEASE}.get(stage, Family.AUX)


def _slice_paths(tree: ScheduleTree, uids: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Paths of contiguous sibling steps ``uids`` (in order), or EditError."""
    paths = [path_of(tree.body, u) for u in uids]
    if not paths or any(p is None for p in paths):
        raise EditError(f"no step #{next(u for u, p in zip(uids, paths) if p is None)}" if paths else "no steps")
    parents = {p[:-1] for p in paths}  # type: ignore[index]
    idx = [p[-1] for p in paths]  # type: ignore[index]
    if len(parents) != 1 or idx != list(range(idx[0], idx[0] + len(idx))):
        raise EditError("the steps to move are not next to each other in one block")
    return paths  # type: ignore[return-value]


def place_text(tree: ScheduleTree, target: int, after: bool, level: int) -> str:
    """Where a place is, in words: ``after dst.set_item()``, ``after the domain loop``, ``at the end of the loop body``."""
    path = path_of(tree.body, target)
    if path is None:
        raise EditError(f"no step #{target}")
    if level == 0:
        return f"{'after' if after else 'before'} `{call_text(_step(tree, target))}`"
    if level > len(path) - 1:
        raise EditError("the place is outside the schedule")
    node = node_at(tree.body, path[: len(path) - level])
    name = ("the domain loop" if isinstance(node, DomainLoop) else
            "the work-tile loop" if not isinstance(node, Block) else f"the {node.title} block")
    return f"{'after' if after else 'before'} {name}"


def _place(tree: ScheduleTree, body: tuple[Node, ...], target: int, after: bool, level: int
           ) -> tuple[tuple[int, ...], int]:
    path = path_of(body, target)
    if path is None:
        raise EditError(f"no step #{target}")
    if level > len(path) - 1:
        raise EditError("the place is outside the schedule")
    anchor = path[: len(path) - level]
    return anchor[:-1], anchor[-1] + (1 if after else 0)


# -- edit kinds ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MoveSteps:
    """Move contiguous steps of one task next to another step, or out of the ``level``-th block around ``target``.

    ``level=0``: before/after step ``target``; ``level=1``: before/after the
    block or loop directly holding ``target``; and so on outwards.
    """

    task: str
    uids: tuple[int, ...]
    target: int
    after: bool = True
    level: int = 0
    kind: ClassVar[str] = "move"

    def apply(self, task_set: TaskSet) -> TaskSet:
        tree = _info(task_set, self.task).schedule
        if self.level == 0 and self.target in self.uids:
            raise EditError("a step cannot move next to itself")
        paths = _slice_paths(tree, self.uids)
        moved = tuple(node_at(tree.body, p) for p in paths)
        body = tree.body
        if self.level:
            container, index = _place(tree, body, self.target, self.after, self.level)
        for p in reversed(paths):
            body = replace_at(body, p, ())
        if not self.level:
            container, index = _place(tree, body, self.target, self.after, 0)
        else:  # removing deeper siblings does not shift the anchor; a removal in the same container does
            shift = sum(1 for p in paths if p[:-1] == container and p[-1] < index)
            index -= shift
        new = dataclasses.replace(tree, body=insert_at(body, container, index, moved))
        if new.body == tree.body:
            raise EditError("the move changes nothing")
        return with_tree(task_set, self.task, new)

    def sentence(self, task_set: TaskSet) -> str:
        tree = _info(task_set, self.task).schedule
        what = ", ".join(call_text(_step(tree, u)) for u in self.uids)
        return f"task `{self.task}`: move `{what}` {place_text(tree, self.target, self.after, self.level)}"

    def touched(self) -> tuple[tuple[str, int], ...]:
        return tuple((self.task, u) for u in self.uids)


@dataclass(frozen=True)
class MoveOutOfSkippable(MoveSteps):
    """Move queue bookkeeping (or any steps) out of the ``skippable()`` block that holds them, right after it."""

    kind: ClassVar[str] = "move-out-of-skippable"

    def sentence(self, task_set: TaskSet) -> str:
        tree = _info(task_set, self.task).schedule
        what = ", ".join(call_text(_step(tree, u)) for u in self.uids)
        return (f"task `{self.task}`: `{what}` must run on every tile, skipped or not: move it out of "
                f"`skippable()`, {place_text(tree, self.target, self.after, self.level)}")


@dataclass(frozen=True)
class InsertStep:
    """Insert a pipeline op (``release``, ``commit``, ``wait``, ``acquire``) at a place of one task."""

    task: str
    resource: str
    stage: Stage
    target: int
    after: bool = True
    level: int = 0
    kind: ClassVar[str] = "insert"

    def new_step(self, task_set: TaskSet) -> Step:
        tree = _info(task_set, self.task).schedule
        try:
            res = task_set.resource(self.resource)
        except KeyError:
            raise EditError(f"no resource named {self.resource!r}") from None
        return Step(next_uid(tree), self.resource, self.stage, None, 0, _step(tree, self.target).section,
                    _family(res, self.stage))

    def apply(self, task_set: TaskSet) -> TaskSet:
        tree = _info(task_set, self.task).schedule
        container, index = _place(tree, tree.body, self.target, self.after, self.level)
        new = dataclasses.replace(tree, body=insert_at(tree.body, container, index, (self.new_step(task_set),)))
        return with_tree(task_set, self.task, new)

    def sentence(self, task_set: TaskSet) -> str:
        tree = _info(task_set, self.task).schedule
        call = f"{self.resource}.{self.stage.method}()"
        return f"task `{self.task}`: insert `{call}` {place_text(tree, self.target, self.after, self.level)}"

    def touched(self) -> tuple[tuple[str, int], ...]:
        return ((self.task, -1),)


@dataclass(frozen=True)
class RemoveStep:
    """Remove one pipeline op (never a work call: a fix must not drop the producer's work)."""

    task: str
    uid: int
    kind: ClassVar[str] = "remove"

    def apply(self, task_set: TaskSet) -> TaskSet:
        tree = _info(task_set, self.task).schedule
        step = _step(tree, self.uid)
        if step.label is not None or step.stage.value.endswith("Work"):
            raise EditError(f"{call_text(step)} is work: a repair never removes work")
        path = path_of(tree.body, self.uid)
        assert path is not None
        return with_tree(task_set, self.task, dataclasses.replace(tree, body=replace_at(tree.body, path, ())))

    def sentence(self, task_set: TaskSet) -> str:
        step = _step(_info(task_set, self.task).schedule, self.uid)
        return f"task `{self.task}`: remove the extra `{call_text(step)}`"

    def touched(self) -> tuple[tuple[str, int], ...]:
        return ((self.task, self.uid),)


def apply_all(edits: tuple[Edit, ...], task_set: TaskSet) -> TaskSet:
    """Apply edits in order."""
    for edit in edits:
        task_set = edit.apply(task_set)
    return task_set


def adds_stage(edit: Edit) -> bool:
    return bool(getattr(edit, "adds_stage", False))


__all__ = [
    "Edit",
    "EditError",
    "InsertStep",
    "MoveOutOfSkippable",
    "MoveSteps",
    "RemoveStep",
    "adds_stage",
    "apply_all",
    "call_text",
    "place_text",
    "with_tree",
]
