"""Small hand-written problems, one per reduction clause, that the reduction gets wrong without it.

Each builder returns a :class:`SearchProblem` whose full search reports a
finding that the reduced search misses once ``reduction.DISABLED`` names
the clause (tests/check/test_check_clauses.py). ``take`` and ``proviso``
also have TS-built cases from the generators; the others are written here
because TS-shaped sets rarely need them on their own (other clauses
happen to cover them).
"""

from __future__ import annotations

from ts_explore.check.problem import (
    ACQUIRE,
    CONS,
    PRODUCE,
    RELEASE,
    WAIT,
    Counter,
    CreditEffect,
    HeldOp,
    SearchProblem,
    Step,
)


def _take(res: int, counter: int, held: HeldOp | None = None, stage: str = "ConsumerWait") -> Step:
    return Step(res, stage, counter, (CreditEffect(counter, -1),), held=held)


def _give(res: int, counter: int, held: HeldOp | None = None, stage: str = "ProducerCommit") -> Step:
    return Step(res, stage, effects=(CreditEffect(counter, +1),), held=held)


def _plain(counters: tuple[Counter, ...], lanes: dict[str, tuple[Step, ...]], resources: int) -> SearchProblem:
    return SearchProblem(tuple(lanes), tuple(lanes.values()), tuple(f"r{i}" for i in range(resources)), counters)


def take_case() -> SearchProblem:
    """Lock-order deadlock: A takes x then y, B takes y then x (both give back after).

    Without ``take``, A's first take forms a closed set alone and B never
    gets ``y`` before A needs it.
    """
    x, y = 0, 1
    counters = (Counter(0, 0, "empty", 1), Counter(1, 0, "empty", 1))
    return _plain(counters, {
        "A": (_take(0, x), _take(1, y), _give(1, y), _give(0, x)),
        "B": (_take(1, y), _take(0, x), _give(0, x), _give(1, y)),
    }, 2)


def give_case() -> SearchProblem:
    """B waits for ``z`` (C gives it) and then competes with A for ``x``; B winning leaves A stuck.

    Without ``give``, B (blocked) joins A's set but C, which can unblock
    B, does not: only A moves first, A gets ``x`` back in time, and the
    deadlock where B takes ``x`` for good is never reached.
    """
    x, z, w = 0, 1, 2
    counters = (Counter(0, 0, "empty", 1), Counter(1, 0, "commit", 0), Counter(2, 0, "empty", 1))
    return _plain(counters, {
        "A": (_take(0, x), _give(0, x)),
        "B": (_take(1, z), _take(0, x)),
        "C": (_take(2, w), _give(1, z)),
    }, 3)


def pdl_case() -> SearchProblem:
    """A launches (PDL) then takes ``x``; B takes and gives ``x``; C runs the PDL wait.

    A's launch is held back until C's wait. Without ``pdl``, B's take
    forms a closed set with the held-back A only, so C's wait (which lets A
    take ``x`` before B) is deferred until B is done: the deadlock where A
    takes ``x`` first and B starves is missed.
    """
    x = 0
    counters = (Counter(0, 0, "empty", 1),)
    return _plain(counters, {
        "A": (Step(1, "PdlLaunch", pdl_launch=True), _take(0, x)),
        "B": (_take(0, x), _give(0, x)),
        "C": (Step(2, "PdlWait", pdl_wait=True),),
    }, 3)


def alias_case() -> SearchProblem:
    """P's own entry on ``tile`` lingers or not depending on whether Q acquires before P's wait.

    P acquires, writes and commits ``tile`` (slot 0), signals ``h``, then
    waits for its own commit (the wait drops the *last* entry on the slot)
    and releases, then signals ``g``. Q takes ``h`` and acquires ``tile``;
    X competes with P's wait for the commit credit; R takes ``g`` and reads
    ``raw``, which aliases ``tile``. If Q acquires before P's wait, the wait
    drops Q's reservation, P's write entry survives the release and R's read
    races with it. Without ``alias``, P's wait forms a closed set with X
    only (they share the commit counter) and Q's acquire, which touches the
    same aliased bytes through another counter, is deferred past it: the
    race is missed.
    """
    tile, raw, sync_h, sync_g = 0, 1, 2, 3
    c0, e0, h, g = 0, 1, 2, 3
    counters = (
        Counter(tile, 0, "commit", 0),
        Counter(tile, 0, "empty", 2),
        Counter(sync_h, 0, "commit", 0),
        Counter(sync_g, 0, "commit", 0),
    )
    lanes = {
        "X": (_take(tile, c0),),
        "P": (
            _take(tile, e0, HeldOp(ACQUIRE, 0), "ProducerAcquire"),
            Step(tile, "ProducerWork", point=(0, "prod"), held=HeldOp(PRODUCE, 0)),
            _give(tile, c0),
            _give(sync_h, h),
            _take(tile, c0, HeldOp(WAIT, 0)),
            _give(tile, e0, HeldOp(RELEASE, 0), "ConsumerRelease"),
            _give(sync_g, g),
        ),
        "Q": (_take(sync_h, h), _take(tile, e0, HeldOp(ACQUIRE, 0), "ProducerAcquire")),
        "R": (_take(sync_g, g), Step(raw, "ConsumerWork", point=(0, CONS))),
    }
    both = (frozenset({raw}), frozenset({tile}), frozenset(), frozenset())
    return SearchProblem(
        tasks=tuple(lanes),
        lanes=tuple(lanes.values()),
        resources=("tile", "raw", "h", "g"),
        counters=counters,
        alias=both,
        prod_alias=both,
        cons_alias=both,
        aliased=frozenset({tile, raw}),
        race_check=True,
    )


def proviso_case() -> SearchProblem:
    """B's PDL wait is its only step; A takes a credit and then launches (PDL).

    B's wait conflicts with nothing, so it forms a closed set alone; but it
    is visible (it ends every PDL violation to come). Without the proviso
    the reduced search takes it first, and the state with A at its launch
    before any wait ran (reachable: A moves first) is never explored.
    """
    counters = (Counter(0, 0, "empty", 1),)
    return _plain(counters, {
        "B": (Step(2, "PdlWait", pdl_wait=True),),
        "A": (_take(0, 0), Step(1, "PdlLaunch", pdl_launch=True)),
    }, 3)


CASES = {
    "take": take_case,
    "give": give_case,
    "pdl": pdl_case,
    "alias": alias_case,
    "proviso": proviso_case,
}
