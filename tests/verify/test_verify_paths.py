"""Counterexamples: lanes match TS's checker schedules; replayed credits follow TS's credit rules."""

from __future__ import annotations

import contextlib
import io

import pytest
import verify_builders as B
from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ts_explore import gallery, verify
from ts_explore.analysis.cycles import find_cycle
from ts_explore.analysis.paths import cell, replay
from ts_explore.verification.trip_search import smallest_failing_trip_count
from ts_explore.model import Section, Stage
from ts_explore.model.verdict import CheckerStep, CreditModel, CreditPool, Lane


class _HeaderRecorder(ec._VerboseReporter):
    schedules: list = []

    def print_header(self, schedules, skipped_tile, alias_map):
        type(self).schedules = [[(e[0].name, e[1].name) for e in s] for s in schedules]

    def __getattribute__(self, name):
        if name.startswith("print_") and name != "print_header":
            return lambda *a, **k: None
        return super().__getattribute__(name)


def _ts_schedules(kwargs: dict, **check_kwargs) -> list:
    original = ec._VerboseReporter
    ec._VerboseReporter = _HeaderRecorder
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ec.check_all_interleavings(kwargs["tasks"], verbose=True, **check_kwargs)
    finally:
        ec._VerboseReporter = original
    return _HeaderRecorder.schedules


@pytest.mark.parametrize(
    "build, check_kwargs, variant",
    [
        (lambda: gallery.get("missing_release").broken(), {}, "normal"),
        (lambda: gallery.get("pdl_launch_before_wait").fixed(), {}, "normal"),
        (lambda: B.skipped_tile_deadlock(False), {"num_tiles": 2}, "normal"),
        (lambda: B.skipped_tile_deadlock(False), {"num_tiles": 2, "skipped_tile": True}, "skipped-tile"),
    ],
)
def test_lanes_are_the_checkers_schedules(build, check_kwargs, variant):
    v = verify(**build())
    run = next(r for r in v.runs if r.variant == variant)
    expected = _ts_schedules(build(), **check_kwargs)
    mine = [[(s.resource, s.stage.value) for s in lane.steps] for lane in run.lanes]
    assert mine == expected


def test_lane_steps_know_their_tree_step_iteration_and_tile():
    v = verify(**B.skipped_tile_deadlock(False))
    normal = v.runs[0]
    producer = normal.lanes[0]
    half = len(producer.steps) // 2
    assert [s.tile for s in producer.steps] == [0] * half + [1] * half
    commit = next(s for s in producer.steps if s.stage is Stage.PRODUCER_COMMIT)
    assert (commit.section, commit.iteration) == (Section.LOOP, 0)
    tree = v.task_set.task("Producer").schedule
    assert tree.step(commit.step_uid).stage is Stage.PRODUCER_COMMIT
    assert all(s.step_uid is not None for lane in normal.lanes for s in lane.steps)
    split = verify(**gallery.get("missing_release").fixed()).runs[0].lanes[0].steps[:2]
    assert [s.part for s in split] == ["write phase", "read phase"]


@pytest.mark.parametrize("name", [n for n in gallery.CASES])
def test_replayed_credits_agree_with_ts(gallery_verdicts, name):
    broken, _ = gallery_verdicts[name]
    for finding in broken.findings:
        inter = finding.interleaving
        assert inter is not None, f"{name}: no counterexample path"
        assert not inter.approximate  # every wait/acquire on the path found its credit
        assert inter.cursors[-1] == finding.cursors  # the path ends in TS's bad state
        if finding.kind == "deadlock":
            final = inter.credits[-1]
            for b in finding.blocked:
                pool = cell(final, b.resource)
                assert (pool.full if b.credit == "commit" else pool.empty) == 0


def test_missing_release_credit_story(gallery_verdicts):
    inter = gallery_verdicts["missing_release"][0].deadlocks[0].interleaving
    smem = [(cell(c, "smem").empty, cell(c, "smem").full) for c in inter.credits]
    assert smem[0] == (1, 0)  # one stage: one free slot, nothing committed
    acquire = [i for i, m in enumerate(inter.moves, 1) if m.stage is Stage.PRODUCER_ACQUIRE][0]
    commit = [i for i, m in enumerate(inter.moves, 1) if m.stage is Stage.PRODUCER_COMMIT][0]
    wait = [i for i, m in enumerate(inter.moves, 1) if m.stage is Stage.CONSUMER_WAIT][0]
    assert smem[acquire] == (0, 0) and smem[commit] == (0, 1) and smem[wait] == (0, 0)
    assert inter.changed[acquire] == (("smem", 0, "empty"),)
    assert smem[-1] == (0, 0)  # the release never comes


def _step(task, index, stage, resource="r"):
    return CheckerStep(task, index, resource, stage, 0, Section.LOOP, "", 0)


def test_replay_waits_for_every_producer_of_a_round():
    lanes = (Lane("A", (_step("A", 0, Stage.PRODUCER_COMMIT),)), Lane("B", (_step("B", 0, Stage.PRODUCER_COMMIT),)))
    model = CreditModel(pools=(CreditPool("r", 0, 2),), producers=(("r", 2),))
    inter = replay([lanes[0].steps[0], lanes[1].steps[0]], lanes, model)
    assert [cell(c, "r").full for c in inter.credits] == [0, 0, 1]  # the credit appears after both commits
    assert inter.changed[1] == () and inter.changed[2] == (("r", 0, "full"),)


def test_replay_flags_a_path_that_does_not_fit():
    lane = Lane("A", (_step("A", 0, Stage.CONSUMER_WAIT),))
    inter = replay([lane.steps[0]], (lane,), CreditModel(pools=(CreditPool("r", 0, 1),)))
    assert inter.approximate  # a wait with no commit credit: not TS's semantics


def test_find_cycle():
    assert find_cycle({"A": ["B"], "B": ["C"], "C": ["A"]}) == ("A", "B", "C", "A")
    assert find_cycle({"A": ["A"]}) == ("A", "A")
    assert find_cycle({"A": ["B"], "B": []}) == ()


def test_smallest_failing_trip_count():
    search = smallest_failing_trip_count(gallery.get("missing_release").builder(), 4)
    assert search.smallest == 2  # one stage: the second acquire is the first that can stall
    assert search.verdict.deadlocks and search.asked_verdict.deadlocks
    longer = smallest_failing_trip_count(gallery.get("consumer_longer").builder(), 5)
    assert longer.smallest == 1
    assert len(longer.verdict.deadlocks[0].interleaving) < len(longer.asked_verdict.deadlocks[0].interleaving)
    ok = smallest_failing_trip_count(gallery.get("consumer_longer").builder(broken=False), 3)
    assert ok.smallest is None and ok.asked_verdict.ok
    with pytest.raises(ValueError):
        smallest_failing_trip_count(gallery.get("cross_wait").builder(), 0)
