"""Our runs in TS's CheckResult shape become ExhaustiveRuns the existing drawings and stepper show.

The bridge (``ts_explore.reader.own_checker``) hands ``ts_search.convert_run``
what TS's checker and its path recorder give; these tests build a Verdict
from our run exactly the way ``verify()`` builds one from TS's, and draw it.
"""

from __future__ import annotations

import warnings

import pytest
from cutlass.experimental.task_scheduling import exhaustive_checker as ec

import ts_explore
from ts_explore import gallery
from ts_explore.model.verdict import CheckOutcome, Verdict
from ts_explore.reader import ts_search as ck
from ts_explore.reader.own_checker import check_all_interleavings
from ts_explore.reader.schedule import resource_namer
from ts_explore.reader.tasks import _all_resources, capture_task_set


def _verdict_from_ours(case: dict, reduce: bool = True, **kwargs) -> Verdict:
    """What verify() would return with our run in place of TS's (its conversion steps, in order)."""
    tasks, graph = case["tasks"], case["resource_dependency_graph"]
    task_set = capture_task_set(tasks, graph)
    resources = _all_resources(tasks, graph)
    name_of = resource_namer(resources)
    infos = {id(t): info for t, info in zip(tasks, task_set.tasks)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = check_all_interleavings(tasks, reduce=reduce, **kwargs)
    record = ck.RunRecord(dict(kwargs), run, run_by="ts-explore", paths=run.paths)
    lanes = ck.lanes_for(tasks, infos, name_of, num_tiles=int(kwargs.get("num_tiles", 1)))
    display = {getattr(r, "name", ""): name_of(r) for r in resources}
    exhaustive = ck.convert_run(record, lanes, ck.credit_model(tasks, name_of), [t.name for t in tasks], display,
                                run.paths, ())
    found = bool(run.deadlock_states or run.race_states or run.pdl_order_states)
    check = CheckOutcome("_exhaustive_aliasing_races", "exhaustive interleavings", not found)  # a cap is no failure
    return Verdict(checks=(check,), runs=(exhaustive,), task_set=task_set)


@pytest.mark.parametrize("reduce", [True, False])
def test_a_gallery_deadlock_is_drawn_and_stepped(reduce):
    v = _verdict_from_ours(gallery.get("missing_release").broken(), reduce=reduce)
    assert not v.ok and len(v.deadlocks) == 1
    deadlock = v.deadlocks[0]
    assert deadlock.interleaving is not None and not deadlock.interleaving.approximate
    assert "free slot of smem" in deadlock.explanation
    lanes = ts_explore.swimlanes(v).source
    assert "blocked here" in lanes
    graph = ts_explore.deadlock_graph(v).source
    assert "Load" in graph and "Store" in graph and "smem" in graph
    stepper = ts_explore.Stepper(v)
    assert stepper.moves == len(deadlock.interleaving.moves) > 0
    stepper.last_button.click()
    assert "Stuck:" in stepper.sentence.value


def test_the_converted_run_matches_the_one_verify_makes_with_ts():
    ours = _verdict_from_ours(gallery.get("cross_wait").broken(), reduce=False)
    theirs = ts_explore.verify(**gallery.get("cross_wait").broken())
    mine, ts = ours.deadlocks[0], theirs.deadlocks[0]
    assert (mine.cursors, mine.blocked, mine.cycle, mine.explanation) == (ts.cursors, ts.blocked, ts.cycle,
                                                                          ts.explanation)
    assert ts_explore.deadlock_graph(ours).source == ts_explore.deadlock_graph(theirs).source


@pytest.mark.parametrize("name, kind", [("smem_alias_race", "race"), ("pdl_launch_before_wait", "pdl-order")])
def test_races_and_pdl_violations_come_with_a_path(name, kind):
    v = _verdict_from_ours(gallery.get(name).broken())
    finding = v.findings[0]
    assert finding.kind == kind and finding.interleaving is not None
    assert ts_explore.swimlanes(v).source and ts_explore.deadlock_graph(v).source
    stepper = ts_explore.Stepper(v)
    stepper.last_button.click()
    assert "data-state='offending'" in stepper.lanes.value


def test_blocked_details_read_like_ts():
    case = gallery.get("consumer_longer").broken()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = check_all_interleavings(case["tasks"])
        ts = ec.check_all_interleavings(gallery.get("consumer_longer").broken()["tasks"])
    assert [d.format() for d in ours.deadlock_states[0].blocked_details] == [
        d.format() for d in ts.deadlock_states[0].blocked_details
    ]


def test_a_capped_run_is_inconclusive_not_safe():
    v = _verdict_from_ours(gallery.get("cross_wait").fixed(), max_states=3)
    assert v.status.value == "inconclusive" and not v.ok
