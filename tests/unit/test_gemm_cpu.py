"""hopper_gemm on the CPU: every control value records, draws and verifies; the async-read rule catches
the early releases TS calls safe; the kernel compiles for sm_90a and traces the schedule the CPU drew."""

from __future__ import annotations

import doctest
import random
from typing import Any

import pytest

from scenario_support import captured, ident
from ts_explore.analysis.async_reads import SCOPE_NOTE, AsyncReads, check_async_reads
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.kernels import gemm, gemm_cluster, gemm_geometry, gemm_tile_pick, gemm_tile_scheduler
from ts_explore.kernels.gemm_geometry import Cluster, Geometry, Raster, Release, TileShape
from ts_explore.model import (
    Block, BlockKind, Bound, DomainLoop, Family, QueueKind, ScheduleTree, Section, Stage, Step, TaskInfo, TaskSet,
)
from ts_explore.reader import capture_task_set
from ts_explore.verification.verify import verify
from ts_explore.scenarios import get
from ts_explore.scenarios.gemm import async_reads

SC = get("hopper_gemm")

# Every value of every control; companions keep the config valid (one consumer warpgroup needs 128x128 or
# 128x192, 256x192 leaves room for 3 stages).
CONTROL_VALUES: list[dict[str, Any]] = [
    *(dict(tile=t) for t in TileShape if t not in (TileShape.T64x128, TileShape.T64x256, TileShape.T256x192)),
    dict(tile=TileShape.T64x128, consumer_wgs=1), dict(tile=TileShape.T64x256, consumer_wgs=1),
    dict(tile=TileShape.T256x192, stages=3), dict(tile=TileShape.T128x192, consumer_wgs=1),
    dict(stages=2), dict(stages=4), dict(tile=TileShape.T128x128, stages=6),
    dict(consumer_wgs=1, tile=TileShape.T128x128), dict(consumer_wgs=2),
    *(dict(persistence=q) for q in QueueKind),
    *(dict(cluster=c) for c in Cluster),
    *(dict(raster=r) for r in Raster),
    *(dict(raster=Raster.ALONG_N, persistence=QueueKind.NONE, cluster=c) for c in (Cluster.C2x1, Cluster.C1x2)),
    *(dict(release=r) for r in Release),
    dict(swizzle=4), *(dict(swizzle=3, raster=Raster.ALONG_N, cluster=c) for c in (Cluster.C2x1, Cluster.C1x2)),
]


def model(cfg: Any) -> TaskSet:
    return captured(SC, cfg)


