"""Ownership state of aliased buffers, and the races judged on it (TS's held map, restated).

A state's held map is ``{resource: [(access, task, slot, generation), ...]}``
with access one of ``prod_held`` (reserved by a producer), ``prod`` (written),
``cons_held`` (owned by a consumer), ``cons`` (read). Transitions, exactly as
TS's ``_HeldStateTracker``:

* acquire -> ``prod_held`` (on a DMA-read resource it first ends one old read);
* producer work turns the task's ``prod_held`` into ``prod``;
* wait drops the last entry on that slot and adds ``cons_held``;
* consumer work turns the task's entry into ``cons`` (``prod`` in the write
  phase of split non-pipelined work);
* release drops the task's ``cons``/``cons_held`` (not on DMA-read resources,
  whose reads stay live until the paired completion wait or the next acquire);
* the last entry of split/doubled non-pipelined work closes its window.

List order matters (TS drops the first or last matching entry), so maps are
copied on write and never changed in place. A race is two accesses of
different tasks on aliased resources whose slots may meet, neither a mere
reservation, one of them a write, each side confirming the overlap through
its role's alias table.
"""

from __future__ import annotations

from .problem import (
    ACQUIRE,
    CONS,
    CONS_HELD,
    CONSUME,
    PROD,
    PROD_HELD,
    PRODUCE,
    RELEASE,
    SLOTLESS,
    UNTAGGED,
    WAIT,
    HeldOp,
    SearchProblem,
)

Entry = tuple[str, int, int, int]  # (access, task, slot, generation)
Held = dict[int, list[Entry]]
Access = tuple[int, int, str, int]  # (resource, slot, access, task)

_ANY = (PROD, PROD_HELD, CONS, CONS_HELD)
_READS = (CONS, CONS_HELD)


def _match(entry: Entry, kinds: tuple[str, ...], task: int | None, slot: int) -> bool:
    return entry[0] in kinds and (task is None or entry[1] == task) and entry[2] == slot


def _pop_first(entries: list[Entry], kinds: tuple[str, ...], task: int | None, slot: int) -> None:
    for i, entry in enumerate(entries):
        if _match(entry, kinds, task, slot):
            del entries[i]
            return


def _pop_last(entries: list[Entry], kinds: tuple[str, ...], task: int | None, slot: int) -> None:
    for i in range(len(entries) - 1, -1, -1):
        if _match(entries[i], kinds, task, slot):
            del entries[i]
            return


class _Writer:
    """A copy-on-write view of a held map: each touched resource's list is copied once."""

    def __init__(self, held: Held) -> None:
        self.held = dict(held)
        self.copied: set[int] = set()

    def entries(self, res: int) -> list[Entry]:
        if res not in self.copied:
            self.copied.add(res)
            self.held[res] = list(self.held.get(res, ()))
        return self.held[res]

    def drop_if_empty(self, res: int) -> None:
        if not self.held.get(res, True):
            del self.held[res]


def apply_held(held: Held, op: HeldOp, res: int, task: int, problem: SearchProblem) -> Held:
    """The held map after ``task`` runs a step on ``res`` with ownership effect ``op``."""
    w = _Writer(held)
    dma = problem.dma_consumers
    for member, slot in op.merge_release:
        if member in dma:
            continue
        if member in w.held:
            _pop_first(w.entries(member), _READS, task, slot)
            w.drop_if_empty(member)
    for member, slot in op.fused_wait:
        if member in dma:
            continue
        entries = w.entries(member)
        _pop_last(entries, _ANY, None, slot)
        entries.append((CONS_HELD, task, slot, UNTAGGED))
    if op.own:
        _own(w, op, res, task, dma)
    if op.tag_commit:
        for r in op.tag_commit:
            if w.held.get(r):
                w.held[r] = [
                    (e[0], e[1], e[2], op.generation) if e[0] in _READS and e[3] == UNTAGGED else e for e in w.held[r]
                ]
                w.copied.add(r)
    if op.clear_wait:
        for r in op.clear_wait:
            if w.held.get(r):
                kept = [e for e in w.held[r] if not (e[0] in _READS and e[3] == op.generation)]
                w.copied.add(r)
                if kept:
                    w.held[r] = kept
                else:
                    del w.held[r]
    return w.held


