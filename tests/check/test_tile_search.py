"""The tile-loop search on hand-made plain data: phases, groups, and the limits that leave it unproven."""

from __future__ import annotations

from ts_explore.check.problem import PROD, Counter, CreditEffect, SearchProblem, Step
from ts_explore.check.tile_loop import TileLoop
from ts_explore.check.tile_search import interaction_groups, search_tile_loop

ALIAS = (frozenset({1}), frozenset({0}), frozenset())


def _problem(tasks: tuple[str, ...], lanes: tuple, counters: tuple[Counter, ...] = ()) -> SearchProblem:
    return SearchProblem(tasks, lanes, ("ra", "rb", "pipe"), counters, alias=ALIAS, prod_alias=ALIAS,
                         cons_alias=ALIAS, aliased=frozenset({0, 1}), race_check=True)


def _write(res: int, slot: int, needs: int = -1, effects: tuple[CreditEffect, ...] = ()) -> Step:
    return Step(res, "ProducerWork", needs=needs, effects=effects, point=(slot, PROD))


def _signal(counter: int, delta: int, needs: int = -1) -> Step:
    return Step(2, "ProducerCommit" if delta > 0 else "ConsumerWait", needs=needs,
                effects=(CreditEffect(counter, delta),))


# a one-slot token pipe from A to B: counter 0 counts full slots, counter 1 free ones
PIPE = (Counter(2, 0, "commit"), Counter(2, 0, "empty", 1))


def _piped(b_slots: tuple[int, ...]) -> TileLoop:
    """A writes ra's slot 0 every tile, then hands B a token; B takes it, writes rb's slot of its tile's phase and
    frees the pipe. A may write tile ``k + 1`` while B writes tile ``k``, never further apart."""
    a = (_write(0, 0), _signal(1, -1, needs=1), _signal(0, +1))
    b = tuple((_signal(0, -1, needs=0), _write(1, s), _signal(1, +1)) for s in b_slots)
    problem = _problem(("A", "B"), (a, b[0]), PIPE)
    return TileLoop(problem, ((a,) * len(b_slots), b), prefix=0, period=len(b_slots))


def test_a_race_that_only_a_later_phase_reaches_is_found_with_its_tile_count() -> None:
    result = search_tile_loop(_piped((1, 1, 0)))  # rb meets ra's slot only in every third tile: B in tile 2, A in 3
    assert [(f.kind, f.tiles) for f in result.findings] == [("race", 4)]
    assert result.groups == (("A", "B"),)


def test_phases_that_never_meet_are_proven_for_every_count() -> None:
    result = search_tile_loop(_piped((1, 1, 1)))
    assert result.proven and not result.findings and result.lead <= 2, result


def test_tasks_that_share_nothing_are_searched_apart() -> None:
    a = (_write(0, 0),)
    queue_only = (Step(2, "ProducerAcquire"),)  # no credits, no shared bytes: its own group
    loop = TileLoop(_problem(("A", "Q"), (a, queue_only)), ((a,), (queue_only,)), prefix=0, period=1)
    assert interaction_groups(loop) == [[0], [1]]
    assert search_tile_loop(loop).proven


def test_aliased_tasks_no_credit_links_may_drift_apart_without_end_so_the_search_is_not_a_proof() -> None:
    a, b = (_write(0, 0),), (_write(1, 1),)  # aliased resources, slots that never meet, nothing between them
    loop = TileLoop(_problem(("A", "B"), (a, b)), ((a,), (b,)), prefix=0, period=1)
    result = search_tile_loop(loop, max_lead=4)
    assert not result.findings and not result.proven
    assert "drift more than 4 work tiles apart" in result.limit


def test_credits_that_pile_up_from_tile_to_tile_leave_the_loop_unproven() -> None:
    a = (_signal(0, +1), _signal(0, +1), _signal(0, -1, needs=0))  # two commits a tile, one wait: no end
    loop = TileLoop(_problem(("A",), (a,), PIPE), ((a,),), prefix=0, period=1)
    result = search_tile_loop(loop)
    assert not result.proven and "pile up from tile to tile" in result.limit


def test_a_deadlock_in_the_first_tile_is_found_at_one_tile() -> None:
    b = (_signal(0, -1, needs=0),)  # waits a token nobody commits
    loop = TileLoop(_problem(("B",), (b,), PIPE), ((b,),), prefix=0, period=1)
    assert [(f.kind, f.tiles) for f in search_tile_loop(loop).findings] == [("deadlock", 1)]