@pytest.mark.parametrize("overrides", CONTROL_VALUES, ids=ident)
def test_every_control_value_records_draws_and_verifies(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    assert [t.name for t in ts.tasks][:2] == ["load", "mma"]
    assert "mma" in schedule_graph(built.tasks[1]).source
    assert "smem_ab" in dependency_graph(ts).source
    verdict = verify(**SC.build(cfg).verify_kwargs())
    expected = "unsafe" if cfg.release is Release.PREMATURE else "safe"  # our async-read rule is part of it
    assert verdict.status.value == expected, verdict.summary()
    assert SCOPE_NOTE in verdict.scope.not_modelled
    report = check_async_reads(ts, async_reads(cfg))
    assert report.safe is (cfg.release is not Release.PREMATURE), report.summary()
    assert any("CPU view" in n for n in built.notes)


def test_the_cpu_view_is_a_small_instance_the_verifier_finishes() -> None:
    cfg = SC.default_config()
    ts = model(cfg)
    loop = ts.task("mma").schedule.domain_loop()
    assert loop is not None and loop.trip_count() == gemm_geometry.k_blocks(cfg.k) == 4
    assert ts.queue_kind is QueueKind.STATIC and ts.task("load").num_warps == 4
    notes = " ".join(SC.build(cfg).notes)
    assert "512 x 512" in notes and "4 k-blocks" in notes


def test_premature_release_verifies_as_safe_in_ts_but_the_async_read_rule_catches_it() -> None:
    cfg = SC.config(release=Release.PREMATURE)
    built = SC.build(cfg)
    assert verify(**built.task_manager_args()).status.value == "safe"  # what TS alone cannot see
    verdict = verify(**SC.build(cfg).verify_kwargs())  # the scenario adds the rule: not called safe
    assert verdict.status.value == "unsafe" and "async_read_rule" in {c.name for c in verdict.failed_checks}
    report = check_async_reads(model(cfg), async_reads(cfg))
    assert not report.safe
    first = report.findings[0]
    assert (first.tile, first.iteration, first.read_iteration) == (0, 0, 0)
    assert "one k-iteration later" in first.message and "smem_ab" in first.message
    lagged = SC.config(release=Release.LAGGED)
    assert check_async_reads(model(lagged), async_reads(lagged)).safe
    assert "WGMMA" in SCOPE_NOTE and "asynchronous" in SCOPE_NOTE


def test_the_lagged_schedule_is_early_if_wgmma_kept_two_groups_in_flight() -> None:
    """The rule reads the schedule against what the kernel waits for, not the knob's name."""
    cfg = SC.default_config()
    spec = AsyncReads(resource="smem_ab", issue="mma", in_flight=2, drains=("drain",))
    assert not check_async_reads(model(cfg), spec).safe


def synthetic(lag: int, trips: int, drain: bool) -> TaskSet:
    """wait; issue; release lagging ``lag`` iterations (+ the held stages at the end), on our model only."""
    uid = iter(range(100))

    def step(stage: Stage, label: str | None = None, section: Section = Section.LOOP) -> Step:
        fam = {Stage.CONSUMER_WAIT: Family.WAIT, Stage.CONSUMER_RELEASE: Family.RELEASE}.get(stage, Family.CONSUMER_WORK)
        return Step(next(uid), "smem", stage, label, 0, section, fam)

    body: tuple = (step(Stage.CONSUMER_WAIT), step(Stage.CONSUMER_WORK, "issue"))
    body += (Block(BlockKind.EVERY, (step(Stage.CONSUMER_RELEASE),), period=1, start=lag),) if lag else \
        (step(Stage.CONSUMER_RELEASE),)
    tail: tuple = ((step(Stage.CONSUMER_AUX_WORK, "drain", Section.TAIL),) if drain else ())
    tail += tuple(step(Stage.CONSUMER_RELEASE, section=Section.TAIL) for _ in range(min(lag, trips)))
    loop = DomainLoop(Bound.of_int(0), Bound.of_int(trips), Bound.of_int(1), None, body)
    task = TaskInfo("consumer", 0, 4, ("smem",), (), ScheduleTree("consumer", ("smem",), (loop, *tail)))
    return TaskSet((task,), (), ())


def test_rule_matches_the_lag_arithmetic_on_random_schedules() -> None:
    """Safe exactly when releases lag at least as many iterations as groups stay in flight
    (the tail releases are safe only after a drain)."""
    rng = random.Random(12)
    for _ in range(200):
        lag, in_flight, trips, drain = rng.randint(0, 3), rng.randint(0, 3), rng.randint(1, 6), rng.random() < 0.5
        spec = AsyncReads(resource="smem", issue="issue", in_flight=in_flight, drains=("drain",))
        report = check_async_reads(synthetic(lag, trips, drain), spec)
        in_loop_ok = lag >= in_flight or trips <= lag
        tail_ok = drain or in_flight == 0 or lag == 0  # the last stage's read is still in flight otherwise
        assert report.safe == (in_loop_ok and tail_ok), (lag, in_flight, trips, drain, report.summary())


BAD: list[tuple[dict[str, Any], str]] = [
    (dict(consumer_wgs=1), "use consumer_wgs=2 or tile 128x128x64"),
    (dict(tile=TileShape.T256x128, consumer_wgs=1), "use consumer_wgs=2"),
    (dict(tile=TileShape.T64x128), "use consumer_wgs=1 with a 64-row tile"),
    (dict(stages=5), "use stages <= 4"),
    (dict(tile=TileShape.T128x128, stages=8), "use stages <= 6"),
    (dict(n=100), "multiples of 8"),
    (dict(block=10_000), "pick block <"),
    (dict(swizzle=2, persistence=QueueKind.NONE), "use persistence=static, or swizzle=1"),
]


@pytest.mark.parametrize("overrides,fix", BAD, ids=[ident(o) for o, _ in BAD])
def test_bad_combinations_name_cause_and_fix(overrides: dict[str, Any], fix: str) -> None:
    with pytest.raises(ValueError) as err:
        SC.build(SC.config(**overrides))
    assert fix in str(err.value) and ";" in str(err.value)


def test_shapes_tma_cannot_stride_are_refused_with_the_reason() -> None:
    assert gemm.shape_refusal((4096, 4096, 4096)) is None and gemm.shape_refusal((1000, 1000, 1000)) is None
    assert "K=100 is not a multiple of 8" in gemm.shape_refusal((256, 256, 100))
    assert "N=1001" in gemm.shape_refusal((256, 1001, 256))
    assert "empty" in gemm.shape_refusal((0, 8, 8))


def test_grid_bytes_and_flops() -> None:
    cfg = SC.default_config()
    assert gemm.grid(cfg, (8192, 8192, 8192), 132) == (1, 1, 132)
    assert gemm.grid(SC.config(persistence=QueueKind.NONE), (1000, 1000, 64), 132) == (8, 4, 1)
    assert gemm.grid(SC.config(persistence=QueueKind.NONE, raster=Raster.ALONG_N), (1000, 1000, 64), 132) == (4, 8, 1)
    assert gemm.grid(SC.config(cluster=Cluster.C2x1), (8192, 8192, 8192), 132) == (2, 1, 66)
    assert gemm.grid(SC.config(cluster=Cluster.C2x1, persistence=QueueKind.NONE), (300, 256, 64), 132) == (4, 1, 1)
    # 1x2: N-neighbours pair up; an odd N tile count gets one more CTA (outside C) to complete the last pair.
    assert gemm.grid(SC.config(cluster=Cluster.C1x2), (8192, 8192, 8192), 132) == (1, 2, 66)
    assert gemm.grid(SC.config(cluster=Cluster.C1x2, persistence=QueueKind.NONE), (256, 300, 64), 132) == (2, 2, 1)
    assert gemm.grid(SC.config(cluster=Cluster.C1x2, persistence=QueueKind.NONE, raster=Raster.ALONG_N),
                     (256, 1032, 64), 132) == (6, 2, 1)
    assert gemm.flops((2, 3, 4)) == 48 and gemm.bytes_moved((2, 3, 4)) == 2 * (8 + 12 + 6)


def test_launch_refusals_name_the_reason() -> None:
    from ts_explore.gpu.safety import launch_refusal
    from ts_explore.model.plan import DeviceLimits

    h200, b200 = DeviceLimits.h200(), DeviceLimits(name="B200", cc=(10, 0), sms=148)
    assert gemm.launch_refusal(SC.default_config()) is None
    assert launch_refusal(SC, SC.default_config(), h200) is None
    assert "async-read rule" in gemm.launch_refusal(SC.config(release=Release.PREMATURE))
    clc = SC.config(persistence=QueueKind.CLC)
    assert gemm.features(clc) == {"wgmma", "clc"} and gemm.launch_refusal(clc) is None, "arch rules live in the gate"
    for limits in (h200, b200):  # CLC needs sm_100+, WGMMA exists only on sm_90a: no GPU runs both
        reason, message = launch_refusal(SC, clc, limits)
        assert reason == "cannot_run_here" and "sm_100" in message and "sm_90a" in message and "no GPU" in message
    reason, message = launch_refusal(SC, SC.default_config(), b200)
    assert reason == "cannot_run_here" and "WGMMA needs an sm_90a GPU" in message and "sm_100a" in message
    with pytest.raises(ValueError, match="async-read rule"):
        gemm.compile(SC, SC.config(release=Release.PREMATURE), arch="sm_90a")


def test_tolerance_catches_one_lost_k_block() -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    k = 1024
    a = rng.standard_normal((64, k)).astype(np.float32)
    b = rng.standard_normal((64, k)).astype(np.float32)
    ref = a @ b.T
    good = (ref.astype(np.float32) * (1 + 2.0**-9)).astype(np.float32)
    lost = ref - a[:, :64] @ b[:, :64].T
    assert gemm.close(good, ref, k).all()
    assert (~gemm.close(lost, ref, k)).mean() > 0.8
    assert gemm.error_tiles(~gemm.close(lost, ref, k), SC.config(tile=TileShape.T128x128)).shape == (1, 1)


def test_geometry_doctests() -> None:
    for module in (gemm_geometry, gemm_tile_pick, gemm_tile_scheduler):
        result = doctest.testmod(module)
        assert result.attempted and result.failed == 0, module.__name__
    geo = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2)
    assert geo.smem_bytes <= gemm_geometry.SMEM_LIMIT < Geometry(128, 256, 5, 2).smem_bytes