def _own(w: _Writer, op: HeldOp, res: int, task: int, dma: frozenset[int]) -> None:
    slot = op.slot
    if op.own == ACQUIRE:
        entries = w.entries(res)
        if res in dma:
            _pop_first(entries, _READS, None, slot)
        entries.append((PROD_HELD, task, slot, UNTAGGED))
    elif op.own == PRODUCE:
        entries = w.entries(res)
        for i, e in enumerate(entries):
            if _match(e, (PROD_HELD,), task, slot):
                entries[i] = (PROD, task, slot, e[3])
                break
        else:
            entries.append((PROD, task, slot, UNTAGGED))
        if op.closes_window:
            _pop_first(entries, (PROD,), task, slot)
            w.drop_if_empty(res)
    elif op.own == WAIT:
        entries = w.entries(res)
        _pop_last(entries, _ANY, None, slot)
        entries.append((CONS_HELD, task, slot, UNTAGGED))
    elif op.own == CONSUME:
        entries = w.entries(res)
        access = PROD if op.write_phase else CONS
        for i, e in enumerate(entries):
            if _match(e, _ANY, task, slot):
                entries[i] = (access, task, slot, e[3])
                break
        else:
            entries.append((access, task, slot, UNTAGGED))
        if op.closes_window:
            _pop_first(entries, (CONS, PROD), task, slot)
            w.drop_if_empty(res)
    elif op.own == RELEASE:
        if res in dma or res not in w.held:
            return
        _pop_first(w.entries(res), _READS, task, slot)
        w.drop_if_empty(res)


def freeze(held: Held) -> tuple:
    """A held map as a hashable key, list order ignored (TS's ``_freeze_held``; TS-parity mode only)."""
    return tuple((r, tuple(sorted(entries))) for r, entries in sorted(held.items()) if entries)


def freeze_ordered(held: Held) -> tuple:
    """A held map as a hashable key that keeps each list's order (the exact identity).

    The order decides which entry a later wait drops, so two maps with the
    same entries in different orders can lead to different verdicts and
    must stay two states.
    """
    return tuple((r, tuple(entries)) for r, entries in sorted(held.items()) if entries)


def find_races(held: Held, points: list[Access], problem: SearchProblem) -> list[tuple[int, int, int, int, str]]:
    """Races at one state: ``(writer task, writer resource, victim task, victim resource, victim access)``.

    ``points`` are the next point accesses of the enabled tasks. Pairs are
    visited in TS's order (held entries first, then the next accesses) and
    each (tasks, resources) pair is reported once.
    """
    accesses: list[Access] = [(r, e[2], e[0], e[1]) for r, entries in held.items() for e in entries]
    accesses.extend(points)
    aliased, domain = problem.aliased, problem.domain_interleaved
    races = []
    seen: set[tuple[int, int, int, int]] = set()
    for i, (ra, sa, aa, ta) in enumerate(accesses):
        if ra not in aliased:
            continue
        for rb, sb, ab, tb in accesses[i + 1 :]:
            if ta == tb or not (sa == SLOTLESS or sb == SLOTLESS or sa == sb):
                continue
            if ra == rb and ra in domain:
                continue
            if aa == PROD_HELD or ab == PROD_HELD or not (aa == PROD or ab == PROD):
                continue
            if rb not in _aliases(problem, ra, aa) or ra not in _aliases(problem, rb, ab):
                continue
            key = (min(ta, tb), max(ta, tb), min(ra, rb), max(ra, rb))
            if key in seen:
                continue
            seen.add(key)
            races.append((ta, ra, tb, rb, ab) if aa == PROD else (tb, rb, ta, ra, aa))
    return races


def _aliases(problem: SearchProblem, res: int, access: str) -> frozenset[int]:
    if access in (PROD_HELD, PROD):
        return problem.prod_alias[res]
    if access in (CONS_HELD, CONS):
        return problem.cons_alias[res]
    return problem.alias[res]


__all__ = ["Held", "apply_held", "find_races", "freeze", "freeze_ordered"]
