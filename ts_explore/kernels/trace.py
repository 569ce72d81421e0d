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
the loop offset, tile, SM cycles between start and end, the low 32 bits of
the global timer (ns) at the start and at the end, then the loop's first
offset and its step (both 0 outside the loop). The host works out the
iteration, ``(offset - first) // step``: a division in the kernel sat on the
critical path of every recorded step.

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
    """Trace-time holder of what the kernel writes to (DSL pointers) and what it records (the spec).

    When only some CTAs record events and no progress is written
    (:attr:`~ts_explore.model.timeline.TraceSpec.splits`), the kernel is
    emitted twice behind one branch on the CTA index: the recording CTAs run
    the instrumented schedule, every other CTA the plain one, so CTAs that
    record nothing pay nothing per step.
    """

    def __init__(self, spec: Any, events: Any, progress: Any) -> None:
        self.spec = spec
        self.events = _gmem(events) if spec.events else None
        self.progress = _gmem(progress) if spec.progress else None
        # Inside the recording branch of a split kernel every CTA records; otherwise check the CTA per step.
        self.cta_limit = 0 if spec.splits else spec.ctas

    def records_event(self, stage: Any) -> bool:
        return self.events is not None and self.spec.records(stage)

    def records_progress(self, stage: Any) -> bool:
        from ..model.timeline import BLOCKING_STAGES

        return self.progress is not None and stage in BLOCKING_STAGES

    def recording(self) -> Any:
        """Whether this thread writes events: lane 0 of each warp, in the CTAs the spec traces (a DSL value)."""
        return is_recording(self.cta_limit)

    def stamp(self, recording: Any) -> tuple[Any, Any]:
        """The global timer's low word and the SM clock, read only where ``recording`` (zeros elsewhere)."""
        return stamp(recording)

    def finish(self, recording: Any, n: Any, uid: int, loop: bool, offset: Any, first: Any, step: Any, tile: Any,
               start: Any, c0: Any) -> Any:
        """After a step: where ``recording``, its end, iteration and event; returns the next event number."""
        return finish_event(self.events, self.spec.capacity, recording, n, uid, loop, offset, first, step, tile,
                            start, c0)

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
def split_by_cta(ctas: cutlass.Constexpr[int], traced: cutlass.Constexpr, plain: cutlass.Constexpr) -> None:
    """Run ``traced()`` in CTAs ``0 .. ctas-1`` and ``plain()`` in every other CTA (one uniform branch)."""
    if linear_cta() < ctas:
        traced()
    else:
        plain()


@cute.jit
def is_recording(ctas: cutlass.Constexpr[int]) -> cutlass.Boolean:
    """Lane 0 of every warp, in the first ``ctas`` CTAs (all CTAs when ``ctas`` is 0)."""
    recording = cute.arch.lane_idx() == 0
    if cutlass.const_expr(ctas > 0):
        recording = recording & (linear_cta() < ctas)
    return recording


@cute.jit
def stamp(recording: cutlass.Boolean) -> tuple:
    """``(global timer's low 32 bits, SM clock)`` where ``recording``, else zeros.

    Threads that record nothing skip both reads: a timer read costs far more
    than a compare, and in a step that moves a few bytes it would otherwise be
    what the untraced CTAs pay for the traced ones. Only the timer's low word
    is read: one 32-bit read instead of the hi/lo/hi sequence a 64-bit read
    needs; the host unwraps it (a launch lasts far less than 2**32 ns).
    """
    start = cutlass.Int32(0)
    cycles = cutlass.Int32(0)
    if recording:
        start = cute.arch.globaltimer_lo()
        cycles = cute.arch.clock()
    return start, cycles


@cute.jit
def finish_event(events: cute.Pointer, capacity: cutlass.Constexpr[int], recording: cutlass.Boolean,
                 n: cutlass.Int32, uid: cutlass.Constexpr[int], loop: cutlass.Constexpr[bool],
                 offset: cutlass.Int32, first: cutlass.Int32, step: cutlass.Int32, tile: cutlass.Int32,
                 start: cutlass.Int32, c0: cutlass.Int32) -> cutlass.Int32:
    """Where ``recording``: read the end time and store event ``n``; return ``n`` + 1.

    Everything but the compare sits behind ``recording``, so the threads that
    record nothing pay no instructions. The event carries the loop offset,
    first offset and step as they are (``loop`` False: zeros); the host
    divides. What remains between the step's end and the next step is one
    timer read, a clock read and two stores.
    """
    following = n
    if recording:
        end = cute.arch.globaltimer_lo()
        cycles = cute.arch.clock() - c0
        base = warp_slot((capacity + 1) * EVENT_WORDS)
        if n < capacity:
            # One event is 32 aligned bytes: two 128-bit stores instead of eight scalar ones.
            record = cute.make_rmem_tensor((EVENT_WORDS,), cutlass.Int32)
            record[0] = cutlass.Int32(uid + 1)
            record[2] = tile
            record[3] = cycles
            record[4] = start
            record[5] = end
            if cutlass.const_expr(loop):
                record[1] = cutlass.Int32(offset)
                record[6] = cutlass.Int32(first)
                record[7] = cutlass.Int32(step)
            else:
                record[1] = cutlass.Int32(0)
                record[6] = cutlass.Int32(0)
                record[7] = cutlass.Int32(0)
            slots = cute.make_tensor(events, cute.make_layout((EVENT_WORDS, (base // EVENT_WORDS) + capacity + 1),
                                                              stride=(1, EVENT_WORDS)))
            cute.autovec_copy(record, slots[(None, base // EVENT_WORDS + n + 1)])
        else:
            cute.arch.store(events + base, cutlass.Int32(n + 1))
        following = n + 1
    return following


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


__all__ = ["ENTERED", "EVENT_WORDS", "LEFT", "PROGRESS_WORDS", "Recorder", "address", "is_recording", "linear_cta",
           "recorder_for", "split_by_cta", "stamp", "finish_event", "write_progress"]