def test_a_cluster_splits_only_the_operand_it_shares_over_its_ctas() -> None:
    """Rows each of the 4 load warps brings per stage: 2x1 halves B's share, 1x2 halves A's (down to one
    8-row swizzle atom for a 64-row tile); launched as (1, 2, 1) clusters, N-neighbours in one cluster."""
    from ts_explore.kernels.gemm_cluster import load_slices

    assert load_slices(SC.config().geometry()) == (32, 64)
    assert load_slices(SC.config(cluster=Cluster.C2x1).geometry()) == (32, 32)
    assert load_slices(SC.config(cluster=Cluster.C1x2).geometry()) == (16, 64)
    assert load_slices(SC.config(cluster=Cluster.C1x2, tile=TileShape.T64x128, consumer_wgs=1).geometry()) == (8, 32)
    geo = SC.config(cluster=Cluster.C1x2).geometry()
    assert (geo.cluster_m, geo.cluster_n, geo.cluster_size) == (1, 2, 2)
    assert gemm_cluster.cluster_dims(geo, persistent=False, along_m=True) == (1, 2, 1)
    assert gemm_cluster.cluster_dims(geo, persistent=False, along_m=False) == (2, 1, 1)
    with pytest.raises(ValueError, match="use cluster_m=2 .* or cluster_n=2"):
        Geometry(128, 256, 4, 2, cluster_m=2, cluster_n=2)


