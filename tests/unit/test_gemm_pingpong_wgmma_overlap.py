"""The ping-pong GEMM's consumers keep one k-block's WGMMAs in flight while they wait for the next stage.

Each ping-pong consumer steps through every stage of a work unit and issues WGMMA only on its own tile's. With
the group's commit after that branch, ptxas closed the group at the branch's end and turned the commit into a
second, empty group (an injected ``warpgroup.arrive``, note C7519, and a null ``HGMMA.64x8x16``): "wait until
one group is outstanding" then waited for the empty one, so every k-block's WGMMAs ran to completion before the
next k-block's were issued. On an H200 the 128x192 ping-pong ran at 0.62-0.76x torch.matmul while the
cooperative kernels, whose commit follows their last WGMMA, ran at 1.0x. The commit now sits in the branch,
right after the last WGMMA, as the cooperative kernel's does.

The kernel's PTX is kept and read: every commit must follow its WGMMAs in the same basic block, and the CUDA
toolkit's ``ptxas`` (where there is one) must inject no ``warpgroup.arrive``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scenario_support import cuda_tool
from ts_explore.kernels import gemm
from ts_explore.kernels.gemm_geometry import Cluster, DType, GemmMode, TileShape
from ts_explore.scenarios import get

SC = get("hopper_gemm")
PP192 = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=4)
PTXAS = cuda_tool("ptxas")
LABEL = re.compile(r"^\$L__\w+:")


def kept_ptx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overrides: dict[str, Any]) -> Path:
    """Compile ``overrides``'s kernel for sm_90a and return the PTX the DSL kept."""
    monkeypatch.setattr(gemm, "compile_options",
                        lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --dump-dir {tmp_path}")
    gemm.compile(SC, SC.config(**overrides), arch="sm_90a")
    ptx = sorted(tmp_path.rglob("*.ptx"))
    assert ptx, "the DSL kept no PTX"
    return ptx[0]


def commits_split_from_their_wgmmas(ptx: str) -> list[int]:
    """Line numbers (from 1) of ``wgmma.commit_group`` instructions that a basic block's start (a label) or a
    branch separates from the WGMMA before them (those ptxas cannot fold into that WGMMA's group).

    >>> commits_split_from_their_wgmmas("wgmma.mma_async.x;\\nwgmma.commit_group.sync.aligned;")
    []
    >>> commits_split_from_their_wgmmas("wgmma.mma_async.x;\\n$L__BB0_82:\\nwgmma.commit_group.sync.aligned;")
    [3]
    """
    split, since_wgmma = [], False
    for number, line in enumerate(ptx.splitlines(), start=1):
        text = line.strip()
        if text.startswith("wgmma.mma_async"):
            since_wgmma = False
        elif LABEL.match(text) or re.match(r"^(@%?\w+\s+)?bra", text):
            since_wgmma = True
        elif text.startswith("wgmma.commit_group") and since_wgmma:
            split.append(number)
    return split


def ptxas_report(ptx: Path, tmp_path: Path) -> str:
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(ptx), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    return done.stdout + done.stderr


def test_the_128x192_ping_pong_commits_each_k_block_right_after_its_wgmmas(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = kept_ptx(tmp_path, monkeypatch, PP192)
    text = ptx.read_text()
    commits = text.count("wgmma.commit_group")
    assert commits >= 2, "each consumer commits its k-blocks' WGMMAs"
    assert commits_split_from_their_wgmmas(text) == [], "a commit apart from its WGMMAs becomes an empty group"
    if PTXAS is not None:
        said = ptxas_report(ptx, tmp_path)
        assert "C7519" not in said and "serialized" not in said, said[-3000:]


@pytest.mark.soak  # one DSL compile and one ptxas run each (3-5 s)
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", [
    dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6), dict(PP192, cluster=Cluster.C2x1, swizzle=8),
    dict(PP192, dtype=DType.FP8)], ids=["128x128", "128x192-2x1-swz8", "128x192-fp8"])
def test_every_ping_pong_build_keeps_its_wgmma_groups_whole(
        overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = kept_ptx(tmp_path, monkeypatch, overrides)
    assert commits_split_from_their_wgmmas(ptx.read_text()) == []
    said = ptxas_report(ptx, tmp_path)
    assert "C7519" not in said and "serialized" not in said, said[-3000:]
