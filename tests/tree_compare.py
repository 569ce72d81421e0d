"""Compare schedule trees up to what a Task cannot keep: the schedule's name, empty and adjacent same-kind blocks."""

from __future__ import annotations

from dataclasses import replace

from ts_explore.model import Block, ScheduleTree, Step, WorkTileLoop
from ts_explore.model.schedule import Node


def merged(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """Nodes without empty blocks and with adjacent blocks of the same kind and condition joined (they run the same)."""
    out: list[Node] = []
    for node in nodes:
        if not isinstance(node, Step):
            node = replace(node, body=merged(node.body))
            if isinstance(node, Block) and not node.body:
                continue
        prev = out[-1] if out else None
        if isinstance(node, Block) and isinstance(prev, Block) and _shell(prev) == _shell(node):
            out[-1] = replace(prev, body=prev.body + node.body)
        else:
            out.append(node)
    return tuple(out)


def _shell(block: Block) -> Block:
    """A block without its body and its condition's producer: TS keys a condition by (resource, method, result)."""
    cond = replace(block.condition, step=None) if block.condition is not None else None
    return replace(block, body=(), condition=cond)


def same_tree(recorded: ScheduleTree, rebuilt: ScheduleTree) -> bool:
    """True when a tree rebuilt from a Task shows what the recorded tree shows.

    A persistent task (a WorkQueue in its sources) runs its whole body once per
    work tile whether or not the schedule wrote ``work_tile_loop()``; its
    rebuilt tree always shows the work-tile loop.
    """
    key = lambda r: (r.source, r.destination, r.argument)  # noqa: E731
    body = rebuilt.body
    if len(body) == 1 and isinstance(body[0], WorkTileLoop) and not any(
            isinstance(n, WorkTileLoop) for n in recorded.walk()):
        body = body[0].body
    return merged(recorded.body) == merged(body) and sorted(recorded.routes, key=key) == sorted(
        rebuilt.routes, key=key) and not rebuilt.unrecovered
