"""A second checker, written from SEMANTICS.md alone, to cross-check the first one's answers.

It shares nothing with :mod:`ts_explore.check.engine`, ``held``,
``reduction`` or ``tables`` beyond the input (:class:`SearchProblem`): states
are plain tuples (cursors, counters, tallies, PDL flag, ownership lists in
order), ownership bookkeeping and the three findings are restated here from
the document, and the search is depth-first over every enabled move with a
visited set (no reduction, no packing, a different visiting order). With
the exact state identity the set of finding kinds it reports is the same
whatever the order, which is what makes it a check on the first engine.

:func:`explore` returns an :class:`OracleResult`: the finding kinds seen,
one witness path per kind, and whether it finished. It is slower than the
first engine; it is meant for the sizes ``verify(..., cross_check=True)``
and the differential tests run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .problem import ACQUIRE, CONSUME, PRODUCE, RELEASE, SLOTLESS, UNTAGGED, WAIT, SearchProblem, Step

# entry: (access, task, slot, generation); access words as SEMANTICS.md names them
_RESERVED, _WRITTEN, _OWNED, _READ = "prod_held", "prod", "cons_held", "cons"
_READING = frozenset({_OWNED, _READ})
_EVERY_ACCESS = frozenset({_RESERVED, _WRITTEN, _OWNED, _READ})
_PRODUCER_SIDE = frozenset({_RESERVED, _WRITTEN})

DEFAULT_ORACLE_STATES = 2_000_000


@dataclass(frozen=True)
class OracleResult:
    """What the second checker saw: finding kinds (``deadlock``/``race``/``pdl-order``) and a path to each."""

    kinds: frozenset[str]
    witnesses: tuple[tuple[str, tuple[int, ...]], ...]  # (kind, tasks moved in order)
    states: int
    complete: bool  # every reachable state was visited (or it stopped once it had what it was asked for)

    @property
    def safe(self) -> bool:
        """Finished, and nothing found."""
        return self.complete and not self.kinds


class _Lists:
    """Ownership lists being rewritten for one move (a dict of lists, copied from the frozen form)."""

    def __init__(self, frozen: tuple[tuple[int, tuple], ...]) -> None:
        self.lists: dict[int, list] = {r: list(entries) for r, entries in frozen}

    def of(self, res: int) -> list:
        return self.lists.setdefault(res, [])

    def frozen(self) -> tuple[tuple[int, tuple], ...]:
        return tuple((r, tuple(e)) for r, e in sorted(self.lists.items()) if e)


def _remove(entries: list, pick: object, last: bool = False) -> None:
    """Remove the first (or last) entry ``pick(entry)`` accepts; nothing when none does."""
    order = range(len(entries) - 1, -1, -1) if last else range(len(entries))
    for i in order:
        if pick(entries[i]):
            del entries[i]
            return


def _rewrite(lists: _Lists, step: Step, task: int, dma: frozenset[int]) -> None:
    """SEMANTICS.md, "Ownership lists": the step's effects, in the document's order."""
    op = step.held
    if op is None:
        return
    for member, slot in op.merge_release:
        if member not in dma:
            _remove(lists.of(member), lambda e, s=slot: e[0] in _READING and e[1] == task and e[2] == s)
    for member, slot in op.fused_wait:
        if member not in dma:
            entries = lists.of(member)
            _remove(entries, lambda e, s=slot: e[2] == s, last=True)
            entries.append((_OWNED, task, slot, UNTAGGED))
    res, slot = step.resource, op.slot
    mine = lambda e: e[1] == task and e[2] == slot  # noqa: E731
    if op.own == ACQUIRE:
        entries = lists.of(res)
        if res in dma:
            _remove(entries, lambda e: e[0] in _READING and e[2] == slot)
        entries.append((_RESERVED, task, slot, UNTAGGED))
    elif op.own == WAIT:
        entries = lists.of(res)
        _remove(entries, lambda e: e[2] == slot, last=True)
        entries.append((_OWNED, task, slot, UNTAGGED))
    elif op.own in (PRODUCE, CONSUME):
        entries = lists.of(res)
        if op.own == PRODUCE:
            new, match = _WRITTEN, lambda e: mine(e) and e[0] == _RESERVED
        else:
            new, match = (_WRITTEN if op.write_phase else _READ), mine
        hit = next((i for i, e in enumerate(entries) if match(e)), None)
        if hit is None:
            entries.append((new, task, slot, UNTAGGED))
        else:
            entries[hit] = (new, task, slot, entries[hit][3])
        if op.closes_window:
            kinds = (_WRITTEN,) if op.own == PRODUCE else (_READ, _WRITTEN)
            _remove(entries, lambda e: mine(e) and e[0] in kinds)
    elif op.own == RELEASE and res not in dma:
        _remove(lists.of(res), lambda e: mine(e) and e[0] in _READING)
    for r in op.tag_commit:
        lists.lists[r] = [
            (e[0], e[1], e[2], op.generation) if e[0] in _READING and e[3] == UNTAGGED else e for e in lists.of(r)
        ]
    for r in op.clear_wait:
        lists.lists[r] = [e for e in lists.of(r) if not (e[0] in _READING and e[3] == op.generation)]


def _conflict(problem: SearchProblem, a: tuple, b: tuple) -> bool:
    """SEMANTICS.md, "Race": accesses ``(resource, slot, access, task)`` of two tasks that race."""
    ra, sa, xa, ta = a
    rb, sb, xb, tb = b
    if ta == tb or xa == _RESERVED or xb == _RESERVED or _WRITTEN not in (xa, xb):
        return False
    if sa != sb and SLOTLESS not in (sa, sb):
        return False
    if ra == rb and ra in problem.domain_interleaved:
        return False
    if ra not in problem.aliased or rb not in problem.aliased:
        return False

    def seen_from(res: int, access: str) -> frozenset[int]:
        return problem.prod_alias[res] if access in _PRODUCER_SIDE else problem.cons_alias[res]

    return rb in seen_from(ra, xa) and ra in seen_from(rb, xb)


class _Search:
    def __init__(self, problem: SearchProblem) -> None:
        self.p = problem
        self.lanes = problem.lanes
        self.every_tally: dict[int, int] = {}

    def initial(self) -> tuple:
        p = self.p
        return (
            (0,) * len(p.lanes),
            tuple(c.initial for c in p.counters),
            (0,) * p.tallies,
            p.assume_pdl_wait_completed,
            (),
        )

    def can_run(self, state: tuple, task: int) -> bool:
        """Unfinished and its credit is there (a launch counts, even when the PDL flag is down)."""
        cursors, counters = state[0], state[1]
        if cursors[task] == len(self.lanes[task]):
            return False
        need = self.lanes[task][cursors[task]].needs
        return need < 0 or counters[need] > 0

    def run(self, state: tuple, task: int) -> tuple:
        cursors, counters, tallies, flag, held = state
        step = self.lanes[task][cursors[task]]
        counters, tallies = list(counters), list(tallies)
        for e in step.effects:
            if e.tally >= 0:
                tallies[e.tally] += 1
                if tallies[e.tally] % e.every:
                    continue
            counters[e.counter] += e.delta
        if step.held is not None and self.p.race_check:
            lists = _Lists(held)
            _rewrite(lists, step, task, self.p.dma_consumers)
            held = lists.frozen()
        moved = cursors[:task] + (cursors[task] + 1,) + cursors[task + 1 :]
        return (moved, tuple(counters), tuple(tallies), flag or step.pdl_wait, held)

    def findings(self, state: tuple, ready: list[int]) -> set[str]:
        cursors, _, _, flag, held = state
        found: set[str] = set()
        unfinished = [t for t in range(len(self.lanes)) if cursors[t] < len(self.lanes[t])]
        if unfinished and not ready:
            found.add("deadlock")
        if not flag and any(self.lanes[t][cursors[t]].pdl_launch for t in ready):
            found.add("pdl-order")
        if self.p.race_check:
            accesses = [(r, e[2], e[0], e[1]) for r, entries in held for e in entries]
            for t in ready:
                step = self.lanes[t][cursors[t]]
                if step.point is not None:
                    accesses.append((step.resource, step.point[0], step.point[1], t))
            if any(_conflict(self.p, a, b) for i, a in enumerate(accesses) for b in accesses[i + 1 :]):
                found.add("race")
        return found


def explore(
    problem: SearchProblem, *, max_states: int = DEFAULT_ORACLE_STATES, stop_when: frozenset[str] = frozenset()
) -> OracleResult:
    """Every reachable state of ``problem``, depth first; stops early once all of ``stop_when`` were seen."""
    s = _Search(problem)
    start = s.initial()
    parent: dict[tuple, tuple[tuple, int] | None] = {start: None}
    stack = [start]
    kinds: set[str] = set()
    witnesses: list[tuple[str, tuple[int, ...]]] = []
    visited = 0
    while stack:
        if visited >= max_states:
            return OracleResult(frozenset(kinds), tuple(witnesses), visited, False)
        state = stack.pop()
        visited += 1
        ready = [t for t in range(len(problem.lanes)) if s.can_run(state, t)]
        for kind in sorted(s.findings(state, ready) - kinds):
            kinds.add(kind)
            witnesses.append((kind, _path(parent, state)))
        if stop_when and stop_when <= kinds:
            return OracleResult(frozenset(kinds), tuple(witnesses), visited, True)
        flag = state[3]
        for t in reversed(ready):
            if problem.lanes[t][state[0][t]].pdl_launch and not flag:
                continue  # a launch before any PDL wait is a finding, never a move
            nxt = s.run(state, t)
            if nxt not in parent:
                parent[nxt] = (state, t)
                stack.append(nxt)
    return OracleResult(frozenset(kinds), tuple(witnesses), visited, True)


def _path(parent: dict[tuple, tuple[tuple, int] | None], state: tuple) -> tuple[int, ...]:
    moves = []
    link = parent[state]
    while link is not None:
        state, task = link
        moves.append(task)
        link = parent[state]
    return tuple(reversed(moves))


__all__ = ["DEFAULT_ORACLE_STATES", "OracleResult", "explore"]
