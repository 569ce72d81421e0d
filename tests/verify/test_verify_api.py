"""verify(): quiet, never raising for a failing schedule, honest about what it could not prove."""

from __future__ import annotations

import json
import warnings

import pytest
import verify_builders as B

import ts_explore
from ts_explore import gallery, verify
from ts_explore.reader import checks as checks_module
from ts_explore.model.verdict import ExhaustiveRun, CreditModel, Verdict


def test_public_names_resolve():
    assert callable(ts_explore.verify)
    assert ts_explore.Verdict is Verdict
    assert ts_explore.gallery.CASES


def test_verify_prints_nothing_and_warns_nothing(capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v1 = verify(**B.head_loop_overlap())
        v2 = verify(**gallery.get("cross_wait").broken(), verbose=True)  # TS's chattiest mode
        v3 = verify(**B.runtime_domain(False))
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert caught == []
    assert "[head-loop-overlap] WARNING" in v1.raw_output
    assert "Schedule is blocked!" in v2.raw_output
    assert v3.domain_notes and not v3.ok


def test_printed_warnings_become_notes():
    v = verify(**B.head_loop_overlap())
    assert v.ok
    (note,) = [n for n in v.warnings if n.kind == "head-loop-overlap"]
    assert (note.task, note.resource) == ("Producer", "smem")


def test_misuse_raises_type_error():
    case = gallery.get("cross_wait")
    with pytest.raises(TypeError, match="list of TS Task"):
        verify(tasks="Ping", resource_dependency_graph={})
    with pytest.raises(TypeError, match="TS Task objects"):
        verify(tasks=[1, 2], resource_dependency_graph={})
    with pytest.raises(TypeError, match="resource_dependency_graph"):
        verify(tasks=case.broken()["tasks"], resource_dependency_graph=[1])
    kw = case.broken()
    graph = {k: (v[0] if v else None) for k, v in kw["resource_dependency_graph"].items()}
    with pytest.raises(TypeError, match="LIST of upstream"):
        verify(tasks=kw["tasks"], resource_dependency_graph=graph)
    with pytest.raises(TypeError, match="unknown TaskManager argument"):
        verify(**case.broken(), not_an_option=True)
    kw = case.broken()
    by_name = {getattr(k, "name", k): [getattr(u, "name", u) for u in v] for k, v in kw["resource_dependency_graph"].items()}
    with pytest.raises(TypeError, match=r"resource objects the tasks use, not names.*got 'left' \(str\)"):
        verify(tasks=kw["tasks"], resource_dependency_graph=by_name)


def test_taskmanager_setup_error_is_a_failed_check():
    v = verify(tasks=gallery.get("cross_wait").broken()["tasks"], resource_dependency_graph={})
    assert not v.ok
    (check,) = v.checks
    assert check.name == "TaskManager" and not check.passed
    assert "non-empty" in check.message
    assert check.problem is not None and check.problem.message == check.message


def test_unexpected_exception_becomes_a_failed_check(monkeypatch):
    def boom(self):
        raise KeyError("register table")

    monkeypatch.setattr(checks_module.ObservedTaskManager, "_assign_default_task_registers", boom)
    v = verify(**gallery.get("cross_wait").fixed())
    assert not v.ok
    assert v.checks[0].error_type == "KeyError"
    assert "TaskManager construction" in v.summary()


def test_every_ts_check_is_listed_by_name():
    v = verify(**gallery.get("cross_wait").fixed())
    names = [c.name for c in v.checks]
    assert names[0] == "_print_task_schedules" and names[-1] == "_exhaustive_aliasing_races"
    assert "_verify_dma_ordering" in names and len(names) == len(set(names))
    assert all(c.passed and c.title for c in v.checks)


def test_runtime_domain_is_never_reported_safe():
    v = verify(**B.runtime_domain(False))
    assert not v.ok and v.status.value == "inconclusive"
    assert {d.task for d in v.domain_notes} == {"Producer", "Consumer"}
    assert all(d.checked_iterations == 1 for d in v.domain_notes)
    assert "not proven" in v.summary()
    broken = verify(**B.runtime_domain(True))
    assert broken.status.value == "unsafe" and broken.possible_false_positive
    assert "possible false positive" in broken.summary()


def test_skipped_tile_variant_is_checked():
    v = verify(**B.skipped_tile_deadlock(True))
    assert [r.variant for r in v.runs] == ["normal", "skipped-tile"]
    normal, skipped = v.runs
    assert normal.safe and not skipped.safe
    assert skipped.num_tiles == 2
    (deadlock,) = v.deadlocks
    assert deadlock.variant == "skipped-tile"
    assert deadlock.blocked[0].task == "Waiter"
    assert verify(**B.skipped_tile_deadlock(False)).ok


def test_variants_taskmanager_skipped_are_run_by_us():
    # a lone waiter stalls on normal tiles; TaskManager would stop there and never run the skipped-tile variant
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
    from cutlass.experimental.task_scheduling.task import Task

    from ts_explore.seed_examples import resources as R
    from ts_explore.seed_examples.seed import OversubscribedQueue

    sig = R.Signal(name="sig", pipeline_config=R.async_pipeline(1))
    wq = R.static_queue(cls=OversubscribedQueue)

    @schedule
    def waiter(sig, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtl:
            with wtl.skippable(), domain_loop(0, 1, 1):
                sig.wait()
                sig.consume()
                sig.release()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    task = Task([sig, wq], [], 0, 1, schedule=waiter(sig, wq), name="Lonely")
    v = verify(tasks=[task], resource_dependency_graph={sig: [], wq: []})
    assert [(r.variant, r.run_by) for r in v.runs] == [("normal", "ts-explore"), ("skipped-tile", "ts-explore")]
    assert not v.runs[0].safe and v.runs[1].safe


def test_opaque_conditions_get_one_run_per_value():
    v = verify(**B.opaque_epilogue())
    assert v.ok
    assert [r.opaque for r in v.runs] == [(("epilogue", False),), (("epilogue", True),)]


def test_state_cap_makes_the_verdict_inconclusive(gallery_verdicts):
    fixed = gallery_verdicts["cross_wait"][1]
    capped = ExhaustiveRun("normal", (), 1, 1000, 0, True, (), (), (), (), CreditModel(()))
    v = Verdict(checks=fixed.checks, runs=(capped,))
    assert v.status.value == "inconclusive" and not v.ok
    assert "state cap" in v.summary()


def test_to_dict_is_json(gallery_verdicts):
    for broken, fixed in gallery_verdicts.values():
        for v in (broken, fixed):
            data = json.loads(json.dumps(v.to_dict()))
            assert data["ok"] == v.ok and data["status"] == v.status.value
            assert data["summary"] == v.summary()
    data = gallery_verdicts["cross_wait"][0].to_dict()
    assert data["runs"][0]["deadlocks"][0]["blocked"][0]["task"] == "Ping"


def test_html_table(gallery_verdicts):
    text = gallery_verdicts["smem_alias_race"][0]._repr_html_()
    assert "&#10007;" in text and "&#10003;" in text and "race" in text and "raw output" in text
    assert "SAFE" in gallery_verdicts["smem_alias_race"][1]._repr_html_()


def test_highlight_keys_point_at_tree_steps(gallery_verdicts):
    v = gallery_verdicts["missing_release"][0]
    keys = v.highlight_keys()
    assert ("Load", 1) in keys and ("Store", 0) in keys  # Load's acquire, Store's wait
    tree = v.task_set.task("Load").schedule
    assert tree.step(1).stage.value == "ProducerAcquire"
    race_keys = gallery_verdicts["smem_alias_race"][0].highlight_keys()
    assert {k[0] for k in race_keys} == {"WriterA", "WriterB"}


def test_schedule_graph_marks_blocked_steps(gallery_verdicts):
    from ts_explore.render import style

    v = gallery_verdicts["cross_wait"][0]
    dot = ts_explore.schedule_graph(v.task_set, verdict=v).source
    assert dot.count(style.BLOCKED_BORDER) == 2
    assert ts_explore.schedule_graph(v.task_set).source.count(style.BLOCKED_BORDER) == 0


def test_simulation_blocked_lines_map_to_tasks_even_with_cut_names():
    v = verify(**B.long_names())
    assert [(b.task, b.resource) for b in v.simulation_blocked] == [
        ("Ping", "left_buffer_rope"), ("Pong", "left_buffer_ring")]
    assert all(b.step_uid == 0 for b in v.simulation_blocked)


def test_one_search_per_variant_when_the_simulation_already_failed(monkeypatch):
    from cutlass.experimental.task_scheduling import exhaustive_checker as ec

    calls = []
    original = ec.check_all_interleavings

    def counting(*args, **kwargs):
        calls.append(kwargs.get("verbose"))
        return original(*args, **kwargs)

    monkeypatch.setattr(ec, "check_all_interleavings", counting)
    v = verify(**gallery.get("missing_release").broken(), checker="ts")
    assert calls == [True]  # the path was recorded during TaskManager's own search
    assert v.deadlocks[0].interleaving is not None
    calls.clear()
    v = verify(**gallery.get("smem_alias_race").broken(), checker="ts")  # simulation passes: search, then the path
    assert calls == [False, True] and v.races[0].interleaving is not None


def test_unconsumed_outputs_are_noted():
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
    from cutlass.experimental.task_scheduling.task import Task

    from ts_explore.seed_examples import resources as R

    src, dst = R.GmemSource(name="src"), R.GmemSink(name="dst")

    @schedule
    def copy(src, dst):
        with domain_loop(0, 2, 1):
            src.get_item()  # read, then dropped: nothing consumes the value
            item = src.get_item()
            dst.set_item(item)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TS warns about the dropped value while recording
        task = Task([src], [dst], 0, 1, schedule=copy(src, dst), name="Copy")
    v = verify(tasks=[task], resource_dependency_graph={dst: [src], src: []})
    (note,) = [n for n in v.warnings if n.kind == "unconsumed-output"]
    assert (note.task, note.resource) == ("Copy", "src") and "item" in note.message


def test_work_queue_tiles_are_not_unconsumed_outputs():
    v = verify(**B.skipped_tile_deadlock(False))  # both tasks call wq.get_and_advance_work_tile()
    assert v.ok and not [n for n in v.warnings if n.kind == "unconsumed-output"]


def test_a_failure_while_reading_ts_results_is_a_failed_check(monkeypatch):
    from ts_explore.reader import lanes as checker  # where the checker's lanes are read

    def boom(*args, **kwargs):
        raise AttributeError("unexpected checker entry")

    monkeypatch.setattr(checker, "lanes_for", boom)
    v = verify(**gallery.get("cross_wait").broken())
    assert not v.ok
    failed = {c.name: c for c in v.failed_checks}
    assert "unexpected checker entry" in failed["ts-explore analysis"].message
    assert "_exhaustive_aliasing_races" in failed  # TS's own verdict is still there


@pytest.mark.parametrize("cap, error, words", [
    (-1, ValueError, "at least 1 state"), (0, ValueError, "at least 1 state"),
    (2.5, TypeError, "whole number of states"), (True, TypeError, "whole number of states"),
])
def test_a_bad_state_cap_is_refused_before_anything_runs(cap, error, words):
    with pytest.raises(error, match=rf"verify\(max_states={cap!r}\): .*{words}"):
        verify(**gallery.get("cross_wait").fixed(), max_states=cap)
