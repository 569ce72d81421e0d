"""benchmarks/sass_loops.py: the K/V loops it finds in a kernel's SASS, what it counts in them, and its refusal
without cuobjdump; in the soak tier, our kernel compiled for sm_90a, read whole."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("sass_loops", Path(__file__).parents[2] / "benchmarks" / "sass_loops.py")
sass_loops = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["sass_loops"] = sass_loops  # its dataclasses look their module up
_SPEC.loader.exec_module(sass_loops)  # type: ignore[union-attr]


def sass(*lines: str) -> str:
    """cuobjdump's layout: one instruction a line at 16-byte addresses, with its encoding comment."""
    body = [f"        /*{16 * i:04x}*/                   {text} ;   /* 0x000fe20000000f00 */"
            for i, text in enumerate(lines)]
    return "\n".join(["\tcode for sm_90a", "\t\tFunction : kernel", *body])


SOFTMAX = ["MUFU.EX2 R10, R10", "FMNMX R3, R4, R5, !PT", "MUFU.EX2 R11, R11"]
PERSISTENT = sass(
    "S2R R0, SR_TID.X",                                  # 0x00
    "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ",     # 0x10: a peeled first block, outside every loop
    *SOFTMAX,                                            # 0x20-0x40
    "ISETP.GE.AND P0, PT, R0, 0x1, PT",                 # 0x50: the work-tile loop starts
    "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], RZ",     # 0x60: the K/V loop starts
    *SOFTMAX,                                            # 0x70-0x90
    "HGMMA.64x128x16.F32.BF16 R88, gdesc[UR12], R88",   # 0xa0
    "@P0 BRA 0x60",                                      # 0xb0: back to the K/V loop's top
    "@!P1 BRA `(.L_x_7) 0x50",                           # 0xc0: back to the work-tile loop's top
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [R4], R5",      # 0xd0: a retry after a failed try-wait ...
    "@!P2 BRA 0xd0",                                     # 0xe0: ... spins on itself (no WGMMA in it)
    "BRA 0x20",                                          # 0xf0: ... and jumps back unpredicated
    "EXIT",                                              # 0x100
)


def test_the_k_v_loop_is_the_innermost_predicated_branch_back_over_wgmmas_and_counts_what_it_spans() -> None:
    code = sass_loops.kernel_code(PERSISTENT)
    assert (code.instructions, code.exp2, code.wgmma) == (17, 4, 3)
    assert code.loops == (sass_loops.Loop(start=0x60, end=0xb0, exp2=2, wgmma=2),)
    assert code.loops[0].instructions == 6


def test_the_line_gives_size_in_instructions_and_kib_and_each_loop_beside_the_others() -> None:
    two = sass_loops.KernelCode(7304, 528, 112, (sass_loops.Loop(0x4990, 0x92b0, 132, 24),
                                                 sass_loops.Loop(0x101b0, 0x14b50, 132, 24)))
    assert two.line() == ("7304 instructions (114.1 KiB), 528 MUFU.EX2, 112 HGMMA; 2 K/V loops: 1171 + 1179 "
                          "instructions (36.7 KiB), 132 + 132 MUFU.EX2")
    assert sass_loops.KernelCode(3, 0, 0, ()).line().endswith("; no K/V loop found")


def test_without_cuobjdump_it_names_what_to_install_and_exits_2(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sass_loops, "cuobjdump", lambda: None)
    assert sass_loops.main([]) == 2
    assert "no cuobjdump: install the CUDA toolkit" in capsys.readouterr().err


@pytest.mark.soak
def test_our_kernel_for_sm_90a_has_one_k_v_loop_a_consumer_warpgroup_each_holding_a_softmax(tmp_path: Path) -> None:
    tool = sass_loops.cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump here: it comes with the CUDA toolkit or triton's wheel")
    name, cubin = sass_loops.ours(128, 8192, causal=True)
    assert name == "128x128 2wg ping-pong overlap"
    code = sass_loops.kernel_code(sass_loops.sass_of(cubin, tool))
    assert len(code.loops) == 2  # each consumer warpgroup's task is its own code
    assert all(lp.exp2 >= 66 and lp.wgmma >= 16 for lp in code.loops)
    out = tmp_path / "sass.txt"
    assert sass_loops.main(["--causal", "--out", str(out)]) == 0
    assert "hd128 8k causal: ours (128x128 2wg ping-pong overlap): " in out.read_text()
