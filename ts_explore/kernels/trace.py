"""Inside an instrumented kernel: step events to device memory, progress to host-mapped memory.

Why our own timer writes and not IKET: IKET ranges carry only a
``<resource>_<stage>`` name (no step id, no iteration), need an injection
library set up when the process starts (a worker of its own) and dump their
data only after the kernel finished, so they can say nothing about a hang.
Writing ``%globaltimer`` around each step ourselves carries the step id, the
loop iteration and the work tile, needs nothing at process start, and the same
hook writes the progress a hung kernel is diagnosed from.

Layouts, in int32 words (decoded by :mod:`ts_explore.gpu.trace_run`):

``events``: ``[cta][warp][capacity + 1][EVENT_WORDS]``, ``cta`` counted
from the first recording CTA (``TraceSpec.start``, fixed when the kernel is
compiled). Slot ``n`` of a warp
is its event ``n``; events past the capacity all land in the last slot, so
only the count survives them. An event is written in two halves, so that
nothing the instrumentation needs is held in registers across the step:
before the step, words 0-3: step uid + 1 (0: empty), the low 32 bits of the
global timer (ns) at the start, the loop offset (0 outside the loop), the
tile; after it, words 4-7: the timer's low word at the end, the loop's first
offset and step (both 0 outside the loop), and ``n + 1`` (0: the step never
ended).
The host works out the iteration, ``(offset - first) // step``.

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

    ENTERED, LEFT = ENTERED, LEFT  # progress marks (the trace hook writes them through the recorder)

    def __init__(self, spec: Any, events: Any, progress: Any, every_lane: bool = False) -> None:
        self.spec = spec
        self.every_lane = every_lane
        self.events = _gmem(events) if spec.events else None
        self.progress = _gmem(progress) if spec.progress else None
        # Inside the recording branch of a split kernel every CTA records; otherwise check the CTA per step.
        self.cta_limit = 0 if spec.splits else spec.ctas
        self.start = spec.first_cta

    def records_event(self, stage: Any) -> bool:
        return self.events is not None and self.spec.records(stage)

    def records_progress(self, stage: Any) -> bool:
        from ..model.timeline import BLOCKING_STAGES

        return self.progress is not None and stage in BLOCKING_STAGES

    def recording(self) -> Any:
        """Whether this thread writes events: lane 0 of each warp (or every lane, see :func:`is_recording`), in
        the CTAs the spec traces (a DSL value)."""
        return is_recording(self.cta_limit, self.start, self.every_lane)

    def begin(self, recording: Any, n: Any, uid: int, offset: Any, tile: Any) -> None:
        """Before a step: where ``recording``, the first half of event ``n`` (its step, start time, offset, tile)."""
        begin_event(self.events, self.spec.capacity, self.start, recording, n, uid, offset, tile)

    def end(self, recording: Any, n: Any, loop: bool, first: Any, step: Any) -> Any:
        """After a step: where ``recording``, the second half of event ``n``; returns ``n + 1``."""
        return end_event(self.events, self.spec.capacity, self.start, recording, n, loop, first, step)

    def mark(self, uid: int, iteration: Any, tile: Any, state: int) -> None:
        write_progress(self.progress, uid, iteration, tile, state)


def _gmem(address: Any) -> Any:
    """A 16-byte aligned int32 pointer to global (or host-mapped) memory from a 64-bit address argument."""
    return cute.make_ptr(cutlass.Int32, address, cute.AddressSpace.gmem, assumed_align=16)


def address(value: Any) -> Any:
    """A trace-buffer address argument as the kernel takes it (0 when the host was compiled without one)."""
    return cutlass.Int64(0) if value is None else value


def recorder_for(spec: Any, events: Any, progress: Any, every_lane: bool = False) -> Any:
    """The kernel's :class:`Recorder`, or None for an uninstrumented build (``spec`` None).

    ``every_lane``: the kernel's steps run alike in every lane of a warp, so every lane records (no
    lane-divergent branch; :func:`is_recording`).
    """
    return None if spec is None else Recorder(spec, events, progress, every_lane)


def cap_registers(count: int) -> None:
    """While a kernel is traced: cap its registers per thread at ``count`` (PTX ``.maxnreg``).

    Called for a spec that sets ``registers``. A launch whose trace
    :attr:`~ts_explore.model.timeline.TraceSpec.splits` also tries the
    plain kernel's count (so the compiler can build the plain branch as it
    builds the plain kernel) and 255 (see
    :meth:`~ts_explore.model.timeline.TraceSpec.alternatives`).
    """
    from cutlass._mlir import ir

    op = ir.InsertionPoint.current.block.owner.operation
    while op.parent is not None and op.parent.name != "gpu.module":
        op = op.parent
    if op.parent is None:
        raise RuntimeError("cap_registers is called while a kernel is traced (no enclosing gpu.module found)")
    op.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), count)


@cute.jit
def linear_cta() -> cutlass.Int32:
    """The CTA's index in a row-major walk of the grid (x fastest)."""
    bx, by, bz = cute.arch.block_idx()
    gx, gy, _ = cute.arch.grid_dim()
    return bx + gx * (by + gy * bz)


