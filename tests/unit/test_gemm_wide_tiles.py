"""hopper_gemm's 192-wide tiles on the CPU: 128x192 (ping-pong and cooperative) and 256x192 (cooperative).

Their geometry fits 227 KiB and rotates its six epilogue parts through a divisor of them, their schedules are
proven (and the planted faults still caught), ``tile='by shape'`` with ping-pong picks 128x192 where its work
units fill the SMs and says why in the launch plan, and each compiles for sm_90a without spilling: ptxas's own
report is read from the kept PTX in the soak tier.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scenario_support import compiled_as_recorded, cuda_tool, ident
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_geometry import (
    EPILOGUE_N, SMEM_LIMIT, TILE_SHAPES, Cluster, DType, Epilogue, GemmMode, Geometry, TileShape,
)
from ts_explore.kernels.gemm_tile_pick import PINGPONG_CANDIDATES, pick_tile
from ts_explore.model.plan import DeviceLimits
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get
from ts_explore.scenarios.gemm import GemmFault
from ts_explore.verification.verify import verify

SC = get("hopper_gemm")
H200 = DeviceLimits.h200()
PP192 = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=4)
COOP192 = dict(tile=TileShape.T128x192, stages=5)
COOP256x192 = dict(tile=TileShape.T256x192, stages=3)
WIDE: list[dict[str, Any]] = [PP192, dict(PP192, cluster=Cluster.C2x1, swizzle=4), COOP192, COOP256x192,
                              dict(COOP192, cluster=Cluster.C2x1), dict(COOP192, stages=4, epilogue=Epilogue.HANDOFF)]
PTXAS = cuda_tool("ptxas")


def test_the_wide_tiles_fill_shared_memory_as_planned() -> None:
    pp = SC.config(**PP192).geometry()
    assert (pp.accumulators_per_thread, pp.max_stages(), pp.epilogue_parts, pp.epilogue_buffers) == (192, 4, 6, 2)
    assert pp.stage_bytes == 40 * 1024 and pp.smem_bytes <= SMEM_LIMIT
    coop = SC.config(**COOP192).geometry()
    assert (coop.accumulators_per_thread, coop.max_stages(), coop.epilogue_buffers) == (96, 5, 3)
    big = SC.config(**COOP256x192).geometry()
    assert (big.accumulators_per_thread, big.max_stages(), big.epilogue_buffers) == (192, 3, 2)
    with pytest.raises(ValueError, match="stages <= 4"):
        SC.check(SC.config(**dict(PP192, stages=5)))


@pytest.mark.parametrize("tm, tn", TILE_SHAPES)
@pytest.mark.parametrize("pingpong", [False, True])
def test_every_tile_rotates_its_epilogue_parts_through_a_divisor_of_them(tm: int, tn: int, pingpong: bool) -> None:
    """Part p of every tile goes through buffer p % buffers: unless the buffers divide the parts, the next
    tile's first part lands in a buffer the previous tile's last-but-some store may still be reading."""
    geo = Geometry(tm, tn, 2, 2, pingpong=pingpong)
    assert tn % EPILOGUE_N == 0 and geo.epilogue_parts % geo.epilogue_buffers == 0, (tm, tn, geo.epilogue_buffers)


@pytest.mark.parametrize("overrides", WIDE, ids=ident)
def test_the_wide_tile_schedules_are_drawn_and_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    SC.check(cfg)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    assert "smem_ab" in dependency_graph(ts).source and "mma" in schedule_graph(built.tasks[-1]).source
    geo = cfg.geometry()
    assert f"output tiles of {geo.tile_m} x 192" in " ".join(built.notes)
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()


@pytest.mark.parametrize("overrides, fault", [(PP192, GemmFault.PINGPONG_BROKEN),
                                              (dict(COOP192, stages=4, epilogue=Epilogue.HANDOFF),
                                               GemmFault.HANDOFF_EXTRA_PART)], ids=["ping-pong", "handoff"])
def test_the_planted_deadlocks_are_caught_on_the_wide_tiles(overrides: dict[str, Any], fault: GemmFault) -> None:
    verdict = verify(**SC.build(SC.config(**overrides, fault=fault)).verify_kwargs())
    assert verdict.status.value == "unsafe" and "deadlock" in verdict.summary(), verdict.summary()


def test_by_shape_with_ping_pong_takes_128x192_on_a_full_grid_and_the_plan_says_so() -> None:
    cfg = SC.config(mode=GemmMode.PINGPONG, tile=TileShape.BY_SHAPE)
    SC.check(cfg)
    plan = launch_plan("hopper_gemm", (8192, 8192, 8192), device=H200, mode=GemmMode.PINGPONG,
                       tile=TileShape.BY_SHAPE)
    text = plan.summary()
    assert "tile by shape: 128x192x64 ping-pong in 2 consumer warpgroups: 1376 work units of two tiles" in text, text
    assert "tiles of 128 x 192" in text and plan.threads == 384
    picked = cfg.resolved((8192, 8192, 8192), H200.sms)
    assert picked.tile is TileShape.T128x192 and picked.stages == 4, "the stages are cut to what fits"
    small = launch_plan("hopper_gemm", (1000, 1032, 520), device=H200, mode=GemmMode.PINGPONG,
                        tile=TileShape.BY_SHAPE)
    assert "128x192x64 would make 24 work units, under half of them" in small.summary()
    assert prove(SC, cfg, (small,)).ok


@pytest.mark.parametrize("shape", [(8192, 8192, 8192), (4096, 6144, 4096), (5000, 3080, 4136), (1000, 1032, 520),
                                   (64, 64, 64), (16384, 57344, 8192)])
def test_by_shape_ping_pong_picks_only_ping_pong_tiles_and_keeps_cooperative_picks(shape: tuple[int, int, int]) \
        -> None:
    pick = pick_tile(shape, H200.sms, pingpong=True)
    assert (pick.tile, pick.consumer_wgs) in PINGPONG_CANDIDATES
    assert SC.config(mode=GemmMode.PINGPONG, tile=pick.tile).geometry().accumulators_per_thread <= 192
    assert pick_tile(shape, H200.sms).tile is not TileShape.T128x192, "the cooperative pick is unchanged"


def test_the_128x192_ping_pong_kernel_compiles_for_sm90a_without_spilling() -> None:
    used = compiled_as_recorded(SC, SC.config(**PP192))
    assert used.frame_bytes == 0 and used.registers <= 168, used  # 192 accumulators in 232 registers


def _ptxas_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cfg: Any) -> str:
    monkeypatch.setattr(gemm, "compile_options",
                        lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --dump-dir {tmp_path}")
    gemm.compile(SC, cfg, arch="sm_90a")
    ptx = sorted(tmp_path.rglob("*.ptx"))
    assert ptx, "the DSL kept no PTX"
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(ptx[0]), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    return done.stdout + done.stderr


@pytest.mark.soak  # one DSL compile and one ptxas run each (2-5 s): four of them exceed the default tier's share
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", [
    PP192, dict(PP192, cluster=Cluster.C2x1), COOP192, COOP256x192, dict(PP192, dtype=DType.FP8),
    dict(COOP256x192, dtype=DType.FP8, cluster=Cluster.C2x1), dict(COOP192, consumer_wgs=1),
    dict(COOP192, stages=4, epilogue=Epilogue.HANDOFF, cluster=Cluster.C2x1)], ids=ident)
def test_ptxas_allocates_the_wide_tiles_without_spills_or_serialised_wgmma(
        overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = SC.config(**overrides)
    said = _ptxas_report(tmp_path, monkeypatch, cfg)
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in said, said[-2000:]
    used = re.search(r"Used (\d+) registers", said)
    # the launch's registers fit one CTA per SM (168 x 384 threads; one consumer warpgroup: 255 x 256)
    assert used and int(used.group(1)) * cfg.geometry().threads <= 64 * 1024, said[-2000:]
    assert "serialized" not in said and all(f"C75{n}" not in said for n in (10, 19, 20)), said[-3000:]


def test_the_unstaged_load_boxes_equal_the_sliced_staged_layouts_they_replace() -> None:
    """The TMA boxes are tiled directly (slicing a 24-row staged layout aborts the DSL); for every row count
    the older tiles use, the layout is the one the staged layout's first stage had, bf16 and fp8 alike."""
    import cutlass.cute as cute

    from ts_explore.kernels.gemm_mainloop import slice_layout, smem_layouts

    seen: list[tuple[str, str]] = []

    @cute.jit
    def layouts() -> None:
        for dtype in (DType.BF16, DType.FP8):
            for rows in (16, 32, 48, 64):
                geo = Geometry(tile_m=rows, tile_n=rows, stages=1, consumer_wgs=1, dtype=dtype)
                staged, _, _ = smem_layouts(geo)
                seen.append((str(cute.slice_(staged, (None, None, 0))), str(slice_layout(geo, rows))))
        seen.append(("24 rows", str(slice_layout(Geometry(32, 24, 1, 1), 24))))

    layouts()
    assert len(seen) == 9 and all(old == new for old, new in seen[:-1]), seen
    assert "(8,3)" in seen[-1][1], seen[-1]


def test_tune_searches_the_wide_tiles_and_every_default_candidate_is_a_valid_config() -> None:
    from ts_explore.scenarios.knobs import configure
    from ts_explore.tuning.candidates import candidates

    configs = [configure(SC, c) for c in candidates("hopper_gemm")]
    tiles = {(c.mode, c.tile, c.cluster) for c in configs}
    assert {(GemmMode.PINGPONG, TileShape.T128x192, Cluster.C1x1),
            (GemmMode.PINGPONG, TileShape.T128x192, Cluster.C2x1), (GemmMode.COOPERATIVE, TileShape.T128x192, Cluster.C1x1),
            (GemmMode.PINGPONG, TileShape.BY_SHAPE, Cluster.C1x1)} <= tiles
