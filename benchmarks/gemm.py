"""TS-scheduled WGMMA GEMM vs torch.matmul: one timing method for both, alternating on the same tensors.

    python benchmarks/gemm.py [--quick] [--no-diagnosis] [--small]

How it times (the same for our kernel and torch.matmul):

* one process, one dedicated CUDA stream, the same random-normal bf16 A (M x K)
  and B (N x K) for both (zeros run faster than real data); each writes its own C;
* each operation is captured once into a CUDA graph of ``L`` back-to-back
  launches (``L`` chosen so one replay takes about 10 ms), so neither pays
  Python or driver launch overhead per launch; our kernel's arguments are
  converted once, at capture;
* after a warm-up of alternating replays (``WARM_MS``, so clocks settle under
  load), a run replays the two graphs in alternation (ours, torch, ours, torch,
  ...) ``REPLAYS`` times each, with CUDA events around every replay; a run's
  time per launch is the median replay over ``L``; its ratio is torch's time
  over ours;
* runs repeat until the ratios of the last five agree within 2 % (max - min over
  the median), at most ``MAX_RUNS``; the table shows the medians of those five
  runs, the ratios' spread, and the spread of our own times (the clocks drift
  under sustained load, moving both operations alike).

Before timing, each config's output (poisoned with NaN first) is checked
against an fp32 reference, and again after its graph replays, so a graph that
launched nothing cannot pass. The small shapes fit in L2 for both operations
alike. ``--diagnosis`` (default on) also times our 8192^3 kernel the way the
previous version of this benchmark did (one event pair per launch on torch's
default stream, arguments converted on every call) beside variants that change
one thing each, to show where that timing lost time.

Exit status: 0 when the best config reaches 0.90x torch.matmul at 8192^3 and
'by shape' reaches 0.80x at 1000x1032x520; 1 below; 2 without a GPU.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (16384, 1024, 4096), (1000, 1032, 520)]
TARGET, TARGET_RATIO = (8192, 8192, 8192), 0.90
SMALL, SMALL_RATIO = (1000, 1032, 520), 0.80
REPLAY_MS = 10.0  # one graph replay lasts about this long
REPLAYS = 5  # replays of each graph per run
WARM_MS = 300.0  # alternating replays before the first timed run
AGREE, RUNS_AGREEING, MAX_RUNS = 0.02, 5, 20


def configs() -> list[tuple[str, dict[str, Any]]]:
    from ts_explore.kernels.gemm_geometry import Cluster, GemmMode, Release, TileShape
    from ts_explore.model import QueueKind

    return [
        ("by shape", dict(tile=TileShape.BY_SHAPE)),
        ("128x256 2wg 4st static", dict(tile=TileShape.T128x256, stages=4)),
        ("256x128 2wg 4st static", dict(tile=TileShape.T256x128, stages=4)),
        ("128x128 2wg 6st static", dict(tile=TileShape.T128x128, stages=6)),
        ("128x256 2wg 4st no-queue", dict(tile=TileShape.T128x256, stages=4, persistence=QueueKind.NONE)),
        ("128x256 2wg 4st static wait0", dict(tile=TileShape.T128x256, stages=4, release=Release.AFTER_WAIT)),
        ("128x256 2wg 4st static 2x1", dict(tile=TileShape.T128x256, stages=4, cluster=Cluster.C2x1)),
        ("128x256 2wg 4st static swz4", dict(tile=TileShape.T128x256, stages=4, swizzle=4)),
        ("128x256 2wg 4st static swz8", dict(tile=TileShape.T128x256, stages=4, swizzle=8)),
        ("128x256 2wg 4st static swz16", dict(tile=TileShape.T128x256, stages=4, swizzle=16)),
        ("128x256 2wg 4st static 2x1 swz8", dict(tile=TileShape.T128x256, stages=4, cluster=Cluster.C2x1,
                                                 swizzle=8)),
        ("128x128 2wg 4st static", dict(tile=TileShape.T128x128, stages=4)),
        ("64x256 1wg 4st static", dict(tile=TileShape.T64x256, consumer_wgs=1, stages=4)),
        ("64x128 1wg 4st static", dict(tile=TileShape.T64x128, consumer_wgs=1, stages=4)),
        ("64x128 1wg 6st no-queue", dict(tile=TileShape.T64x128, consumer_wgs=1, stages=6,
                                         persistence=QueueKind.NONE)),
        ("128x128 2wg 4st no-queue", dict(tile=TileShape.T128x128, stages=4, persistence=QueueKind.NONE)),
        ("128x128 2wg 4st static 2x1", dict(tile=TileShape.T128x128, stages=4, cluster=Cluster.C2x1)),
        ("128x128 2wg 4st no-queue 2x1", dict(tile=TileShape.T128x128, stages=4, cluster=Cluster.C2x1,
                                              persistence=QueueKind.NONE)),
        ("128x128 2wg 4st static wait0", dict(tile=TileShape.T128x128, stages=4, release=Release.AFTER_WAIT)),
        ("128x128 1wg 4st static", dict(tile=TileShape.T128x128, consumer_wgs=1, stages=4)),
        ("pingpong 128x128 2x3st static", dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=3)),
        ("pingpong 128x128 2x3st static swz8", dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=3,
                                                    swizzle=8)),
        ("pingpong 128x128 2x3st static 2x1", dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=3,
                                                   cluster=Cluster.C2x1)),
        ("pingpong 128x128 2x3st static 2x1 swz8", dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=3,
                                                        cluster=Cluster.C2x1, swizzle=8)),
        ("pingpong 64x256 2x2st static", dict(mode=GemmMode.PINGPONG, tile=TileShape.T64x256, stages=2)),
    ]


# The small tiles are there for the small shape; on the large ones they only cost device time.
LARGE_ONLY = {"128x256 2wg 4st static swz4", "128x256 2wg 4st static swz8", "128x256 2wg 4st static swz16",
              "128x256 2wg 4st static 2x1 swz8"}
SMALL_ONLY = {"128x128 2wg 4st static", "64x256 1wg 4st static", "64x128 1wg 4st static", "64x128 1wg 6st no-queue",
              "128x128 2wg 4st no-queue", "128x128 2wg 4st static 2x1", "128x128 2wg 4st no-queue 2x1",
              "128x128 2wg 4st static wait0", "128x128 1wg 4st static"}


@dataclass
class Paired:
    """Settled times per launch (ms) of ours and torch's, the median of the agreeing runs, and their spread."""

    ours_ms: float
    torch_ms: float
    ratio: float  # torch time / our time (our speed as a share of torch's)
    spread: float  # (max - min) / median of the ratios of the agreeing runs
    drift: float  # the same of our own times (clock drift under load)
    runs: int
    settled: bool
    launches: int
    how: str  # "graph", or "back-to-back" when either operation could not be captured (then both run so)