@cute.jit
def warp_slot(words_per_warp: cutlass.Constexpr[int], cta: cutlass.Int32) -> cutlass.Int32:
    """First word of this warp's region in a ``[cta][warp][words_per_warp]`` buffer."""
    warps = cute.arch.block_dim()[0] // 32
    return (cta * warps + cute.arch.warp_idx()) * words_per_warp


@cute.jit
def in_window(start: cutlass.Constexpr[int], ctas: cutlass.Constexpr[int]) -> cutlass.Boolean:
    """Whether this CTA is one of ``start .. start + ctas - 1``."""
    if cutlass.const_expr(start > 0):
        return (linear_cta() >= start) & (linear_cta() < start + ctas)
    return linear_cta() < ctas


@cute.jit
def split_by_cta(ctas: cutlass.Constexpr[int], start: cutlass.Constexpr[int], traced: cutlass.Constexpr,
                 plain: cutlass.Constexpr) -> None:
    """Run ``traced()`` in CTAs ``start .. start + ctas - 1``, ``plain()`` in every other CTA (one uniform branch)."""
    if in_window(start, ctas):
        traced()
    else:
        plain()


@cute.jit
def is_recording(ctas: cutlass.Constexpr[int], start: cutlass.Constexpr[int],
                 every_lane: cutlass.Constexpr[bool] = False) -> cutlass.Boolean:
    """Lane 0 of every warp (every lane with ``every_lane``), in CTAs ``start .. start + ctas - 1`` (all CTAs when
    ``ctas`` is 0).

    ``every_lane`` is for kernels whose steps every lane of a warp runs alike
    (the warpgroup MMA kernels): all 32 lanes then store the same words to the
    same address (one transaction) and the recording is never a lane-divergent
    branch. There, a store behind ``lane == 0`` between steps whose warpgroup
    MMAs are in flight made ptxas serialise every WGMMA of the kernel (C7520,
    "compiler-inserted WG.AR in divergent path": the ping-pong GEMM's traced
    build). Per-thread schedules, whose lanes may run different iterations,
    keep lane 0.
    """
    recording = cutlass.Boolean(True)
    if cutlass.const_expr(not every_lane):
        recording = cute.arch.lane_idx() == 0
    if cutlass.const_expr(ctas > 0):
        recording = recording & in_window(start, ctas)
    return recording


