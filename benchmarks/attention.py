"""TS-scheduled Hopper attention forward vs every torch SDPA backend present, timed side by side in one process.

    python benchmarks/attention.py [--quick] [--out FILE]

Cases follow FlashAttention's own benchmark: head_dim 64 and 128, causal and
not, seqlen 1k/4k/8k/16k (seqlen_q = seqlen_kv), batch = 16384 / seqlen and
heads = 2048 / head_dim, so every case holds 16k tokens of a 2048-wide model.
FLOPs are counted as FlashAttention counts them: 4·b·h·s²·d, halved for causal.

How it times: the method of ``benchmarks/gemm.py`` (its helpers are imported):
one process, one dedicated CUDA stream, the same random-normal bf16 Q, K, V for
every operation; each operation captured once into a CUDA graph of back-to-back
launches lasting about 10 ms; after a warm-up, our graph and one torch
backend's graph replay in alternation with CUDA events around every replay,
and runs repeat until the ratios of the last five agree within 2 % (at most 20
runs). Each of our configs is paired with each backend in turn; "ours" is the
median of our times over its pairs. Before timing, each config's O and LSE
(poisoned with NaN first) are checked against torch SDPA in fp32 and a float64
LSE (``ts_explore.kernels.attention.mismatches``).

The report ends with ``best at hd128 8k non-causal: <config>: <TFLOP/s> =
N.NNx <fastest torch backend>``. Exit status: 0 when the best config reaches
1.0x the fastest backend at head_dim 128, seqlen 8k, causal and not; 1 below;
2 without a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from gemm import paired, time_once

TOKENS, WIDTH = 16384, 2048
SEQLENS = (1024, 4096, 8192, 16384)
TARGET_SEQLEN, TARGET_RATIO, FLOOR_RATIO = 8192, 1.0, 0.9


LIMITS = """What limits ours (read with the rows above): the timed config runs without intra-warpgroup overlap.
With overlap on, ptxas reports the WGMMAs serialized (C7511; none without overlap): TS emits the lagged P·V and
its wait in separate conditional blocks (every(1, start=1), last_iter), which ptxas cannot pair. Measured at hd128
8k non-causal: 420 TFLOP/s with overlap vs 572 without (back-to-back events, same process, before the explicit
waits that removed ptxas's injected wait; the build with them still reports C7511 and is not timed). So a warpgroup's
softmax hides only under the other warpgroup's GEMMs (ping-pong), and the exp2 work of the softmax (half the GEMM
time per block at hd128) is not fully hidden. The epilogue writes O from registers with 2-byte global stores (no
shared-memory staging and TMA store) and there is no persistence: every CTA pays its prologue and epilogue, which
is why 1k sequences (8 K/V blocks per tile) reach only 0.6-0.7x. Two K/V stages at hd128 (the O staging buffer the
geometry reserves leaves no room for a third); hd64 uses the same 128x128 tile as hd128."""


def configs() -> list[tuple[str, dict[str, Any]]]:
    """Our configs, the first the default pick (``--quick`` times only it)."""
    from ts_explore.scenarios.attention import Persistence

    return [
        ("128x128 2wg ping-pong", dict(overlap=False)),
        ("128x128 2wg", dict(overlap=False, pingpong=False)),
        ("128x128 2wg ping-pong overlap", dict()),
        ("128x128 2wg ping-pong static", dict(overlap=False, persistence=Persistence.STATIC)),
    ]


def cases() -> list[tuple[int, bool, int, int, int]]:
    """(head_dim, causal, seqlen, batch, heads) as FlashAttention's benchmark picks them."""
    return [(d, causal, s, TOKENS // s, WIDTH // d) for d in (128, 64) for causal in (False, True) for s in SEQLENS]


def check(run: Any, o: Any, lse: Any, ref: tuple, stream: Any) -> bool:
    """Poison O and LSE, run once on ``stream``, compare with the reference."""
    import torch

    from ts_explore.kernels import attention

    o.fill_(float("nan"))
    lse.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        run()
    stream.synchronize()
    bad_o, bad_lse = attention.mismatches(o, lse, *ref)
    return not bool(bad_o.any()) and not bool(bad_lse.any())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only the first config (the full run times each config "
                                                             "against each backend: several minutes)")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("no GPU: nothing to time")
        return 2
    import cuda.bindings.driver as cuda

    from ts_explore.kernels import attention
    from ts_explore.scenarios import get

    sc = get("hopper_attention")
    chosen = configs()[:1] if args.quick else configs()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    stream = torch.cuda.Stream()
    handle = cuda.CUstream(stream.cuda_stream)
    lines = [f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}; ours: TS-scheduled FlashAttention-3-style "
             "forward (ts_explore.kernels.attention)",
             "# TFLOP/s = 4·b·h·s²·d (halved for causal) / time; ratio = backend time / ours; spread = max-min of "
             "the five agreeing ratios", ""]
    header = (f"{'hd':>3} {'causal':>6} {'seqlen':>6} {'b x h':>7}  {'config':<30} {'ours':>8}  "
              "backends (TFLOP/s, ours/them)")
    lines.append(header)
    print(header, flush=True)
    compiled: dict = {}
    best: dict = {}  # (hd, causal, seqlen) -> (ratio vs fastest, config, ours TFLOP/s, fastest name)
    for d, causal, s, b, h in cases():
        shape = (b, h, s, s, d)
        q, k, v = attention.make_inputs(shape)
        o = torch.empty((b, s, h, d), device="cuda", dtype=torch.bfloat16)
        lse = torch.empty((b, h, s), device="cuda", dtype=torch.float32)
        ref = attention.reference(q, k, v, causal)
        refs = attention.sdpa_references(q, k, v, causal)
        flop = attention.flops(b, h, s, s, d, causal)
        for label, overrides in chosen:
            cfg = sc.config(head_dim=d, causal=causal, **overrides)
            if attention.launch_refusal(cfg) is not None:  # e.g. causal under static persistence
                continue
            key = (label, d, causal)
            if key not in compiled:
                compiled[key] = attention.compile(sc, cfg)
            run = attention.launcher(compiled[key], q, k, v, o, lse, cfg, sms, handle)
            if not check(run, o, lse, ref, stream):
                line = f"{d:>3} {str(causal):>6} {s:>6} {f'{b}x{h}':>7}  {label:<30} WRONG (O or LSE mismatch)"
                lines.append(line)
                print(line, flush=True)
                continue
            estimate = time_once(run, stream)
            ours, theirs = [], {}
            for name, call in refs.items():
                pair = paired(run, call, stream, estimate)
                ours.append(pair.ours_ms)
                theirs[name] = (pair.torch_ms, pair.ratio, pair.spread)
            if not check(run, o, lse, ref, stream):  # the replays left a right answer too
                theirs = {}
            mine = statistics.median(ours) if ours else time_once(run, stream)
            rate = flop / mine / 1e9
            parts = [f"{name.replace('torch SDPA ', '')} {flop / t / 1e9:.0f} ({r:.2f}x ±{sp * 100:.1f}%)"
                     for name, (t, r, sp) in theirs.items()]
            line = f"{d:>3} {str(causal):>6} {s:>6} {f'{b}x{h}':>7}  {label:<30} {rate:>8.1f}  " + "; ".join(parts)
            lines.append(line)
            print(line, flush=True)
            if theirs:
                fastest = min(theirs, key=lambda n: theirs[n][0])
                entry = (theirs[fastest][1], label, rate, fastest)
                if (d, causal, s) not in best or entry[0] > best[(d, causal, s)][0]:
                    best[(d, causal, s)] = entry
        del q, k, v, o, lse, ref, refs
        torch.cuda.empty_cache()
    lines += ["", LIMITS, ""]
    worst = min((e[0] for e in best.values()), default=0.0)
    lines.append(f"worst best-config ratio over the table: {worst:.2f}x the fastest torch backend "
                 f"(target >= {FLOOR_RATIO:.2f}x)")
    for causal in (True, False):
        e = best.get((128, causal, TARGET_SEQLEN))
        if e is not None:
            lines.append(f"best at hd128 8k {'causal' if causal else 'non-causal'}: {e[1]}: {e[2]:.0f} TFLOP/s = "
                         f"{e[0]:.2f}x {e[3]}")
    report = "\n".join(lines)
    print("\n".join(lines[-3:]))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report + "\n")
    met = all(best.get((128, c, TARGET_SEQLEN), (0,))[0] >= TARGET_RATIO for c in (False, True))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
