"""SAFE only for a finished exhaustive search of the instance; everything else INCONCLUSIVE with its reason."""

from __future__ import annotations

import json

import pytest
import verify_builders as B

from ts_explore import gallery, verify
from ts_explore.model.verdict import Status, Verdict


def test_search_switched_off_is_inconclusive_even_for_a_racy_schedule():
    racy = verify(**gallery.get("smem_alias_race").broken(), exhaustive_deadlock_race_check=False, checker="ts")
    assert racy.status is Status.INCONCLUSIVE and not racy.ok
    assert racy.reasons == ("the exhaustive search was switched off (exhaustive_deadlock_race_check=False)",)
    assert not racy.scope.searched and racy.runs == ()
    fine = verify(**gallery.get("cross_wait").fixed(), exhaustive_deadlock_race_check=False, checker="ts")
    assert fine.status is Status.INCONCLUSIVE and "switched off" in fine.summary()


def test_our_checker_searches_when_ts_search_is_switched_off():
    racy = verify(**gallery.get("smem_alias_race").broken(), exhaustive_deadlock_race_check=False)
    assert racy.status is Status.UNSAFE and racy.races and racy.scope.searched
    fine = verify(**gallery.get("cross_wait").fixed(), exhaustive_deadlock_race_check=False)
    assert fine.status is Status.SAFE and fine.scope.engine.startswith("ts-explore checker")


def test_a_verdict_without_runs_is_not_safe(gallery_verdicts):
    fixed = gallery_verdicts["cross_wait"][1]
    assert fixed.ok
    bare = Verdict(checks=fixed.checks)
    assert bare.status is Status.INCONCLUSIVE and bare.reasons == ("no exhaustive search ran",)


def test_an_instance_that_does_no_work_is_named_not_blessed():
    v = verify(**B.idle_copy(0), instance="CTA 100")
    assert v.status is Status.INCONCLUSIVE
    assert v.reasons == ("CTA 100 does no work (0 iterations)",)
    assert v.summary() == "not proven: CTA 100 does no work (0 iterations)"
    assert [t.iterations for t in v.scope.tasks] == [0, 0] and v.scope.vacuous
    working = verify(**B.idle_copy(3), instance="CTA 7")
    assert working.ok and working.summary().startswith("safe for CTA 7:")


def test_a_scheduler_task_with_an_empty_loop_is_not_idle():
    from ts_explore.scenarios import get
    from ts_explore.scenarios.knobs import configure

    sc = get("persistent_copy")
    v = verify(**sc.build(configure(sc, {"queue": "clc"})).verify_kwargs())
    assert v.ok, v.summary()
    scheduler = next(t for t in v.scope.tasks if t.task == "scheduler")
    assert scheduler.iterations == 0 and scheduler.loop_steps == 0 and not scheduler.idle


def test_zero_tiles_per_cta_does_no_work():
    v = verify(**B.persistent_pair(), tiles=0, instance="CTA 395")
    assert v.reasons == ("CTA 395 does no work (0 work tiles)",)


def test_runtime_bound_is_in_the_scope():
    v = verify(**B.runtime_domain(False))
    assert [(t.task, t.exact, t.iterations) for t in v.scope.tasks] == [("Producer", False, 1), ("Consumer", False, 1)]
    assert all("stand-in length" in r for r in v.reasons)


@pytest.mark.parametrize("checker,engine", [("ts", "TS exhaustive_checker"),
                                            ("auto", "ts-explore checker (partial-order reduced)"),
                                            ("unreduced", "ts-explore checker (every interleaving)")])
def test_scope_names_runs_states_seconds_and_engine(checker, engine):
    v = verify(**B.opaque_epilogue(), checker=checker)
    scope = v.scope
    assert [r.label for r in scope.runs] == ["normal (epilogue=False)", "normal (epilogue=True)"]
    assert scope.states == sum(r.states_explored for r in v.runs) > 0
    assert scope.seconds >= 0 and all(r.engine == engine for r in scope.runs) and scope.engine == engine
    assert engine in scope.sentence()
    assert any("keeps one value for the whole run" in a for a in scope.assumptions)
    text = scope.sentence()
    assert "Producer: domain_loop(0, 2, 1), 2 iterations" in text and "explored" in text


def test_callers_extend_what_is_not_modelled_and_name_the_instance():
    async_reads = "asynchronous shared-memory reads by tensor-core instructions"
    v = verify(**gallery.get("cross_wait").fixed(), instance="CTAs 0-394", not_modelled=[async_reads])
    assert async_reads in v.scope.not_modelled and "Instance: CTAs 0-394." in v.scope.sentence()
    renamed = v.scoped(instance="CTA 0", not_modelled=("something else",))
    assert renamed.scope.instance == "CTA 0" and renamed.scope.not_modelled[-1] == "something else"
    assert renamed.ok


