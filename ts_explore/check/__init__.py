"""ts-explore's own exhaustive checker: TS's interleaving semantics, with partial-order reduction.

:func:`search` explores a :class:`SearchProblem` (built from TS tasks by
:func:`ts_explore.reader.search_input.search_problem`) with the semantics of
TS's ``exhaustive_checker.check_all_interleavings``: the same lanes (HEAD +
loop x N + TAIL per tile, split non-pipelined work), credit pools per
resource and physical stage, blocking waits and acquires, every-n-th credit
moves for shared pipelines, ownership entries and races on aliased buffers,
PDL launch-before-wait, and TS's rule that a state is known by its cursors.
``search(problem, reduce=False)`` visits exactly TS's states in TS's order.

The model
---------
Each task is a sequential process walking a fixed lane of steps; a move runs
one task's next step. A step is one of

* a *take* (``ConsumerWait``, ``ProducerAcquire``): runs only while its credit
  counter is positive, then decrements it (on every n-th take when n tasks
  share that side);
* a *give* (``ProducerCommit``, ``ConsumerRelease``): increments counters;
* a *PDL wait*: sets the PDL flag; a *PDL launch*: a move only once the flag
  is set (before that, the state is a PDL violation and the launch is not
  taken, as in TS);
* an *ownership step* on an aliased buffer (updates the held map races are
  judged on; only when some buffers alias);
* anything else (work, ``try_*`` probes, WorkQueue steps): local.

Every move advances a cursor, so the state graph is finite and acyclic.
Findings are properties of a state: a *deadlock* (unfinished tasks, no move,
no launch waiting), a *race* (two accesses of different tasks on aliased
bytes, one a write), a *PDL violation* (a task at a launch, no wait run).

The reduction and why it is sound
---------------------------------
At a state ``s`` the search branches on the enabled moves of a closed task
set ``T`` (:mod:`ts_explore.check.reduction`): if a task in ``T`` can take
from counter ``x``, every task that may still take from ``x`` is in ``T``;
every task that may still touch an alias group an enabled ownership step of
``T`` touches is in ``T``; if a task in ``T`` is blocked, every task that may
still give its credit (or, for a held-back launch, still has a PDL wait
ahead) is in ``T``. Then, for moves by tasks outside ``T`` (sequences ``w``):

(D1) an enabled move ``t`` of ``T`` commutes to the front: ``s -w t-> q``
     implies ``s -t w-> q``. Outside moves never take from ``t``'s counter or
     touch its alias group; gives, PDL waits and local moves commute with
     everything and disable nothing (additions commute; a take needs only a
     positive counter).
(D1') a blocked move of ``T`` stays blocked along ``w``: its enablers are in ``T``.
(D2) an enabled move of ``T`` stays enabled along ``w``: nothing outside
     takes from its counter.

Deadlocks. Let ``s`` be reached by the reduced search and ``s -w-> d`` with
``d`` terminal. If ``w`` is empty, done. Otherwise ``T`` has an enabled move,
which (D2) would still be enabled at ``d`` if ``w`` avoided ``T``; so ``w``
contains moves of ``T``. The first one is its task's next step, enabled at
``s`` by (D1'), so it is explored, and by (D1) it moves to the front:
``d`` is reachable from a reduced successor by a shorter path. By induction
on ``|w|`` every terminal state, hence every deadlock, is reached.

Races and PDL violations. Call a move *invisible* when it cannot end such a
finding: it changes no ownership entry, is not a point access on an aliased
buffer, and is not a PDL wait while no wait has run. Races only need two
accesses and an invisible move only adds accesses; the flag does not move.
The search takes either every enabled move, or a set containing an
invisible one. Let ``s -w-> q`` with a finding at ``q``; induct on the
longest path from ``s`` (finite: the graph is acyclic). If ``w`` has a move
of ``T``, move the first to the front as above. Otherwise the branch set is
not every enabled move (the first move of ``w`` is enabled and outside), so
it holds an invisible ``t``; by (D2) and (D1) ``s -t w-> t(q)``, and the
finding survives at ``t(q)``. Either way a reduced successor reaches a
finding. The acyclic graph is also why no cycle proviso is needed.

Findings are evaluated on whole states (every task, not only ``T``), and
every reduced state is reachable, so nothing reported is spurious. Like TS,
states are known by cursors (credits, tallies and the PDL flag follow from
them); ownership lists may differ between two paths to the same cursors,
and then both checkers keep the first path's. ``cursor_only=False`` keeps
them apart (TS's ``cursor_only_visited=False``); the argument above is
exact for that key.

Memory
------
States are ints with bit fields (:mod:`ts_explore.check.tables`). The graph
is layered by the sum of the cursors, so duplicates are looked up only in
the level being built; earlier levels keep 5 bytes per state (parent index
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