class Batch:
    """``launches`` back-to-back calls of ``run``, replayed eagerly: what is timed when a graph cannot be captured."""

    def __init__(self, run: Callable[[], Any], launches: int) -> None:
        self.run, self.launches = run, launches

    def replay(self) -> None:
        for _ in range(self.launches):
            self.run()


def graph_of(run: Callable[[], Any], launches: int, stream: Any, mode: str = "global") -> Any:
    """A CUDA graph of ``launches`` back-to-back calls of ``run`` on ``stream`` (warmed up before capture)."""
    import torch

    with torch.cuda.stream(stream):
        for _ in range(3):
            run()
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream, capture_error_mode=mode):
        for _ in range(launches):
            run()
    stream.synchronize()
    return graph


def replayable(run: Callable[[], Any], launches: int, stream: Any) -> tuple[Any, str]:
    """A CUDA graph of the launches (strict capture, then relaxed), else a :class:`Batch`; and which it is."""
    import torch

    for mode in ("global", "relaxed"):
        try:
            return graph_of(run, launches, stream, mode), "graph"
        except Exception as exc:  # noqa: BLE001 (said, then the next way)
            print(f"  capture ({mode}) failed: {type(exc).__name__}: {str(exc)[:160]}", file=sys.stderr)
            torch.cuda.synchronize()
    return Batch(run, launches), "back-to-back"


def one_run(graphs: tuple[Any, Any], stream: Any) -> tuple[float, float]:
    """Replay the graphs in alternation, ``REPLAYS`` each; the median replay (ms) of each."""
    import torch

    times: tuple[list[float], list[float]] = ([], [])
    pairs = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in graphs]
             for _ in range(REPLAYS)]
    with torch.cuda.stream(stream):
        for round_ in pairs:
            for graph, (start, stop) in zip(graphs, round_):
                start.record(stream)
                graph.replay()
                stop.record(stream)
    stream.synchronize()
    for round_ in pairs:
        for i, (start, stop) in enumerate(round_):
            times[i].append(start.elapsed_time(stop))
    return statistics.median(times[0]), statistics.median(times[1])


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def paired(ours: Callable[[], Any], theirs: Callable[[], Any], stream: Any, estimate_ms: float) -> Paired:
    """Our launcher and torch's timed by the one method of this file (see the module docstring)."""
    launches = max(2, min(2000, math.ceil(REPLAY_MS / max(estimate_ms, 1e-3))))
    mine, how = replayable(ours, launches, stream)
    other, how_theirs = replayable(theirs, launches, stream) if how == "graph" else (Batch(theirs, launches), how)
    if how_theirs != how:
        mine, how = Batch(ours, launches), how_theirs
    graphs = (mine, other)
    start = time.perf_counter()
    while 1e3 * (time.perf_counter() - start) < WARM_MS:  # clocks and caches settle under this load
        one_run(graphs, stream)
    runs: list[tuple[float, float]] = []
    while True:
        runs.append(one_run(graphs, stream))
        last = runs[-RUNS_AGREEING:]
        worst = spread([r[1] / r[0] for r in last]) if len(last) > 1 else 1.0
        settled = len(last) == RUNS_AGREEING and worst <= AGREE
        if settled or len(runs) >= MAX_RUNS:
            break
    o = statistics.median(r[0] for r in last) / launches
    t = statistics.median(r[1] for r in last) / launches
    return Paired(o, t, statistics.median(r[1] / r[0] for r in last), worst, spread([r[0] for r in last]),
                  len(runs), settled, launches, how)


