"""tile='by shape' on the CPU: one function picks the GEMM tile from (M, N, SMs), the launch plan shows the pick,
every instance of a picked launch records and verifies, and the dispatcher runs the kernel of the planned tile."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_by_shape import ByShape
from ts_explore.kernels.gemm_geometry import TileShape, tile_counts
from ts_explore.kernels.gemm_tile_pick import (
    FILL_SHARE, FIT_RANGE, TILE_CANDIDATES, fitted_options, narrowed, pick_tile,
)
from ts_explore.model.plan import DeviceLimits
from ts_explore.scenarios import get

SC = get("hopper_gemm")
H200 = DeviceLimits.h200()
BY_SHAPE = SC.config(tile=TileShape.BY_SHAPE)


def test_the_small_shape_gets_a_tile_that_fills_more_sms_and_the_plan_says_so() -> None:
    plan = launch_plan("hopper_gemm", (1000, 1032, 520), device=H200, tile=TileShape.BY_SHAPE)
    text = plan.summary()
    assert plan.ctas == 128 and "tiles of 64 x 144" in text, text
    assert ("tile by shape: 64x144x64 (64x256x64 narrowed to fit N) with 1 consumer warpgroup in 2x1 clusters (B "
            "multicast): 128 tiles on 132 SMs") in text, text
    assert "N=1032 in 8 columns of 144 fills one wave" in text
    picked = BY_SHAPE.resolved((1000, 1032, 520), 132)
    assert picked.cluster.m == 2 and (picked.tile, picked.tile_n, picked.consumer_wgs) == (TileShape.T64x256, 144, 1)
    assert "128x256x64 would make 40 tiles" in text
    fixed = launch_plan("hopper_gemm", (1000, 1032, 520), device=H200)
    assert fixed.ctas == 40 and "tile by shape" not in fixed.summary(), "a fixed tile is left as it is"


def test_large_shapes_keep_the_large_tile() -> None:
    for shape in [(8192, 8192, 8192), (4096, 4096, 4096), (16384, 1024, 4096)]:
        plan = launch_plan("hopper_gemm", shape, device=H200, tile=TileShape.BY_SHAPE)
        assert "tiles of 128 x 256" in plan.summary()
        fixed = launch_plan("hopper_gemm", shape, device=H200)
        assert [(i.ctas, i.work) for i in plan.instances] == [(i.ctas, i.work) for i in fixed.instances]


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 20000), n=st.integers(1, 2500).map(lambda v: 8 * v), sms=st.integers(1, 200))
def test_the_pick_keeps_the_default_while_it_fills_half_the_sms_else_takes_the_cheapest(m: int, n: int,
                                                                                       sms: int) -> None:
    pick = pick_tile((m, n, 64), sms)
    default = tile_counts((m, n, 64), SC.config().geometry())
    big = default[0] * default[1]
    if big >= FILL_SHARE * sms:
        assert pick.tile is TileShape.T128x256 and pick.consumer_wgs == 2 and pick.tiles == big
        assert pick.tile_n == narrowed(n, 256), "the large tile is narrowed exactly where a fitted width covers N"
        return

    def cost(tile: TileShape, width: int = 0) -> int:
        tm, tn = tile.mn
        along_m = -(-m // tm) + (-(-m // tm) % 2 if width else 0)  # a fitted pick's 2x1 pairs count whole
        return -(-(along_m * -(-n // (width or tn))) // sms) * tm * (width or tn)

    standard = min(cost(t) for t, _ in TILE_CANDIDATES)
    if pick.tile_n:
        assert cost(pick.tile, pick.tile_n) < standard, "a fitted width is picked only where it is cheaper"
        assert FIT_RANGE[0] < pick.tile_n < FIT_RANGE[1] and pick.tile_n % 16 == 0 and pick.cluster_m == 2
        assert cost(pick.tile, pick.tile_n) == min(cost(t, w) for t, _, w in fitted_options(n))
    else:
        assert cost(pick.tile) == standard and (pick.tile, pick.consumer_wgs) in TILE_CANDIDATES
        assert all(cost(t, w) >= standard for t, _, w in fitted_options(n))
        assert pick.cluster_m == (2 if pick.tile.mn[0] == 128 else 1), "small grids of 128-row tiles share B"
    tm, tn = pick.tile.mn
    assert pick.tiles == -(-m // tm) * -(-n // (pick.tile_n or tn))


@pytest.mark.parametrize("shape", [(1000, 1032, 520), (1, 8, 8), (130, 264, 72), (64, 4096, 8)])
def test_every_instance_of_a_picked_launch_records_the_picked_tile_and_verifies(shape: tuple[int, int, int]) -> None:
    plan = launch_plan("hopper_gemm", shape, device=H200, tile=TileShape.BY_SHAPE)
    gate = prove(SC, BY_SHAPE, (plan,))
    assert gate.ok, gate.summary()
    picked = BY_SHAPE.resolved(shape, H200.sms)
    assert plan.threads == picked.geometry().threads and plan.smem_bytes == picked.geometry().smem_bytes
    assert plan.grid == gemm.grid(BY_SHAPE, shape, H200.sms) == gemm.grid(picked, shape, H200.sms)


def test_the_cpu_view_resolves_its_own_shape_and_names_the_pick() -> None:
    built = SC.build(BY_SHAPE)  # 512 x 512: 8 tiles of 128x256 would leave most SMs idle
    notes = " ".join(built.notes)
    assert "tile by shape: 64x128x64 with 1 consumer warpgroup" in notes and "tiles of 64 x 128" in notes
    SC.check(BY_SHAPE)
    assert BY_SHAPE.resolved().consumer_wgs == 1 and SC.config().resolved() == SC.config()


def test_by_shape_cannot_be_traced_and_says_how() -> None:
    with pytest.raises(ValueError, match="trace with the tile the launch plan names"):
        gemm.compile(SC, BY_SHAPE, arch="sm_90a", trace=object())


def test_the_dispatcher_compiles_once_per_picked_tile_and_passes_the_call_through() -> None:
    made: list[Any] = []
    calls: list[tuple] = []

    def compile_one(cfg: Any) -> Any:
        made.append((cfg.tile, cfg.tile_n))
        return lambda *args: calls.append(((cfg.tile, cfg.tile_n), args))

    fn = ByShape(BY_SHAPE, compile_one, sms=lambda: 132)
    for shape in [(1000, 1032, 520), (8192, 8192, 8192), (1000, 1032, 1040), (4096, 4096, 64), (5000, 3080, 4160)]:
        fn("a", "b", "c", *shape, 1, 2, 3, "stream")
    small, large, narrow = (TileShape.T64x256, 144), (TileShape.T128x256, 0), (TileShape.T128x256, 240)
    assert made == [small, large, narrow], "one compile per tile (and width), on first use"
    assert [t for t, _ in calls] == [small, large, small, large, narrow]
    assert calls[0][1] == ("a", "b", "c", 1000, 1032, 520, 1, 2, 3, "stream")


def test_rows_that_straddle_lines_run_the_large_tile_in_2x1_clusters_and_every_plan_says_why() -> None:
    shape = (5000, 3080, 4136)  # rows of 8272 B: each k-block's 128-byte row read touches two L2 lines
    plan = launch_plan("hopper_gemm", shape, device=H200, tile=TileShape.BY_SHAPE)
    text = plan.summary()
    assert ("128x240x64 (128x256x64 narrowed to fit N) with 2 consumer warpgroups in 2x1 clusters (B multicast): 520 "
            "tiles on 132 SMs (N=3080 in 13 columns of 240, not 256: 1.3 % padding, not 7.5 %; rows of 8272 B straddle "
            "128-byte lines)") in text, text
    assert "K=4160 would not straddle" in text
    assert BY_SHAPE.resolved(shape, H200.sms).cluster.m == 2
    assert prove(SC, BY_SHAPE, (plan,)).ok
    fixed = launch_plan("hopper_gemm", shape, device=H200)
    assert "K=4160 would not straddle" in fixed.summary(), "any config's plan warns, not only the pick's"
    aligned = (5000, 3080, 4160)
    assert BY_SHAPE.resolved(aligned, H200.sms).cluster.m == 1
    assert "straddle" not in launch_plan("hopper_gemm", aligned, device=H200, tile=TileShape.BY_SHAPE).summary()


@settings(max_examples=100, deadline=None)
@given(k=st.integers(1, 4096).map(lambda v: 8 * v), fp8=st.booleans())
def test_the_large_tile_pairs_ctas_exactly_when_rows_straddle_lines(k: int, fp8: bool) -> None:
    pick = pick_tile((8192, 8192, k), 132, 1 if fp8 else 2)
    assert pick.tile is TileShape.T128x256
    assert pick.cluster_m == (2 if k * (1 if fp8 else 2) % 128 else 1)
