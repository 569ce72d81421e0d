"""hopper_gemm in ping-pong mode on the CPU: two consumers own alternate tiles of one shared ring, the checker
proves it for any number of tiles, a consumer loop one stage too long deadlocks with a counterexample, the
async-read rule covers both consumers, and it compiles."""

from __future__ import annotations

from typing import Any

import pytest

from scenario_support import captured, compiled_as_recorded, ident
from ts_explore.analysis.async_reads import check_async_reads
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_geometry import Cluster, GemmMode, Geometry, Release, TileShape
from ts_explore.kernels.gemm_tile_scheduler import tile_order, work_tile_counts
from ts_explore.model import QueueKind
from ts_explore.model.plan import DeviceLimits
from ts_explore.scenarios import get
from ts_explore.scenarios.choices import adjust
from ts_explore.scenarios.gemm import GemmFault, async_reads
from ts_explore.verification.verify import verify

SC = get("hopper_gemm")
PP = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6)

PROVEN: list[dict[str, Any]] = [
    PP,
    dict(PP, tile=TileShape.T64x256, stages=5),
    dict(PP, cluster=Cluster.C2x1, swizzle=4),
    dict(PP, cluster=Cluster.C1x2, swizzle=4),
    dict(PP, persistence=QueueKind.NONE),
    dict(PP, release=Release.AFTER_WAIT),
]


@pytest.mark.parametrize("overrides", PROVEN, ids=ident)
def test_ping_pong_records_two_consumers_on_one_ring_and_is_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    ts = captured(SC, cfg)
    assert [t.name for t in ts.tasks] == ["load", "mma0", "mma1"]
    assert [(t.warp_start, t.num_warps) for t in ts.tasks] == [(0, 4), (4, 4), (8, 4)]
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    notes = " ".join(SC.build(cfg).notes)
    assert "one ring of" in notes and "turn" not in notes


def test_switching_the_default_config_to_ping_pong_moves_the_tile_to_a_proven_view() -> None:
    cfg, notes = adjust(SC, SC.config(mode=GemmMode.PINGPONG), keep="mode")
    assert (cfg.tile, cfg.stages) == (TileShape.T128x128, 4), notes  # 4 of the ring's 6 possible stages: kept
    assert len(notes) == 1 and "accumulators" in notes[0]
    built = SC.build(cfg)
    assert verify(**built.verify_kwargs()).status.value == "safe"
    ts = captured(SC, cfg)
    assert "smem_ab" in dependency_graph(ts).source and "turn" not in schedule_graph(built.tasks[2]).source


