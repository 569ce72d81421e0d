"""The exhaustive search: breadth-first, level by level, with or without the reduction.

Every move advances exactly one cursor by one, so all paths to a state have
the same length (the sum of the cursors): the state graph is layered, and
breadth-first search meets a state again only within the level it is
building. Duplicate detection therefore needs only the next level's set;
earlier levels keep just a parent index (4 bytes) and the task that moved
(1 byte, so at most 255 tasks) per state, enough to rebuild the shortest path to any finding.

Per state, in TS's order: races (held entries + the enabled tasks' next
point accesses), completion, deadlock (nothing enabled), then the moves in
task order, where a PDL launch before any PDL wait is reported instead of
taken. States are told apart by the exact identity of SEMANTICS.md
(ownership lists in order). With ``reduce=False, ts_parity=True`` every
enabled move is taken and the visiting order, state count and findings are
those of TS's ``check_all_interleavings`` (same FIFO order, same
cursor-only duplicate rule: the first path to a cursor vector wins).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from .held import Held, apply_held, find_races, freeze, freeze_ordered
from .problem import SearchProblem
from .reduction import branch_set
from .tables import compile_problem

Progress = Callable[[int, float, float], None]
DEFAULT_MAX_STATES = 10_000_000
_CHECK_EVERY = 4096  # states between looks at the clock and the cancel flag


class CancelFlag(Protocol):
    """What ``cancel=`` needs: a ``threading.Event`` fits."""

    def is_set(self) -> bool: ...


class Move(NamedTuple):
    """One move of a counterexample: ``task`` runs the step at ``step`` of its lane."""

    task: int
    step: int


@dataclass(frozen=True)
class DeadlockFound:
    """A reachable state where unfinished tasks all wait for credits."""

    cursors: tuple[int, ...]
    blocked: tuple[int, ...]  # tasks stuck at a blocking step
    counters: tuple[int, ...]  # every credit counter in that state
    order: bytes  # the task of each move of the shortest path found

    kind = "deadlock"

    @property
    def path(self) -> tuple[Move, ...]:
        """The counterexample: ``(task, step)`` moves from the initial state."""
        return moves_of(self.order)


@dataclass(frozen=True)
class RaceFound:
    """A reachable state where two tasks touch aliased bytes at once, one writing."""

    cursors: tuple[int, ...]
    writer_task: int
    writer_resource: int
    victim_task: int
    victim_resource: int
    victim_access: str
    order: bytes

    kind = "race"

    @property
    def path(self) -> tuple[Move, ...]:
        """The counterexample: ``(task, step)`` moves from the initial state."""
        return moves_of(self.order)


@dataclass(frozen=True)
class PdlFound:
    """A reachable state where a task may call launch_griddep before any wait_griddep ran."""

    cursors: tuple[int, ...]
    task: int
    resource: int
    order: bytes

    kind = "pdl-order"

    @property
    def path(self) -> tuple[Move, ...]:
        """The counterexample: ``(task, step)`` moves from the initial state."""
        return moves_of(self.order)


@dataclass(frozen=True)
class SearchResult:
    """What one search found, and how far it got.

    ``proven_safe`` only when the search finished (no cap, no cancel) with no
    finding; a capped or cancelled search is never safe.
    """

    deadlocks: tuple[DeadlockFound, ...]
    races: tuple[RaceFound, ...]
    pdl_violations: tuple[PdlFound, ...]
    states_explored: int
    complete_count: int
    hit_cap: bool
    cancelled: bool
    elapsed_s: float
    reduced: bool
    max_states: int
    peak_level: int = 0  # the widest level (states held at once)

    @property
    def findings(self) -> tuple[DeadlockFound | RaceFound | PdlFound, ...]:
        """Deadlocks, races and PDL violations, in that order."""
        return (*self.deadlocks, *self.races, *self.pdl_violations)

    @property
    def complete(self) -> bool:
        """The search visited every state it had to (or stopped at a finding)."""
        return not (self.hit_cap or self.cancelled)

    @property
    def proven_safe(self) -> bool:
        """No finding, and the search finished."""
        return self.complete and not self.findings


class _Levels:
    """Parent index and moving task of every state, per level, for rebuilding paths."""

    def __init__(self) -> None:
        self.parents: list[array] = [array("i")]
        self.tasks: list[bytearray] = [bytearray()]

    def path(self, level: int, index: int) -> bytes:
        out = bytearray(level)
        while level > 0:
            out[level - 1] = self.tasks[level][index]
            index = self.parents[level][index]
            level -= 1
        return bytes(out)


def moves_of(order: bytes) -> tuple[Move, ...]:
    """``(task, step)`` moves from the moving tasks in order: a task's k-th move runs its k-th step.

    >>> [tuple(m) for m in moves_of(bytes([0, 1, 0]))]
    [(0, 0), (1, 0), (0, 1)]
    """
    seen: dict[int, int] = {}
    out = []
    for t in order:
        k = seen.get(t, 0)
        out.append(Move(t, k))
        seen[t] = k + 1
    return tuple(out)


def search(
    problem: SearchProblem,
    *,
    reduce: bool = True,
    max_states: int = DEFAULT_MAX_STATES,
    early_exit: bool = True,
    progress: Progress | None = None,
    progress_every_s: float = 0.5,
    cancel: CancelFlag | None = None,
    cursor_only: bool = True,
    ts_parity: bool = False,
) -> SearchResult:
    """Explore every interleaving of ``problem`` (all of them, or a sound reduced subset).

    ``progress(states, states_per_s, elapsed_s)`` is called about every
    ``progress_every_s`` seconds; setting ``cancel`` stops the search, which
    is then reported as ``cancelled`` (never safe). ``max_states`` bounds the
    states visited (``hit_cap``). ``early_exit`` stops at the first finding.
    By default a state is known by everything that decides its future
    (cursors, credits, tallies, PDL flag and the ownership lists *in order*:
    the exact identity of :mod:`ts_explore.check`'s semantics), so the
    verdict does not depend on the order states are met in.
    ``ts_parity=True`` uses TS's identity instead: cursors only, or with
    ``cursor_only=False`` cursors plus the ownership entries sorted (TS's
    ``cursor_only_visited=False``); with ``reduce=False`` that visits exactly
    TS's states in TS's order. ``cursor_only`` matters only in that mode.
    """
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 0:
        raise ValueError(f"max_states must be a non-negative int, got {max_states!r}")
    start = time.perf_counter()
    if not problem.lanes:  # no task: nothing to explore (TS reports 0 states, safe)
        return SearchResult((), (), (), 0, 0, False, False, 0.0, reduce, max_states)
    if len(problem.lanes) > 255:
        raise ValueError(f"the search handles at most 255 tasks (one byte per move), got {len(problem.lanes)}")
    t = compile_problem(problem)
    n = t.n
    lanes = problem.lanes
    lens, cshift, cmask = t.lens, t.cursor_shift, t.cursor_mask
    need, delta, slow, launch, held_tab = t.need, t.delta, t.slow, t.launch, t.held
    flag_bit = t.flag_bit
    track_held, race_check = t.track_held, problem.race_check
    tasks_rng = range(n)
    by_cursor = ts_parity and cursor_only
    freeze_key = freeze if ts_parity else freeze_ordered

    deadlocks: list[DeadlockFound] = []
    races: list[RaceFound] = []
    pdls: list[PdlFound] = []
    levels = _Levels()
    level: list[int] = [t.initial]
    helds: list[Held] | None = [{}] if track_held else None
    depth = 0
    explored = 0
    complete = 0
    hit_cap = cancelled = stop = False
    peak = 1
    next_check = _CHECK_EVERY
    last_report = start

    if cancel is not None and cancel.is_set():
        cancelled = stop = True

    def path_to(index: int) -> bytes:
        return levels.path(depth, index)

    while level and not stop:
        nxt: dict[object, int] = {}
        parents = array("i")
        moved = bytearray()
        nxt_helds: list[Held] | None = [] if track_held else None
        states: list[int] = []  # the next level's states, when keys are not the states themselves
        for i, state in enumerate(level):
            if explored >= max_states:
                hit_cap = True
                stop = True
                break
            explored += 1
            if explored >= next_check:
                next_check += _CHECK_EVERY
                now = time.perf_counter()
                if cancel is not None and cancel.is_set():
                    cancelled = stop = True
                    break
                if progress is not None and now - last_report >= progress_every_s:
                    last_report = now
                    progress(explored, explored / max(now - start, 1e-9), now - start)
            # enabled tasks, in task order
            cur = [(state >> cshift[k]) & cmask[k] for k in tasks_rng]
            enabled: list[int] = []
            held_back: list[int] = []
            unfinished = False
            flag = (state >> flag_bit) & 1
            for k in tasks_rng:
                c = cur[k]
                if c == lens[k]:
                    continue
                unfinished = True
                m = need[k][c]
                if m and not state & m:
                    continue
                if launch[k][c] and not flag:
                    held_back.append(k)
                enabled.append(k)
            if race_check:
                held = helds[i] if helds is not None else {}
                points = []
                for k in enabled:
                    p = lanes[k][cur[k]].point
                    if p is not None:
                        points.append((lanes[k][cur[k]].resource, p[0], p[1], k))
                found = find_races(held, points, problem)
                if found:
                    path = path_to(i)
                    cursors = tuple(cur)
                    races.extend(RaceFound(cursors, *r, path) for r in found)
                    if early_exit:
                        stop = True
                        break
            if not unfinished:
                complete += 1
                continue
            if not enabled:
                blocked = tuple(k for k in tasks_rng if cur[k] < lens[k] and need[k][cur[k]])
                deadlocks.append(DeadlockFound(tuple(cur), blocked, t.counter_values(state), path_to(i)))
                if early_exit:
                    stop = True
                    break
                continue
            if held_back:
                for k in held_back:
                    pdls.append(PdlFound(tuple(cur), k, lanes[k][cur[k]].resource, path_to(i)))
                    if early_exit:
                        break
                if early_exit:
                    stop = True
                    break
                movers = [k for k in enabled if k not in held_back]
            else:
                movers = enabled
            if reduce and len(movers) > 1:
                movers = branch_set(t, cur, movers, held_back, bool(flag))
            for k in movers:
                c = cur[k]
                succ = t.advance(state, problem, k, c) if slow[k][c] else state + delta[k][c]
                if nxt_helds is None:
                    if succ in nxt:
                        continue
                    nxt[succ] = len(parents)
                    parents.append(i)
                    moved.append(k)
                    continue
                h = helds[i]
                if held_tab[k][c]:
                    h = apply_held(h, lanes[k][c].held, lanes[k][c].resource, k, problem)
                key = succ if by_cursor else (succ, freeze_key(h))
                if key in nxt:
                    continue
                nxt[key] = len(parents)
                parents.append(i)
                moved.append(k)
                states.append(succ)
                nxt_helds.append(h)
        if stop:
            if not hit_cap and not cancelled:  # stopped at a finding: TS still flags a cap reached on the way
                hit_cap = explored >= max_states and (i + 1 < len(level) or bool(nxt))
            break
        depth += 1
        levels.parents.append(parents)
        levels.tasks.append(moved)
        level = states if track_held else list(nxt)
        peak = max(peak, len(level))
        helds = nxt_helds
    if progress is not None:
        now = time.perf_counter()
        progress(explored, explored / max(now - start, 1e-9), now - start)
    return SearchResult(
        deadlocks=tuple(deadlocks),
        races=tuple(races),
        pdl_violations=tuple(pdls),
        states_explored=explored,
        complete_count=complete,
        hit_cap=hit_cap,
        cancelled=cancelled,
        elapsed_s=time.perf_counter() - start,
        reduced=reduce,
        max_states=max_states,
        peak_level=peak,
    )


__all__ = [
    "DEFAULT_MAX_STATES",
    "DeadlockFound",
    "Move",
    "PdlFound",
    "RaceFound",
    "SearchResult",
    "search",
]
