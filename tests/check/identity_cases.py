"""Hand-made task sets whose verdict, under TS's state identity, depends on exploration order.

:func:`lingering_entry` builds the issue's first shape with real TS objects:
producers ``A`` and ``B`` share one stage of ``tile0`` (each keeps an
ownership entry; a wait drops only the last one, so the first acquirer's
entry lingers after the consumer ``D`` has read and released), and a
``writer`` fills ``raw1``, which aliases ``tile0``, once ``D`` signals
``sig``. The write races with the lingering entry exactly when the
*other* producer acquired first. ``A`` can only acquire after ``C``
commits ``gate``: TS's breadth-first order meets "B acquired first" at the
merged cursors, the reduced search (which takes ``C``'s commit first)
meets "A acquired first". Under a cursor-keyed identity each search keeps
only the order it met first, so

* ``writer="A"``: TS and the unreduced search report the race, the
  reduced search said SAFE;
* ``writer="B"``: the reduced search reports the race, TS's search misses
  it (a race that is reachable, so ts-explore finds more than TS here).
"""

from __future__ import annotations

import warnings
from typing import Any

from task_set_generator import ASYNC, FLAGS, PLAIN_TILE, TILE, Block, Op, ResourceSpec, TaskSetSpec, TaskSpec


def _block(*ops: tuple[str, str]) -> Block:
    return Block(tuple(Op(r, m) for r, m in ops))


def lingering_entry_spec(writer: str, offset: int = 0) -> TaskSetSpec:
    """The two-producer stage with a later aliasing write by ``writer`` ("A" or "B") at ``offset``."""
    if writer not in ("A", "B"):
        raise ValueError(f"writer must be 'A' or 'B', got {writer!r}")
    resources = (
        ResourceSpec("tile0", TILE, 1, 1, 0),
        ResourceSpec("raw1", PLAIN_TILE, 1, 1, offset),
        ResourceSpec("sig", ASYNC, 1),
        ResourceSpec("gate", ASYNC, 1),
        ResourceSpec("flags", FLAGS),
    )
    produce = (("tile0", "acquire"), ("tile0", "fill"), ("tile0", "commit"))
    late = (("sig", "wait"), ("raw1", "fill"), ("sig", "release"))
    a = TaskSpec("A", 1, head=(_block(("gate", "wait")),), body=(_block(*produce, *(late if writer == "A" else ())),),
                 tail=(_block(("gate", "release")),))
    b = TaskSpec("B", 1, body=(_block(*produce, *(late if writer == "B" else ())),))
    c = TaskSpec("C", 1, head=(_block(("gate", "acquire"), ("gate", "fill"), ("gate", "commit")),),
                 body=(_block(("flags", "flag")),))
    d = TaskSpec("D", 1, body=(_block(("tile0", "wait"), ("tile0", "drain"), ("tile0", "release"),
                                      ("sig", "acquire"), ("sig", "fill"), ("sig", "commit")),))
    return TaskSetSpec(0, resources, (a, b, c, d), intent=f"lingering entry, {writer} writes raw1")


def lingering_entry(writer: str, offset: int = 0) -> list[Any]:
    """Fresh TS tasks of :func:`lingering_entry_spec`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lingering_entry_spec(writer, offset).build()["tasks"]


def gated_consumers_spec(writer: str) -> TaskSetSpec:
    """The issue's second shape: two consumers of one stage signal before they release, ``C1`` behind a gate.

    ``P`` fills ``tile0`` once for consumers ``C1`` and ``C2``; each waits,
    reads, commits ``sig`` and only then releases. ``writer`` ("C1" or
    "C2") then waits ``sig`` (both commits) and fills ``raw1``, which aliases
    ``tile0``. A wait drops the *last* entry, so the consumer that waited
    second keeps the only entry: the write races with it exactly when the
    other consumer (not the writer) waited second and has not released yet.
    ``C1`` waits a ``gate`` that ``G`` commits in its HEAD, so TS's
    breadth-first order and the reduced search meet the two wait orders
    in different order.
    """
    if writer not in ("C1", "C2"):
        raise ValueError(f"writer must be 'C1' or 'C2', got {writer!r}")
    resources = (
        ResourceSpec("tile0", TILE, 1, 2, 0),
        ResourceSpec("raw1", PLAIN_TILE, 1, 1, 0),
        ResourceSpec("sig", ASYNC, 1),
        ResourceSpec("gate", ASYNC, 1),
        ResourceSpec("flags", FLAGS),
    )
    read = (("tile0", "wait"), ("tile0", "drain"), ("sig", "acquire"), ("sig", "fill"), ("sig", "commit"),
            ("tile0", "release"))
    late = (("sig", "wait"), ("raw1", "fill"), ("sig", "release"))
    p = TaskSpec("P", 1, body=(_block(("tile0", "acquire"), ("tile0", "fill"), ("tile0", "commit")),))
    c1 = TaskSpec("C1", 1, head=(_block(("gate", "wait")),), body=(_block(*read, *(late if writer == "C1" else ())),),
                  tail=(_block(("gate", "release")),))
    c2 = TaskSpec("C2", 1, body=(_block(*read, *(late if writer == "C2" else ())),))
    g = TaskSpec("G", 1, head=(_block(("gate", "acquire"), ("gate", "fill"), ("gate", "commit")),),
                 body=(_block(("flags", "flag")),))
    return TaskSetSpec(0, resources, (p, c1, c2, g), intent=f"gated consumers, {writer} writes raw1")


def gated_consumers(writer: str) -> list[Any]:
    """Fresh TS tasks of :func:`gated_consumers_spec`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gated_consumers_spec(writer).build()["tasks"]
