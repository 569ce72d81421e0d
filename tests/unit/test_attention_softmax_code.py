"""The softmax's instruction stream, read from the PTX the DSL keeps for sm_90a (no GPU needed).

A 64x128 block's softmax outlasts the other warpgroup's GEMMs on the H200, so the tensor cores wait on it;
what is checked here is what shortens it: the row max as four partial maxima (a chain of 9 dependent max
steps before the quad shuffle, 31 as a single chain) and the O rescale skipped by a warp vote when no row of
the warp raised its max. The soak tier also runs ``ptxas`` on every default config, on static persistence
(causal with its snake work order too), on the 160-key K/V block (whose P, converted as one vector, was packed
between the P·V WGMMAs) and on the 192- and 256-key blocks at head_dim 64, and fails on any WGMMA serialisation or
injected-arrive warning (C7511/C7513/C7519) or spill.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from scenario_support import cuda_tool
from ts_explore.kernels import attention
from ts_explore.scenarios import get

PTXAS = cuda_tool("ptxas")
SC = get("hopper_attention")
_INSTR = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s+(%\w+)\s*,\s*([^;]*);", re.M)


def _ptx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> str:
    monkeypatch.setattr(attention, "compile_options",
                        lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --dump-dir {tmp_path}")
    attention.compile(SC, SC.config(**overrides), arch="sm_90a")
    found = sorted(tmp_path.rglob("*.ptx"))
    assert found, "the DSL kept no PTX"
    return found[0].read_text()


def max_chain_before_quad_shuffle(ptx: str) -> int:
    """The longest run of dependent ``max.f32`` feeding a first-step quad shuffle (``shfl.sync.bfly`` by 1)."""
    depth: dict[str, int] = {}
    longest = 0
    for op, dest, rest in _INSTR.findall(ptx):
        srcs = re.findall(r"%\w+", rest)
        if op == "max.f32":
            depth[dest] = 1 + max((depth.get(s, 0) for s in srcs), default=0)
        elif op.startswith("shfl.sync.bfly") and re.search(r",\s*1\s*,", rest):
            longest = max(longest, depth.get(srcs[0], 0))
        else:
            depth.pop(dest, None)
    return longest


def test_max_chain_reads_dependent_max_steps_up_to_the_shuffle() -> None:
    single = "\n".join(["\tmax.f32 \t%r1, %r0, %r100;"] + [f"\tmax.f32 \t%r{i + 1}, %r{i}, %r{100 + i};"
                                                             for i in range(1, 32)]
                       + ["\tshfl.sync.bfly.b32 \t%r50, %r32, 1, 31, -1;"])
    assert max_chain_before_quad_shuffle(single) == 32
    assert max_chain_before_quad_shuffle(single.replace("%r50, %r32, 1", "%r50, %r32, 2")) == 0


def test_the_default_softmax_reaches_the_quad_shuffle_in_a_short_max_chain_and_votes_before_rescaling_o(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = _ptx(tmp_path, monkeypatch)
    chain = max_chain_before_quad_shuffle(ptx)
    assert 0 < chain <= 10, f"row max: {chain} dependent max steps before the quad shuffle (a single chain is 31)"
    assert "vote.sync.any.pred" in ptx, "O is rescaled on every block, also where no row's max changed"
    assert "ex2.approx.ftz.f32" in ptx and "cvt.rn.bf16x2.f32" in ptx  # exp2 approximate, P packed two at a time


@pytest.mark.soak  # twelve kernel compiles and ptxas runs (over a minute): beyond the default tier's budget
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", [{}, {"causal": True}, {"head_dim": 64}, {"head_dim": 64, "causal": True},
                                       {"tile_k": 160}, {"tile_k": 160, "causal": True},
                                       {"persistence": "static"}, {"persistence": "static", "causal": True},
                                       {"persistence": "static", "causal": True, "head_dim": 64},
                                       {"head_dim": 64, "tile_k": 192}, {"head_dim": 64, "tile_k": 256},
                                       {"head_dim": 64, "tile_k": 256, "causal": True}],
                         ids=["hd128", "hd128-causal", "hd64", "hd64-causal", "hd128-k160", "hd128-k160-causal",
                              "hd128-static", "hd128-static-causal", "hd64-static-causal", "hd64-k192", "hd64-k256",
                              "hd64-k256-causal"])
def test_ptxas_keeps_the_default_configs_and_the_160_key_block_asynchronous_and_spill_free(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overrides: dict) -> None:
    (tmp_path / "x").mkdir()
    source = tmp_path / "kernel.ptx"
    source.write_text(_ptx(tmp_path / "x", monkeypatch, **overrides))
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(source), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    said = done.stdout + done.stderr
    assert "Used" in said and not re.search(r"C751\d|serialized", said), said[-3000:]
    assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", said), said[-3000:]
