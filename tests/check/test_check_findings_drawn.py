"""Our engine's findings reach the drawings and the stepper exactly as TS's do.

``verify(checker="reduced")`` and ``checker="unreduced"`` search with
ts-explore's engine and tell its findings in the model directly; these tests
draw and step the verdicts and hold the unreduced one against TS's search
(``checker="ts"``) on the same case.
"""

from __future__ import annotations

import pytest

import ts_explore
from ts_explore import gallery


def _ours(case: dict, reduce: bool = True, **kwargs) -> ts_explore.Verdict:
    return ts_explore.verify(**case, checker="reduced" if reduce else "unreduced", **kwargs)


@pytest.mark.parametrize("reduce", [True, False])
def test_a_gallery_deadlock_is_drawn_and_stepped(reduce):
    v = _ours(gallery.get("missing_release").broken(), reduce=reduce)
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


def test_the_unreduced_deadlock_is_the_one_ts_finds():
    ours = _ours(gallery.get("cross_wait").broken(), reduce=False)
    theirs = ts_explore.verify(**gallery.get("cross_wait").broken(), checker="ts")
    mine, ts = ours.deadlocks[0], theirs.deadlocks[0]
    assert (mine.cursors, mine.blocked, mine.cycle, mine.explanation) == (ts.cursors, ts.blocked, ts.cycle,
                                                                          ts.explanation)
    assert ts_explore.deadlock_graph(ours).source == ts_explore.deadlock_graph(theirs).source


@pytest.mark.parametrize("name, kind", [("smem_alias_race", "race"), ("pdl_launch_before_wait", "pdl-order")])
def test_races_and_pdl_violations_come_with_a_path(name, kind):
    v = _ours(gallery.get(name).broken())
    finding = v.findings[0]
    assert finding.kind == kind and finding.interleaving is not None
    assert ts_explore.swimlanes(v).source and ts_explore.deadlock_graph(v).source
    stepper = ts_explore.Stepper(v)
    stepper.last_button.click()
    assert "data-state='offending'" in stepper.lanes.value


def test_a_capped_run_is_inconclusive_not_safe():
    v = _ours(gallery.get("cross_wait").fixed(), max_states=3)
    assert v.status.value == "inconclusive" and not v.ok
    assert any("cap" in reason or "states" in reason for reason in v.reasons), v.reasons
