"""CUDA-event timing (runs in the worker): warm-up, then one event pair per repetition.

All repetitions are enqueued back to back before waiting, so once the GPU is
busy each start event sits behind the previous launch and host-side launch
overhead does not count against a kernel that runs longer than it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from .device import check


# Labels of the reference copies timed next to a kernel.
MEMCPY = "cudaMemcpyAsync D2D"
TORCH = "torch.copy_"


@dataclass(frozen=True)
class Timing:
    """Per-repetition times of one operation and its bandwidth (bytes read + written)."""

    label: str
    times_ms: tuple[float, ...]
    bytes_moved: int

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

    @property
    def summary(self) -> str:
        return (f"{self.label}: median {self.median_ms:.4f} ms (min {self.min_ms:.4f}, max {self.max_ms:.4f}) "
                f"= {self.gbps():.0f} GB/s")


def time_events(run: Callable[[], None], stream: object, reps: int, warmup: int, label: str,
                bytes_moved: int) -> Timing:
    """Time ``run`` (which enqueues work on ``stream``) with CUDA events."""
    from cuda.bindings import driver as cu

    for _ in range(warmup):
        run()
    check(cu.cuStreamSynchronize(stream))
    events = [(check(cu.cuEventCreate(0)), check(cu.cuEventCreate(0))) for _ in range(reps)]
    for start, stop in events:
        check(cu.cuEventRecord(start, stream))
        run()
        check(cu.cuEventRecord(stop, stream))
    check(cu.cuStreamSynchronize(stream))
    times = tuple(float(check(cu.cuEventElapsedTime(start, stop))) for start, stop in events)
    for start, stop in events:
        check(cu.cuEventDestroy(start))
        check(cu.cuEventDestroy(stop))
    return Timing(label, times, bytes_moved)


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


__all__ = ["MEMCPY", "TORCH", "Timing", "time_events", "time_torch_copy"]
