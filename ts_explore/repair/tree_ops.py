"""Pure operations on a frozen :class:`~ts_explore.model.ScheduleTree`: find, cut and place nodes, renumber.

Edits (:mod:`ts_explore.repair.edits`) are written with these, so each edit
kind is a few lines of model -> model code. A node is found by the uid of a
step it is or contains; a *place* is a container path and an index in it.
:func:`normalise` gives the tree TS's lowering and ts-explore's capture would
give back (steps numbered in execution order, call indices recounted per
section, empty blocks dropped, neighbouring blocks of the same guard merged).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterable

from ..model import Block, BlockKind, DomainLoop, ExpandedStep, Family, Node, ScheduleTree, Section, Stage, Step, TaskInfo
from ..model.schedule import children

Path = tuple[int, ...]  # indices from the tree's body down to a node


def path_of(nodes: tuple[Node, ...], uid: int) -> Path | None:
    """The path to step ``uid`` (None when the tree has no such step).

    >>> s = Step(7, "r", Stage.CONSUMER_WAIT, None, 0, Section.LOOP, Family.WAIT)
    >>> path_of((Block(BlockKind.FIRST_ITER, (s,)),), 7)
    (0, 0)
    """
    for i, node in enumerate(nodes):
        if isinstance(node, Step):
            if node.uid == uid:
                return (i,)
            continue
        inner = path_of(children(node), uid)
        if inner is not None:
            return (i, *inner)
    return None


def node_at(nodes: tuple[Node, ...], path: Path) -> Node:
    node = nodes[path[0]]
    return node if len(path) == 1 else node_at(children(node), path[1:])


def replace_at(nodes: tuple[Node, ...], path: Path, new: tuple[Node, ...]) -> tuple[Node, ...]:
    """``nodes`` with the node at ``path`` replaced by ``new`` (zero or more nodes)."""
    i = path[0]
    if len(path) == 1:
        return nodes[:i] + new + nodes[i + 1:]
    node = nodes[i]
    body = replace_at(children(node), path[1:], new)
    return nodes[:i] + (dataclasses.replace(node, body=body),) + nodes[i + 1:]


def insert_at(nodes: tuple[Node, ...], container: Path, index: int, new: tuple[Node, ...]) -> tuple[Node, ...]:
    """``nodes`` with ``new`` inserted at ``index`` of the container at ``container`` (() = the top)."""
    if not container:
        return nodes[:index] + new + nodes[index:]
    i = container[0]
    node = nodes[i]
    body = insert_at(children(node), container[1:], index, new)
    return nodes[:i] + (dataclasses.replace(node, body=body),) + nodes[i + 1:]


def step_uids(nodes: Iterable[Node]) -> list[int]:
    out: list[int] = []
    for node in nodes:
        if isinstance(node, Step):
            out.append(node.uid)
        else:
            out.extend(step_uids(children(node)))
    return out


def next_uid(tree: ScheduleTree) -> int:
    """A uid no step of ``tree`` has (for inserted steps)."""
    return max((s.uid for s in tree.steps()), default=-1) + 1


def enclosing(nodes: tuple[Node, ...], path: Path) -> list[Node]:
    """The containers of the node at ``path``, outermost first."""
    out: list[Node] = []
    for k in range(1, len(path)):
        out.append(node_at(nodes, path[:k]))
    return out


# -- normal form -------------------------------------------------------------------------

def _clean(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """Drop empty blocks and merge neighbouring blocks of the same guard (capture draws them as one)."""
    out: list[Node] = []
    for node in nodes:
        if not isinstance(node, Step):
            node = dataclasses.replace(node, body=_clean(children(node)))
            if isinstance(node, Block) and not node.body:
                continue
        if out and isinstance(node, Block) and isinstance(out[-1], Block) and _same_guard(out[-1], node):
            prev = out.pop()
            node = dataclasses.replace(prev, body=_clean(prev.body + node.body))
        out.append(node)
    return tuple(out)


def _same_guard(a: Block, b: Block) -> bool:
    """TS lowers both blocks to equal guards (a condition is its key, whichever step produced the value)."""
    def cond(block: Block) -> Any:
        return None if block.condition is None else dataclasses.replace(block.condition, step=None)

    return (a.kind, a.period, a.start, cond(a)) == (b.kind, b.period, b.start, cond(b))


class _Numbering:
    """Renumber steps in execution order; recount call indices per (resource, stage, section)."""

    def __init__(self) -> None:
        self.uid = 0
        self.calls: Counter[tuple[str, str, Section]] = Counter()
        self.new_uid: dict[int, int] = {}
        self.seen_loop = False

    def nodes(self, nodes: tuple[Node, ...], in_loop: bool) -> tuple[Node, ...]:
        out: list[Node] = []
        for node in nodes:
            if isinstance(node, Step):
                section = Section.LOOP if in_loop else Section.TAIL if self.seen_loop else Section.HEAD
                key = (node.resource, node.stage.value, section)
                step = dataclasses.replace(node, uid=self.uid, call_index=self.calls[key], section=section)
                self.calls[key] += 1
                self.new_uid[node.uid] = self.uid
                self.uid += 1
                out.append(step)
            elif isinstance(node, DomainLoop):
                self.seen_loop = True
                out.append(dataclasses.replace(node, body=self.nodes(node.body, True)))
            else:
                out.append(dataclasses.replace(node, body=self.nodes(children(node), in_loop)))
        return tuple(out)


def normalise(tree: ScheduleTree) -> ScheduleTree:
    """The tree TS would lower and ts-explore capture back (see the module docstring)."""
    body = _clean(tree.body)
    numbering = _Numbering()
    body = numbering.nodes(body, False)
    m = numbering.new_uid
    routes = tuple(sorted(
        (dataclasses.replace(r, source=m[r.source], destination=m[r.destination])
         for r in tree.routes if r.source in m and r.destination in m),
        key=lambda r: (r.source, r.destination, r.argument),
    ))

    seen: list[Step] = []

    def producer(cond: Any) -> int | None:
        """The last step before the block that returns the condition's value (as capture finds it)."""
        for step in reversed(seen):
            if step.resource == cond.resource and (step.label or step.stage.value) == cond.method \
                    and cond.variable in step.returns:
                return step.uid
        return None

    def fix(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
        out: list[Node] = []
        for node in nodes:
            if isinstance(node, Block) and node.condition is not None and node.condition.resource is not None:
                node = dataclasses.replace(node, condition=dataclasses.replace(node.condition,
                                                                               step=producer(node.condition)))
            if isinstance(node, Step):
                seen.append(node)
            else:
                node = dataclasses.replace(node, body=fix(children(node)))
            out.append(node)
        return tuple(out)

    return dataclasses.replace(tree, body=fix(body), routes=routes)


def normal_uids(tree: ScheduleTree) -> dict[int, int]:
    """Each step's uid in ``tree`` -> its uid in :func:`normalise` of it."""
    numbering = _Numbering()
    numbering.nodes(_clean(tree.body), False)
    return dict(numbering.new_uid)


def _guard_text(block: Block | None) -> str:
    if block is None:
        return "Always"
    if block.kind is BlockKind.FIRST_ITER:
        return "FirstIter"
    if block.kind is BlockKind.LAST_ITER:
        return "LastIter"
    if block.kind is BlockKind.EVERY:
        return f"Every({block.period}, {block.start})"
    return block.kind.value


def expanded_of(tree: ScheduleTree) -> tuple[ExpandedStep, ...]:
    """The flat head/loop/tail entries TS lowers ``tree`` to (head, then loop, then tail)."""
    entries: list[tuple[Section, ExpandedStep]] = []

    def walk(nodes: tuple[Node, ...], guard: Block | None) -> None:
        for node in nodes:
            if isinstance(node, Step):
                g = _guard_text(guard) if node.section is Section.LOOP else "Always"
                entries.append((node.section, ExpandedStep(node.resource, node.stage, node.call_index, node.section,
                                                           g, node.label)))
            elif isinstance(node, Block) and node.kind is not BlockKind.SKIPPABLE:
                walk(node.body, node)
            else:
                walk(children(node), guard)

    walk(tree.body, None)
    order = {Section.HEAD: 0, Section.LOOP: 1, Section.TAIL: 2}
    return tuple(e for _, e in sorted(entries, key=lambda p: order[p[0]]))


def normalise_task(info: TaskInfo) -> TaskInfo:
    """``info`` with its tree in normal form and its flat entries derived from it."""
    tree = normalise(info.schedule)
    return dataclasses.replace(info, schedule=tree, expanded=expanded_of(tree))


def work_steps(tree: ScheduleTree) -> Counter[tuple[str, str | None, str]]:
    """The work calls of a tree, counted by (resource, label, stage): a repair may move these, never drop one."""
    return Counter((s.resource, s.label, s.stage.value) for s in tree.steps()
                   if s.stage.value.endswith("Work"))


__all__ = [
    "Path",
    "enclosing",
    "expanded_of",
    "insert_at",
    "next_uid",
    "node_at",
    "normalise",
    "normal_uids",
    "normalise_task",
    "path_of",
    "replace_at",
    "step_uids",
    "work_steps",
]
