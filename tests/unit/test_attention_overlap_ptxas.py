"""ptxas keeps every WGMMA of the overlapped attention kernel (``overlap=True``) asynchronous, without spills.

What serialised them before: the lagged P·V GEMM was issued in one guarded block of the K/V loop
(``every(1, start=1)``) and waited for in another, with the softmax writing P's registers in between, and the
first block closed an empty group in a branch of its own. ptxas pairs a group with its wait along each path of
the code and saw paths where the P·V ran on while its registers were redefined: it reported C7513 (non-WGMMA
instructions defining a WGMMA's input registers inside its pipeline stage) and C7519 (an injected
``warpgroup.arrive``) and waited after every WGMMA. Now each guarded block issues and waits for its own groups
and P is packed after the P·V that read it. One more thing kept them serial (C7512, with P spilled to local
memory): the V ring, which both consumer warpgroups use, holds the copy of P the P·V reads; on the path the
compiler cannot rule out (a lagged P·V before the first block), one warpgroup's P reached the other's code, the
two shared P's registers across the point where the warpgroups' code splits, and ptxas ran out of registers it
could use there. Each warpgroup now sets that copy at the start of its tile (``clear_overlapped``).

The default tier compiles one config and reads the DSL's own cubin (no stack frame: nothing spilled) and, where
the CUDA toolkit's ``ptxas`` is installed, its report on the kept PTX; the soak tier does so for every config the
benchmark and the ops could run with overlap: head_dim 64 and 128, ping-pong on and off, causal and not, static
persistence where the kernel launches it, one consumer warpgroup; the 192-key block at head_dim 64 (not a default
tile) is an expected failure: ptxas still injects warpgroup arrives there (C7519).

Asynchronous is not enough: the P·V GEMM must also run under the softmax. ptxas schedules within a basic block,
and it hoisted the wait for the P·V group above every exp2 of the softmax in its block (to pack P between them),
so the softmax ran after the GEMM. Each such wait now starts a block of its own (with one or two consumer
warpgroups: three ran slower with it); the PTX is checked for that in every such config, and where ``cuobjdump``
is installed the default kernel's SASS is checked for most exp2s before the wait.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scenario_support import cuda_tool, ident
from test_gemm_pingpong_wgmma_overlap import LABEL, commits_split_from_their_wgmmas
from ts_explore.kernels import attention
from ts_explore.kernels.build import resources
from ts_explore.scenarios import get
from ts_explore.scenarios.attention import Persistence, fences_pv_wait, fences_sums

SC = get("hopper_attention")
PTXAS = cuda_tool("ptxas")
CUOBJDUMP = cuda_tool("cuobjdump")
SERIALISED = re.compile(r"C75\d\d|serialized")
BRANCH = re.compile(r"^(@!?%?\w+\s+)?bra\b")
STATIC = Persistence.STATIC

CONFIGS: list[dict[str, Any]] = [
    dict(), dict(causal=True), dict(pingpong=False), dict(pingpong=False, causal=True), dict(persistence=STATIC),
    dict(head_dim=64), dict(head_dim=64, causal=True), dict(head_dim=64, pingpong=False),
    dict(head_dim=64, pingpong=False, causal=True), dict(head_dim=64, persistence=STATIC),
    dict(consumer_wgs=1, tile_q=64), dict(consumer_wgs=1, tile_q=64, persistence=STATIC), dict(tma_store=False),
    dict(head_dim=64, tile_q=192, consumer_wgs=3), dict(head_dim=64, tile_q=192, consumer_wgs=3, causal=True),
    dict(head_dim=64, tile_q=192, consumer_wgs=3, persistence=STATIC),
    pytest.param(dict(head_dim=64, tile_k=192, persistence=STATIC), id="head_dim=64,tile_k=192,persistence=STATIC",
                 marks=pytest.mark.xfail(strict=True, reason="the 192-key block at head_dim 64 (not a default tile) "
                                         "still gets injected warpgroup arrives (C7519, no serialisation note)")),
]


def compiled_with_ptx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overrides: dict[str, Any]) -> tuple:
    """Compile the overlapped kernel for sm_90a keeping its PTX: (compiled function, PTX path)."""
    monkeypatch.setattr(attention, "compile_options",
                        lambda arch=None: f"--gpu-arch sm_90a --keep-ptx --keep-cubin --dump-dir {tmp_path}")
    fn = attention.compile(SC, SC.config(overlap=True, **overrides), arch="sm_90a")
    ptx = sorted(tmp_path.rglob("*.ptx"))
    assert ptx, "the DSL kept no PTX"
    return fn, ptx[0]


def pv_waits_beside_exp2s(ptx: str) -> list[int]:
    """Line numbers (from 1) of ``wgmma.wait_group`` instructions in the same basic block as exp2s before them:
    ptxas may hoist such a wait above the exp2s, and the softmax then waits for the GEMM it should overlap.

    >>> pv_waits_beside_exp2s("ex2.approx.ftz.f32 %r1, %r2;\\nwgmma.wait_group.sync.aligned 0;")
    [2]
    >>> pv_waits_beside_exp2s("ex2.approx.ftz.f32 %r1, %r2;\\n@%p1 bra $L__X;\\nwgmma.wait_group.sync.aligned 0;")
    []
    """
    beside, exp2_in_block = [], False
    for number, line in enumerate(ptx.splitlines(), start=1):
        text = line.strip()
        if text.startswith("ex2.approx"):
            exp2_in_block = True
        elif LABEL.match(text) or BRANCH.match(text):
            exp2_in_block = False
        elif text.startswith("wgmma.wait_group") and exp2_in_block:
            beside.append(number)
    return beside


def exp2s_around_pv_waits(sass: str) -> list[tuple[int, int]]:
    """For each overlapped block in SASS (a ``gsb0, 0x1`` wait for S, then a ``gsb0, 0x0`` wait for the P·V
    GEMM): the exp2s (``MUFU.EX2``) between the two waits, and those after the second before the next WGMMA.

    >>> exp2s_around_pv_waits("DEPBAR.LE gsb0, 0x1\\nMUFU.EX2\\nMUFU.EX2\\nDEPBAR.LE gsb0, 0x0\\nMUFU.EX2\\nHGMMA")
    [(2, 1)]
    """
    spans: list[tuple[int, int]] = []
    counts, state = [0, 0], None
    for line in sass.splitlines():
        s_wait, pv_wait = "DEPBAR.LE gsb0, 0x1" in line, "DEPBAR.LE gsb0, 0x0" in line
        if pv_wait and state == "before":
            state = "after"
        elif s_wait or pv_wait or "HGMMA" in line:  # a span ends; an S wait starts the next
            if state == "after" and sum(counts):
                spans.append((counts[0], counts[1]))
            state, counts = ("before" if s_wait else None), [0, 0]
        elif "MUFU.EX2" in line and state is not None:
            counts[state == "after"] += 1
    return spans


def ptxas_report(ptx: Path, tmp_path: Path) -> str:
    done = subprocess.run([PTXAS, "-arch=sm_90a", "-v", str(ptx), "-o", str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, check=True)
    return done.stdout + done.stderr


def check_asynchronous(overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fn, ptx = compiled_with_ptx(tmp_path, monkeypatch, overrides)
    used = resources(fn)
    assert used is not None and used.frame_bytes == 0, f"the DSL's cubin has a stack frame (spills): {used}"
    assert commits_split_from_their_wgmmas(ptx.read_text()) == [], "a commit apart from its WGMMAs: an empty group"
    if fences_pv_wait(SC.config(overlap=True, **overrides)):
        assert pv_waits_beside_exp2s(ptx.read_text()) == [], "a P·V wait ptxas may hoist above the softmax's exp2s"
    else:  # three warpgroups, measured slower with the boundary: their kernel goes without it
        assert pv_waits_beside_exp2s(ptx.read_text()) != []
    if PTXAS is not None:
        said = ptxas_report(ptx, tmp_path)
        assert "Used" in said and not SERIALISED.search(said), said[-3000:]
        assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", said), said[-3000:]


def test_the_default_overlapped_kernel_keeps_its_wgmmas_asynchronous(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_asynchronous({}, tmp_path, monkeypatch)


@pytest.mark.skipif(CUOBJDUMP is None, reason="no cuobjdump here: it comes with the CUDA toolkit")
def test_the_softmax_runs_under_the_pv_gemm_in_the_default_kernel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In every overlapped block of the kernel's SASS, most of the softmax's exp2s come before the P·V wait."""
    compiled_with_ptx(tmp_path, monkeypatch, {})
    cubin = sorted(tmp_path.rglob("*.cubin"))
    sass = subprocess.run([CUOBJDUMP, "-sass", str(cubin[0])], capture_output=True, text=True, check=True).stdout
    spans = exp2s_around_pv_waits(sass)
    assert spans, "no overlapped block found in the SASS"
    assert all(before > 3 * after for before, after in spans), spans


