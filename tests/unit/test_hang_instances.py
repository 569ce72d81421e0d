"""Hang reports on the CPU, from synthetic snapshots of a hung launch: every distinct instance of the launch is
predicted apart (CTAs with 9 tiles block at another iteration than CTAs with 8), measured warps are paired with
the prediction for their own CTAs, and group lines say which tiles their warps were on."""

from __future__ import annotations

import pytest

from ts_explore.analysis.timeline_hang import agrees, refused_instances
from ts_explore.gpu.plan import plans_for
from ts_explore.gpu.safety import prove
from ts_explore.gpu.trace_run import hang_report
from ts_explore.model import Stage
from ts_explore.model.hang import ENTERED, LEFT, HangReport, PredictedBlock, WarpProgress
from ts_explore.model.plan import DeviceLimits
from ts_explore.model.schedule import Section
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get

SC = get("pipelined_copy")
H200 = DeviceLimits.h200()


@pytest.fixture(scope="module")
def uneven() -> tuple:
    """CONSUMER_EXTRA over 4 CTAs and 34 tiles: CTAs 0-1 run 9 tiles, CTAs 2-3 run 8; both instances unsafe."""
    cfg = SC.config(fault="consumer_extra", ctas=4)
    plans = plans_for(SC, cfg, (34 * 4096,), H200)
    gate = prove(SC, cfg, plans)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    wait = next(s for s in ts.task("store").schedule.steps() if s.stage is Stage.CONSUMER_WAIT)
    acquire = next(s for s in ts.task("load").schedule.steps() if s.stage is Stage.PRODUCER_ACQUIRE)
    return cfg, plans, gate, wait, acquire


def snapshot(wait, acquire, stuck_at: dict[int, int]) -> tuple[WarpProgress, ...]:
    """Store warps 0-3 of each CTA inside smem.wait at ``stuck_at[cta]``; the load warp past its last acquire."""
    warps = []
    for cta, iteration in stuck_at.items():
        warps += [WarpProgress(cta, w, "store", ENTERED, wait.uid, "smem.wait", iteration, cta, Section.LOOP, 100)
                  for w in range(4)]
        warps.append(WarpProgress(cta, 4, "load", LEFT, acquire.uid, "smem.acquire", iteration - 1, cta,
                                  Section.LOOP, 10))
    return tuple(warps)


def test_each_distinct_instance_is_predicted_and_paired_with_its_own_ctas(uneven: tuple) -> None:
    cfg, plans, gate, wait, acquire = uneven
    assert [i.describe() for i in refused_instances(gate)] == ["CTAs 0-1: 9 tiles", "CTAs 2-3: 8 tiles"]
    report = hang_report(SC, cfg, plans, snapshot(wait, acquire, {0: 9, 1: 9, 2: 8, 3: 8}), 8.0, gate)
    assert [(p.task, p.label, p.iteration, p.instance) for p in report.predicted] == [
        ("store", "smem.wait", 9, "CTAs 0-1: 9 tiles"), ("store", "smem.wait", 8, "CTAs 2-3: 8 tiles")]
    assert agrees(report) == report.predicted, report.describe()
    lines = report.lines()
    assert ("predicted: store blocked in smem.wait, iteration 9 (CTAs 0-1: 9 tiles) · measured: warp 0 stopped in "
            "smem.wait, iteration 9 (+7 more warps)") in lines
    assert ("predicted: store blocked in smem.wait, iteration 8 (CTAs 2-3: 8 tiles) · measured: warp 0 stopped in "
            "smem.wait, iteration 8, tile 2 (+7 more warps)") in lines
    assert "  store warp 0, CTAs 0-1: stopped in smem.wait, iteration 9, tiles 0-1" in lines
    assert "  store warp 0, CTAs 2-3: stopped in smem.wait, iteration 8, tiles 2-3" in lines


def test_a_prediction_is_not_confirmed_by_warps_of_other_ctas(uneven: tuple) -> None:
    """All four CTAs stuck at iteration 8: right for CTAs 2-3, wrong for CTAs 0-1 (they had a 9th tile)."""
    cfg, plans, gate, wait, acquire = uneven
    report = hang_report(SC, cfg, plans, snapshot(wait, acquire, {c: 8 for c in range(4)}), 8.0, gate)
    assert [p.instance for p in agrees(report)] == ["CTAs 2-3: 8 tiles"]


def test_group_lines_split_by_tile_trip_and_show_their_own_tiles() -> None:
    """A strided persistent loop: CTAs 0-1 on their 3rd tile (4, 5), CTA 2 a trip behind (tile 2), grid 3."""
    warps = (WarpProgress(0, 0, "store", ENTERED, 1, "smem.wait", 2, 6, Section.LOOP),
             WarpProgress(1, 0, "store", ENTERED, 1, "smem.wait", 2, 7, Section.LOOP),
             WarpProgress(2, 0, "store", ENTERED, 1, "smem.wait", 2, 5, Section.LOOP),
             WarpProgress(3, 0, "store", ENTERED, 1, "smem.wait", 2, 3, Section.LOOP))
    report = HangReport("persistent_copy", 5, warps, (PredictedBlock("store", "smem.wait", 1, 2),))
    lines = report.lines()
    assert "  store warp 0, CTAs 0-1: stopped in smem.wait, iteration 2, tiles 6-7" in lines
    assert "  store warp 0, CTAs 2-3: stopped in smem.wait, iteration 2, tiles 3, 5" not in lines
    assert "  store warp 0, CTA 2: stopped in smem.wait, iteration 2, tile 5" in lines
    assert "  store warp 0, CTA 3: stopped in smem.wait, iteration 2, tile 3" in lines
    assert [len(ctas) for _, ctas, _ in report.groups()] == [2, 1, 1]
