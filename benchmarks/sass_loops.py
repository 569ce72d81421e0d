"""How much code the attention kernels' consumers run per K/V block: our kernel beside FlashAttention-4's, read
from their SASS, both compiled on this machine for sm_90a (no GPU needed).

    python3 benchmarks/sass_loops.py [--head-dim 128] [--seqlen 8192] [--causal] [--every] [--out FILE]

Nsight Compute finds our consumer warps waiting on instruction fetch (0.26 cycles per issued instruction at hd128
8k on an H100, FA4's 0.04) and on dispatch (0.87 against 0.58). Both are about code: how many instructions the
hot loop spans and how many copies of it the warps run. This prints, for each kernel, its SASS size and its K/V
loops (a predicated branch back over code that issues WGMMAs): instructions, KiB (16 bytes an instruction),
exp2s (``MUFU.EX2``: 66 a softmax of a 64x128 score block, one thread holding 64 scores and two row maxima) and
WGMMAs. Each loop is one warp's steady state; two loops are two bodies in the instruction cache at once.

Ours is the config the ops launch for the row (``ts_explore.ops.compiled.attention_config``), compiled through
the scenario's kernel. FA4 is compiled through its own CPU path (``flash_attn_func`` under torch's
``FakeTensorMode`` with ``FLASH_ATTENTION_ARCH=sm_90``, ``CUTE_DSL_ARCH=sm_90a``) in a child process that keeps
the cubin; without ``flash-attn-4`` its line says so. The SASS comes from ``cuobjdump -sass`` (the CUDA toolkit's,
or the copy in triton's wheel). Exit status: 0 printed, 2 no cuobjdump or our kernel failed to compile.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TOKENS, WIDTH = 16384, 2048  # the attention benchmark's rows: 16k tokens of a 2048-wide model
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BACK_BRANCH = re.compile(r"^@!?U?P\d\s+BRA\s+(?:\S+\s+)?(0x[0-9a-f]+)")
BYTES = 16  # every sm_90 instruction


@dataclass(frozen=True)
class Loop:
    """A K/V loop: the SASS from a branch target back to the predicated branch that jumps to it."""

    start: int
    end: int
    exp2: int
    wgmma: int

    @property
    def instructions(self) -> int:
        return (self.end - self.start) // BYTES + 1


@dataclass(frozen=True)
class KernelCode:
    """One kernel's SASS, counted."""

    instructions: int
    exp2: int
    wgmma: int
    loops: tuple[Loop, ...]

    def line(self) -> str:
        size = f"{self.instructions} instructions ({kib(self.instructions)}), {self.exp2} MUFU.EX2, " \
               f"{self.wgmma} HGMMA"
        if not self.loops:
            return f"{size}; no K/V loop found"
        per = " + ".join(str(lp.instructions) for lp in self.loops)
        span = sum(lp.instructions for lp in self.loops)
        ex2 = " + ".join(str(lp.exp2) for lp in self.loops)
        return f"{size}; {len(self.loops)} K/V loop{'s' * (len(self.loops) > 1)}: {per} instructions " \
               f"({kib(span)}), {ex2} MUFU.EX2"


def kib(instructions: int) -> str:
    return f"{instructions * BYTES / 1024:.1f} KiB"


def instructions(sass: str) -> list[tuple[int, str]]:
    """(address, instruction) of every instruction ``cuobjdump -sass`` printed, in address order."""
    found = [(int(m.group(1), 16), m.group(2)) for m in map(INSTRUCTION.match, sass.splitlines()) if m]
    return sorted(found)


def kernel_code(sass: str) -> KernelCode:
    """Count ``sass`` (one kernel): its instructions, exp2s, WGMMAs and K/V loops.

    A K/V loop is a predicated branch to a lower address whose span issues a WGMMA and holds no other such loop (a
    persistent kernel's loop over work tiles holds its K/V loop); an unpredicated one (the retry after a failed
    mbarrier try-wait, placed at the end of the code) is not a loop of the kernel's own.
    """
    code = instructions(sass)
    exp2 = [a for a, text in code if "MUFU.EX2" in text]
    wgmma = [a for a, text in code if "HGMMA" in text]
    loops = []
    for address, text in code:
        m = BACK_BRANCH.match(text)
        target = int(m.group(1), 16) if m else address
        if target < address and any(target <= a <= address for a in wgmma):
            loops.append(Loop(target, address, sum(target <= a <= address for a in exp2),
                              sum(target <= a <= address for a in wgmma)))
    inner = [lp for lp in loops if not any(o != lp and lp.start <= o.start and o.end <= lp.end for o in loops)]
    return KernelCode(len(code), len(exp2), len(wgmma), tuple(inner))


