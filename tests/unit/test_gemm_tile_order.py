"""The GEMM's tile order control (L2 swizzle) on the CPU: the plan counts the padded tiles each CTA walks, every
instance records and verifies, the order it draws is the scheduler's, and launches that cannot use it are refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels.gemm_geometry import Geometry
from ts_explore.kernels.gemm_tile_scheduler import tile_order, work_units
from ts_explore.model import QueueKind
from ts_explore.model.plan import DeviceLimits
from ts_explore.render.tile_order import tile_order_figure
from ts_explore.scenarios import get
from ts_explore.scenarios.knobs import ConfigError

SC = get("hopper_gemm")
H200 = DeviceLimits.h200()


@settings(max_examples=150, deadline=None)
@given(tm=st.integers(1, 40), tn=st.integers(1, 40), swizzle=st.integers(1, 9), along_m=st.booleans(),
       cluster=st.sampled_from([(1, 1), (2, 1), (1, 2)]))
def test_the_order_numbers_every_tile_once_within_the_padded_work(tm: int, tn: int, swizzle: int, along_m: bool,
                                                                 cluster: tuple[int, int]) -> None:
    cm, cn = cluster
    geo = Geometry(128, 256, 4, 2, cluster_m=cm, cluster_n=cn)
    shape = (128 * tm, 256 * tn, 64)
    order = tile_order(shape, geo, swizzle, along_m)
    numbers = [n for row in order[::cm] for n in row[::cn]]
    assert len(set(numbers)) == len(numbers), "each cluster tile once"
    assert max(numbers) < work_units(shape, geo, swizzle, along_m)
    assert all(order[r] == order[r - r % cm] for r in range(tm)), "a 2x1 cluster's M-neighbours share a number"
    assert all(row[c] == row[c - c % cn] for row in order for c in range(tn)), "a 1x2 cluster's N-neighbours too"
    if swizzle > 1 and along_m:  # consecutive numbers stay within one group of `swizzle` cluster columns
        cols = {n: c // cn for row in order[::cm] for c, n in enumerate(row)}
        for n in cols:
            if n + 1 in cols and (n + 1) % (swizzle * -(-tm // cm)):
                assert cols[n] // swizzle == cols[n + 1] // swizzle


@pytest.mark.parametrize("shape,swizzle,padded", [((8192, 8192, 8192), 8, 0), ((1000, 1048, 584), 3, 8),
                                                  ((4096, 4096, 128), 4, 0)])
def test_the_plan_counts_padded_tiles_and_every_instance_verifies(shape: tuple, swizzle: int, padded: int) -> None:
    cfg = SC.config(swizzle=swizzle)
    plan = launch_plan("hopper_gemm", shape, device=H200, swizzle=swizzle)
    handed = sum(i.iterations * i.count for i in plan.instances)
    assert handed == work_units(shape, cfg.geometry(), swizzle)
    assert f"tiles handed out in groups of {swizzle} (L2 swizzle)" in plan.summary()
    assert (f"{padded} padded tiles outside C do no work" in plan.summary()) is bool(padded)
    if shape[2] <= 1024:  # the verifier unrolls K/64 k-blocks per tile
        gate = prove(SC, cfg, (plan,))
        assert gate.ok, gate.summary()


def test_the_cpu_view_says_the_order_and_a_queue_without_it_is_refused() -> None:
    notes = " ".join(SC.build(SC.config(swizzle=4)).notes)
    assert "in groups of 4 tile columns, along M" in notes
    with pytest.raises(ConfigError, match="use persistence=static, or swizzle=1"):
        SC.check(SC.config(swizzle=2, persistence=QueueKind.NONE))


def test_the_drawing_colours_each_tile_by_its_round() -> None:
    shape, geo = (512, 1024, 64), Geometry(128, 256, 4, 2)
    order = tile_order(shape, geo, swizzle=2)
    fig = tile_order_figure(order, ctas=4)
    image = fig.axes[0].images[0].get_array()
    assert image.tolist() == [[n // 4 for n in row] for row in order]
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels[:4] == ["0", "1", "0", "1"] and len(labels) == 16
