"""TS-scheduled Hopper attention forward vs FlashAttention-4 and every torch SDPA backend, timed in one process.

    python benchmarks/attention.py [--quick] [--every] [--overlap] [--out FILE] [--budget S]

Cases follow FlashAttention's own benchmark: head_dim 64 and 128, causal and
not, seqlen 1k/2k/4k/8k/16k (seqlen_q = seqlen_kv), batch = 16384 / seqlen and
heads = 2048 / head_dim, so every case holds 16k tokens of a 2048-wide model.
FLOPs are counted as FlashAttention counts them: 4·b·h·s²·d, halved for causal.

Who is timed, on the same random-normal bf16 Q, K, V of each row: ours (the
default tile, intra-warpgroup overlap on, with static persistence and without
on every row, causal too; their twins in order, without overlap, at hd128 8k,
hd64 8k and hd128 1k causal; the configs of :func:`configs` at hd128 8k; the
192- and 256-key K/V blocks at hd64 8k),
FlashAttention-4's CuTe DSL forward (``flash_attn.cute.flash_attn_func`` with
``return_lse=True``, as ours writes the LSE too; without the package the rows
say so and go on), and torch SDPA's flash, cuDNN and efficient backends, plus
math where its b·h·s² score matrix stays within :data:`MATH_MAX_SCORES`.

How it times: one process, one dedicated CUDA stream; each operation captured
once into a CUDA graph of back-to-back launches lasting about 10 ms (graph
helpers of ``benchmarks/gemm.py``); after a warm-up, the graphs of a row replay
round-robin, CUDA events around every replay, :data:`REPLAYS` rounds a run. A
row stops once the time ratios of our other configs, FA4 and cuDNN to our
first config agree within 2 % over the last :data:`RUNS_AGREEING` runs (at
most :data:`MAX_RUNS`), so rows that settle early cost little; an unsettled
row names whose ratio spread most. Before timing, each of our configs' O
and LSE (poisoned with NaN first) are checked against torch SDPA in fp32 and a
float64 LSE (``ts_explore.kernels.attention.mismatches``), and again after.

The report's last line: ``hd128 8k: <config>: <TFLOP/s> = N.NNx FA4 (N.NNx
cuDNN); causal N.NNx FA4; worst N.NNx FA4`` (ratios = their time / ours; the
config is the best of ours at hd128 8k non-causal; worst is over every row).
Exit status: 0 when ours reaches 1.0x FA4 at hd128 8k, causal and not; 1
below or without FA4; 2 without a GPU.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from gemm import REPLAY_MS, replayable, spread, time_once

TOKENS, WIDTH = 16384, 2048
SEQLENS = (1024, 2048, 4096, 8192, 16384)
TARGET_SEQLEN, TARGET_RATIO = 8192, 1.0
AGREE, RUNS_AGREEING, MAX_RUNS = 0.02, 3, 12
REPLAYS = 3  # round-robin rounds per run
WARM_MS = 300.0  # round-robin replays before the first timed run
# torch's math backend materialises the scores and their softmax per call (in fp32 for bf16 inputs): above 2^30 of
# them (4 GiB a copy) one call takes tens of ms and a row seconds of the benchmark's budget, for a number no target
# compares against
MATH_MAX_SCORES = 2**30
FA4 = "FA4"
CUDNN = "cuDNN"


LIMITS = """What limits ours (read with the rows above): the default pair runs with intra-warpgroup overlap (the
ops too) and the TMA-store epilogue; the rows marked "in order" time it without overlap, those marked "O from
registers" without the store task. Overlap issues the next S GEMM and the lagged P·V of the block before, and runs
the softmax under that P·V; ptxas keeps those WGMMAs asynchronous (no C75xx note, no spills), and on one or two
consumer warpgroups the P·V wait starts a basic block of its own, so ptxas no longer hoists it above the softmax's
exp2s (it did: the softmax then waited for the GEMM). Nsight Compute read the tensor pipe busy 70 % of the time
before that boundary and 76 % after it, against FA4's 81 % at hd128 8k; the consumers' wait for that P·V, their
largest before, is gone (benchmarks/results/ncu_attention_stalls.h100.txt, ncu_attention_boundary.h100.txt).
What is left is code: instruction-fetch stalls of 0.26 cycles per issued instruction (FA4 0.04); each consumer
warpgroup runs a K/V loop of its own, 1,172 SASS instructions with the first block's softmax inside (a later block
with no key masked runs about 520), where FA4's share one of 457 (benchmarks/sass_loops.py,
benchmarks/results/sass_attention.txt).
Without persistence every CTA pays its prologue, which weighs most at 1k (8 K/V blocks per tile); causal
attention does not launch under static persistence (a CTA's walk mixes K/V loop lengths, which is not proven).
Two K/V stages at hd128; at hd64 the ops run 192-row tiles with three consumer warpgroups, as FA4 does (the
192x128 3wg rows; the hd64 8k rows time K/V blocks of 192 and 256 keys too)."""

# the settling rule watches our configs against these (the other backends are reported, not waited for)
WATCHED = (FA4, CUDNN)


def configs(every: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """Our configs timed at hd128 8k; the first two (the defaults, intra-warpgroup overlap on, with static
    persistence and without) on every row, then their twins in order (no overlap). ``every`` adds what the last
    H200 run found slower (the 160-key block), at a compile per mask."""
    timed = [*default_pair(), *in_order_twins(), *register_store_twins(),
             ("128x128 2wg overlap", dict(overlap=True, pingpong=False))]
    if every:
        timed += [("128x160 2wg ping-pong overlap", dict(overlap=True, tile_k=160))]
    return timed


def _with_and_without_persistence(tile: str, rest: str, **knobs: Any) -> list[tuple[str, dict[str, Any]]]:
    """``tile ping-pong static rest`` with static persistence, then ``tile ping-pong rest`` with one CTA per tile."""
    from ts_explore.scenarios.attention import Persistence

    return [(f"{tile} ping-pong static {rest}", dict(knobs, persistence=Persistence.STATIC)),
            (f"{tile} ping-pong {rest}", dict(knobs))]


def default_pair() -> list[tuple[str, dict[str, Any]]]:
    """The scenario's default tile (overlap on) with static persistence and without."""
    return _with_and_without_persistence("128x128 2wg", "overlap", overlap=True)


def in_order_twins() -> list[tuple[str, dict[str, Any]]]:
    """The default pair with intra-warpgroup overlap off: each block's P·V follows its own softmax."""
    return _with_and_without_persistence("128x128 2wg", "in order", overlap=False)


def register_store_twins() -> list[tuple[str, dict[str, Any]]]:
    """The default pair with O stored from registers by the consumers instead of the TMA-store epilogue."""
    return _with_and_without_persistence("128x128 2wg", "overlap, O from registers", overlap=True, tma_store=False)


def hd64_rows() -> list[tuple[str, dict[str, Any]]]:
    """192-row Q tiles on three consumer warpgroups (the tile FA4 runs at head_dim 64), with static persistence and
    without: timed on every head_dim 64 row beside the default pair."""
    return _with_and_without_persistence("192x128 3wg", "overlap", tile_q=192, consumer_wgs=3, overlap=True)


def hd64_configs() -> list[tuple[str, dict[str, Any]]]:
    """What fits registers and shared memory at head_dim 64 only: :func:`hd64_rows` and K/V blocks of 192 and 256
    keys (in order: the 192-key block's overlapped WGMMAs are serialised by ptxas,
    ``tests/unit/test_attention_overlap_ptxas.py``)."""
    from ts_explore.scenarios.attention import Persistence

    return [*hd64_rows(), *((f"128x{k} 2wg ping-pong static in order",
                             dict(overlap=False, tile_k=k, persistence=Persistence.STATIC)) for k in (192, 256))]


OVERLAP_ROWS = ((128, False, TARGET_SEQLEN), (128, True, TARGET_SEQLEN), (64, False, TARGET_SEQLEN), (128, True, 1024))


def row_configs(head_dim: int, seqlen: int, every: bool = False, causal: bool = False,
                overlap: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """What is timed on a row: the configs at hd128 8k, the default pair with its in-order twins and the wide K/V
    blocks at hd64 8k, the default pair and its in-order twins at hd128 1k causal, elsewhere the default pair.
    ``overlap``: the default pair and its in-order twins only."""
    pair = default_pair()
    if overlap:
        return pair + in_order_twins() + register_store_twins() + (hd64_rows() if head_dim == 64 else [])
    if (head_dim, seqlen) == (128, TARGET_SEQLEN):
        return configs(every)
    if (head_dim, seqlen) == (64, TARGET_SEQLEN):
        return pair + in_order_twins() + hd64_configs()
    if (head_dim, causal, seqlen) in OVERLAP_ROWS:
        return pair + in_order_twins() + register_store_twins()
    return pair + (hd64_rows() if head_dim == 64 else [])


def cases(quick: bool = False, overlap: bool = False) -> list[tuple[int, bool, int, int, int]]:
    """(head_dim, causal, seqlen, batch, heads): 16k tokens of a 2048-wide model each (``quick``: hd128 8k;
    ``overlap``: the rows of :data:`OVERLAP_ROWS`, in that order).

    The 8k rows, which time the most configs, come first (hd128, then hd64), so a ``--budget`` that runs out
    leaves out rows of the default pair only.
    """
    rows = [(d, causal, s, TOKENS // s, WIDTH // d) for d in (128, 64) for causal in (False, True) for s in SEQLENS]
    if overlap:
        return [(d, c, s, TOKENS // s, WIDTH // d) for d, c, s in OVERLAP_ROWS]
    if quick:
        return [r for r in rows if r[0] == 128 and r[2] == TARGET_SEQLEN]
    return [r for r in rows if r[2] == TARGET_SEQLEN] + [r for r in rows if r[2] != TARGET_SEQLEN]


def math_refusal(b: int, h: int, sq: int, skv: int) -> str | None:
    """Why torch's math backend is not timed on this row, or None when it is."""
    scores = b * h * sq * skv
    if scores <= MATH_MAX_SCORES:
        return None
    return (f"math skipped: it materialises b·h·s² = {scores / 2**30:.0f}Gi scores ({scores * 4 / 2**30:.0f} GiB a "
            f"copy in fp32), beyond {MATH_MAX_SCORES / 2**30:.0f}Gi")


def settled(runs: list[dict[str, float]], first: str) -> tuple[bool, float, str]:
    """Whether the last :data:`RUNS_AGREEING` runs agree within :data:`AGREE` on every watched time ratio to
    ``first`` (our other configs, FA4, cuDNN), the worst spread of those ratios and whose it is."""
    last = runs[-RUNS_AGREEING:]
    if len(last) < RUNS_AGREEING:
        return False, 1.0, ""
    watched = [n for n in last[0] if n != first and (n.startswith("ours ") or n in WATCHED)]
    spreads = {n: spread([r[n] / r[first] for r in last]) for n in watched}
    worst = max(spreads, key=spreads.get, default="")
    return spreads.get(worst, 0.0) <= AGREE, spreads.get(worst, 0.0), worst


@dataclass(frozen=True)
class Timed:
    """One row's settled times (ms per launch, medians of the agreeing runs) and how they were reached."""

    ms: dict[str, float]
    runs: list[dict[str, float]]  # each run's ms per launch, by operation
    worst_spread: float
    settled: bool
    how: dict[str, str]  # "graph", or "back-to-back" where a capture failed
    noisiest: str = ""  # whose ratio spread most over the last runs

    def ratio(self, theirs: str, ours: str) -> float:
        """Their time / ours, the median over the agreeing runs (our speed as a share of theirs)."""
        return statistics.median(r[theirs] / r[ours] for r in self.runs[-RUNS_AGREEING:])


def round_robin(ops: dict[str, Callable[[], Any]], stream: Any) -> Timed:
    """Time every operation of a row by the method of the module docstring; the first is the reference."""
    import torch

    graphs, launches, how = {}, {}, {}
    for name, run in ops.items():
        launches[name] = max(2, min(2000, math.ceil(REPLAY_MS / max(time_once(run, stream), 1e-3))))
        graphs[name], how[name] = replayable(run, launches[name], stream)

    def one_run() -> dict[str, float]:
        events = [{n: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for n in graphs}
                  for _ in range(REPLAYS)]
        with torch.cuda.stream(stream):
            for round_ in events:
                for name, (start, stop) in round_.items():
                    start.record(stream)
                    graphs[name].replay()
                    stop.record(stream)
        stream.synchronize()
        return {n: statistics.median(r[n][0].elapsed_time(r[n][1]) for r in events) / launches[n] for n in graphs}

    start = time.perf_counter()
    while 1e3 * (time.perf_counter() - start) < WARM_MS:  # clocks and caches settle under this load
        one_run()
    first = next(iter(ops))
    runs: list[dict[str, float]] = []
    while True:
        runs.append(one_run())
        done, worst, noisiest = settled(runs, first)
        if done or len(runs) >= MAX_RUNS:
            break
    ms = {n: statistics.median(r[n] for r in runs[-RUNS_AGREEING:]) for n in graphs}
    del graphs
    return Timed(ms, runs, worst, done, how, noisiest)


def fa4(q: Any, k: Any, v: Any, causal: bool) -> tuple[Callable[[], Any] | None, str]:
    """FlashAttention-4's forward on the row's tensors (O and LSE), run once (its compile); or None and why not."""
    import torch

    try:
        from flash_attn.cute import flash_attn_func
    except ImportError as exc:
        return None, f"FA4 not timed: flash_attn.cute does not import ({exc}); pip install flash-attn-4"

    def call() -> Any:
        return flash_attn_func(q, k, v, causal=causal, return_lse=True)

    try:
        call()
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 (said in the row, the other backends still run)
        return None, f"FA4 not timed: {type(exc).__name__}: {str(exc)[:200]}"
    return call, ""


def math_backend(q: Any, k: Any, v: Any, causal: bool) -> Callable[[], Any]:
    """torch SDPA's math backend on the row's tensors ((b, h, s, d) views, as the other backends get them)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))

    def call() -> Any:
        with sdpa_kernel(SDPBackend.MATH):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

    return call


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


@dataclass(frozen=True)
class Row:
    """One timed row: the case, our config's rate and its ratios to each other operation (their time / ours)."""

    head_dim: int
    causal: bool
    seqlen: int
    config: str
    tflops: float
    ratios: dict[str, float]


def best_rows(rows: list[Row]) -> dict[tuple[int, bool, int], Row]:
    """Per case, our config that does best against FA4 (against the fastest backend when FA4 is absent)."""
    best: dict[tuple[int, bool, int], Row] = {}
    for row in rows:
        key = (row.head_dim, row.causal, row.seqlen)
        score = row.ratios.get(FA4, min(row.ratios.values(), default=0.0))
        old = best.get(key)
        if old is None or score > old.ratios.get(FA4, min(old.ratios.values(), default=0.0)):
            best[key] = row
    return best


def closing_line(rows: list[Row]) -> str:
    """``hd128 8k: <config>: <TFLOP/s> = N.NNx FA4 (N.NNx cuDNN); causal N.NNx FA4; worst N.NNx FA4``."""
    best = best_rows(rows)

    def x(row: Row | None, name: str) -> str:
        return f"{row.ratios[name]:.2f}x" if row is not None and name in row.ratios else "n/a"

    plain, causal = best.get((128, False, TARGET_SEQLEN)), best.get((128, True, TARGET_SEQLEN))
    against = [r.ratios[FA4] for r in best.values() if FA4 in r.ratios]
    worst = f"{min(against):.2f}x" if against else "n/a"
    head = f"{plain.config}: {plain.tflops:.0f} TFLOP/s" if plain is not None else "not timed: n/a TFLOP/s"
    return f"hd128 8k: {head} = {x(plain, FA4)} FA4 ({x(plain, CUDNN)} cuDNN); causal {x(causal, FA4)} FA4; " \
           f"worst {worst} FA4"


def targets_met(rows: list[Row]) -> bool:
    best = best_rows(rows)
    return all(best.get((128, c, TARGET_SEQLEN)) is not None
               and best[(128, c, TARGET_SEQLEN)].ratios.get(FA4, 0.0) >= TARGET_RATIO for c in (False, True))


def on_the_gpu() -> tuple[Any, int, Any, Any] | None:
    """The attention scenario, the GPU's SM count, a torch stream and its driver handle; None, having said so,
    where torch sees no GPU."""
    import torch

    if not torch.cuda.is_available():
        print("no GPU: nothing to time")
        return None
    import cuda.bindings.driver as cuda

    from ts_explore.scenarios import get

    stream = torch.cuda.Stream()
    return (get("hopper_attention"), torch.cuda.get_device_properties(0).multi_processor_count, stream,
            cuda.CUstream(stream.cuda_stream))


def row_inputs(b: int, h: int, s: int, d: int, causal: bool) -> tuple[Any, ...]:
    """One row's tensors and figures: q, k, v, the O and LSE outputs, the fp32/float64 references, the FLOPs."""
    import torch

    from ts_explore.kernels import attention

    q, k, v = attention.make_inputs((b, h, s, s, d))
    o = torch.empty((b, s, h, d), device="cuda", dtype=torch.bfloat16)
    lse = torch.empty((b, h, s), device="cuda", dtype=torch.float32)
    return q, k, v, o, lse, attention.reference(q, k, v, causal), attention.flops(b, h, s, s, d, causal)


class Report:
    """A benchmark's report: each line printed as it comes and, given a path, written to that file at once, so a
    run cut off by its time limit keeps the rows it finished."""

    def __init__(self, path: str | None) -> None:
        self._file = open(path, "w") if path else None  # noqa: SIM115 (closed by close())

    def __call__(self, line: str) -> None:
        print(line, flush=True)
        if self._file is not None:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only hd128 8k, causal and not (every config there)")
    parser.add_argument("--every", action="store_true",
                        help="at hd128 8k also the configs the last run found slower (128x160)")
    parser.add_argument("--overlap", action="store_true",
                        help="only hd128 8k causal and not, hd64 8k and hd128 1k causal, each with the default pair "
                             "(intra-warpgroup overlap) and its twins in order")
    parser.add_argument("--out", help="also write the report to this file, line by line as rows finish")
    parser.add_argument("--budget", type=float, default=0.0, metavar="S",
                        help="start no new row after S seconds (0: no limit); the rows left out are named")
    args = parser.parse_args(argv)
    found = on_the_gpu()
    if found is None:
        return 2
    import torch

    from ts_explore.kernels import attention

    sc, sms, stream, handle = found
    emit = Report(args.out)
    lines = [f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}; ours: TS-scheduled FlashAttention-3-style "
             "forward (ts_explore.kernels.attention), O and LSE; FA4: flash_attn.cute.flash_attn_func, return_lse",
             "# TFLOP/s = 4·b·h·s²·d (halved for causal) / time; (N.NNx) = their time / ours; spread = max-min of the "
             f"last {RUNS_AGREEING} runs' ratios", ""]
    lines.append(f"{'hd':>3} {'causal':>6} {'seqlen':>6} {'b x h':>7}  {'config':<30} {'ours':>6}  "
                 "others (TFLOP/s, ours/them)")
    for line in lines:
        emit(line)
    compiled: dict = {}
    rows: list[Row] = []
    began = time.perf_counter()
    for d, causal, s, b, h in cases(args.quick, args.overlap):
        if args.budget and time.perf_counter() - began > args.budget:
            emit(f"{d:>3} {str(causal):>6} {s:>6} {f'{b}x{h}':>7}  not timed: the {args.budget:.0f} s budget is spent")
            continue
        q, k, v, o, lse, ref, flop = row_inputs(b, h, s, d, causal)
        ours: dict[str, Callable[[], Any]] = {}
        notes: list[str] = []
        for label, overrides in row_configs(d, s, args.every, causal, args.overlap):
            cfg = sc.config(head_dim=d, causal=causal, **overrides)
            if attention.launch_refusal(cfg) is not None:
                notes.append(f"{label}: not launched: {attention.launch_refusal(cfg)}")
                continue
            key = (label, d, causal)
            if key not in compiled:
                try:
                    compiled[key] = attention.compile(sc, cfg)
                except Exception as exc:  # noqa: BLE001 - one config that does not build must not end the run
                    notes.append(f"{label}: not built: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                    continue
            run = attention.launcher(compiled[key], q, k, v, o, lse, cfg, sms, handle)
            if check(run, o, lse, ref, stream):
                ours[label] = run
            else:
                notes.append(f"{label}: WRONG (O or LSE mismatch), not timed")
        others: dict[str, Callable[[], Any]] = {}
        call, why = fa4(q, k, v, causal)
        if call is not None:
            others[FA4] = call
            try:  # the same tolerances as ours: a like-for-like check
                fa4_o, fa4_lse = call()
                bad_o, bad_lse = attention.mismatches(fa4_o, fa4_lse, *ref)
                if bool(bad_o.any()) or bool(bad_lse.any()):
                    notes.append(f"FA4: {int(bad_o.sum())} O elements and {int(bad_lse.sum())} LSE rows off the "
                                 "references (timed all the same)")
            except Exception as exc:  # noqa: BLE001 (an unexpected output form is said, the timing goes on)
                notes.append(f"FA4: its O and LSE could not be compared: {type(exc).__name__}: {str(exc)[:160]}")
        else:
            notes.append(why)
        sdpa = attention.sdpa_references(q, k, v, causal)
        others.update({name.replace("torch SDPA ", ""): c for name, c in sdpa.items()})
        refusal = math_refusal(b, h, s, s)
        if refusal is None:
            others["math"] = math_backend(q, k, v, causal)
        else:
            notes.append(refusal)
        if ours:
            timed = round_robin({**{f"ours {n}": r for n, r in ours.items()}, **others}, stream)
            wrong_after = [n for n, r in ours.items() if not check(r, o, lse, ref, stream)]
            for label in ours:
                if label in wrong_after:
                    notes.append(f"{label}: WRONG after the replays (O or LSE mismatch)")
                    continue
                mine = f"ours {label}"
                ratios = {n: timed.ratio(n, mine) for n in others}
                row = Row(d, causal, s, label, flop / timed.ms[mine] / 1e9, ratios)
                rows.append(row)
                parts = [f"{n} {flop / timed.ms[n] / 1e9:.0f} ({ratios[n]:.2f}x)" for n in others]
                line = (f"{d:>3} {str(causal):>6} {s:>6} {f'{b}x{h}':>7}  {label:<30} {row.tflops:>6.0f}  "
                        + "; ".join(parts) + f"  [±{timed.worst_spread * 100:.1f}%, {len(timed.runs)} runs"
                        + ("" if timed.settled else f", unsettled: {timed.noisiest.replace('ours ', '')}")
                        + "".join(f", {n} {w}" for n, w in timed.how.items() if w != "graph") + "]")
                emit(line)
        for note in notes:
            emit(f"{d:>3} {str(causal):>6} {s:>6} {f'{b}x{h}':>7}  {note}")
        del q, k, v, o, lse, ref, ours, others
        torch.cuda.empty_cache()
    for line in ["", LIMITS, "", f"# {time.perf_counter() - began:.0f} s in all (compiles included)",
                 closing_line(rows)]:
        emit(line)
    emit.close()
    return 0 if targets_met(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