def test_every_tile_count_is_proven_by_searching_each_consumer_alone_with_the_loader() -> None:
    """TS counts the ring's two consumers together, so one may run ahead on the other's credits and no number of
    tiles covers that model; each consumer's tile loop searched alone with the loader (as the hardware counts)
    covers every tile count."""
    verdict = verify(**SC.build(SC.config(**PP)).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    (tiles,) = [a for a in verdict.scope.abstractions if a.name == "tile-loop"]
    assert tiles.sufficient and "load + mma0 and load + mma1" in tiles.sentence
    assert verdict.scope.tiles_covered == "every number of work tiles (tile-loop search)"
    ts_only = verify(**SC.build(SC.config(**PP)).verify_kwargs(), checker="ts")  # TS's BFS for the 2 tiles
    assert ts_only.status.value == "safe" and ts_only.scope.tiles_covered == verdict.scope.tiles_covered


def test_a_consumer_loop_one_stage_too_long_deadlocks_with_a_counterexample() -> None:
    cfg = SC.config(**PP, fault=GemmFault.PINGPONG_BROKEN)
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe"
    dead = verdict.deadlocks[0]
    assert dead.interleaving is not None and {b.resource for b in dead.blocked} == {"smem_ab"}
    assert "never fills" in cfg.fault.value
    with pytest.raises(ValueError, match="fault=none"):
        gemm.compile(SC, cfg, arch="sm_90a")


def test_the_async_read_rule_covers_both_consumers_wgmma_reads() -> None:
    cfg = SC.config(**PP, release=Release.PREMATURE)
    report = check_async_reads(captured(SC, cfg), async_reads(cfg))
    assert {f.task for f in report.findings} == {"mma0", "mma1"}
    assert verify(**SC.build(cfg).verify_kwargs()).status.value == "unsafe"
    assert check_async_reads(captured(SC, SC.config(**PP)), async_reads(SC.config(**PP))).safe


REFUSED: list[tuple[dict[str, Any], str]] = [
    (dict(PP, tile=TileShape.T128x256), "tile 128x192x64, 128x128x64 or 64x256x64"),
    (dict(PP, tile=TileShape.T256x128), "tile 128x192x64, 128x128x64 or 64x256x64"),
    (dict(PP, tile=TileShape.T256x192), "needs 384 fp32 accumulators"),
    (dict(PP, tile=TileShape.T128x192, stages=5), "stages <= 4"),
    (dict(PP, consumer_wgs=1), "consumer_wgs=2"),
    (dict(PP, stages=7), "stages <= 6"),
    (dict(PP, tile=TileShape.T64x256, stages=6), "stages <= 5"),
    (dict(PP, persistence=QueueKind.CLC), "persistence=static or none"),
    (dict(fault=GemmFault.PINGPONG_BROKEN), "mode=ping-pong"),
]


@pytest.mark.parametrize("overrides, fix", REFUSED, ids=[ident(o) for o, _ in REFUSED])
def test_what_ping_pong_cannot_run_is_refused_with_the_fix(overrides: dict[str, Any], fix: str) -> None:
    with pytest.raises(ValueError, match=fix):
        SC.check(SC.config(**overrides))


def test_the_launch_plan_walks_units_of_two_tiles() -> None:
    cfg = SC.config(**PP)
    geo = cfg.geometry()
    assert geo.threads == 384 and geo.accumulators_per_thread == 128 and geo.smem_bytes <= 227 * 1024
    assert work_tile_counts((1000, 1032, 520), geo) == (4, 9)  # 8 tile rows of 128 -> 4 units of 256 rows
    plan = gemm.plan(cfg, (1000, 1032, 520), DeviceLimits.h200())
    assert plan.ctas == 36 and plan.threads == 384
    assert any("work units of two 128-row tiles" in a for a in plan.assumptions)
    big = gemm.plan(cfg, (8192, 8192, 8192), DeviceLimits.h200())
    assert big.ctas == 132 and sum(i.iterations * len(i.ctas[0]) for i in big.instances) == 32 * 64
    assert Geometry(128, 128, 3, 2).work_tile_m == 128 and geo.work_tile_m == 256 and geo.load_warps == 4
    # both tiles of a unit share its hand-out number: CTA c's stream is unit c (mma0, mma1), unit c + C, ...
    assert tile_order((512, 512, 64), geo) == [[0, 2, 4, 6], [0, 2, 4, 6], [1, 3, 5, 7], [1, 3, 5, 7]]


def test_the_ping_pong_kernel_compiles_for_sm90a_and_builds_the_recorded_tasks() -> None:
    used = compiled_as_recorded(SC, SC.config(**PP))
    assert used.frame_bytes == 0 and used.registers <= 168, used  # 128 accumulators, no spills


def _soaked(overrides: dict[str, Any]) -> Any:
    return pytest.param(overrides, id=ident(overrides), marks=pytest.mark.soak)


# The default tier compiles the variant that differs from the default kernel in the most knobs (tile, stages,
# cluster, swizzle); each of the others is one DSL compile of 7-16 s, beyond the default tier's budget.
@pytest.mark.slow
@pytest.mark.parametrize("overrides", [dict(PP, tile=TileShape.T64x256, stages=5, cluster=Cluster.C2x1, swizzle=8),
                                       _soaked(dict(PP, cluster=Cluster.C2x1)), _soaked(dict(PP, cluster=Cluster.C1x2)),
                                       _soaked(dict(PP, tile=TileShape.T64x256, stages=5, cluster=Cluster.C1x2)),
                                       _soaked(dict(PP, swizzle=8)),
                                       _soaked(dict(PP, persistence=QueueKind.NONE))], ids=ident)
def test_the_other_ping_pong_kernels_compile_traced(overrides: dict[str, Any]) -> None:
    from ts_explore.model.timeline import TraceSpec

    assert gemm.compile(SC, SC.config(**overrides), arch="sm_90a", trace=TraceSpec()) is not None


def test_one_k_block_per_tile_is_proven() -> None:
    """One k-block: the loader may run a whole unit ahead on the ring; still SAFE for any number of tiles."""
    verdict = verify(**SC.build(SC.config(**PP, k=64)).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()


@pytest.mark.slow
def test_the_8192_cubed_launch_view_is_proven() -> None:
    """128 k-blocks per tile (K=8192), the view the 8192^3 launch's gate verifies: SAFE (a few seconds)."""
    verdict = verify(**SC.build(SC.config(**PP, k=8192)).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
