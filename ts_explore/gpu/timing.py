"""CUDA-event timing (runs in the worker): warm-up, then one event pair per repetition.

All repetitions are enqueued back to back before waiting, so once the GPU is
busy each start event sits behind the previous launch and host-side launch
overhead does not count against a kernel that runs longer than it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from ..model.plan import MATMUL, MEMCPY, TORCH
from .device import check


@dataclass(frozen=True)
class Timing:
    """Per-repetition times of one operation, and its rate: TFLOP/s when it counts FLOPs, else GB/s moved."""

    label: str
    times_ms: tuple[float, ...]
    bytes_moved: int
    flops: int = 0  # floating-point operations per repetition (0: a copy, rated in GB/s)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    def gbps(self, ms: float | None = None) -> float:
        """GB/s (1e9 bytes) at ``ms`` (the median by default)."""
        ms = self.median_ms if ms is None else ms
        return self.bytes_moved / (ms * 1e-3) / 1e9 if ms > 0 else float("inf")

    def tflops(self, ms: float | None = None) -> float:
        """TFLOP/s (1e12 FLOPs per second) at ``ms`` (the median by default)."""
        ms = self.median_ms if ms is None else ms
        return self.flops / (ms * 1e-3) / 1e12 if ms > 0 else float("inf")

    @property
    def unit(self) -> str:
        """``TFLOP/s`` for arithmetic, ``GB/s`` for copies."""
        return "TFLOP/s" if self.flops else "GB/s"

    def rate(self, ms: float | None = None) -> float:
        """The figure of merit in :attr:`unit`.

        >>> Timing("k", (2.0,), bytes_moved=8_000_000).rate(), Timing("m", (1.0,), 0, flops=10**12).rate()
        (4.0, 1000.0)
        """
        return self.tflops(ms) if self.flops else self.gbps(ms)

    @property
    def summary(self) -> str:
        return (f"{self.label}: median {self.median_ms:.4f} ms (min {self.min_ms:.4f}, max {self.max_ms:.4f}) "
                f"= {self.rate():.0f} {self.unit}")


def time_events(run: Callable[[], None], stream: object, reps: int, warmup: int, label: str,
                bytes_moved: int, flops: int = 0) -> Timing:
    """Time ``run`` (which enqueues work on ``stream``) with CUDA events."""
    return time_alternating((run,), stream, reps, warmup, (label,), bytes_moved, flops)[0]


def time_alternating(runs: tuple[Callable[[], None], ...], stream: object, reps: int, warmup: int,
                     labels: tuple[str, ...], bytes_moved: int, flops: int = 0) -> tuple[Timing, ...]:
    """Time launchers of the same work in turn, one launch each per round, with CUDA events.

    Alternating keeps slow drifts (clocks, temperature) out of the ratio of
    their medians, which is what an overhead table compares.
    """
    from cuda.bindings import driver as cu

    for _ in range(warmup):
        for run in runs:
            run()
    check(cu.cuStreamSynchronize(stream))
    events = [[(check(cu.cuEventCreate(0)), check(cu.cuEventCreate(0))) for _ in runs] for _ in range(reps)]
    for round_ in events:
        for run, (start, stop) in zip(runs, round_):
            check(cu.cuEventRecord(start, stream))
            run()
            check(cu.cuEventRecord(stop, stream))
    check(cu.cuStreamSynchronize(stream))
    times = [tuple(float(check(cu.cuEventElapsedTime(*round_[i]))) for round_ in events) for i in range(len(runs))]
    for round_ in events:
        for start, stop in round_:
            check(cu.cuEventDestroy(start))
            check(cu.cuEventDestroy(stop))
    return tuple(Timing(label, t, bytes_moved, flops) for label, t in zip(labels, times))


def time_torch(run: Callable[[], None], reps: int, warmup: int, label: str, bytes_moved: int,
               flops: int = 0) -> Timing:
    """Time ``run`` (work enqueued on torch's current stream) with torch's CUDA events."""
    import torch

    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, stop in pairs:
        start.record()
        run()
        stop.record()
    torch.cuda.synchronize()
    return Timing(label, tuple(float(a.elapsed_time(b)) for a, b in pairs), bytes_moved, flops)


def time_torch_copy(nbytes: int, reps: int, warmup: int) -> Timing | None:
    """``dst.copy_(src)`` of ``nbytes`` on the current device, when torch with CUDA is installed."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(warmup):
        dst.copy_(src)
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, stop in pairs:
        start.record()
        dst.copy_(src)
        stop.record()
    torch.cuda.synchronize()
    times = tuple(float(start.elapsed_time(stop)) for start, stop in pairs)
    del src, dst
    torch.cuda.empty_cache()
    return Timing("torch.copy_", times, 2 * nbytes)


__all__ = ["MATMUL", "MEMCPY", "TORCH", "Timing", "time_events", "time_torch", "time_torch_copy"]