@pytest.mark.soak  # one DSL compile and one ptxas run each (10-15 s): beyond the default tier's budget
@pytest.mark.skipif(PTXAS is None, reason="no ptxas here: it comes with the CUDA toolkit")
@pytest.mark.parametrize("overrides", CONFIGS[1:], ids=lambda o: ident(o) if isinstance(o, dict) else None)
def test_every_overlapped_config_keeps_its_wgmmas_asynchronous(
        overrides: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_asynchronous(overrides, tmp_path, monkeypatch)


@pytest.mark.soak  # one DSL compile (about 10 s): beyond the default tier's budget
def test_the_branch_on_the_sums_also_keeps_the_pv_wait_below_the_exp2s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The alternative boundary that ``benchmarks/attention_boundary.py`` times (``QTile.fence_sums``), built in
    place of the length branch, also ends the softmax's block before every P·V wait."""
    import ts_explore.scenarios.attention as policies

    monkeypatch.setattr(policies, "fences_pv_wait", lambda cfg: False)
    monkeypatch.setattr(policies, "fences_sums", lambda cfg: True)
    _, ptx = compiled_with_ptx(tmp_path, monkeypatch, {})
    text = ptx.read_text()
    assert "nanosleep" in text and pv_waits_beside_exp2s(text) == []


def test_the_pv_wait_boundary_goes_where_it_was_measured_faster() -> None:
    """Overlap on one or two consumer warpgroups gets the boundary; three warpgroups and in-order kernels do not."""
    assert fences_pv_wait(SC.config(overlap=True))
    assert fences_pv_wait(SC.config(overlap=True, consumer_wgs=1, tile_q=64, causal=True))
    assert not fences_pv_wait(SC.config(overlap=False))
    assert not fences_pv_wait(SC.config(overlap=True, head_dim=64, tile_q=192, consumer_wgs=3))
    # the branch on the softmax's sums ran no faster than the length branch in any row it was timed on
    assert not any(fences_sums(SC.config(**knobs)) for knobs in ({}, dict(causal=True), dict(overlap=False)))
