"""A cross-check of a persistent schedule that unrolls work tiles itself, to a bound it derives on its own.

The verdict of a persistent schedule claims every number of work tiles. The
engines' answers for the tile counts the verification chose cannot confirm
that claim, since they search only those counts. :func:`tile_cross_check`
searches the N-tile checker input (each task's lane repeated N times, ring
slots counted across the whole run) for every N from 1 to a bound it derives
from the input alone, and compares with the first answer. It shares no
argument with the verification's tile plan: it reads only
:class:`~ts_explore.check.problem.SearchProblem`\\ s.

The bound (:func:`tile_bound`), from two facts of the unrolled input:

* the **period** ``P``: the fewest tiles after which every task's lane is
  the same again, step for step, slots included (a ring of ``S`` stages
  used ``u`` times a tile repeats after ``S / gcd(S, u)`` tiles; generations
  of completion tags only count on, which shifts every tag alike). It is
  read off the unrolled lanes, not computed from a formula;
* the **lead** ``D``: how many tiles one task can run ahead of another.
  Each credit counter that one task raises by ``a`` a tile and another
  lowers by as much, starting at ``I``, keeps the lowering task within
  ``ceil(I / a) + 1`` tiles of the raising one; chains of such limits
  bound every pair of tasks that share counters (shortest paths). Tasks
  with no counter between them are independent and need no bound between
  them.

Why 1..P+D tiles cover every count: with every counter balanced per tile
and touched by one raising and one lowering task, removing the first P
tiles of each task in a component of tasks that share counters from a run
keeps the run valid (a task's later step comes after all of its own removed
steps, so the removed releases and commits it depended on are matched) and
gives the same state with every slot the same; repeating this, each
reachable state of any tile count is one of a run where each component
has a task in its first P tiles, so all of its tasks lie within P + D
tiles. Where a counter is touched by more tasks, counts by rounds
(``every``), or does not balance per tile, the tasks can drift apart
without a bound this module can state: it then searches up to
:data:`STATED_TILES` and says that this is all it covers.

Searches: each N from 1 to the bound with ts-explore's engine (deadlocks are
not monotone in N, so every N is needed), then the bound itself with the
independent explicit-state search of :mod:`.oracle` (a race or PDL
violation reachable at N is reachable at every larger N).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from .cross import answer_of
from .engine import search
from .oracle import DEFAULT_ORACLE_STATES, explore
from .problem import HeldOp, SearchProblem, Step

STATED_TILES = 8  # unrolled when no bound can be derived
MAX_TILES = 16  # a derived bound beyond this is searched only this far (and said so)
PERIOD_LIMIT = 24  # periods longer than this are not looked for

ProblemAt = Callable[[int], SearchProblem]


@dataclass(frozen=True)
class TileBound:
    """How many tiles the cross-check unrolls, and whether that covers every tile count."""

    tiles: int
    covers: bool  # the derived bound fits: every tile count is covered
    period: int | None  # tiles until the lanes repeat (None: not found within PERIOD_LIMIT)
    lead: int | None  # tiles one task can lead another (None: unbounded)
    why: str  # the bound in words

    @property
    def sentence(self) -> str:
        """``1-7 tiles (period 4 + lead 3: covers every tile count)``."""
        return f"1-{self.tiles} tiles ({self.why})"


def _bare(step: Step) -> Step:
    """A step without its completion-tag generation (generations count on from tile to tile)."""
    if step.held is None or step.held.generation < 0:
        return step
    return replace(step, held=replace(step.held, generation=0))


def lane_period(problem: SearchProblem, tiles: int, per_tile: Sequence[int]) -> int | None:
    """The fewest tiles ``p`` after which every lane of the ``tiles``-tile ``problem`` repeats (None: none seen)."""
    lanes = [[_bare(s) for s in lane] for lane in problem.lanes]
    for p in range(1, tiles):
        if all(lane[p * n:] == lane[:len(lane) - p * n] for lane, n in zip(lanes, per_tile)):
            return p
    return None


@dataclass(frozen=True)
class _Flow:
    """One counter's change per tile, per task."""

    initial: int
    raised: dict[int, Fraction]  # task -> credits added per tile
    lowered: dict[int, Fraction]  # task -> credits taken per tile
    counted: bool  # some effect moves it only every n-th event


def _flows(one: SearchProblem) -> list[_Flow]:
    out = []
    for c, counter in enumerate(one.counters):
        raised: dict[int, Fraction] = {}
        lowered: dict[int, Fraction] = {}
        counted = False
        for t, lane in enumerate(one.lanes):
            for step in lane:
                for e in step.effects:
                    if e.counter != c:
                        continue
                    counted |= e.every > 1
                    side = raised if e.delta > 0 else lowered
                    side[t] = side.get(t, Fraction(0)) + Fraction(abs(e.delta), e.every)
        if raised or lowered:
            out.append(_Flow(counter.initial, raised, lowered, counted))
    return out