@cute.jit
def event_slot(events: cute.Pointer, capacity: cutlass.Constexpr[int], start: cutlass.Constexpr[int],
               n: cutlass.Int32) -> cute.Tensor:
    """Event ``n``'s eight words in this warp's region (events past the capacity share the last slot)."""
    first = warp_slot((capacity + 1) * EVENT_WORDS, linear_cta() - start) // EVENT_WORDS
    slots = cute.make_tensor(events, cute.make_layout((EVENT_WORDS, first + capacity + 1), stride=(1, EVENT_WORDS)))
    return slots[(None, first + cutlass.min(n, cutlass.Int32(capacity)))]


@cute.jit
def begin_event(events: cute.Pointer, capacity: cutlass.Constexpr[int], start: cutlass.Constexpr[int],
                recording: cutlass.Boolean, n: cutlass.Int32, uid: cutlass.Constexpr[int], offset: cutlass.Int32,
                tile: cutlass.Int32) -> None:
    """Where ``recording``: read the global timer and store words 0-3 of event ``n`` (one 128-bit store).

    Storing the start right away, rather than keeping it for the end, leaves
    no instrumentation value live across the step. (The kernel still needs
    more registers where events are stored, which is why a launch also tries
    builds with a register cap, :func:`cap_registers`; see
    ``benchmarks/results/trace_overhead.h200.txt``.)
    """
    if recording:
        half = cute.make_rmem_tensor((EVENT_WORDS // 2,), cutlass.Int32)
        half[0] = cutlass.Int32(uid + 1)
        half[1] = cute.arch.globaltimer_lo()
        half[2] = offset
        half[3] = tile
        slot = event_slot(events, capacity, start, n)
        cute.autovec_copy(half, cute.make_tensor(slot.iterator, cute.make_layout(EVENT_WORDS // 2)))


@cute.jit
def end_event(events: cute.Pointer, capacity: cutlass.Constexpr[int], start: cutlass.Constexpr[int],
              recording: cutlass.Boolean, n: cutlass.Int32, loop: cutlass.Constexpr[bool], first: cutlass.Int32,
              step: cutlass.Int32) -> cutlass.Int32:
    """Where ``recording``: read the global timer and store words 4-7 of event ``n``; return ``n + 1``."""
    if recording:
        half = cute.make_rmem_tensor((EVENT_WORDS // 2,), cutlass.Int32)
        half[0] = cute.arch.globaltimer_lo()
        if cutlass.const_expr(loop):
            half[1] = first
            half[2] = step
        else:
            half[1] = cutlass.Int32(0)
            half[2] = cutlass.Int32(0)
        half[3] = n + 1
        slot = event_slot(events, capacity, start, n)
        cute.autovec_copy(half, cute.make_tensor(slot.iterator + EVENT_WORDS // 2,
                                                 cute.make_layout(EVENT_WORDS // 2)))
    return n + 1


@cute.jit
def write_progress(progress: cute.Pointer, uid: cutlass.Constexpr[int], iteration: cutlass.Int32,
                   tile: cutlass.Int32, state: cutlass.Constexpr[int]) -> None:
    """Lane 0 of the warp publishes where it is, with system-scope stores the host can read mid-kernel."""
    if cute.arch.lane_idx() == 0:
        slot = progress + warp_slot(PROGRESS_WORDS, linear_cta())
        cute.arch.store(slot, cutlass.Int32(uid + 1), sem="relaxed", scope="sys")
        cute.arch.store(slot + 1, cutlass.Int32(iteration), sem="relaxed", scope="sys")
        cute.arch.store(slot + 2, cutlass.Int32(tile), sem="relaxed", scope="sys")
        cute.arch.store(slot + 4, cute.arch.globaltimer(), sem="relaxed", scope="sys")
        cute.arch.store(slot + 3, cutlass.Int32(state), sem="relaxed", scope="sys")


__all__ = ["ENTERED", "EVENT_WORDS", "LEFT", "PROGRESS_WORDS", "Recorder", "address", "begin_event", "cap_registers",
           "end_event", "event_slot", "is_recording", "linear_cta", "recorder_for", "in_window", "split_by_cta",
           "write_progress"]
