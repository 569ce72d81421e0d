"""Inside an instrumented kernel: step events to device memory, progress to host-mapped memory.

Why our own timer writes and not IKET: IKET ranges carry only a
``<resource>_<stage>`` name (no step id, no iteration), need an injection
library set up when the process starts (a worker of its own) and dump their
data only after the kernel finished, so they can say nothing about a hang.
Writing ``%globaltimer`` around each step ourselves carries the step id, the
loop iteration and the work tile, needs nothing at process start, and the same
hook writes the progress a hung kernel is diagnosed from.

Layouts, in int32 words (decoded by :mod:`ts_explore.gpu.trace_run`):

``events``: ``[cta][warp][capacity + 1][EVENT_WORDS]``. Slot 0 of a warp is
its header (word 0: how many events the warp produced, written only once
the capacity ran out); slot ``1 + n`` is event ``n``: step uid + 1 (0: empty),
iteration (-1 outside the loop), tile, SM cycles between start and end,
then start and end of the global timer (two int64, ns).

``progress``: ``[cta][warp][PROGRESS_WORDS]``: step uid + 1, iteration,
tile, state (1 entered, 2 left), then the global timer (int64) of the write.
Written with system-scope stores before and after each blocking step, so the
host reads it while the kernel hangs.
"""

# No ``from __future__ import annotations``: the DSL reads these annotations as objects.

from typing import Any

import cutlass
import cutlass.cute as cute

EVENT_WORDS = 8
PROGRESS_WORDS = 8
ENTERED, LEFT = 1, 2


class Recorder:
    """Trace-time holder of what the kernel writes to (DSL pointers) and what it records (the spec)."""

    def __init__(self, spec: Any, events: Any, progress: Any) -> None:
        self.spec = spec
        self.events = _gmem(events) if spec.events else None
        self.progress = _gmem(progress) if spec.progress else None

    def records_event(self, stage: Any) -> bool:
        return self.events is not None and self.spec.records(stage)

    def records_progress(self, stage: Any) -> bool:
        from ..model.timeline import BLOCKING_STAGES

        return self.progress is not None and stage in BLOCKING_STAGES

    def event(self, n: Any, uid: int, iteration: Any, tile: Any, start: Any, end: Any, cycles: Any) -> None:
        write_event(self.events, self.spec.capacity, self.spec.ctas, n, uid, iteration, tile, start, end, cycles)

    def mark(self, uid: int, iteration: Any, tile: Any, state: int) -> None:
        write_progress(self.progress, uid, iteration, tile, state)


def _gmem(address: Any) -> Any:
    """A 16-byte aligned int32 pointer to global (or host-mapped) memory from a 64-bit address argument."""
    return cute.make_ptr(cutlass.Int32, address, cute.AddressSpace.gmem, assumed_align=16)


def address(value: Any) -> Any:
    """A trace-buffer address argument as the kernel takes it (0 when the host was compiled without one)."""
    return cutlass.Int64(0) if value is None else value


def recorder_for(spec: Any, events: Any, progress: Any) -> Any:
    """The kernel's :class:`Recorder`, or None for an uninstrumented build (``spec`` None)."""
    return None if spec is None else Recorder(spec, events, progress)


@cute.jit
def linear_cta() -> cutlass.Int32:
    """The CTA's index in a row-major walk of the grid (x fastest)."""
    bx, by, bz = cute.arch.block_idx()
    gx, gy, _ = cute.arch.grid_dim()
    return bx + gx * (by + gy * bz)


@cute.jit
def warp_slot(words_per_warp: cutlass.Constexpr[int]) -> cutlass.Int32:
    """First word of this warp's region: ``(cta * warps + warp) * words_per_warp``."""
    warps = cute.arch.block_dim()[0] // 32
    return (linear_cta() * warps + cute.arch.warp_idx()) * words_per_warp


@cute.jit
def write_event(events: cutlass.Int64, capacity: cutlass.Constexpr[int], ctas: cutlass.Constexpr[int],
                n: cutlass.Int32, uid: cutlass.Constexpr[int], iteration: cutlass.Int32, tile: cutlass.Int32,
                start: cutlass.Int64, end: cutlass.Int64, cycles: cutlass.Int32) -> None:
    """Lane 0 of the warp stores event ``n`` (or, past the capacity, the warp's event count)."""
    recording = cute.arch.lane_idx() == 0
    if cutlass.const_expr(ctas > 0):
        recording = recording & (linear_cta() < ctas)
    if recording:
        base = warp_slot((capacity + 1) * EVENT_WORDS)
        if n < capacity:
            slot = events + (base + (n + 1) * EVENT_WORDS)
            cute.arch.store(slot, cutlass.Int32(uid + 1))
            cute.arch.store(slot + 1, cutlass.Int32(iteration))
            cute.arch.store(slot + 2, cutlass.Int32(tile))
            cute.arch.store(slot + 3, cutlass.Int32(cycles))
            cute.arch.store(slot + 4, cutlass.Int64(start))
            cute.arch.store(slot + 6, cutlass.Int64(end))
        else:
            cute.arch.store(events + base, cutlass.Int32(n + 1))


@cute.jit
def write_progress(progress: cute.Pointer, uid: cutlass.Constexpr[int], iteration: cutlass.Int32,
                   tile: cutlass.Int32, state: cutlass.Constexpr[int]) -> None:
    """Lane 0 of the warp publishes where it is, with system-scope stores the host can read mid-kernel."""
    if cute.arch.lane_idx() == 0:
        slot = progress + warp_slot(PROGRESS_WORDS)
        cute.arch.store(slot, cutlass.Int32(uid + 1), sem="relaxed", scope="sys")
        cute.arch.store(slot + 1, cutlass.Int32(iteration), sem="relaxed", scope="sys")
        cute.arch.store(slot + 2, cutlass.Int32(tile), sem="relaxed", scope="sys")
        cute.arch.store(slot + 4, cute.arch.globaltimer(), sem="relaxed", scope="sys")
        cute.arch.store(slot + 3, cutlass.Int32(state), sem="relaxed", scope="sys")


__all__ = ["ENTERED", "EVENT_WORDS", "LEFT", "PROGRESS_WORDS", "Recorder", "address", "linear_cta", "recorder_for", "write_event",
           "write_progress"]
