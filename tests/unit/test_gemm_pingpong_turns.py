"""The ping-pong GEMM's shared epilogue (``epilogue=shared``) on the CPU: one set of C buffers for both consumers,
taken in turns through a one-stage pipeline, so the 128x192 ring takes 5 stages instead of 4.

The geometry fits 227 KiB (as planned and as TS lays it out), only ping-pong offers it, the turn is drawn and
proven SAFE by our checker (1x1 and 2x1 clusters, persistent or not), the planted early hand-over is reported by
the async-read rule with the release that races, and the kernel compiles for sm_90a without spilling and with
every WGMMA group whole (ptxas's report read from the kept PTX).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from scenario_support import ident
from test_gemm_pingpong_wgmma_overlap import PTXAS, commits_split_from_their_wgmmas, kept_ptx, ptxas_report
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels.gemm_geometry import SMEM_LIMIT, Cluster, DType, Epilogue, GemmMode, TileShape
from ts_explore.model import QueueKind
from ts_explore.model.plan import DeviceLimits
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get
from ts_explore.scenarios.choices import choices
from ts_explore.scenarios.gemm import GemmFault
from ts_explore.verification.verify import verify

SC = get("hopper_gemm")
TURNS = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=5, epilogue=Epilogue.SHARED)
PROVEN: list[dict[str, Any]] = [TURNS, dict(TURNS, cluster=Cluster.C2x1, swizzle=8),
                                dict(TURNS, persistence=QueueKind.NONE), dict(TURNS, dtype=DType.FP8)]


def test_sharing_the_c_buffers_gives_the_128x192_ring_a_fifth_stage_within_227_kib() -> None:
    geo = SC.config(**TURNS).geometry()
    assert (geo.stage_bytes, geo.epilogue_bytes, geo.max_stages()) == (40 * 1024, 16 * 1024, 5)
    assert geo.smem_bytes == 5 * (40 * 1024 + 16) + 16 * 1024 + 16 <= SMEM_LIMIT
    allocator = SC.build(SC.config(**TURNS)).task_manager_kwargs["smem_allocator"]
    assert allocator.total <= geo.smem_bytes, "TS lays the ring and the one set of buffers out as planned"
    own = SC.config(**dict(TURNS, stages=4, epilogue=Epilogue.INLINE)).geometry()
    assert (own.epilogue_bytes, own.max_stages()) == (32 * 1024, 4), "each consumer's own buffers leave 4"
    with pytest.raises(ValueError, match="stages <= 4"):
        SC.check(SC.config(**dict(TURNS, epilogue=Epilogue.INLINE)))
    with pytest.raises(ValueError, match="stages <= 5"):
        SC.check(SC.config(**dict(TURNS, stages=6)))


def test_only_ping_pong_offers_the_shared_epilogue_and_a_cooperative_one_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="use mode=ping-pong with epilogue=shared"):
        SC.check(SC.config(tile=TileShape.T128x192, stages=4, epilogue=Epilogue.SHARED))
    coop = choices(SC, SC.config(tile=TileShape.T128x192, stages=4))["epilogue"]
    pp = choices(SC, SC.config(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=4))["epilogue"]
    assert Epilogue.SHARED not in coop.options and Epilogue.HANDOFF in coop.options
    assert Epilogue.SHARED in pp.options and Epilogue.HANDOFF not in pp.options


@pytest.mark.parametrize("overrides", PROVEN, ids=ident)
def test_the_turn_is_drawn_and_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    SC.check(cfg)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    assert "smem_ab" in dependency_graph(ts).source
    mma0, mma1 = (schedule_graph(t).source for t in built.tasks[1:])
    assert "store0" in mma0 and "commit" in mma0 and "store1" in mma1 and "release" in mma1
    assert any("shared epilogue: one set of 2 C buffers" in n for n in built.notes), built.notes
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()


def test_handing_the_turn_back_before_the_stores_have_read_the_buffers_is_reported_as_a_race() -> None:
    verdict = verify(**SC.build(SC.config(**TURNS, fault=GemmFault.SHARED_EARLY_TURN)).verify_kwargs())
    text = verdict.summary()
    assert verdict.status.value == "unsafe", text
    assert "task 'mma1' releases a stage of c at tile 0 while the store1 issued at tile 0 may still be reading it" \
        in text, text


def test_the_ping_pong_deadlock_is_still_caught_with_the_shared_epilogue() -> None:
    verdict = verify(**SC.build(SC.config(**TURNS, fault=GemmFault.PINGPONG_BROKEN)).verify_kwargs())
    assert verdict.status.value == "unsafe" and "deadlock" in verdict.summary(), verdict.summary()


def test_the_launch_gate_proves_the_turn_at_a_full_grid_of_16_k_blocks_and_at_tails() -> None:
    """What the GPU's traced launch runs (4096 x 4096 x 1024) and a tail shape: proven for every tile count."""
    for shape in [(4096, 4096, 1024), (1000, 1032, 520)]:
        plan = launch_plan("hopper_gemm", shape, device=DeviceLimits.h200(), **TURNS)
        proof = prove(SC, SC.config(**TURNS), (plan,))
        assert proof.ok, proof.summary()


def test_the_early_turn_fault_needs_the_shared_epilogue() -> None:
    with pytest.raises(ValueError, match="use epilogue=shared, or fault=none"):
        SC.check(SC.config(**dict(TURNS, stages=4, epilogue=Epilogue.INLINE), fault=GemmFault.SHARED_EARLY_TURN))


def _assert_clean(said: str, threads: int) -> None:
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in said, said[-2000:]
    used = re.search(r"Used (\d+) registers", said)
    assert used and int(used.group(1)) * threads <= 64 * 1024, said[-2000:]
    assert "serialized" not in said and all(f"C75{n}" not in said for n in (10, 11, 19, 20)), said[-3000:]


@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
def test_the_5_stage_shared_epilogue_kernel_compiles_for_sm90a_without_spills_or_split_wgmma_groups(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = kept_ptx(tmp_path, monkeypatch, TURNS)
    assert commits_split_from_their_wgmmas(ptx.read_text()) == []
    _assert_clean(ptxas_report(ptx, tmp_path), SC.config(**TURNS).geometry().threads)


@pytest.mark.soak  # one DSL compile and one ptxas run each (3-5 s)
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", PROVEN[1:], ids=ident)
def test_every_shared_epilogue_build_compiles_cleanly(overrides: dict[str, Any], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = kept_ptx(tmp_path, monkeypatch, overrides)
    assert commits_split_from_their_wgmmas(ptx.read_text()) == []
    _assert_clean(ptxas_report(ptx, tmp_path), SC.config(**overrides).geometry().threads)
