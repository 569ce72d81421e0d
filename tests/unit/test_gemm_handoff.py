"""hopper_gemm with epilogue=handoff on the CPU: the consumers hand C to a store task through a pipeline of the
epilogue buffers; the checker proves it, a store task that waits for one part too many deadlocks, one that
releases a buffer before its TMA store has read it is caught by the async-read rule, the combinations that
cannot work are refused, and the kernels compile for sm_90a without spills or serialised WGMMAs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from scenario_support import captured, compiled_as_recorded, ident
from ts_explore.analysis.async_reads import check_async_reads
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_geometry import Cluster, DType, Epilogue, GemmMode, Geometry, Raster, Release, TileShape
from ts_explore.kernels.gemm_cluster import load_slices
from ts_explore.model import QueueKind
from ts_explore.scenarios import get
from ts_explore.scenarios.choices import adjust
from ts_explore.scenarios.gemm import GemmFault
from ts_explore.scenarios.gemm_handoff import STORE_SCOPE_NOTE, store_reads
from ts_explore.verification.verify import verify
from test_trace_keeps_wgmma_async import PTXAS

SC = get("hopper_gemm")
HO = dict(epilogue=Epilogue.HANDOFF)

PROVEN: list[dict[str, Any]] = [
    HO,
    dict(HO, persistence=QueueKind.NONE),
    dict(HO, tile=TileShape.T256x128),  # two buffers: the release lag uses half of them
    dict(HO, cluster=Cluster.C2x1, swizzle=8),
    dict(HO, cluster=Cluster.C1x2),
    dict(HO, dtype=DType.FP8),
    dict(HO, tile=TileShape.T128x128, consumer_wgs=1, release=Release.AFTER_WAIT),
]


@pytest.mark.parametrize("overrides", PROVEN, ids=ident)
def test_handoff_records_load_store_mma_and_is_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    built = SC.build(cfg)
    ts = captured(SC, cfg)
    assert [(t.name, t.warp_start, t.num_warps) for t in ts.tasks] == [
        ("load", 0, 2), ("store", 2, 2), ("mma", 4, 4 * cfg.consumer_wgs)]
    assert cfg.geometry().threads == 128 + 128 * cfg.consumer_wgs  # the store task fills the load warpgroup
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert STORE_SCOPE_NOTE in verdict.scope.not_modelled
    assert check_async_reads(ts, store_reads()).safe
    assert any("hand-off epilogue" in n and "warps 2-3" in n for n in built.notes)


def test_the_load_task_brings_half_a_stage_per_warp() -> None:
    """Two load warps: each brings half of A's and B's rows (a quarter of the shared one in a 2-CTA cluster)."""
    assert load_slices(Geometry(128, 256, 4, 2, handoff=True), 2) == (64, 128)
    assert load_slices(Geometry(128, 256, 4, 2, cluster_m=2, handoff=True), 2) == (64, 64)
    assert load_slices(Geometry(128, 256, 4, 2, cluster_n=2, handoff=True), 2) == (32, 128)
    geo = SC.config(**HO, cluster=Cluster.C2x1).geometry()
    smem = SC.build(SC.config(**HO, cluster=Cluster.C2x1)).tasks[0].dst_resources[0]
    assert geo.load_warps == 2 and smem.load_warps == 2
    assert smem.pipeline_config.num_bytes_per_warp_per_cta * 2 == geo.stage_bytes


def test_releasing_a_buffer_before_its_store_has_read_it_is_caught_by_the_async_read_rule() -> None:
    cfg = SC.config(**HO, fault=GemmFault.HANDOFF_EARLY_RELEASE)
    built = SC.build(cfg)
    assert verify(**built.task_manager_args()).status.value == "safe"  # what TS alone cannot see
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe" and "async_read_rule" in {c.name for c in verdict.failed_checks}
    report = check_async_reads(captured(SC, cfg), store_reads())
    first = report.findings[0]
    assert (first.task, first.tile, first.iteration, first.read_iteration) == ("store", 0, 0, 0), report.summary()
    assert "of c" in first.message and "drain" in first.message
    with pytest.raises(ValueError, match="fault=none"):
        gemm.compile(SC, cfg, arch="sm_90a")


def test_a_store_task_waiting_for_one_part_too_many_deadlocks_with_a_counterexample() -> None:
    verdict = verify(**SC.build(SC.config(**HO, fault=GemmFault.HANDOFF_EXTRA_PART)).verify_kwargs())
    assert verdict.status.value == "unsafe"
    dead = verdict.deadlocks[0]
    assert dead.interleaving is not None and {b.resource for b in dead.blocked} == {"c"}


BAD = [
    (dict(HO, mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6), "use epilogue=inline with mode=ping-pong"),
    (dict(HO, persistence=QueueKind.CLC), "use persistence=static or none with epilogue=handoff"),
    (dict(fault=GemmFault.HANDOFF_EARLY_RELEASE), "use epilogue=handoff, or fault=none"),
    (dict(HO, fault=GemmFault.PINGPONG_BROKEN), "use mode=ping-pong, or fault=none"),
]


@pytest.mark.parametrize("overrides,fix", BAD, ids=[ident(o) for o, _ in BAD])
def test_combinations_the_handoff_cannot_run_are_refused_with_cause_and_fix(overrides: dict[str, Any],
                                                                            fix: str) -> None:
    with pytest.raises(ValueError) as err:
        SC.build(SC.config(**overrides))
    assert fix in str(err.value) and ";" in str(err.value)


def test_picking_a_handoff_fault_or_ping_pong_moves_the_epilogue_to_one_that_runs() -> None:
    """In the explorer: a hand-off fault brings the hand-off with it; ping-pong takes the inline epilogue back."""
    cfg, notes = adjust(SC, SC.config(fault=GemmFault.HANDOFF_EXTRA_PART), keep="fault")
    assert cfg.epilogue is Epilogue.HANDOFF and notes and "epilogue" in notes[0]
    cfg, notes = adjust(SC, SC.config(**HO, mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6), keep="mode")
    assert cfg.epilogue is Epilogue.INLINE and "already hides" in notes[0]
    SC.check(cfg)


def test_the_handoff_kernel_compiles_for_sm90a_and_builds_the_recorded_tasks() -> None:
    used = compiled_as_recorded(SC, SC.config(**HO))
    assert used.frame_bytes == 0, used  # no spills


COMPILED = [dict(HO, dtype=DType.FP8), dict(HO, cluster=Cluster.C2x1, swizzle=8), dict(HO, cluster=Cluster.C1x2),
            dict(HO, tile=TileShape.T256x128), dict(HO, tile=TileShape.T128x128, consumer_wgs=1),
            dict(HO, tile=TileShape.T64x256, consumer_wgs=1),
            dict(HO, persistence=QueueKind.NONE, raster=Raster.ALONG_N, cluster=Cluster.C2x1),
            dict(HO, dtype=DType.FP8, cluster=Cluster.C2x1, release=Release.AFTER_WAIT)]


@pytest.mark.soak  # eight kernel compiles: beyond the default tier's budget
@pytest.mark.parametrize("overrides", COMPILED, ids=ident)
def test_every_handoff_variant_compiles_for_sm90a(overrides: dict[str, Any]) -> None:
    from ts_explore.kernels.build import resources

    fn = gemm.compile(SC, SC.config(**overrides), arch="sm_90a")
    used = resources(fn)
    assert used is not None and used.frame_bytes == 0, used


@pytest.mark.soak  # a kernel compile and a ptxas run: beyond the default tier's budget
def test_ptxas_keeps_the_handoff_kernels_wgmmas_asynchronous_and_spills_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumers' WGMMAs stay asynchronous (no C7520 'serialized' warning) and nothing spills, the 128
    accumulators beside the hand-off's pipeline state included."""
    if PTXAS is None:
        pytest.skip("no ptxas here: it comes with the CUDA toolkit")
    monkeypatch.setattr(gemm, "compile_options",
                        lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --dump-dir {tmp_path}")
    gemm.compile(SC, SC.config(**HO), arch="sm_90a")
    ptx = sorted(tmp_path.rglob("*.ptx"))
    assert ptx, "the DSL kept no PTX"
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(ptx[0]), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    said = done.stdout + done.stderr
    assert "Used" in said and "serialized" not in said and "C7520" not in said, said[-3000:]
    assert "0 bytes spill stores, 0 bytes spill loads" in said, said[-3000:]
