"""hopper_gemm's fitted tile widths (``tile_n``) on the CPU: the knob and its refusals, the geometry (16-column
epilogue parts, B's slices over the load warps), the 'by shape' pick at the awkward shapes of issue 39 and its
unchanged picks elsewhere, the drawn and proven schedules (every instance of a launch at shapes with tails in M, N
and K), the planted fault our checker reports, and the sm_90a compile (registers, no spills, no serialised WGMMA).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from scenario_support import compiled_as_recorded, ident
from test_gemm_pingpong_wgmma_overlap import PTXAS, kept_ptx, ptxas_report
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_cluster import load_split
from ts_explore.kernels.gemm_geometry import (
    SMEM_LIMIT, TILE_SHAPES, Cluster, DType, Epilogue, GemmMode, Geometry, TileShape,
)
from ts_explore.kernels.gemm_tile_pick import pick_tile
from ts_explore.model import QueueKind
from ts_explore.model.plan import DeviceLimits
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get
from ts_explore.scenarios.gemm import GemmFault
from ts_explore.scenarios.gemm_fitted import LOADS_SCOPE_NOTE
from ts_explore.verification.verify import verify

SC = get("hopper_gemm")
H200 = DeviceLimits.h200()
W240 = dict(tile_n=240)  # 128x256 narrowed: N=3080 in 13 columns of 240
W144 = dict(tile=TileShape.T64x256, consumer_wgs=1, tile_n=144)  # 64x256 narrowed: N=1032 in 8 columns of 144
FITTED: list[dict[str, Any]] = [W240, dict(W240, cluster=Cluster.C2x1), dict(W240, cluster=Cluster.C1x2, swizzle=4),
                                W144, dict(W144, cluster=Cluster.C2x1), dict(W240, epilogue=Epilogue.HANDOFF),
                                dict(W240, persistence=QueueKind.NONE, dtype=DType.FP8)]
AWKWARD = [(5000, 3080, 4136), (1000, 1032, 520)]
SUITE = [(8192, 8192, 8192), (4096, 4096, 4096)] + [(m, n, k) for m in (4096, 8192, 16384) for n, k in (
    (6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (10240, 8192), (8192, 8192), (57344, 8192),
    (8192, 28672))]


def test_the_knob_narrows_named_cooperative_tiles_and_refuses_the_rest_with_the_fix() -> None:
    for overrides in FITTED:
        SC.check(SC.config(**overrides))
    assert SC.config(**W240).geometry().tile_n == 240 and SC.config().geometry().tile_n == 256
    refused = [(dict(tile=TileShape.BY_SHAPE, tile_n=240), "tile='by shape' picks its own width"),
               (dict(tile_n=136), "multiple of 16 below the tile's own 256"),
               (dict(tile=TileShape.T64x128, consumer_wgs=1, tile_n=128), "use tile_n in 16, 32, ..., 112"),
               (dict(tile=TileShape.T128x128, tile_n=144), "below the tile's own 128"),
               (dict(tile=TileShape.T256x128, tile_n=112), "64- and 128-row tiles"),
               (dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6, tile_n=112), "use mode=cooperative"),
               (dict(fault=GemmFault.FITTED_FULL_WIDTH_BYTES), "use tile_n=<a narrowed width>")]
    for overrides, said in refused:
        with pytest.raises(ValueError, match=re.escape(said)):
            SC.check(SC.config(**overrides))


def test_a_fitted_width_goes_out_in_16_column_parts_and_fits_shared_memory() -> None:
    wide = SC.config(**W240).geometry()
    assert (wide.epilogue_n, wide.epilogue_parts, wide.epilogue_buffers) == (16, 15, 3)
    assert wide.accumulators_per_thread == 120
    assert wide.stage_bytes == 46 * 1024 and wide.smem_bytes <= SMEM_LIMIT and wide.max_stages() == 4
    small = SC.config(**W144).geometry()
    assert (small.epilogue_n, small.epilogue_parts, small.epilogue_buffers) == (16, 9, 3)
    assert small.accumulators_per_thread == 72
    assert SC.config(tile=TileShape.T64x256, consumer_wgs=1, tile_n=160).geometry().epilogue_n == 32


@pytest.mark.parametrize("tm, tn", TILE_SHAPES)
def test_every_standard_tile_still_splits_its_loads_over_every_load_warp(tm: int, tn: int) -> None:
    """load_split only leaves warps out where a fitted width needs it: the kernels of the tiles that existed before
    load as they did (their PTX is unchanged)."""
    for cm, cn in ((1, 1), (2, 1), (1, 2)):
        for warps in (4, 2):
            geo = Geometry(tm, tn, 2, 2, cluster_m=cm, cluster_n=cn)
            assert load_split(geo, warps) == ((warps, tm // (warps * cn)), (warps, tn // (warps * cm))), (geo, warps)


@pytest.mark.parametrize("tn", range(144, 256, 16))
def test_every_fitted_width_cuts_b_into_whole_atoms_that_cover_it(tn: int) -> None:
    for cm in (1, 2):
        for warps in (4, 2):
            (used_a, rows_a), (used_b, rows_b) = load_split(Geometry(128, tn, 2, 2, cluster_m=cm), warps)
            assert rows_b % 8 == 0 and used_b * cm * rows_b == tn and 1 <= used_b <= warps
            assert used_a * rows_a == 128


def epilogue_misplacements(geo: Geometry, threads: list[int]) -> tuple[list[tuple], bool]:
    """Trace the epilogue's register -> C mapping for ``threads`` of the consumer warpgroups (sm_90a, no GPU):
    ``(values written to a C element other than their own, whether every accumulator went out exactly once)``.

    A thread's accumulator ``f`` belongs to the C element the WGMMA partition of an identity tensor names; the
    epilogue writes it, in part ``p``, to column ``p * epilogue_n`` plus the column the store copy's source
    partition names for the slot :func:`~ts_explore.kernels.gemm_epilogue.source_index` takes it from (stmatrix
    exchanges values between lanes, so the source view, not each lane's destination address, says where a
    register's value lands).
    """
    import cutlass.cute as cute

    from ts_explore.kernels.gemm_epilogue import source_index, store_copy
    from ts_explore.kernels.gemm_mainloop import ACC_DTYPE, accumulator_shape, tiled_mma

    found: dict[str, Any] = {}

    def trace() -> None:
        r2s, count = store_copy(geo), geo.accumulators_per_thread
        wrong, once = [], True
        for t in threads:
            owner = tiled_mma(geo).get_slice(t).partition_C(cute.make_identity_tensor((geo.tile_m, geo.tile_n)))
            part_view = r2s.get_slice(t).partition_S(cute.make_identity_tensor((geo.tile_m, geo.epilogue_n)))
            flat = cute.make_rmem_tensor((count,), ACC_DTYPE)
            src = r2s.retile(cute.make_tensor(flat.iterator, cute.make_layout(accumulator_shape(geo))))
            per_block, m_blocks, n_blocks = (cute.size(part_view, mode=[i]) for i in range(3))
            sent = []
            for part in range(geo.epilogue_parts):
                for v in range(per_block):
                    for mb in range(m_blocks):
                        for nb in range(n_blocks):
                            f = src.layout((source_index(v, nb, part, per_block, n_blocks), mb, 0))
                            row, col = part_view[(v, mb, nb)]
                            sent.append(f)
                            if tuple(owner[f]) != (row, part * geo.epilogue_n + col):
                                wrong.append((t, part, f, tuple(owner[f]), (row, part * geo.epilogue_n + col)))
            once = once and sorted(sent) == list(range(count))
        found.update(wrong=wrong, once=once)

    @cute.jit
    def probe() -> None:
        trace()  # a plain function: its loops run in Python at trace time, over static layouts

    cute.compile(probe, options="--gpu-arch sm_90a")
    return found["wrong"], found["once"]


@pytest.mark.parametrize("tm, tn, wgs", [(128, 256, 2), (128, 240, 2), (64, 144, 1)], ids=lambda v: str(v))
def test_the_epilogue_writes_every_accumulator_to_its_own_element_of_c(tm: int, tn: int, wgs: int) -> None:
    """128x256 (32-column parts, measured correct on an H200) is the control; the fitted widths go out in
    16-column parts. Threads from both warpgroups, every lane position of a warp."""
    geo = Geometry(tm, tn, 4, wgs)
    wrong, once = epilogue_misplacements(geo, [t for t in (0, 1, 2, 3, 4, 5, 31, 37, 66, 127, 128, 161, 255)
                                               if t < 128 * wgs])
    assert not wrong and once, wrong[:5]


def test_by_shape_narrows_the_awkward_shapes_and_every_plan_says_why() -> None:
    by_shape = SC.config(tile=TileShape.BY_SHAPE)
    large = by_shape.resolved(AWKWARD[0], H200.sms)
    assert (large.tile, large.tile_n, large.cluster, large.stages) == (TileShape.T128x256, 240, Cluster.C2x1, 4)
    small = by_shape.resolved(AWKWARD[1], H200.sms)
    assert (small.tile, small.tile_n, small.consumer_wgs, small.cluster) == (TileShape.T64x256, 144, 1, Cluster.C2x1)
    text = launch_plan("hopper_gemm", AWKWARD[0], device=H200, tile=TileShape.BY_SHAPE).summary()
    assert "tiles of 128 x 240" in text and "N=3080 in 13 columns of 240, not 256: 1.3 % padding, not 7.5 %" in text
    plan = launch_plan("hopper_gemm", AWKWARD[1], device=H200, tile=TileShape.BY_SHAPE)
    assert plan.ctas == 128 and "N=1032 in 8 columns of 144 fills one wave" in plan.summary()


@pytest.mark.parametrize("shape", SUITE, ids=lambda s: "x".join(map(str, s)))
def test_by_shape_keeps_its_pick_at_every_llm_shape(shape: tuple[int, int, int]) -> None:
    """Every projection of the suite has N a multiple of 256: no tail to trim, the 128x256 tile as before."""
    pick = pick_tile(shape, H200.sms)
    assert (pick.tile, pick.tile_n, pick.cluster_m) == (TileShape.T128x256, 0, 1), pick.text


@pytest.mark.parametrize("overrides", FITTED, ids=ident)
def test_the_fitted_schedules_are_drawn_and_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides, m=1000, n=1032, k=208)  # tails in M, N (the last column 72 or 24 wide) and K
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    assert "smem_ab" in dependency_graph(ts).source and "mma" in schedule_graph(built.tasks[-1]).source
    geo = cfg.geometry()
    notes = " ".join(built.notes)
    assert f"narrowed to {geo.tile_m} x {geo.tile_n}" in notes and f"{geo.epilogue_parts} parts of" in notes, notes
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert LOADS_SCOPE_NOTE in verdict.scope.not_modelled


@pytest.mark.parametrize("shape", AWKWARD + [(777, 1496, 3000), (130, 264, 40), (1, 8, 8), (1000, 3080, 24)],
                         ids=lambda s: "x".join(map(str, s)))
def test_every_instance_of_a_by_shape_launch_with_tails_is_proven(shape: tuple[int, int, int]) -> None:
    """The launch gate's proof of each planned instance: tails in M, N and K, and K shorter than one k-block."""
    by_shape = SC.config(tile=TileShape.BY_SHAPE)
    plan = launch_plan("hopper_gemm", shape, device=H200, tile=TileShape.BY_SHAPE)
    gate = prove(SC, by_shape, (plan,))
    assert gate.ok, gate.summary()
    assert plan.grid == gemm.grid(by_shape, shape, H200.sms)


def test_the_planted_full_width_bytes_are_reported_and_refused_at_launch() -> None:
    cfg = SC.config(**W240, fault=GemmFault.FITTED_FULL_WIDTH_BYTES)
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()
    assert "num_bytes=49152. Expected num_bytes=47104" in verdict.summary(), verdict.summary()
    with pytest.raises(ValueError, match="fault=none"):
        gemm.compile(SC, cfg, arch="sm_90a")
    fixed = verify(**SC.build(SC.config(**W240)).verify_kwargs())
    assert fixed.status.value == "safe", fixed.summary()


def test_the_narrowed_128x240_kernel_compiles_for_sm90a_without_spilling() -> None:
    used = compiled_as_recorded(SC, SC.config(**W240, cluster=Cluster.C2x1))
    assert used.frame_bytes == 0 and used.registers <= 168, used


@pytest.mark.soak  # one DSL compile and one ptxas run each (2-5 s)
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", FITTED, ids=ident)
def test_ptxas_allocates_the_fitted_tiles_without_spills_or_serialised_wgmma(
        overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = SC.config(**overrides)
    said = ptxas_report(kept_ptx(tmp_path, monkeypatch, overrides), tmp_path)
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in said, said[-2000:]
    used = re.search(r"Used (\d+) registers", said)
    assert used and int(used.group(1)) * cfg.geometry().threads <= 64 * 1024, said[-2000:]
    assert "serialized" not in said and all(f"C75{n}" not in said for n in range(10, 21)), said[-3000:]
