"""Every number of work tiles at once: the persistent loop searched as a cycle (SEMANTICS.md, "The tile loop").

A CTA of a persistent kernel runs some number ``T`` of work tiles, the same
for all its tasks. The search here explores the states of *every* ``T``
together: a task's position is its tile relative to the slowest unfinished
task plus its cursor in that tile; the slowest task's tile is kept only as
its phase (a table index of the :class:`~.tile_loop.TileLoop`), so the tile
index itself is dropped and the graph is finite. Until ``T`` is fixed every
task has an unbounded supply of tiles; when a task that leads (no task is
on a later tile) finishes a tile, the search branches: more tiles follow,
or that was the last one (``T`` is fixed and every task stops there).
Credits, tallies modulo their period, the PDL flag and the ownership lists
in order (completion generations made relative to the slowest task's
period, those no future wait can match marked stale) complete the state.
When no new state appears, every tile count is proven: 0, 1, few, many.

Tasks that cannot influence each other (no shared credit counter, no shared
or aliasing ownership lists, not both using PDL) are searched apart: a
finding of the whole set is a finding of one such group at the same count.
Within a group, tasks that no credit links may drift any number of tiles
apart; the search does not expand states where one leads another by more
than ``max_lead`` tiles and then answers inconclusive, saying so.

A finding comes back with the tile count ``T`` its path reached (the fixed
count, or one more than the furthest tile), so the caller can re-run the
unrolled search at that count for a counterexample the rest of the tool shows.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable

from .engine import DEFAULT_MAX_STATES, CancelFlag
from .generations import STALE, Generations
from .held import Held, apply_held, find_races, freeze_ordered
from .problem import HeldOp, SearchProblem, Step
from .tables import _alias_groups, footprint
from .tile_loop import TileLoop

DEFAULT_MAX_LEAD = 16
_CHECK_EVERY = 4096


@dataclass(frozen=True)
class TileFinding:
    """One finding of the cycle search: its kind, the tasks involved and a tile count at which it is reachable."""

    kind: str  # "deadlock" | "race" | "pdl-order"
    tiles: int
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class TileSearchResult:
    """What the cycle search found and whether it closed.

    ``proven`` only when every group's search closed (no new state) with no
    finding; ``limit`` says why a search stopped short (the verdict is then
    inconclusive unless a finding was made).
    """

    findings: tuple[TileFinding, ...]
    states: int
    groups: tuple[tuple[str, ...], ...]
    limit: str = ""
    cancelled: bool = False
    elapsed_s: float = 0.0
    lead: int = 0  # the largest lead (in tiles) of one task over another that the search met

    @property
    def proven(self) -> bool:
        """Closed, nothing found: safe for every number of work tiles."""
        return not self.findings and not self.limit and not self.cancelled


def interaction_groups(loop: TileLoop) -> list[list[int]]:
    """Tasks that can influence each other, as groups (connected through counters, ownership lists, PDL)."""
    problem = loop.problem
    n = len(problem.tasks)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = _alias_groups(problem) if problem.race_check else []
    owner: dict[tuple[str, int], int] = {}
    for t in range(n):
        keys: set[tuple[str, int]] = set()
        for table in loop.tiles[t]:
            for step in table:
                if step.needs >= 0:
                    keys.add(("counter", step.needs))
                keys.update(("counter", e.counter) for e in step.effects)
                if problem.race_check:
                    keys.update(("alias", groups[r]) for r in footprint(step))
                if step.pdl_wait or step.pdl_launch:
                    keys.add(("pdl", 0))
        for key in keys:
            first = owner.setdefault(key, t)
            parent[find(t)] = find(first)
    out: dict[int, list[int]] = {}
    for t in range(n):
        out.setdefault(find(t), []).append(t)
    return list(out.values())


def _quiet(table: tuple[Step, ...], c: int, race_check: bool) -> bool:
    """Step ``c`` of a tile is invisible and independent of every other task (SEMANTICS.md, "The tile loop").

    It never blocks, moves no credit or tally, sets no flag, changes no ownership list, and neither it nor the
    task's next step (in the same tile) shows an access or is a PDL launch; so running it first commutes with every
    other move and changes no finding's ingredients.
    """
    if c + 1 >= len(table):
        return False
    step, after = table[c], table[c + 1]
    if step.needs >= 0 or step.effects or step.pdl_wait or step.pdl_launch:
        return False
    if race_check and (step.held is not None or step.point is not None or after.point is not None):
        return False
    return not after.pdl_launch


def search_tile_loop(
    loop: TileLoop,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    max_lead: int = DEFAULT_MAX_LEAD,
    early_exit: bool = True,
    cancel: CancelFlag | None = None,
    progress: Callable[[int, float, float], None] | None = None,
) -> TileSearchResult:
    """Search every number of work tiles of ``loop``; see the module docstring."""
    start = time.perf_counter()
    groups = interaction_groups(loop)
    findings: list[TileFinding] = []
    states = lead = 0
    limit = ""
    cancelled = False
    for group in groups:
        part = _Search(loop, group, max_states - states, max_lead, early_exit, cancel, progress, start, states)
        part.run()
        states += part.explored
        lead = max(lead, part.lead)
        findings.extend(part.findings)
        limit = limit or part.limit
        cancelled = cancelled or part.cancelled
        if cancelled or (findings and early_exit) or states >= max_states:
            break
    names = tuple(tuple(loop.problem.tasks[t] for t in g) for g in groups)
    return TileSearchResult(tuple(findings), states, names, limit, cancelled, time.perf_counter() - start, lead)


class _Search:
    """The breadth-first search of one interaction group (the other tasks stay finished from the start)."""

    def __init__(self, loop: TileLoop, group: list[int], max_states: int, max_lead: int, early_exit: bool,
                 cancel: CancelFlag | None, progress: Callable[[int, float, float], None] | None,
                 start: float, before: int) -> None:
        self.loop, self.group, self.max_states, self.max_lead = loop, group, max_states, max_lead
        self.early_exit, self.cancel, self.progress, self.start, self.before = early_exit, cancel, progress, start, before
        self.problem: SearchProblem = loop.problem
        problem_race = self.problem.race_check
        self.gens = Generations(loop)
        self.findings: list[TileFinding] = []
        self.explored = 0
        self.lead = 0
        self.limit = ""
        self.cancelled = False
        self.every = [1] * self.problem.tallies
        for tables in loop.tiles:
            for table in tables:
                for step in table:
                    for e in step.effects:
                        if e.tally >= 0:
                            self.every[e.tally] = e.every
        # a counter above its bound means credits pile up tile after tile: the state space would not close
        per_tile = [0] * len(self.problem.counters)
        for t in group:
            for table in loop.tiles[t]:
                counts = [0] * len(per_tile)
                for step in table:
                    for e in step.effects:
                        if e.delta > 0:
                            counts[e.counter] += 1
                per_tile = [max(a, b) for a, b in zip(per_tile, counts)]
        self.bound = [c.initial + per_tile[k] * (max_lead + 2) for k, c in enumerate(self.problem.counters)]
        self._ops: dict[tuple[int, int, int, int], HeldOp] = {}
        self.quiet = [[[_quiet(table, c, problem_race) for c in range(len(table))] for table in tables]
                      for tables in loop.tiles]

    def _op(self, task: int, idx: int, cursor: int, epochs: int, step: Step) -> HeldOp:
        op = step.held
        assert op is not None
        if op.generation < 0 or not (op.tag_commit or op.clear_wait) or epochs == 0:
            return op
        key = (task, idx, cursor, epochs)
        found = self._ops.get(key)
        if found is None:
            found = self._ops[key] = replace(op, generation=op.generation + epochs * self.gens.advance.get(
                step.resource, 0))
        return found

    def run(self) -> None:
        loop, problem = self.loop, self.problem
        n = len(problem.tasks)
        lengths = [loop.tile_length(t) for t in range(n)]
        pos0 = [(0, 0) if t in self.group and lengths[t] else None for t in range(n)]
        if all(p is None for p in pos0):
            return
        init = (-1, 0, tuple(pos0), tuple(c.initial for c in problem.counters), (0,) * problem.tallies,
                problem.assume_pdl_wait_completed, ())
        seen: dict[tuple, int] = {init: 0}
        base_tile = [0]  # per state: the absolute tile of its slowest task along the first path met
        queue: deque[tuple[tuple, Held, int]] = deque([(init, {}, 0)])
        next_check = _CHECK_EVERY
        race_check = problem.race_check
        while queue:
            if self.explored >= self.max_states:
                self.limit = self.limit or f"the search stopped at its state cap ({self.max_states} states)"
                return
            state, held, sid = queue.popleft()
            self.explored += 1
            if self.explored >= next_check:
                next_check += _CHECK_EVERY
                if self.cancel is not None and self.cancel.is_set():
                    self.cancelled = True
                    return
                if self.progress is not None:
                    now = time.perf_counter()
                    total = self.before + self.explored
                    self.progress(total, total / max(now - self.start, 1e-9), now - self.start)
            fix, base, pos, counters, tallies, flag, _key = state
            here = [(t, p, *loop.locate(base, p[0])) for t, p in enumerate(pos) if p is not None]
            enabled, held_back = [], []
            for t, p, idx, epochs in here:
                step = loop.tiles[t][idx][p[1]]
                if step.needs >= 0 and counters[step.needs] <= 0:
                    continue
                if step.pdl_launch and not flag:
                    held_back.append(t)
                enabled.append((t, p, idx, epochs, step))
            furthest = max((p[0] for _t, p, _i, _e in here), default=0)
            count = base_tile[sid] + (fix if fix >= 0 else furthest + 1)
            if race_check:
                points = [(s.resource, s.point[0], s.point[1], t) for t, _p, _i, _e, s in enabled
                          if s.point is not None]
                races = find_races(held, points, problem)
                if races:
                    self._found("race", count, {r[0] for r in races} | {r[2] for r in races})
                    if self.early_exit:
                        return
            if not here:
                continue
            if not enabled:
                self._found("deadlock", count, {t for t, *_ in here})
                if self.early_exit:
                    return
                continue
            if held_back:
                self._found("pdl-order", count, set(held_back))
                if self.early_exit:
                    return
            movers = [m for m in enabled if m[0] not in held_back]
            quiet = next((m for m in movers if self.quiet[m[0]][m[2]][m[1][1]]), None)
            if quiet is not None:  # a step nothing else can see or feel: taking it alone loses no finding
                movers = [quiet]
            for t, p, idx, epochs, step in movers:
                for succ, succ_held, moved_base in self._moves(state, held, t, p, idx, epochs, step, lengths):
                    key = (*succ[:6], freeze_ordered(succ_held) if race_check else ())
                    if key in seen:
                        continue
                    seen[key] = len(base_tile)
                    base_tile.append(base_tile[sid] + moved_base)
                    queue.append((key, succ_held, len(base_tile) - 1))

    def _found(self, kind: str, tiles: int, tasks: set[int]) -> None:
        self.findings.append(TileFinding(kind, tiles, tuple(self.problem.tasks[t] for t in sorted(tasks))))

    def _moves(self, state: tuple, held: Held, t: int, p: tuple[int, int], idx: int, epochs: int, step: Step,
               lengths: list[int]):
        """The successor states of task ``t`` running ``step``: one, or two at a leader's tile end."""
        fix, base, pos, counters, tallies, flag, _key = state
        problem = self.problem
        cnt, tal = list(counters), list(tallies)
        for e in step.effects:
            if e.tally < 0:
                cnt[e.counter] += e.delta
                continue
            tal[e.tally] = (tal[e.tally] + 1) % e.every
            if tal[e.tally] == 0:
                cnt[e.counter] += e.delta
        new_flag = flag or step.pdl_wait
        new_held = held
        if problem.race_check and step.held is not None:
            new_held = apply_held(held, self._op(t, idx, p[1], epochs, step), step.resource, t, problem)
        d, c = p
        ends: list[tuple[int, tuple[int, int] | None]] = []
        if c + 1 < lengths[t]:
            ends.append((fix, (d, c + 1)))
        elif fix >= 0:
            ends.append((fix, None if d + 1 == fix else (d + 1, 0)))
        else:
            ends.append((-1, (d + 1, 0)))
            if d == max(q[0] for q in pos if q is not None):
                ends.append((d + 1, None))  # this was the last tile
        for new_fix, new_p in ends:
            new_pos = list(pos)
            new_pos[t] = new_p
            out = self._normalise(new_fix, base, new_pos, cnt, tal, new_flag, new_held)
            if out is not None:
                yield out

    def _normalise(self, fix: int, base: int, pos: list, cnt: list[int], tal: list[int], flag: bool, held: Held):
        """Shift tiles so the slowest unfinished task is at offset 0; None for a state past the search's limits."""
        live = [p[0] for p in pos if p is not None]
        for k, v in enumerate(cnt):
            if v > self.bound[k]:
                c = self.problem.counters[k]
                self.limit = self.limit or (
                    f"{c.kind} credits of {self.problem.resources[c.resource]} pile up from tile to tile "
                    f"(more than {self.bound[k]}): the loop has no finite set of tile-boundary states")
                return None
        if not live:  # every task finished: no wait can come, so every generation is stale
            if held and self.gens.active:
                held = {r: [(e[0], e[1], e[2], STALE if e[3] >= 0 else e[3]) for e in es] for r, es in held.items()}
            return (0, 0, tuple(pos), tuple(cnt), tuple(tal), flag), held, fix  # the base becomes the count
        shift = min(live)
        spread = max(live) - shift
        if spread > self.lead:
            self.lead = spread
        if spread > self.max_lead:
            self.limit = self.limit or (
                f"tasks can drift more than {self.max_lead} work tiles apart (no credit bounds how far one runs "
                "ahead of another), so the tile-loop search stopped there")
            return None
        new_base, epochs = self.loop.locate(base, shift)
        if shift:
            pos = [None if p is None else (p[0] - shift, p[1]) for p in pos]
            if fix >= 0:
                fix -= shift
        held = self.gens.normalise(held, epochs, new_base, pos)
        return (fix, new_base, tuple(pos), tuple(cnt), tuple(tal), flag), held, shift


__all__ = ["DEFAULT_MAX_LEAD", "STALE", "TileFinding", "TileSearchResult", "interaction_groups", "search_tile_loop"]
