"""The traced ping-pong GEMM keeps its warpgroup MMAs asynchronous: ptxas serialises none of them.

Recording behind ``lane == 0`` between in-flight WGMMAs made ptxas serialise every WGMMA of the traced
build (C7520, "compiler-inserted WG.AR in divergent path"): the default trace then cost 1.44x on an H200
instead of 1.00x. The kernel's PTX is kept and read by the CUDA toolkit's ``ptxas`` (skipped without it).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scenario_support import cuda_tool
from ts_explore.gpu import launch_plan
from ts_explore.kernels import gemm
from ts_explore.model.timeline import TraceSpec
from ts_explore.scenarios import get

PTXAS = cuda_tool("ptxas")
PINGPONG = dict(mode="ping-pong", tile="128x128x64", stages=6)


def _ptxas_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: TraceSpec | None) -> str:
    monkeypatch.setattr(gemm, "compile_options", lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --dump-dir {tmp_path}")
    scenario = get("hopper_gemm")
    gemm.compile(scenario, scenario.config(**PINGPONG), arch="sm_90a", trace=trace)
    ptx = sorted(tmp_path.rglob("*.ptx"))
    assert ptx, "the DSL kept no PTX"
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(ptx[0]), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    return done.stdout + done.stderr


@pytest.mark.soak  # a kernel compile and a ptxas run (about 20 s): beyond the default tier's budget
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
def test_the_default_trace_of_the_ping_pong_gemm_leaves_its_wgmmas_asynchronous(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = TraceSpec(stages="work", ctas=2).placed(launch_plan("hopper_gemm", (4096, 4096, 4096), **PINGPONG))
    said = _ptxas_says(tmp_path, monkeypatch, spec)
    assert "Used" in said and "serialized" not in said, said[-3000:]