def cuobjdump() -> str | None:
    """``cuobjdump`` on PATH, else the copy triton's wheel ships (None if neither)."""
    found = shutil.which("cuobjdump")
    if found is not None:
        return found
    spec = importlib.util.find_spec("triton")
    bundled = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump" if spec and spec.origin else None
    return str(bundled) if bundled is not None and bundled.is_file() else None


def sass_of(cubin: bytes, tool: str) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout


def ours(head_dim: int, seqlen: int, causal: bool) -> tuple[str, bytes]:
    """(config, cubin) of the kernel the ops launch for the row, compiled for sm_90a."""
    from ts_explore.kernels import attention
    from ts_explore.ops.compiled import attention_config
    from ts_explore.scenarios import get

    cfg = attention_config(head_dim, causal, seqlen_q=seqlen)
    name = f"{cfg.tile_q}x{cfg.tile_k} {cfg.consumer_wgs}wg{' ping-pong' * cfg.pingponging}" \
           f"{' static' * (cfg.persistence.value == 'static')}{' overlap' * cfg.overlap}"
    return name, attention.compile(get("hopper_attention"), cfg, arch="sm_90a").__cubin__


FA4_CHILD = """
import sys, torch
from torch._subclasses.fake_tensor import FakeTensorMode
from flash_attn.cute import flash_attn_func
b, s, h, d, causal = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
with FakeTensorMode():
    q = torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda")
    flash_attn_func(q, torch.empty_like(q), torch.empty_like(q), causal=causal, return_lse=True)
"""


def fa4(head_dim: int, seqlen: int, causal: bool) -> bytes | str:
    """FA4's forward cubin for the row, compiled in a child process through its CPU path; else why not."""
    if importlib.util.find_spec("flash_attn") is None:
        return "flash-attn-4 is not importable here (pip install flash-attn-4)"
    with tempfile.TemporaryDirectory() as dump:
        env = dict(os.environ, FLASH_ATTENTION_ARCH="sm_90", CUTE_DSL_ARCH="sm_90a", FLASH_ATTENTION_NUM_SMS="132",
                   CUTE_DSL_KEEP_CUBIN="1", CUTE_DSL_DUMP_DIR=dump)
        args = [str(TOKENS // seqlen), str(seqlen), str(WIDTH // head_dim), str(head_dim), str(int(causal))]
        run = subprocess.run([sys.executable, "-W", "ignore", "-c", FA4_CHILD, *args], env=env, capture_output=True,
                             text=True)
        cubins = sorted(Path(dump).rglob("*FlashAttentionForward*.cubin"))
        if run.returncode != 0 or not cubins:
            return f"FA4 did not compile on the CPU ({(run.stderr.strip().splitlines() or ['no message'])[-1]})"
        return cubins[0].read_bytes()


def row_lines(head_dim: int, seqlen: int, causal: bool, tool: str) -> list[str]:
    """The row's two lines, ours then FA4's (raises what our compile raised)."""
    row = f"hd{head_dim} {seqlen // 1024}k{' causal' * causal}"
    name, cubin = ours(head_dim, seqlen, causal)
    theirs = fa4(head_dim, seqlen, causal)
    return [f"{row}: ours ({name}): {kernel_code(sass_of(cubin, tool)).line()}",
            f"{row}: FA4: " + (kernel_code(sass_of(theirs, tool)).line() if isinstance(theirs, bytes)
                               else f"not read: {theirs}")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--head-dim", type=int, default=128, choices=(64, 128))
    parser.add_argument("--seqlen", type=int, default=8192, help="the row's seqlen (16k tokens a row in all)")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--every", action="store_true", help="the 8k rows: head_dim 128 and 64, causal and not")
    parser.add_argument("--out", help="also write the lines to this file")
    args = parser.parse_args(argv)
    tool = cuobjdump()
    if tool is None:
        print("no cuobjdump: install the CUDA toolkit (or triton, whose wheel carries one) and run again",
              file=sys.stderr)
        return 2
    rows = [(d, 8192, c) for d in (128, 64) for c in (False, True)] if args.every else \
        [(args.head_dim, args.seqlen, args.causal)]
    lines = ["# SASS for sm_90a, compiled here without a GPU, read with cuobjdump -sass (sass_loops.py)"]
    print(lines[0])
    for d, s, c in rows:
        try:
            found = row_lines(d, s, c, tool)
        except Exception as exc:  # a compile failure is reported, not raised through the report
            print(f"our kernel did not compile for hd{d} {s} causal={c}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return 2
        print("\n".join(found))
        lines += found
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
