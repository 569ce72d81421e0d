"""Edits of guards, loop bounds, pipeline stages and PDL order (the step edits are in :mod:`.edits`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..model import Block, BlockKind, DomainLoop, Node, ResourceInfo, ScheduleTree, Step, TaskSet
from ..model.schedule import children
from .edits import EditError, MoveSteps, _info, _step, call_text, with_tree
from .tree_ops import enclosing, node_at, path_of, replace_at


_GUARDS = {"first_iter": BlockKind.FIRST_ITER, "last_iter": BlockKind.LAST_ITER, "every": BlockKind.EVERY}


@dataclass(frozen=True)
class ChangeGuard:
    """Change the iteration guard around step ``uid``: to another guard, or none (``guard=None``).

    A step under no guard gets a guard block of its own.
    """

    task: str
    uid: int
    guard: str | None  # "first_iter" | "last_iter" | "every" | None
    period: int | None = None
    start: int | None = None
    kind: ClassVar[str] = "guard"

    def _new_block(self, body: tuple[Node, ...]) -> Block:
        if self.guard not in _GUARDS:
            raise EditError(f"unknown guard {self.guard!r}")
        kind = _GUARDS[self.guard]
        if kind is BlockKind.EVERY:
            return Block(kind, body, period=self.period or 2, start=self.start or 0)
        return Block(kind, body)

    def apply(self, task_set: TaskSet) -> TaskSet:
        tree = _info(task_set, self.task).schedule
        path = path_of(tree.body, self.uid)
        if path is None:
            raise EditError(f"no step #{self.uid}")
        outer = enclosing(tree.body, path)
        if not any(isinstance(n, DomainLoop) for n in outer):
            raise EditError("iteration guards only work inside the domain loop")
        parent = outer[-1] if outer else None
        if isinstance(parent, Block) and parent.kind in (BlockKind.FIRST_ITER, BlockKind.LAST_ITER, BlockKind.EVERY):
            new: tuple[Node, ...] = parent.body if self.guard is None else (self._new_block(parent.body),)
            if new == (parent,):
                raise EditError("the guard is already that")
            body = replace_at(tree.body, path[:-1], new)
        else:
            if self.guard is None:
                raise EditError("the step has no iteration guard to remove")
            body = replace_at(tree.body, path, (self._new_block((node_at(tree.body, path),)),))
        return with_tree(task_set, self.task, dataclasses.replace(tree, body=body))

    def _old(self, tree: ScheduleTree) -> Block | None:
        path = path_of(tree.body, self.uid)
        outer = enclosing(tree.body, path) if path else []
        parent = outer[-1] if outer else None
        return parent if isinstance(parent, Block) and parent.kind is not BlockKind.SKIPPABLE else None

    def sentence(self, task_set: TaskSet) -> str:
        tree = _info(task_set, self.task).schedule
        call = call_text(_step(tree, self.uid))
        old = self._old(tree)
        new = "no guard" if self.guard is None else f"`{self._new_block(()).title}`"
        if old is None:
            return f"task `{self.task}`: run `{call}` only under {new}"
        return f"task `{self.task}`: the block around `{call}` runs under `{old.title}`; give it {new}"

    def touched(self) -> tuple[tuple[str, int], ...]:
        return ((self.task, self.uid),)


@dataclass(frozen=True)
class MatchLoopBounds:
    """Give ``task``'s domain loop the bounds of ``partner``'s (mismatched trip counts)."""

    task: str
    partner: str
    kind: ClassVar[str] = "bounds"

    def apply(self, task_set: TaskSet) -> TaskSet:
        mine = _info(task_set, self.task).schedule
        theirs = _info(task_set, self.partner).schedule.domain_loop()
        loop = mine.domain_loop()
        if loop is None or theirs is None:
            raise EditError("both tasks need a domain loop")
        if (loop.start, loop.end, loop.step) == (theirs.start, theirs.end, theirs.step):
            raise EditError("the bounds already match")
        if theirs.trip_count() is None or loop.trip_count() is None:
            raise EditError("only trace-time int bounds can be matched")
        path = _loop_path(mine.body)
        new = dataclasses.replace(loop, start=theirs.start, end=theirs.end, step=theirs.step)
        return with_tree(task_set, self.task, dataclasses.replace(mine, body=replace_at(mine.body, path, (new,))))

    def sentence(self, task_set: TaskSet) -> str:
        mine = _info(task_set, self.task).schedule.domain_loop()
        theirs = _info(task_set, self.partner).schedule.domain_loop()
        assert mine is not None and theirs is not None
        return (f"task `{self.task}` loops {mine.trip_count()} times but `{self.partner}` {theirs.trip_count()}: "
                f"give `{self.task}` the loop `domain_loop({theirs.start.text}, {theirs.end.text}, {theirs.step.text})`")

    def touched(self) -> tuple[tuple[str, int], ...]:
        return ((self.task, -1),)


def _loop_path(nodes: tuple[Node, ...]) -> tuple[int, ...]:
    for i, node in enumerate(nodes):
        if isinstance(node, DomainLoop):
            return (i,)
        if not isinstance(node, Step):
            inner = _loop_path(children(node))
            if inner:
                return (i, *inner)
    return ()


@dataclass(frozen=True)
class AddStage:
    """Give a pipelined resource one more stage (one more slot in flight; costs its per-stage shared memory)."""

    resource: str
    kind: ClassVar[str] = "stage"
    adds_stage: ClassVar[bool] = True

    def apply(self, task_set: TaskSet) -> TaskSet:
        try:
            res = task_set.resource(self.resource)
        except KeyError:
            raise EditError(f"no resource named {self.resource!r}") from None
        if not res.stages:
            raise EditError(f"{self.resource} is not a pipeline")
        new = dataclasses.replace(res, stages=res.stages + 1, smem_bytes=res.smem_bytes + self.bytes_of(res))
        return dataclasses.replace(task_set, resources=tuple(new if r.name == self.resource else r
                                                             for r in task_set.resources))

    @staticmethod
    def bytes_of(res: ResourceInfo) -> int:
        """Shared memory one more stage costs (the resource's bytes per stage)."""
        return res.smem_bytes // res.stages if res.stages else 0

    def sentence(self, task_set: TaskSet) -> str:
        res = task_set.resource(self.resource)
        return (f"give `{self.resource}` one more stage ({res.stages} -> {(res.stages or 0) + 1}, "
                f"+{self.bytes_of(res)} B shared memory)")

    def touched(self) -> tuple[tuple[str, int], ...]:
        return (("", -1),)


@dataclass(frozen=True)
class SwapPdl:
    """Move ``launch_griddep`` after the task's ``wait_griddep`` (or, without one, to the end of the schedule)."""

    task: str
    launch: int
    wait: int | None
    kind: ClassVar[str] = "pdl"

    def _move(self, task_set: TaskSet) -> MoveSteps:
        tree = _info(task_set, self.task).schedule
        if self.wait is not None:
            return MoveSteps(self.task, (self.launch,), self.wait, True, 0)
        last = tree.steps()[-1].uid
        path = path_of(tree.body, last)
        assert path is not None
        return MoveSteps(self.task, (self.launch,), last, True, len(path) - 1)

    def apply(self, task_set: TaskSet) -> TaskSet:
        return self._move(task_set).apply(task_set)

    def sentence(self, task_set: TaskSet) -> str:
        tree = _info(task_set, self.task).schedule
        launch = call_text(_step(tree, self.launch))
        if self.wait is not None:
            return (f"task `{self.task}` lets the next grid launch before it waited for the previous one: "
                    f"move `{launch}` after `{call_text(_step(tree, self.wait))}`")
        return f"task `{self.task}`: move `{launch}` to the end of the schedule, after every wait"

    def touched(self) -> tuple[tuple[str, int], ...]:
        return ((self.task, self.launch),)


__all__ = ["AddStage", "ChangeGuard", "MatchLoopBounds", "SwapPdl"]
