"""The instrumented first run of a launch: trace buffers, a watched (polled) kernel, decoding.

The worker runs an instrumented kernel (:mod:`ts_explore.kernels.trace`) once
per size, before the timed repetitions of the plain kernel, so the timing a
launch reports never includes tracing. The kernel is watched, not waited
for: the worker polls its stream (``cuStreamQuery``) and, if it has not
finished by the deadline, reads each warp's progress from host-mapped memory
while it still hangs, reports it, and restarts. Decoding is plain numpy, so
it is tested without a GPU.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from ..kernels.trace import ENTERED as ENTERED_CODE
from ..kernels.trace import EVENT_WORDS, LEFT as LEFT_CODE, PROGRESS_WORDS
from ..model import Section, TaskSet
from ..model.hang import ENTERED, LEFT, WarpProgress
from ..model.timeline import TaskWarps, Timeline, TimelineEvent, TraceSpec
from .errors import LaunchError
from .trace_compare import compare, predicted_order, schedule_for  # re-exported: the trace's CPU side


class HangError(LaunchError):
    """A kernel that did not finish; ``report`` (a :class:`~ts_explore.model.timeline.HangReport`) says where
    each warp stopped, beside the verifier's prediction, when the kernel was instrumented."""

    def __init__(self, message: str, report: Any = None) -> None:
        super().__init__("timeout", message)
        self.report = report


