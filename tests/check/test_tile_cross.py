"""The tile cross-check: its own bound (lane period + lead), the unrolled comparison, and verify's scope.

The shapes are the issue's: two tasks with an aliased ring each, ordered by a
one-slot token pipe, so that one task's next tile runs beside the other's
current one; rings of 4 and 3 stages meet on a slot only at 5 tiles.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from tile_sets import LOOP, PIPE, RING, Buffer, TaskPlan, TileSetSpec, Use, drift

import ts_explore
from ts_explore import verify
from ts_explore.check.tile_cross import STATED_TILES, lane_period, task_lead, tile_bound, tile_cross_check
from ts_explore.model.verdict import Status
from ts_explore.reader.search_input import search_problem
from ts_explore.verification.engines import cross_check_tiles


def _at(spec: TileSetSpec, **kwargs):
    tasks = spec.build()["tasks"]

    def problem_at(n: int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return search_problem(tasks, num_tiles=n, **kwargs)
    return problem_at


def test_the_period_is_read_off_the_unrolled_lanes():
    at = _at(drift(4, 3))
    assert lane_period(at(25), 25, at(1).lane_lengths) == 12  # lcm(4 / gcd(4, 1), 3 / gcd(3, 1))
    at = _at(drift(4, 2))
    assert lane_period(at(25), 25, at(1).lane_lengths) == 4
    assert lane_period(at(3), 3, at(1).lane_lengths) is None  # not seen within the tiles given


def test_the_lead_comes_from_the_credits_of_the_pipes_between_tasks():
    assert task_lead(_at(drift(4, 3))(1)) == (2, "")  # one free slot: the producer leads by ceil(1/1) + 1
    assert task_lead(_at(drift(4, 3, pipe_stages=2))(1)) == (3, "")
    assert task_lead(_at(drift(4, 3, token=False))(1)) == (0, "")  # independent tasks need no bound


def test_the_bound_covers_every_tile_count_or_says_it_is_a_stated_count():
    bound = tile_bound(_at(drift(4, 3)))
    assert (bound.tiles, bound.covers, bound.period, bound.lead) == (14, True, 12, 2)
    assert bound.sentence == "1-14 tiles (period 12 + lead 2: covers every tile count)"
    short = tile_bound(_at(drift(4, 3)), max_tiles=6)
    assert (short.tiles, short.covers) == (6, False) and "searched only 6" in short.why


def test_an_unbalanced_pipe_leaves_a_stated_count():
    spec = TileSetSpec(0, (Buffer("ring0", RING, 2, 0), Buffer("pipe", PIPE, 2)),
                       (TaskPlan("T0", 1, (Use("ring0", "own", LOOP, 1), Use("pipe", "produce", LOOP, 2))),
                        TaskPlan("T1", 1, (Use("pipe", "consume", LOOP, 1),))))  # two commits a tile, one wait
    bound = tile_bound(_at(spec))
    assert (bound.tiles, bound.covers, bound.lead) == (STATED_TILES, False, None)
    assert "does not give back per tile what it takes" in bound.why
    assert bound.sentence.startswith(f"1-{STATED_TILES} tiles (stated count: ")


def test_a_clean_first_answer_the_unrolled_search_contradicts_is_a_disagreement():
    both = tile_cross_check([_at(drift(4, 3))], frozenset(), True)
    assert not both.agree and both.first == "safe" and both.second == "race"
    assert dict(both.found_at) == {"race": 5}
    assert "says safe" in both.reason and "says race" in both.reason and "race at 5 tiles" in both.reason
    fine = tile_cross_check([_at(drift(4, 4))], frozenset(), True)
    assert fine.agree and fine.second == "safe" and fine.bound.covers


def test_the_unrolled_search_confirms_a_finding_of_the_first():
    both = tile_cross_check([_at(drift(4, 3))], frozenset({"race"}), True)
    assert both.agree and both.second == "race"


def test_verify_cross_check_never_calls_the_drifting_race_safe():
    v = verify(**drift(4, 3).build(), cross_check=True)
    assert v.status is not Status.SAFE, v.scope.sentence()
    if v.status is Status.INCONCLUSIVE:  # the first answer missed it: the tile cross-check names both answers
        assert v.scope.tile_check is not None and not v.scope.tile_check.agree
        assert any("says safe" in r and "says race" in r for r in v.reasons)
        assert "Tiles cross-checked" in v.scope.sentence()


def test_cross_check_tiles_compares_what_verify_searched_with_the_unrolled_search():
    spec = drift(4, 3)
    two = verify(**spec.build(), tiles=2)  # a clean first answer over 1 and 2 tiles only
    assert two.status is Status.SAFE
    tasks = spec.build()["tasks"]
    check = cross_check_tiles(list(two.runs), [lambda n: search_problem(tasks, num_tiles=n)])
    assert check is not None and not check.agree and (check.first, check.second) == ("safe", "race")
    assert check.tiles == 14 and check.covers
    unsafe = drift(1, 1).build()["tasks"]
    assert cross_check_tiles(list(verify(**drift(1, 1).build(), tiles=2).runs),
                             [lambda n: search_problem(unsafe, num_tiles=n)]) is None  # unsafe


def test_verify_records_an_agreeing_tile_cross_check_in_the_scope():
    v = verify(**drift(4, 4).build(), cross_check=True)
    assert v.status is Status.SAFE
    check = v.scope.tile_check
    assert check is not None and check.agree and check.covers and check.tiles == 6
    assert "Tiles cross-checked: an unrolled search of every count 1-6 (period 4 + lead 2" in v.scope.sentence()
    assert v.to_dict()["scope"]["tile_check"]["tiles"] == 6
    assert verify(**drift(4, 4).build()).scope.tile_check is None  # only when asked for
    assert verify(**drift(4, 4).build(), cross_check=True, tiles=3).scope.tile_check is None  # the count was given


def test_the_tile_cross_check_shares_no_argument_with_the_tile_plan():
    root = Path(ts_explore.__file__).parent
    for module in ("check/tile_cross.py", "verification/engines.py"):
        tree = ast.parse((root / module).read_text())
        imported = {(node.module or "") for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not {m for m in imported if "analysis" in m}, (module, imported)