def test_a_1x2_cluster_expects_releases_from_both_ctas_and_says_so() -> None:
    """Each stage's barrier counts both CTAs' consumer warps (the peer's WGMMA read the multicast half too)."""
    from ts_explore.scenarios.gemm_shared import ab_pipeline

    for cluster, layout in ((Cluster.C2x1, (1, 2, 1, 1)), (Cluster.C1x2, (1, 1, 2, 1))):
        cfg = SC.config(cluster=cluster)
        pipe = ab_pipeline(cfg, cfg.geometry())
        assert pipe.cta_layout_vmnk == layout and pipe.consumer_group.size == 2 * 4 * 2
    notes = " ".join(SC.build(SC.config(cluster=Cluster.C1x2)).notes)
    assert "1x2 cluster" in notes and "half of it and multicasts it to both" in notes


TRACE_CASES = [dict(), dict(persistence=QueueKind.NONE, cluster=Cluster.C2x1, raster=Raster.ALONG_N),
               dict(cluster=Cluster.C1x2, tile=TileShape.T256x128),
               dict(tile=TileShape.T128x128, consumer_wgs=1, release=Release.AFTER_WAIT)]


@pytest.mark.slow
@pytest.mark.parametrize("overrides", TRACE_CASES, ids=ident)
def test_kernel_compiles_for_sm90a_and_traces_the_recorded_schedule(overrides: dict[str, Any]) -> None:
    from test_kernel_trace import same_shape

    cfg = SC.config(**overrides)
    cpu = model(cfg)
    seen: list[TaskSet] = []
    fn = gemm.compile(SC, cfg, arch="sm_90a",
                      on_built=lambda b: seen.append(capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert fn is not None and len(seen) == 1, "the kernel builds the scenario exactly once"
    same_shape(cpu, seen[0])