@dataclass(frozen=True)
class Layout:
    """Sizes of the two buffers of one instrumented launch."""

    grid: int
    warps: int  # per CTA
    traced_ctas: int  # CTAs 0 .. traced_ctas-1 write events
    capacity: int

    @classmethod
    def of(cls, spec: TraceSpec, grid: int, threads: int) -> Layout:
        traced = 0 if not spec.events else (grid if spec.ctas == 0 else min(grid, spec.ctas))
        return cls(grid, max(1, threads // 32), traced, spec.capacity)

    @property
    def event_words(self) -> int:
        return self.traced_ctas * self.warps * (self.capacity + 1) * EVENT_WORDS

    @property
    def progress_words(self) -> int:
        return self.grid * self.warps * PROGRESS_WORDS


class TraceBuffers:
    """Device memory for the events, host-mapped pinned memory for the progress (readable mid-kernel)."""

    def __init__(self, layout: Layout, progress: bool) -> None:
        from cuda.bindings import driver as cu

        from .device import check

        self.layout = layout
        self.events = 0
        self.host = 0
        self.progress = 0
        if layout.event_words:
            self.events = int(check(cu.cuMemAlloc(4 * layout.event_words)))
        if progress:
            flags = cu.CU_MEMHOSTALLOC_DEVICEMAP | cu.CU_MEMHOSTALLOC_PORTABLE
            self.host = int(check(cu.cuMemHostAlloc(4 * layout.progress_words, flags)))
            self.progress = int(check(cu.cuMemHostGetDevicePointer(self.host, 0)))

    def pointers(self) -> list[Any]:
        """The two kernel arguments: 64-bit addresses of the buffers (0 for one not in use)."""
        import cutlass

        return [cutlass.Int64(self.events), cutlass.Int64(self.progress)]

    def reset(self, stream: Any) -> None:
        from cuda.bindings import driver as cu

        from .device import check

        if self.events:
            check(cu.cuMemsetD32Async(self.events, 0, self.layout.event_words, stream))
        if self.host:
            ctypes.memset(self.host, 0, 4 * self.layout.progress_words)

    def read_events(self) -> np.ndarray:
        """``(traced_ctas, warps, capacity + 1, EVENT_WORDS)`` int32 (a warp's last slot takes its overflow)."""
        from cuda.bindings import driver as cu

        from .device import check

        lay = self.layout
        out = np.zeros(lay.event_words, dtype=np.int32)
        if self.events:
            check(cu.cuMemcpyDtoH(out.ctypes.data, self.events, out.nbytes))
        return out.reshape(lay.traced_ctas, lay.warps, lay.capacity + 1, EVENT_WORDS)

    def read_progress(self) -> np.ndarray:
        """``(grid, warps, PROGRESS_WORDS)`` int32, copied from host-mapped memory now (the kernel may run on)."""
        lay = self.layout
        if not self.host:
            return np.zeros((lay.grid, lay.warps, PROGRESS_WORDS), dtype=np.int32)
        view = (ctypes.c_int32 * lay.progress_words).from_address(self.host)
        return np.array(view, dtype=np.int32).reshape(lay.grid, lay.warps, PROGRESS_WORDS)

    def free(self) -> None:
        from cuda.bindings import driver as cu

        if self.events:
            cu.cuMemFree(self.events)
        if self.host:
            cu.cuMemFreeHost(self.host)
        self.events = self.host = self.progress = 0


def watch(run: Callable[[], None], stream: Any, timeout_s: float) -> float | None:
    """Launch ``run`` and poll ``stream`` until it is idle (returns the seconds waited) or ``timeout_s`` pass (None)."""
    from cuda.bindings import driver as cu

    from .device import check

    start = time.monotonic()
    run()
    pause = 1e-4
    while True:
        status = cu.cuStreamQuery(stream)
        status = status[0] if isinstance(status, tuple) else status
        if int(status) == int(cu.CUresult.CUDA_SUCCESS):
            return time.monotonic() - start
        if int(status) != int(cu.CUresult.CUDA_ERROR_NOT_READY):
            check(status)
        if time.monotonic() - start > timeout_s:
            return None
        time.sleep(pause)
        pause = min(0.02, pause * 2)


# -- decoding (numpy only) ------------------------------------------------------------------
def task_warps(task_set: TaskSet) -> tuple[TaskWarps, ...]:
    return tuple(TaskWarps(t.name, t.warp_start, t.warp_end) for t in task_set.tasks)


def _task_at(task_set: TaskSet, warp: int) -> Any:
    return next((t for t in task_set.tasks if t.warp_start <= warp < t.warp_end), None)


MAX_EVENTS = 200_000  # a timeline keeps at most this many events (whole warps, CTA by CTA)


# Words of one event, as the kernel writes them (see :mod:`ts_explore.kernels.trace`).
UID, START, OFFSET, TILE, END, FIRST, STEP, SEQ = range(EVENT_WORDS)


def _unwrap(low: np.ndarray, ref: int) -> np.ndarray:
    """Signed nanoseconds from ``ref`` of 32-bit global-timer words (any stamp within 2**31 ns of it).

    >>> _unwrap(np.array([[2**32 - 10, 5]], dtype=np.uint32).view(np.int32), 2**32 - 20).tolist()
    [[10, 25]]
    """
    words = low.astype(np.int64) & 0xFFFFFFFF
    return (words - ref + 2**31) % 2**32 - 2**31


def loop_iteration(offset: int, first: int, step: int) -> int | None:
    """The iteration of a loop step from the offset, first offset and step the kernel stored (None: no step).

    >>> loop_iteration(37, 5, 16), loop_iteration(5, 5, 16), loop_iteration(3, 0, 0)
    (2, 0, None)
    """
    return (offset - first) // step if step else None


def decode_events(raw: np.ndarray, task_set: TaskSet, *, scenario: str, spec: TraceSpec, device: str = "",
                  config: str = "", kernel_ns: int | None = None, max_events: int = MAX_EVENTS) -> Timeline:
    """Turn the event buffer into a :class:`Timeline` (times relative to the earliest start).

    Region ``c`` of the buffer is CTA ``spec.first_cta + c`` (``spec`` as placed for the launch).

    Warps past ``max_events`` (tracing every CTA of a large launch) are
    counted in ``Timeline.undecoded`` instead of kept.
    """
    ctas, warps, slots, _ = raw.shape
    capacity = slots - 1  # the last slot of a warp takes every event past the capacity
    first_cta = spec.first_cta
    steps = {(t.name, s.uid): s for t in task_set.tasks for s in t.schedule.steps()}
    rows: list[tuple[int, int, np.ndarray]] = []
    lost: list[tuple[int, int, int]] = []
    kept = undecoded = 0
    for cta in range(ctas):
        for warp in range(warps):
            block = raw[cta, warp]
            produced = int(block[capacity, SEQ])  # n + 1 of the last event past the capacity (0: none)
            if produced > capacity:
                lost.append((first_cta + cta, warp, produced - capacity))
            done = block[:capacity]
            done = done[(done[:, UID] != 0) & (done[:, SEQ] != 0)]  # begun and ended
            count = len(done)
            if count and kept + count > max_events:
                undecoded += count
            elif count:
                rows.append((first_cta + cta, warp, done))
                kept += count
    if not rows:
        return Timeline(scenario, (), task_warps(task_set), spec, device, config, kernel_ns, 0, tuple(lost),
                        undecoded)
    # The kernel stores the global timer's low 32 bits: unwrap every stamp around the first one.
    ref = int(rows[0][2][0, START]) & 0xFFFFFFFF
    stamped = [(cta, warp, rec, _unwrap(rec[:, [START, END]], ref)) for cta, warp, rec in rows]
    first = min(int(t.min()) for *_, t in stamped)
    origin = (ref + first) & 0xFFFFFFFF
    events: list[TimelineEvent] = []
    for cta, warp, rec, stamps in stamped:
        task = _task_at(task_set, warp)
        if task is None:
            continue
        times = stamps - first
        for (uid1, offset, tile, first_offset, stride), (start, end) in zip(
                rec[:, [UID, OFFSET, TILE, FIRST, STEP]].tolist(), times.tolist()):
            step = steps.get((task.name, uid1 - 1))
            if step is None:
                continue
            iteration = loop_iteration(offset, first_offset, stride) if step.section is Section.LOOP else None
            events.append(TimelineEvent(task.name, cta, warp, step.uid, step.title, step.stage, step.family,
                                        step.section, iteration, tile, int(start), int(end)))
    return Timeline(scenario, tuple(events), task_warps(task_set), spec, device, config, kernel_ns, origin,
                    tuple(lost), undecoded)


def decode_progress(raw: np.ndarray, task_set: TaskSet) -> tuple[WarpProgress, ...]:
    """Each warp's last blocking step (entered or left) from the progress buffer, ``at_ns`` from the first write."""
    grid, warps, _ = raw.shape
    steps = {(t.name, s.uid): s for t in task_set.tasks for s in t.schedule.steps()}
    stamps = raw[:, :, 4:6].copy().view(np.int64)[..., 0]
    written = raw[:, :, 3] != 0
    origin = int(stamps[written].min()) if written.any() else 0
    out: list[WarpProgress] = []
    for cta in range(grid):
        for warp in range(warps):
            task = _task_at(task_set, warp)
            uid1, iteration, tile, state = (int(v) for v in raw[cta, warp, :4])
            if state not in (ENTERED_CODE, LEFT_CODE) or task is None:
                out.append(WarpProgress(cta, warp, task.name if task else None, ""))
                continue
            step = steps.get((task.name, uid1 - 1))
            section = step.section if step is not None else None
            out.append(WarpProgress(cta, warp, task.name, ENTERED if state == ENTERED_CODE else LEFT,
                                    step.uid if step else uid1 - 1, step.title if step else f"step #{uid1 - 1}",
                                    iteration if section is Section.LOOP else None, tile, section,
                                    int(stamps[cta, warp]) - origin))
    return tuple(out)


# -- the parent's side ------------------------------------------------------------------------
def trace_spec(trace: Any, forced: bool = False) -> TraceSpec | None:
    """What ``launch(trace=...)`` asks for; a launch forced past the verifier always watches its progress.

    >>> trace_spec(True).stages, trace_spec("work").stages, trace_spec(False), trace_spec(False, forced=True).stages
    ('all', 'work', None, 'none')
    >>> trace_spec(True).progress, trace_spec(True, forced=True).progress
    (False, True)
    """
    spec = _spec(trace)
    if forced:
        spec = TraceSpec(stages="none", ctas=0, progress=True) if spec is None else replace(spec, progress=True)
    return spec


def _spec(trace: Any) -> TraceSpec | None:
    if isinstance(trace, TraceSpec):
        return trace
    if trace is None or trace is False:
        return None
    if trace is True:
        return TraceSpec()
    if isinstance(trace, str):
        try:
            return TraceSpec(stages=trace)
        except ValueError:
            pass
    if isinstance(trace, dict):
        try:
            return TraceSpec(**trace)
        except (TypeError, ValueError) as exc:
            raise LaunchError("bad_trace", f"trace={trace!r}: {exc}; pass e.g. trace=True, trace='work' or "
                              "trace=TraceSpec(stages='all', ctas=2)") from None
    raise LaunchError("bad_trace", f"trace={trace!r} is not understood; pass trace=True (every step), trace='work' "
                      "(work steps only) or a TraceSpec")


def hang_report(scenario: Any, config: Any, plans: Any, warps: Any, timeout: float, gate: Any) -> Any:
    """The :class:`HangReport` of a hung launch: measured warps beside the verifier's predicted blocked steps.

    Each distinct instance the gate refused is predicted apart (CTAs with 9
    tiles block at another iteration than CTAs with 8), from the Verdict the
    gate proved for it: nothing is verified again here.
    """
    from ..analysis.timeline_hang import predicted_blocks, refused_instances
    from ..model.hang import HangReport

    verdicts = {id(p.instance): p.verdict for p in getattr(gate, "proven", ())}
    predicted: list[Any] = []
    for target in refused_instances(gate):
        verdict = verdicts.get(id(target))
        if verdict is not None:
            predicted += predicted_blocks(verdict, target.ctas, target.describe())
    plan = plans[0] if plans else None
    measured = tuple(w for w in (warps or ()) if isinstance(w, WarpProgress))
    return HangReport(scenario.name, timeout, measured, tuple(predicted), gate.summary() if gate is not None else "",
                      plan.ctas if plan else 0, plan.threads if plan else 0)


__all__ = ["HangError", "Layout", "TraceBuffers", "compare", "decode_events", "decode_progress", "hang_report",
           "loop_iteration", "predicted_order", "schedule_for", "task_warps", "trace_spec", "watch"]
