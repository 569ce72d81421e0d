"""Every gallery case: the broken schedule fails for its stated cause, the fixed twin is safe."""

from __future__ import annotations

import pytest

from ts_explore import gallery

CASE_NAMES = list(gallery.CASES)


def test_gallery_has_at_least_eight_distinct_causes():
    assert len(CASE_NAMES) >= 8
    assert len({c.cause for c in gallery.CASES.values()}) == len(CASE_NAMES)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_broken_fails_naming_its_cause(gallery_verdicts, name):
    broken, _ = gallery_verdicts[name]
    assert not broken.ok
    assert broken.status.value == "unsafe"
    summary = broken.summary()
    for word in gallery.get(name).expect:
        assert word in summary, f"{word!r} missing from the summary of {name}:\n{summary}"


@pytest.mark.parametrize("name", CASE_NAMES)
def test_fixed_twin_is_safe(gallery_verdicts, name):
    _, fixed = gallery_verdicts[name]
    assert fixed.ok, fixed.summary()
    assert fixed.summary().startswith("safe:")
    assert not fixed.findings and not fixed.failed_checks


@pytest.mark.parametrize("name", CASE_NAMES)
def test_builders_make_fresh_objects(name):
    case = gallery.get(name)
    a, b = case.broken(), case.broken()
    assert not {id(t) for t in a["tasks"]} & {id(t) for t in b["tasks"]}
    assert not {id(r) for r in a["resource_dependency_graph"]} & {id(r) for r in b["resource_dependency_graph"]}


def test_deadlock_cases_name_the_blocked_tasks(gallery_verdicts):
    broken, _ = gallery_verdicts["cross_wait"]
    (deadlock,) = broken.deadlocks
    assert {(b.task, b.resource, b.stage.value) for b in deadlock.blocked} == {
        ("Ping", "right", "ConsumerWait"),
        ("Pong", "left", "ConsumerWait"),
    }
    assert deadlock.cycle == ("Ping", "Pong", "Ping")
    assert "only Pong commits right, after its own wait on left" in broken.summary()


def test_three_task_cycle_is_found(gallery_verdicts):
    (deadlock,) = gallery_verdicts["cycle_of_three"][0].deadlocks
    assert deadlock.cycle == ("Alpha", "Gamma", "Beta", "Alpha")


def test_no_provider_means_no_cycle(gallery_verdicts):
    (deadlock,) = gallery_verdicts["consumer_longer"][0].deadlocks
    assert deadlock.cycle == ()
    assert deadlock.blocked[0].freed_by == ()
    assert "no task commits smem again" in deadlock.describe()


def test_race_and_pdl_details(gallery_verdicts):
    (race,) = gallery_verdicts["smem_alias_race"][0].races
    assert (race.writer_task, race.writer_resource, race.victim_task, race.victim_resource) == (
        "WriterA", "tile_a", "WriterB", "tile_b")
    assert race.overlap == "smem[0:1024]"
    (pdl,) = gallery_verdicts["pdl_launch_before_wait"][0].pdl_violations
    assert (pdl.launch_task, pdl.launch_resource) == ("Producer", "pdl_launch")


def test_check_failures_carry_ts_message_and_hint(gallery_verdicts):
    broken, _ = gallery_verdicts["workqueue_in_loop"]
    (check,) = broken.failed_checks
    assert check.name == "_verify_work_queue_schedule"
    assert check.error_type == "AssertionError"  # not converted by TS's warn-only mode, still caught
    assert "after the domain loop" in check.hint
    dma = gallery_verdicts["dma_release_early"][0].failed_checks[0]
    assert dma.name == "_verify_dma_ordering" and "smem_a" in dma.message


def test_skippable_variant_surfaces_as_a_recording_error():
    rec = gallery.get("workqueue_in_loop").recording()
    assert not rec.ok
    assert rec.error.rule == "workqueue-in-skippable"


def test_unknown_case_lists_the_gallery():
    with pytest.raises(KeyError, match="cross_wait"):
        gallery.get("nope")