def task_lead(one: SearchProblem) -> tuple[int | None, str]:
    """The most tiles one task can lead another that shares counters with it, or None and why not."""
    n = len(one.lanes)
    inf = math.inf
    limit = [[0 if a == b else inf for b in range(n)] for a in range(n)]  # limit[a][b]: a leads b by at most
    linked = [[a == b for b in range(n)] for a in range(n)]
    for flow in _flows(one):
        tasks = set(flow.raised) | set(flow.lowered)
        if flow.counted:
            return None, "a pipeline shared by several tasks counts its credits in rounds"
        if sum(flow.raised.values()) != sum(flow.lowered.values()):
            return None, "a pipeline does not give back per tile what it takes"
        if len(tasks) == 1:
            continue
        if len(tasks) > 2 or len(flow.raised) != 1 or len(flow.lowered) != 1:
            return None, "a pipeline is raised or lowered by more than one task"
        (up, a), (down, _) = next(iter(flow.raised.items())), next(iter(flow.lowered.items()))
        bound = math.ceil(flow.initial / a) + 1
        limit[down][up] = min(limit[down][up], bound)
        linked[down][up] = linked[up][down] = True
    for k in range(n):  # shortest chains of limits (Floyd-Warshall), and who is linked to whom
        for a in range(n):
            for b in range(n):
                limit[a][b] = min(limit[a][b], limit[a][k] + limit[k][b])
                linked[a][b] = linked[a][b] or (linked[a][k] and linked[k][b])
    lead = 0
    for a in range(n):
        for b in range(n):
            if linked[a][b]:
                if limit[a][b] == inf:
                    return None, "two tasks share a pipeline that does not hold one back"
                lead = max(lead, int(limit[a][b]))
    return lead, ""


def tile_bound(problem_at: ProblemAt, *, max_tiles: int = MAX_TILES, stated: int = STATED_TILES) -> TileBound:
    """The tiles to unroll: P + D when both can be derived (up to ``max_tiles``), else ``stated``."""
    one = problem_at(1)
    per_tile = one.lane_lengths
    lead, why_not = task_lead(one)
    if not any(per_tile):
        return TileBound(1, True, 1, 0, "no task has a step")
    span = PERIOD_LIMIT + 1
    period = lane_period(problem_at(span), span, per_tile)
    if period is None:
        why_not = why_not or f"the lanes do not repeat within {PERIOD_LIMIT} tiles"
    if why_not:
        return TileBound(stated, False, period, lead, f"stated count: {why_not}, so no bound covers every count")
    assert period is not None and lead is not None
    needed = max(2, period + lead)
    if needed > max_tiles:
        return TileBound(max_tiles, False, period, lead,
                         f"period {period} + lead {lead} = {needed} tiles would cover every count; "
                         f"searched only {max_tiles}")
    return TileBound(needed, True, period, lead, f"period {period} + lead {lead}: covers every tile count")


@dataclass(frozen=True)
class TileCross:
    """The first answer, the unrolled one, and whether they agree."""

    bound: TileBound
    first: str  # answer_of the verification's runs
    second: str  # answer_of the unrolled searches
    agree: bool
    states: int
    seconds: float
    found_at: tuple[tuple[str, int], ...] = ()  # (kind, fewest tiles the unrolled search found it at)

    @property
    def reason(self) -> str:
        """One sentence naming both answers."""
        verb = "agree" if self.agree else "disagree"
        at = ", ".join(f"{kind} at {n} tile{'' if n == 1 else 's'}" for kind, n in self.found_at)
        return (f"the tile counts the verification searched and an unrolled search of {self.bound.sentence} "
                f"{verb}: the verification says {self.first}, the unrolled search says {self.second}"
                + (f" (first found: {at})" if at else ""))


def unrolled_kinds(problem_at: ProblemAt, tiles: int, *, stop_when: frozenset[str] = frozenset(),
                   oracle_states: int = DEFAULT_ORACLE_STATES) -> tuple[dict[str, int], bool, int]:
    """Finding kinds over 1..``tiles`` (with the fewest tiles of each), whether every search finished, states.

    Stops once every kind of ``stop_when`` was seen, or at the first finding when it is empty.
    """
    found: dict[str, int] = {}
    complete = True
    states = 0

    def done() -> bool:
        return bool(found) and (not stop_when or stop_when <= set(found))

    for n in range(1, tiles + 1):
        result = search(problem_at(n), early_exit=not stop_when)
        states += result.states_explored
        complete &= result.complete or bool(result.findings)
        for f in result.findings:
            found.setdefault(f.kind, n)
        if done():
            return found, True, states
    second = explore(problem_at(tiles), max_states=oracle_states, stop_when=stop_when)
    states += second.states
    complete &= second.complete
    for kind in second.kinds:
        found.setdefault(kind, tiles)
    return found, complete, states


def tile_cross_check(variants: Sequence[ProblemAt], first_kinds: frozenset[str], first_complete: bool,
                     **limits: int) -> TileCross:
    """Unroll each variant (skipped-tile, key assignment) to its bound and compare with the first answer.

    ``variants`` build the N-tile input of each run the instance needs;
    ``first_kinds``/``first_complete`` are the verification's answer. They
    agree when the first says safe and the unrolled searches finished with
    nothing, or when the unrolled searches reach every kind the first found.
    """
    start = time.perf_counter()
    found: dict[str, int] = {}
    complete = True
    states = 0
    bounds = []
    for problem_at in variants:
        bound = tile_bound(problem_at, **{k: v for k, v in limits.items() if k in ("max_tiles", "stated")})
        bounds.append(bound)
        kinds, done, n = unrolled_kinds(problem_at, bound.tiles, stop_when=first_kinds)
        states += n
        complete &= done
        for kind, tiles in kinds.items():
            found[kind] = min(tiles, found.get(kind, tiles))
        if found and not first_kinds:
            break  # a finding the first answer does not have: that already disagrees
    bound = min(bounds, key=lambda b: (b.covers, -b.tiles)) if bounds else TileBound(0, False, None, None, "no run")
    second_kinds = frozenset(found)
    if first_kinds:
        agree = first_kinds <= second_kinds
    else:
        agree = first_complete and complete and not second_kinds
    return TileCross(bound, answer_of(first_kinds, first_complete), answer_of(second_kinds, complete), agree,
                     states, time.perf_counter() - start, tuple(sorted(found.items())))


__all__ = ["MAX_TILES", "STATED_TILES", "TileBound", "TileCross", "lane_period", "task_lead", "tile_bound",
           "tile_cross_check", "unrolled_kinds"]
