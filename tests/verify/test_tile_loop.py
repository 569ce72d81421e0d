"""SAFE for every number of work tiles: the tile-loop search against races that need 3 or 4 tiles to appear."""

from __future__ import annotations

import warnings

import pytest
from tile_loop_sets import persistent_set

from ts_explore import verify
from ts_explore.check.engine import search
from ts_explore.check.tile_search import search_tile_loop
from ts_explore.model.verdict import Status
from ts_explore.reader.search_input import search_problem
from ts_explore.reader.tile_loop import tile_loop


def _piped(stages_a: int, stages_b: int = 1, offset_b: int = 0) -> dict:
    """A fills ring ``ra`` then signals B through a one-slot token pipe; B waits it, then fills ``rb``.

    The pipe keeps B at most a tile behind A, so ``ra``'s slot ``t mod stages_a`` meets ``rb``'s only when the
    phases line up: at 3 tiles for two stages, at 4 for three.
    """
    return persistent_set({"ra": (stages_a, 0), "rb": (stages_b, offset_b), "pipe": (1, 0)},
                          {"A": [("ra", "own", 1), ("pipe", "produce", 1)],
                           "B": [("pipe", "consume", 1), ("rb", "own", 1)]})


def _first_finding(build, upto: int) -> int | None:
    """The smallest tile count whose unrolled search (every interleaving) finds something."""
    for n in range(1, upto + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = search_problem(build()["tasks"], num_tiles=n)
        if search(problem, reduce=False).findings:
            return n
    return None


@pytest.mark.parametrize("stages, tiles", [(2, 3), (3, 4)])
def test_a_race_that_needs_several_tiles_is_unsafe_by_default(stages: int, tiles: int) -> None:
    assert _first_finding(lambda: _piped(stages), tiles) == tiles  # 1..tiles-1 unrolled: clean
    v = verify(**_piped(stages))
    assert v.status is Status.UNSAFE, v.summary()
    (run,) = [r for r in v.runs if r.races]
    assert run.num_tiles == tiles and run.races[0].interleaving is not None
    (loop,) = [a for a in v.scope.abstractions if a.name == "tile-loop"]
    assert f"race at {tiles} work tiles" in loop.sentence


def test_a_race_free_persistent_set_is_safe_for_every_number_of_work_tiles() -> None:
    v = verify(**_piped(3, 2, offset_b=1024))  # the rings share no bytes
    assert v.status is Status.SAFE, v.summary()
    assert v.scope.tiles_covered == "every number of work tiles (tile-loop search)"
    sentence = v.scope.sentence()
    assert "covered: every number of work tiles" in sentence and "searched as a cycle" in sentence
    assert v.to_dict()["scope"]["tiles_covered"] == v.scope.tiles_covered
    assert "work tiles covered" in v._repr_html_() and "every number of work tiles" in v._repr_html_()


def test_a_fixed_tile_count_still_searches_exactly_that_count() -> None:
    v = verify(**_piped(3), tiles=3)
    assert v.status is Status.SAFE and v.scope.tiles_covered.startswith("exactly 3 work tiles")
    assert verify(**_piped(3), tiles=4).status is Status.UNSAFE


def test_ts_reference_search_covers_only_its_two_tiles() -> None:
    v = verify(**_piped(3, 2, offset_b=1024), checker="ts")
    assert v.status is Status.INCONCLUSIVE
    assert any("tile-loop search" in r and "checker='auto'" in r for r in v.reasons), v.reasons


@pytest.mark.parametrize("plans", [
    {"A": [("ra", "own", 2), ("pipe", "produce", 1)], "B": [("pipe", "consume", 1), ("rb", "own", 1)]},
    {"A": [("ra", "produce", 1)], "B": [("ra", "consume", 1), ("rb", "own", 2)]},
    {"A": [("ra", "produce", 2)], "B": [("ra", "consume", 2), ("pipe", "produce", 1)],
     "C": [("pipe", "consume", 1), ("rb", "own", 1)]},
])
@pytest.mark.parametrize("stages", [(2, 3), (3, 1), (4, 2)])
def test_the_tile_loop_search_agrees_with_unrolled_searches(plans: dict, stages: tuple[int, int]) -> None:
    """Its answer (finding or not) is the unrolled searches' over 1..8 tiles, past every phase of these rings."""
    def build() -> dict:
        return persistent_set({"ra": (stages[0], 0), "rb": (stages[1], 0), "pipe": (1, 0)}, plans)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop, why = tile_loop(build()["tasks"])
    assert loop is not None, why
    result = search_tile_loop(loop)
    first = _first_finding(build, 8)
    assert bool(result.findings) == (first is not None), (result, first)
    if result.findings:
        assert _first_finding(build, result.findings[0].tiles) is not None
    else:
        assert result.proven
