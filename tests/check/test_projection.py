"""A shared pipeline's projection: the producer with one consumer, whose waits and releases then count alone."""

from __future__ import annotations

import pytest

from ts_explore.check.engine import search
from ts_explore.check.problem import Counter, CreditEffect, SearchProblem, Step
from ts_explore.check.projection import project

FULL, EMPTY = Counter(0, 0, "commit"), Counter(0, 0, "empty", initial=1)
PRODUCE = (Step(0, "ProducerAcquire", needs=1, effects=(CreditEffect(1, -1),)),
           Step(0, "ProducerCommit", effects=(CreditEffect(0, 1),)))


def consume(times: int) -> tuple[Step, ...]:
    """Wait and release the one-stage ring ``times`` times, counted with the other consumer (TS's tallies)."""
    return (Step(0, "ConsumerWait", needs=0, effects=(CreditEffect(0, -1, tally=0, every=2),)),
            Step(0, "ConsumerRelease", effects=(CreditEffect(1, 1, tally=1, every=2),))) * times


def problem(second: int, alias: tuple[frozenset[int], ...] = ()) -> SearchProblem:
    return SearchProblem(("load", "mma0", "mma1"), (PRODUCE * 3, consume(3), consume(second)), ("ring", "c"),
                         (FULL, EMPTY), tallies=2, alias=alias)


def test_a_consumer_one_stage_short_hides_in_tss_pooled_count_but_deadlocks_its_projection() -> None:
    """mma1 reads one of three stages: TS's pooled count lets mma0's releases stand in for mma1's, so the whole set
    finishes; alone with the loader, mma0 still finishes, but the loader's third acquire waits for a second
    release of mma1 that never comes (as on the hardware, where every consumer must free the slot)."""
    whole = problem(second=1)
    assert not search(whole).deadlocks
    alone0 = project(whole, "ring", "mma0", ("mma1",))
    assert alone0.tasks == ("load", "mma0") and all(e.tally == -1 for s in alone0.lanes[1] for e in s.effects)
    assert not search(alone0).deadlocks
    assert search(project(whole, "ring", "mma1", ("mma0",))).deadlocks
    assert not any(search(project(problem(second=3), "ring", keep, (drop,))).deadlocks
                   for keep, drop in (("mma0", "mma1"), ("mma1", "mma0")))


def test_consumers_that_touch_aliasing_resources_are_not_searched_apart() -> None:
    lanes = (PRODUCE * 2, consume(2) + (Step(1, "ProducerWork"),), consume(2) + (Step(1, "ProducerWork"),))
    aliased = SearchProblem(("load", "mma0", "mma1"), lanes, ("ring", "c"), (FULL, EMPTY), tallies=2,
                            alias=(frozenset(), frozenset({1})))
    with pytest.raises(ValueError, match="aliasing resources"):
        project(aliased, "ring", "mma0", ("mma1",))
