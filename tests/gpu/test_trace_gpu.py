"""On a CUDA GPU: traced launches line up with the drawn schedules, tracing work steps is cheap, and a
kernel forced past a deadlock verdict is read while it hangs and matches the verifier's prediction."""

from __future__ import annotations

import time

import pytest

from ts_explore.analysis.timeline import measured_tiles
from ts_explore.analysis.timeline_hang import agrees
from ts_explore.gpu import HangError, LaunchError, launch
from ts_explore.gpu.trace_run import schedule_for
from ts_explore.model import QueueKind
from ts_explore.model.hang import ENTERED
from ts_explore.model.timeline import TraceSpec
from ts_explore.scenarios import Loader, SkipRule, get
from ts_explore.kernels.gemm_geometry import Cluster
from ts_explore.scenarios.persistent import PersistentFault
from ts_explore.scenarios.pipelined import PipelineFault

SMALL = 1 << 20
FAULT_SIZE = 32 * 4096  # 32 tiles over 4 CTAs: 8 iterations each, more than the 4 stages


@pytest.mark.parametrize("fault,stuck", [
    (PipelineFault.CONSUMER_EXTRA, {"store"}),
    (PipelineFault.NO_RELEASE, {"store", "load"}),
])
def test_deadlocking_fault_hangs_and_each_warp_is_read_where_the_verifier_said(fault: PipelineFault,
                                                                               stuck: set[str]) -> None:
    """Progress written to host-mapped memory is read while the kernel hangs; it names the predicted steps."""
    start = time.perf_counter()
    with pytest.raises(HangError) as err:
        launch("pipelined_copy", sizes=[FAULT_SIZE], fault=fault, ctas=4, force=True, timeout=8, reps=1, warmup=0)
    report = err.value.report
    print(report.describe())
    assert err.value.reason == "timeout" and "did not finish in 8 s" in str(err.value)
    assert report.predicted and {p.task for p in report.predicted} == stuck
    assert {w.task for w in report.stuck} == stuck, report.describe()
    assert agrees(report) == report.predicted, report.describe()
    assert len(report.warps) == 4 * 5 and all(w.state for w in report.warps)
    assert time.perf_counter() - start < 90
    after = launch("pipelined_copy", sizes=[SMALL], reps=2)
    assert after.ok, "the next launch works after a hang"


def test_a_hang_over_ctas_with_9_and_8_tiles_predicts_each_instance_and_matches_it() -> None:
    """34 tiles over 4 CTAs: CTAs 0-1 block at iteration 9, CTAs 2-3 at iteration 8; each measured where predicted."""
    with pytest.raises(HangError) as err:
        launch("pipelined_copy", sizes=[34 * 4096], fault=PipelineFault.CONSUMER_EXTRA, ctas=4, force=True,
               timeout=8, reps=1, warmup=0)
    report = err.value.report
    print(report.describe())
    assert [(p.task, p.iteration, p.instance) for p in report.predicted] == [
        ("store", 9, "CTAs 0-1: 9 tiles"), ("store", 8, "CTAs 2-3: 8 tiles")]
    assert agrees(report) == report.predicted, report.describe()
    stuck = {(w.cta, w.iteration) for w in report.stuck}
    assert stuck == {(0, 9), (1, 9), (2, 8), (3, 8)}, report.describe()
    assert any(line.startswith("  store warp 0, CTAs 0-1: stopped in smem.wait, iteration 9") for line in report.lines())


def test_racing_fault_runs_and_the_check_says_what_came_out_wrong() -> None:
    """Committing before the threads fill the stage lets the store task read stale shared memory."""
    r = launch("pipelined_copy", sizes=[SMALL], fault=PipelineFault.COMMIT_BEFORE_LOAD, loader=Loader.THREADS,
               ctas=0, force=True, reps=2)
    print(r.summary())
    assert r.forced and not r.ok
    assert any(m.count > 0 for m in r.runs[0].mismatches)


def test_pdl_ordering_fault_runs_correctly_in_a_single_launch() -> None:
    """The verifier reports the early launch_griddep; with no dependent grid launched nothing comes out wrong."""
    r = launch("persistent_copy", sizes=[SMALL], fault=PersistentFault.PDL_LAUNCH_BEFORE_WAIT, force=True, reps=2)
    assert r.forced and r.ok, r.summary()
    assert any("PDL launch before wait" in p.summary for p in r.gate.proven)


GEMM_SMALL = (520, 1048, 584)  # tails in M, N and K, several tiles per persistent CTA
TRACED = [
    ("grid_stride_copy", dict(ctas=0), SMALL),
    ("grid_stride_copy", dict(per_thread=4, unroll=2, ctas=16), SMALL),
    ("pipelined_copy", dict(ctas=0), SMALL),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=2, stages=2, ctas=0), SMALL),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0), SMALL),
    ("persistent_copy", dict(queue=QueueKind.STATIC, skip=SkipRule.MASK, mask=(0, 7), ctas=0), SMALL),
    ("varlen_copy", dict(ctas=0), SMALL),
    ("varlen_copy", dict(dynamic=False, queue=QueueKind.NONE), SMALL),
    ("guards_demo", dict(), SMALL),
    ("hopper_gemm", dict(), GEMM_SMALL),
    ("hopper_gemm", dict(cluster=Cluster.C2x1), GEMM_SMALL),
    pytest.param("hopper_gemm", dict(cluster=Cluster.C1x2), GEMM_SMALL, id="hopper_gemm-cluster=C1x2"),
]