def test_json_carries_status_reasons_and_scope():
    data = json.loads(json.dumps(verify(**B.idle_copy(0), instance="CTA 9").to_dict()))
    assert data["status"] == "inconclusive" and data["ok"] is False
    assert data["reasons"] == ["CTA 9 does no work (0 iterations)"]
    assert data["scope"]["instance"] == "CTA 9" and "sentence" in data["scope"]
    assert data["scope"]["tasks"][0]["iterations"] == 0


def test_unsafe_stays_unsafe_whatever_the_scope():
    v = verify(**gallery.get("cross_wait").broken(), instance="CTA 3")
    assert v.status is Status.UNSAFE and v.reasons == ()


def test_a_failure_to_read_ts_results_is_inconclusive_not_unsafe(monkeypatch):
    from ts_explore.reader import lanes as ts_search  # where the checker's lanes are read

    def boom(*args, **kwargs):
        raise AttributeError("unexpected checker entry")

    monkeypatch.setattr(ts_search, "lanes_for", boom)
    v = verify(**gallery.get("cross_wait").fixed())
    assert v.status is Status.INCONCLUSIVE
    assert any("could not read TS's search results" in r for r in v.reasons)


# -- persistent schedules: the tile counts --------------------------------------------


@pytest.mark.parametrize("stages, rows", [(2, 1), (2, 4), (8, 1)])
def test_persistent_pair_is_proven_for_every_tile_count_by_the_tile_loop_search(stages, rows):
    v = verify(**B.persistent_pair(stages=stages, rows=rows))  # the producer may run up to stages + 1 tiles ahead
    assert v.ok, v.summary()
    assert sorted(r.num_tiles for r in v.runs) == [2]  # TS's own two tiles, for the Stepper and the swimlanes
    (loop,) = v.scope.abstractions
    assert loop.name == "tile-loop" and loop.sufficient and "searched as a cycle" in loop.sentence
    assert v.scope.tiles_covered == "every number of work tiles (tile-loop search)"
    exact = verify(**B.persistent_pair(stages=stages, rows=rows), tiles=3)
    assert exact.ok and 3 in {r.num_tiles for r in exact.runs} and exact.scope.tiles_per_cta == 3


def test_skipped_tiles_that_only_touch_the_queue_may_mix_with_normal_ones():
    v = verify(**B.persistent_pair(skip=True))
    assert v.ok, v.summary()
    mixed = next(a for a in v.scope.abstractions if a.name == "skipped-tile")
    assert mixed.sufficient and "may mix in any order" in mixed.sentence


def test_skipped_tiles_that_move_credits_leave_mixed_sequences_unproven():
    v = verify(**B.persistent_pair(skip=True, signal_outside=True))
    assert v.status is Status.INCONCLUSIVE
    assert v.reasons == ("the skipped-tile runs cover tiles that all skip; sequences that mix skipped and normal "
                         "tiles are not searched",)
    one_tile = verify(**B.persistent_pair(skip=True, signal_outside=True), tiles=1)  # skipped or not: both searched
    assert one_tile.ok, one_tile.summary()


def test_tiles_must_be_a_count():
    with pytest.raises(TypeError, match="number of work tiles"):
        verify(**B.persistent_pair(), tiles=-1)


def test_a_needed_run_that_did_not_run_is_named():
    from dataclasses import replace

    from ts_explore.reader.capture_set import capture_set
    from ts_explore.verification.verify import Ask, verify_captured

    kwargs = gallery.get("cross_wait").fixed()
    captured, kept = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {})
    extra = {"num_tiles": 1, "skipped_tile": True, "opaque_assignment": {}}  # needed, never read nor searched
    v = verify_captured(replace(captured, runs=(*captured.runs, extra)), Ask(), {}, live=kept)
    assert v.status is Status.INCONCLUSIVE
    assert v.reasons == ("needed search run(s) did not run: skipped-tile",)


def test_given_tiles_with_skipping_search_every_shorter_count_of_normal_tiles():
    v = verify(**B.persistent_pair(stages=8, skip=True), tiles=3)
    assert v.ok, v.summary()
    assert {r.num_tiles for r in v.runs} == {1, 2, 3}
    too_many = verify(**B.persistent_pair(stages=8, skip=True), tiles=8)
    assert too_many.status is Status.INCONCLUSIVE and "mix skipped and normal tiles" in too_many.reasons[0]
