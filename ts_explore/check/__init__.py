"""ts-explore's own exhaustive checker: TS's interleaving model, a path-independent state identity, two engines.

:func:`search` explores a :class:`SearchProblem` (built from TS tasks by
:func:`ts_explore.reader.search_input.search_problem`) with the model of
TS's ``exhaustive_checker.check_all_interleavings``: the same lanes (HEAD +
loop x N + TAIL per tile, split non-pipelined work), credit pools per
resource and physical stage, blocking waits and acquires, every-n-th credit
moves for shared pipelines, ownership entries and races on aliased buffers,
PDL launch-before-wait.

What a state, a move, a deadlock, a race and a PDL-order violation are is
written down in ``SEMANTICS.md`` beside this file, independent of the order
a search visits states in; both engines implement that document:

* the first engine (:mod:`.engine`, with :mod:`.held`, :mod:`.tables` and
  the partial-order reduction of :mod:`.reduction`) - breadth-first, packed
  states, reduced by default; the reduction's independence relation, its
  proviso and the proof that it loses no deadlock, race or PDL violation
  are in SEMANTICS.md ("The reduction"), and each clause has a test that
  fails without it (``tests/check/test_check_clauses.py``);
* the tile-loop search (:mod:`.tile_search` over a :class:`~.tile_loop.TileLoop`)
  - a persistent schedule's work-tile loop searched as a cycle, so that one
  search covers every number of work tiles (SEMANTICS.md, "The tile loop");
* the second engine (:mod:`.oracle`) - a separately written explicit-state
  search over every interleaving, sharing only :mod:`.problem`;
  :func:`cross_check` runs both and says whether they agree
  (``verify(..., cross_check=True)``, ``ts-explore verify --cross-check``).

State identity. By default a state is known by everything that decides its
future: cursors, credit counters, tallies, the PDL flag and the ownership
lists *in order* (a consumer's wait drops the last entry on its slot, so
order matters). TS knows a state by its cursors only (or cursors plus the
entries sorted), keeping the ownership lists of whichever path its
breadth-first search meets first; its verdict can then depend on that
order, and TS's search can miss a reachable race that ts-explore reports
(SEMANTICS.md, "How this differs from TS"). ``search(..., ts_parity=True)``
keeps TS's identity, so that unreduced it visits exactly TS's states in
TS's order (the parity tests).

Memory: states are ints with bit fields (:mod:`.tables`); the graph is
layered by the sum of the cursors, so duplicates are looked up only in the
level being built, and earlier levels keep 5 bytes per state (parent index
and moving task) for the shortest paths.
"""

from __future__ import annotations

from .cross import CrossCheck, cross_check
from .engine import (
    DEFAULT_MAX_STATES,
    DeadlockFound,
    Move,
    PdlFound,
    RaceFound,
    SearchResult,
    search,
)
from .problem import SearchProblem

__all__ = [
    "CrossCheck",
    "DEFAULT_MAX_STATES",
    "DeadlockFound",
    "Move",
    "PdlFound",
    "RaceFound",
    "SearchProblem",
    "SearchResult",
    "cross_check",
    "search",
]