def time_once(run: Callable[[], Any], stream: Any) -> float:
    """One launch's time (ms), for choosing the graph length."""
    import torch

    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        run()
        start.record(stream)
        run()
        stop.record(stream)
    stream.synchronize()
    return start.elapsed_time(stop)


def checked(c: Any, ref: Any, k: int, action: Callable[[], Any], stream: Any) -> bool:
    """Poison C, run ``action`` (enqueues on ``stream``), and check every element against the reference."""
    import torch

    from ts_explore.kernels import gemm

    c.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        action()
    stream.synchronize()
    return bool(gemm.close(c, ref, k).all())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only 'by shape' and the 128x256 static config")
    parser.add_argument("--no-diagnosis", action="store_true", help="skip the per-launch timing comparison")
    parser.add_argument("--small", action="store_true", help=f"only {'x'.join(map(str, SMALL))}")
    args = parser.parse_args(argv)
    try:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
    except Exception as exc:  # noqa: BLE001 (any reason there is no GPU)
        print(f"no GPU: {exc}", file=sys.stderr)
        return 2
    import cuda.bindings.driver as cuda

    from ts_explore.kernels import gemm
    from ts_explore.kernels.gemm_geometry import H200_DENSE_BF16_TFLOPS, flops
    from ts_explore.scenarios import get

    scenario = get("hopper_gemm")
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    chosen = configs()[:2] if args.quick else configs()
    stream = torch.cuda.Stream()
    cu_stream = cuda.CUstream(stream.cuda_stream)
    compiled: dict[str, Any] = {}
    for label, overrides in chosen:
        t0 = time.perf_counter()
        try:
            compiled[label] = gemm.compile(scenario, scenario.config(**overrides))
        except Exception as exc:  # noqa: BLE001 (report and go on with the others)
            print(f"{label}: compile failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)
            continue
        print(f"compiled {label} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(f"bf16 GEMM C = A·Bᵀ (fp32 accumulate) on {props.name} ({sms} SMs), random-normal inputs; "
          f"dense bf16 peak {H200_DENSE_BF16_TFLOPS:.0f} TFLOP/s.")
    print(f"Timing: ours and torch.matmul(A, B.T) each captured as a CUDA graph of L back-to-back launches "
          f"(one replay ~{REPLAY_MS:g} ms), on one stream, same A and B; after {WARM_MS:g} ms of warm-up a run replays "
          f"the two graphs in alternation, {REPLAYS} times each, CUDA events around each replay; runs repeat until the "
          f"ratios of {RUNS_AGREEING} runs agree within {100 * AGREE:g} % (at most {MAX_RUNS}); ms = median of those "
          "runs per launch; 'x torch' = median of their torch ms / our ms; spread = (max - min) / median of those "
          "ratios; drift = the same of our times.")
    head = (f"{'shape':>16s}  {'config':30s} {'tile picked':>11s} {'ms':>8s} {'TFLOP/s':>8s} {'x torch':>8s} "
            f"{'% peak':>7s} {'torch ms':>8s} {'L':>5s} {'runs':>4s} {'spread':>6s} {'drift':>6s}  ok")
    print(head)
    print("-" * len(head))
    results: dict[tuple, dict[str, float]] = {}
    rates: dict[tuple, dict[str, float]] = {}
    for shape in [SMALL] if args.small else SHAPES:
        m, n, k = shape
        a, b = gemm.make_inputs(shape, seed=0)
        c = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        ref = gemm.reference(a, b)
        name = "x".join(map(str, shape))
        torch.cuda.synchronize()

        def theirs(a: Any = a, b: Any = b) -> Any:
            return torch.matmul(a, b.T)

        for label, fn in compiled.items():
            if (shape != SMALL and label in SMALL_ONLY) or (shape == SMALL and label in LARGE_ONLY):
                continue
            cfg = scenario.config(**dict(chosen)[label])
            picked = cfg.resolved(shape, sms).tile.value.rsplit("x", 1)[0]
            try:
                go = gemm.launcher(fn, a, b, c, cfg, sms, cu_stream)
                ok = checked(c, ref, k, go, stream)
                p = paired(go, theirs, stream, time_once(go, stream))
                ok = ok and checked(c, ref, k, replayable(go, 1, stream)[0].replay, stream)
            except Exception as exc:  # noqa: BLE001
                print(f"{name:>16s}  {label:30s} failed: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            tf = flops(shape) / p.ours_ms / 1e9
            results.setdefault(shape, {})[label] = p.ratio if ok else 0.0
            rates.setdefault(shape, {})[label] = tf
            print(f"{name:>16s}  {label:30s} {picked:>11s} {p.ours_ms:8.4f} {tf:8.1f} {p.ratio:8.3f} "
                  f"{100 * tf / H200_DENSE_BF16_TFLOPS:6.1f}% {p.torch_ms:8.4f} {p.launches:5d} {p.runs:4d} "
                  f"{100 * p.spread:5.1f}% {100 * p.drift:5.1f}%  {'yes' if ok else 'WRONG'}{'' if p.settled else ' (did not settle)'}"
                  f"{'' if p.how == 'graph' else ' (' + p.how + ', no graph)'}",
                  flush=True)
        del a, b, c, ref
        torch.cuda.empty_cache()
    if not args.no_diagnosis and "128x256 2wg 4st static" in compiled:
        diagnose(compiled["128x256 2wg 4st static"], scenario.config(**dict(chosen)["128x256 2wg 4st static"]),
                 sms)
    return report(results, rates)


def diagnose(fn: Any, cfg: Any, sms: int, reps: int = 30) -> None:
    """Our 8192^3 kernel timed per launch (one event pair each) in the ways the earlier benchmark mixed up."""
    import cuda.bindings.driver as cuda
    import torch

    from ts_explore.kernels import gemm

    shape = TARGET
    a, b = gemm.make_inputs(shape, seed=0)
    c = torch.empty((shape[0], shape[1]), device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    plain_default = gemm.launcher(fn, a, b, c, cfg, sms)  # torch's current (default) stream, as before
    plain_side = gemm.launcher(fn, a, b, c, cfg, sms, cuda.CUstream(side.cuda_stream))
    host_ms: list[float] = []

    def per_launch(run: Callable[[], Any], stream: Any, matmul: bool = False) -> float:
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        with torch.cuda.stream(stream):
            for _ in range(3):
                run()
            stream.synchronize()
            for start, stop in pairs:
                start.record(stream)
                t0 = time.perf_counter()
                run()
                host_ms.append(1e3 * (time.perf_counter() - t0))
                stop.record(stream)
        stream.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in pairs)

    rows = [
        ("ours, default stream, converted per call (earlier benchmark)", per_launch(plain_default, default)),
        ("torch.matmul, default stream", per_launch(lambda: torch.matmul(a, b.T), default)),
        ("ours, side stream, converted per call (launch())", per_launch(plain_side, side)),
        ("ours again, default stream (order effect)", per_launch(plain_default, default)),
    ]
    print()
    print(f"Diagnosis at {'x'.join(map(str, shape))}: one CUDA-event pair per launch, {reps} launches queued "
          f"back to back, median (ms):")
    for label, ms in rows:
        print(f"  {label:64s} {ms:8.4f}")
    print(f"  host time of one call of ours (median of all calls above): {statistics.median(host_ms):.4f} ms")


def report(results: dict[tuple, dict[str, float]], rates: dict[tuple, dict[str, float]]) -> int:
    at_target = results.get(TARGET, {})
    tflops = rates.get(TARGET, {})
    small = results.get(SMALL, {}).get("by shape", 0.0)
    print()
    print(LIMITS)
    if not at_target:
        print("best: none at 8192^3")
        return 1
    best = max(at_target, key=at_target.get)
    print(f"8192³: {best}: {tflops[best]:.1f} TFLOP/s = {at_target[best]:.3f}x torch.matmul; 'by shape' at "
          f"{'x'.join(map(str, SMALL))}: {small:.3f}x torch.matmul")
    return 0 if at_target[best] >= TARGET_RATIO and small >= SMALL_RATIO else 1


LIMITS = """\
What limits ours (read with the rows above): one consumer warpgroup pair does both the k-loop and the
epilogue, so tensor cores idle while a tile's C goes out (no ping-pong between consumer warpgroups, no
epilogue overlapped with the next tile's WGMMA); the accumulators are a 128-register task-local value,
so tiles wider than 128x256 per two warpgroups do not fit. The 'swz' rows hand tiles out in groups
(L2 swizzle); small grids are bound by each SM's reads (B multicast in 2x1 clusters helps there)."""


if __name__ == "__main__":
    sys.exit(main())
