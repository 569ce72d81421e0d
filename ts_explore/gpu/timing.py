"""CUDA-event timing (runs in the worker): warm-up, then one event pair per repetition.

All repetitions are enqueued back to back before waiting, so once the GPU is
busy each start event sits behind the previous launch and host-side launch
overhead does not count against a kernel that runs longer than it.
:func:`time_steady` times a kernel and its references the way the benchmarks
do (alternating, warmed by time, enough rounds for sustained clocks, the SM
clock read while they run): a few repetitions on a cold GPU report boost
clocks a sustained run does not keep.
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
                     labels: tuple[str, ...], bytes_moved: int, flops: int = 0,
                     during: Callable[[], None] | None = None) -> tuple[Timing, ...]:
    """Time launchers of the same work in turn, one launch each per round, with CUDA events.

    Alternating keeps slow drifts (clocks, temperature) out of the ratio of
    their medians, which is what an overhead table compares. ``during`` is
    called once the rounds are enqueued, while the GPU runs them.
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
    if during is not None:
        during()
    check(cu.cuStreamSynchronize(stream))
    times = [tuple(float(check(cu.cuEventElapsedTime(*round_[i]))) for round_ in events) for i in range(len(runs))]
    for round_ in events:
        for start, stop in round_:
            check(cu.cuEventDestroy(start))
            check(cu.cuEventDestroy(stop))
    return tuple(Timing(label, t, bytes_moved, flops) for label, t in zip(labels, times))


WARM_S = 0.3  # alternating launches before the timed rounds: the SM clock settles within about that
TIMED_S = 0.5  # the timed rounds last at least about this long in all, so one slow round does not set the median
MAX_REPS = 5000


def time_steady(runs: tuple[Callable[[], None], ...], stream: object, reps: int, labels: tuple[str, ...],
                bytes_moved: int, flops: int = 0, clock: Callable[[], int | None] | None = None,
                ) -> tuple[tuple[Timing, ...], int | None]:
    """Time ``runs`` the way the benchmarks do: alternating, after a warm-up by time, over enough rounds.

    Every run must enqueue its work on ``stream`` (a reference made for
    torch's stream is wrapped with :func:`on_stream`). First the runs
    alternate for :data:`WARM_S` so the clocks reach their sustained level;
    then at least ``reps`` rounds, and as many more as make the timed rounds
    last :data:`TIMED_S`, alternate with CUDA events around each launch.
    ``clock()`` (the SM clock in MHz, e.g. :func:`sm_clock_mhz`) is read
    while the timed rounds run. Returns the timings and the clock read.
    """
    import time

    from cuda.bindings import driver as cu

    start = time.perf_counter()
    rounds = 0
    while time.perf_counter() - start < WARM_S or rounds < 2:
        for run in runs:
            run()
        check(cu.cuStreamSynchronize(stream))
        rounds += 1
    probe = time_alternating(runs, stream, 3, 0, labels, bytes_moved, flops)
    round_ms = sum(t.median_ms for t in probe)
    n = min(MAX_REPS, max(int(reps), int(TIMED_S * 1e3 / max(round_ms, 1e-3)) + 1))
    seen: list[int | None] = []
    timings = time_alternating(runs, stream, n, 0, labels, bytes_moved, flops,
                               during=(lambda: seen.append(clock())) if clock is not None else None)
    return timings, (seen[0] if seen else None)


def on_stream(run: Callable[[], None], stream: object) -> Callable[[], None]:
    """``run`` (work enqueued on torch's current stream) enqueued on the CUDA stream ``stream`` instead."""
    import torch

    external = torch.cuda.ExternalStream(int(stream))

    def call() -> None:
        with torch.cuda.stream(external):
            run()

    return call


def sm_clock_mhz(device: int = 0) -> Callable[[], int | None]:
    """A reader of GPU ``device``'s current SM clock in MHz through NVML (it returns None where NVML is missing)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device)
    except Exception:  # noqa: BLE001 - no NVML (or no permission): the clock is simply not reported
        return lambda: None

    def read() -> int | None:
        try:
            return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001
            return None

    return read


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


__all__ = ["MATMUL", "MEMCPY", "TIMED_S", "TORCH", "WARM_S", "Timing", "on_stream", "sm_clock_mhz", "time_events",
           "time_steady", "time_torch", "time_torch_copy"]
