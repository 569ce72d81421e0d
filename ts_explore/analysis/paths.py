"""Replay a counterexample path and track pipeline credits after every move.

The rules are TS's exhaustive-checker credit model, restated on our model:

* every pipelined resource starts with ``num_stages`` empty-slot credits
  (one per physical stage for domain-interleaved resources) and no commit credits;
* ``acquire`` takes an empty credit, ``commit`` adds a commit credit,
  ``wait`` takes a commit credit, ``release`` adds an empty credit;
* when ``n`` tasks share a side of a pipeline, the credit moves only on every
  n-th event of that kind (all participants of the round must take part);
* WorkQueue operations and non-pipelined resources carry no credits;
  ``try_acquire``/``try_wait`` and work steps change nothing.

A wait or acquire replayed without a credit means the replay disagrees with
TS; the result is then marked ``approximate``.
"""

from __future__ import annotations

from typing import Sequence

from ..model import Stage
from ..model.verdict import CheckerStep, CreditCell, CreditModel, Interleaving, Lane

_SIDE = {
    Stage.PRODUCER_ACQUIRE: ("empty", -1, "producer"),
    Stage.PRODUCER_COMMIT: ("full", +1, "producer"),
    Stage.CONSUMER_WAIT: ("full", -1, "consumer"),
    Stage.CONSUMER_RELEASE: ("empty", +1, "consumer"),
}


def initial_credits(model: CreditModel) -> dict[tuple[str, int], list[int]]:
    """``{(resource, slot): [empty, full]}`` before any move."""
    return {(p.resource, p.slot): [p.initial_empty, 0] for p in model.pools}


def replay(moves: Sequence[CheckerStep], lanes: Sequence[Lane], model: CreditModel) -> Interleaving:
    """Credits and cursors after each move of ``moves`` (made in order, one task step each)."""
    tasks = tuple(lane.task for lane in lanes)
    index = {name: i for i, name in reversed(list(enumerate(tasks)))}
    credits = initial_credits(model)
    totals: dict[tuple[str, int, Stage], int] = {}
    cursors = [0] * len(tasks)
    snaps = [_snapshot(credits)]
    cursor_snaps = [tuple(cursors)]
    changed: list[tuple[tuple[str, int, str], ...]] = [()]
    approximate = model.approximate
    for move in moves:
        i = index[move.task]
        if move.index != cursors[i]:
            approximate = True  # a move out of program order: the path does not fit these lanes
        cursors[i] = move.index + 1
        delta = _apply(move, model, credits, totals)
        if delta is None:
            approximate = True
            delta = ()
        snaps.append(_snapshot(credits))
        cursor_snaps.append(tuple(cursors))
        changed.append(delta)
    return Interleaving(
        moves=tuple(moves),
        credits=tuple(snaps),
        cursors=tuple(cursor_snaps),
        changed=tuple(changed),
        tasks=tasks,
        approximate=approximate,
    )


def _apply(
    move: CheckerStep,
    model: CreditModel,
    credits: dict[tuple[str, int], list[int]],
    totals: dict[tuple[str, int, Stage], int],
) -> tuple[tuple[str, int, str], ...] | None:
    """Apply one move; the changed cells, or None when a blocking move had no credit."""
    rule = _SIDE.get(move.stage)
    key = (move.resource, move.credit_slot)
    if rule is None or not move.tracked or key not in credits:
        return ()
    cell, sign, side = rule
    pool = credits[key]
    slot = 0 if cell == "empty" else 1
    if sign < 0 and pool[slot] <= 0:
        return None
    # Producer-side events count producers, consumer-side events count consumers
    # (an acquire is a producer event, a wait a consumer event).
    n = model.producer_count(move.resource) if side == "producer" else model.consumer_count(move.resource)
    count_key = (move.resource, move.credit_slot, move.stage)
    totals[count_key] = totals.get(count_key, 0) + 1
    if totals[count_key] % max(n, 1):
        return ()
    pool[slot] += sign
    return ((move.resource, move.credit_slot, cell),)


def _snapshot(credits: dict[tuple[str, int], list[int]]) -> tuple[CreditCell, ...]:
    return tuple(CreditCell(r, s, e, f) for (r, s), (e, f) in credits.items())


def cell(snapshot: Sequence[CreditCell], resource: str, slot: int = 0) -> CreditCell | None:
    """The credits of one pool in a snapshot."""
    for c in snapshot:
        if c.resource == resource and c.slot == slot:
            return c
    return None


__all__ = ["cell", "initial_credits", "replay"]
