"""Where the consumers' softmax block ends, timed: the P·V-wait boundaries of the overlapped attention side by side.

    python benchmarks/attention_boundary.py [--out FILE]

With intra-warpgroup overlap each block's softmax should run under the lagged
P·V GEMM, so ptxas must not move that GEMM's wait above the softmax's exp2s.
Three builds of the default kernel differ only in where a basic block ends:

- ``length``: a never-taken branch on V's extent right before the P·V wait
  (``VStages.fence_pv_wait``, what ships: 54 of 66 exp2s before the wait);
- ``sums``: a never-taken branch on the rows' sums at the end of the softmax
  (``QTile.fence_sums``: 66 of 66 exp2s and every row-sum add before it);
- ``none``: neither (ptxas hoists the wait above every exp2).

Each is the kernel the ops run for the row (``ts_explore.ops.compiled.attention_config``),
built by :func:`ts_explore.kernels.attention.compile` with the scenario's two
policies (``fences_pv_wait``, ``fences_sums``) set for that build, checked
against torch SDPA in fp32 and a float64 LSE, then timed with FlashAttention-4
as the anchor where it imports.

How it times: :func:`attention.round_robin` of ``benchmarks/attention.py`` (one
process, one CUDA stream, a CUDA graph of back-to-back launches per build,
replayed round-robin with CUDA events around each replay, until the ratios to
the first build agree within 2 % over three runs). Ratios printed are the
``length`` build's time over each other's (above 1: faster than what ships).
Rows: hd128 8k causal and not, hd128 16k, hd128 2k (16k tokens, 2048 wide).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

ROWS = ((128, False, 8192), (128, True, 8192), (128, False, 16384), (128, False, 2048))
TOKENS, WIDTH = 16384, 2048


def variants(policy: Callable[[Any], bool]) -> dict[str, tuple[Callable[[Any], bool], Callable[[Any], bool]]]:
    """Each build's (fences_pv_wait, fences_sums) policies, ``policy`` being the shipped ``fences_pv_wait``."""
    def never(cfg: Any) -> bool:
        return False

    return {"length": (policy, never), "sums": (never, policy), "none": (never, never)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="also write the report to this file, line by line")
    args = parser.parse_args(argv)
    from attention import Report, check, fa4, on_the_gpu, round_robin, row_inputs

    found = on_the_gpu()
    if found is None:
        return 2
    import torch

    import ts_explore.scenarios.attention as policies
    from ts_explore.kernels import attention
    from ts_explore.ops.compiled import attention_config

    sc, sms, stream, handle = found
    emit = Report(args.out)
    emit(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}: the P·V-wait boundary builds, "
         "TFLOP/s; (x) = the length build's time / this build's")
    builds = variants(policies.fences_pv_wait)
    shipped = (policies.fences_pv_wait, policies.fences_sums)
    compiled: dict[tuple[str, Any], Any] = {}
    began = time.perf_counter()
    try:
        for d, causal, s in ROWS:
            b, h = TOKENS // s, WIDTH // d
            q, k, v, o, lse, ref, flop = row_inputs(b, h, s, d, causal)
            cfg = attention_config(d, causal, seqlen_q=s)  # the kernel the ops run for this row
            ops: dict[str, Callable[[], Any]] = {}
            notes: list[str] = []
            for name, (pv_wait, sums) in builds.items():
                if (name, cfg) not in compiled:
                    policies.fences_pv_wait, policies.fences_sums = pv_wait, sums
                    compiled[(name, cfg)] = attention.compile(sc, cfg)
                run = attention.launcher(compiled[(name, cfg)], q, k, v, o, lse, cfg, sms, handle)
                if check(run, o, lse, ref, stream):
                    ops[f"ours {name}"] = run  # "ours ...": the settling rule waits for these ratios
                else:
                    notes.append(f"{name}: WRONG (O or LSE mismatch), not timed")
            call, why = fa4(q, k, v, causal)
            if call is not None:
                ops["FA4"] = call
            else:
                notes.append(why)
            timed = round_robin(ops, stream)
            base = "ours length"
            rates = "; ".join(f"{n.removeprefix('ours ')} {flop / timed.ms[n] / 1e9:.0f}"
                              + (f" ({timed.ratio(base, n):.3f}x)" if n != base and base in ops else "")
                              for n in ops)
            emit(f"hd{d} {'causal' if causal else 'non-causal'} {s}: {rates}  [±{timed.worst_spread * 100:.1f}%, "
                 f"{len(timed.runs)} runs{'' if timed.settled else ', unsettled'}]")
            for note in notes:
                emit(f"hd{d} {'causal' if causal else 'non-causal'} {s}: {note}")
            del q, k, v, o, lse, ref, ops
            torch.cuda.empty_cache()
    finally:
        policies.fences_pv_wait, policies.fences_sums = shipped
    emit(f"# {time.perf_counter() - began:.0f} s in all (compiles included)")
    emit.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