@pytest.mark.parametrize("name,overrides,size", TRACED)
@pytest.mark.parametrize("stages", ["all", "work"])
def test_trace_of_every_launchable_scenario_follows_its_schedule(name: str, overrides: dict, size: object,
                                                                 stages: str) -> None:
    result = launch(name, sizes=[size], reps=2, warmup=1, trace=TraceSpec(stages=stages), **overrides)
    assert result.ok, result.summary()
    timeline = result.timeline
    assert timeline is not None and timeline.events and not timeline.lost, timeline
    plan = result.plans[0]
    first = timeline.spec.first_cta  # chosen from the plan (TraceSpec.placed)
    assert {c for c, _ in timeline.warps()} == set(range(first, first + min(2, plan.ctas)))
    alignment = result.compare()
    assert alignment.ok, alignment.summary()
    assert len(alignment.lanes) == len(timeline.warps()) == min(2, plan.ctas) * plan.threads // 32
    assert all(e.end_ns >= e.start_ns for e in timeline.events)
    table = timeline.table()
    assert sum(r.count for r in table.rows) == len(timeline.events)


def test_static_queue_hands_each_traced_cta_its_tiles_and_skips_the_masked_ones() -> None:
    overrides = dict(queue=QueueKind.STATIC, skip=SkipRule.MASK, mask=(0, 5), overlaunch=3, ctas=4, tile=8192)
    result = launch("persistent_copy", sizes=[24 * 8192], trace=TraceSpec(ctas=4), reps=1, **overrides)
    sc, cfg, plan = get("persistent_copy"), result.config, result.plans[0]
    logical, total = 24, 24 + 3
    for cta in range(4):
        tree, _ = schedule_for(sc, cfg, plan, cta, 0)
        walked = measured_tiles(result.timeline.lane(cta, 0), tree)
        assert walked == [(t, cfg.skipped(t, logical)) for t in range(cta, total, 4)], (cta, walked)


WORK_TRACE_BOUND = 1.05  # traced / plain kernel time with the default trace (work steps of two CTAs)
STATIC = dict(queue=QueueKind.STATIC, overlaunch=0, tile=32768, per_thread=4, warps=8, ctas=0)


@pytest.mark.parametrize("name,overrides,size", [
    ("grid_stride_copy", dict(per_thread=4, ctas=0), 1 << 26),
    ("pipelined_copy", dict(ctas=0), 1 << 26),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=4, ctas=0), 1 << 26),
    ("persistent_copy", STATIC, 1 << 26),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0, tile=1024, per_thread=1, warps=8), 1 << 26),
    ("varlen_copy", dict(ctas=0), SMALL),
    ("guards_demo", {}, SMALL),
    ("hopper_gemm", {}, (4096, 4096, 4096)),
])
def test_tracing_only_work_steps_stays_within_its_bound(name: str, overrides: dict, size: int) -> None:
    """The default trace, timed in turn with the plain build of the same launch: at most 5% slower."""
    result = launch(name, sizes=[size], reps=30, warmup=5, trace="work", time_trace=True, references=False,
                    **overrides)
    run = result.runs[0]
    assert run.traced_baseline is not None and run.traced_timing is not None
    cap = run.timeline.spec.registers if run.timeline is not None else "?"
    print(name, run.traced_baseline.median_ms, run.traced_timing.median_ms, run.overhead(), f"register cap {cap}")
    assert run.overhead() <= WORK_TRACE_BOUND, (run.traced_baseline.summary, run.traced_timing.summary)


def test_a_hang_with_no_blocking_step_is_still_reported() -> None:
    import hang_kernel  # noqa: F401  (registers the scenario; its kernel has no trace support)

    with pytest.raises(LaunchError) as err:
        launch("hang_forever_test", sizes=[4], reps=1, warmup=0, timeout=5)
    assert err.value.reason == "timeout"
    assert launch("grid_stride_copy", sizes=[SMALL], reps=1).ok


def test_progress_states_are_entered_for_stuck_warps_only() -> None:
    with pytest.raises(HangError) as err:
        launch("pipelined_copy", sizes=[FAULT_SIZE], fault=PipelineFault.CONSUMER_EXTRA, ctas=4, force=True,
               timeout=5, reps=1, warmup=0)
    report = err.value.report
    load = [w for w in report.warps if w.task == "load"]
    assert load and all(w.state != ENTERED for w in load), "the load warps finished; none is stuck"
    assert all(w.iteration == 8 for w in report.stuck), report.describe()
