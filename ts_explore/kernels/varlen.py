"""Variable-length copy: packed segments into a padded 2-D output, one segment per work tile.

With the dynamic domain on, the loop end is ``VarlenTask.get_domain`` (TS 4.8.1
requires that exact name), evaluated per tile from the offsets table; with it
off, every tile loops to the longest length and the work bodies guard each
access instead.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

import itertools
from dataclasses import dataclass
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
import numpy as np
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)
from cutlass.experimental.task_scheduling.task import Task

from ..model import QueueKind
from ..model.plan import DeviceLimits, Instance, LaunchPlan
from .common import BuiltHook, run_built
from .trace import address, recorder_for
from .host import FILL, HostProblem, pattern, require_size, work_text


class VarlenTask(Task):
    """A task whose domain end is the current tile's segment length."""

    def __init__(self, *, offsets: Any = None, lengths: tuple[int, ...] = (), view_tile: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._offsets = offsets  # int32 tensor of N + 1 offsets in a kernel; None on the CPU
        self._lengths = tuple(lengths)
        self._view_tile = view_tile

    def get_domain(self, tile_coord: Any) -> Any:
        """Segment length of tile ``tile_coord[0]``.

        On the CPU the verifier asks for tile (0, 0, 0); the answer is the
        length of the tile the config views, so the picture and the check
        show that tile's loop.
        """
        if self.domain_getter is None:  # the loop end is a plain bound (dynamic=False): keep it, as drawn
            return self.domain
        if self._offsets is None:
            return self._lengths[self._view_tile]
        tile = tile_coord[0]
        return self._offsets[tile + 1] - self._offsets[tile]


@dataclass(kw_only=True)
class PackedSource(MemoryResource):
    """Packed 1-D input: element ``loop_offset`` of segment ``tile``."""

    packed: Any = None
    offsets: Any = None
    guarded: cutlass.Constexpr[bool] = False  # without a dynamic domain, skip offsets past the segment
    val: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.val = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs="one packed element")

    @consumer_work(returns=val)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cutlass.Int32:
        tile = stage_info.work_tile.tile_idx[0]
        first = self.offsets[tile]
        val = cutlass.Int32(0)
        if cutlass.const_expr(self.guarded):
            if stage_info.loop_offset < self.offsets[tile + 1] - first:
                val = self.packed[first + stage_info.loop_offset]
        else:
            val = self.packed[first + stage_info.loop_offset]
        return val


@dataclass(kw_only=True)
class PaddedSink(MemoryResource):
    """Padded output, row ``tile`` of width ``row_width``."""

    padded: Any = None
    offsets: Any = None
    row_width: Any = 0
    guarded: cutlass.Constexpr[bool] = False

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, val: cutlass.Int32) -> None:
        tile = stage_info.work_tile.tile_idx[0]
        where = tile * self.row_width + stage_info.loop_offset
        if cutlass.const_expr(self.guarded):
            if stage_info.loop_offset < self.offsets[tile + 1] - self.offsets[tile]:
                self.padded[where] = val
        else:
            self.padded[where] = val


def segment_lengths(cfg: Any, size: int) -> np.ndarray:
    """The launch's segments: the config's lengths repeated until they hold about ``size`` elements."""
    mean = max(1.0, sum(cfg.lengths) / len(cfg.lengths))
    segments = max(1, round(size / mean))
    return np.fromiter(itertools.islice(itertools.cycle(cfg.lengths), segments), dtype=np.int64)


def tile_view(cfg: Any, tile: int) -> dict[str, Any]:
    """The CPU view (``extra``) that records work tile ``tile``: segment lengths repeat every ``len(lengths)``."""
    return {"view_tile": tile % max(1, len(cfg.lengths))}


def ctas(cfg: Any, segments: int, limits: DeviceLimits, registers: int | None = None) -> int:
    """A static queue fills the GPU (at most one CTA per segment); without one, one CTA per segment."""
    if cfg.queue is QueueKind.STATIC:
        return max(1, min(segments, cfg.ctas or limits.sms * limits.ctas_per_sm(cfg.warps * 32, 0, registers)))
    return segments


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """Each segment's loop runs ``range(thread, length, threads)``: instances by distinct trip count."""
    size = require_size(size)
    lengths = segment_lengths(cfg, size)
    grid = ctas(cfg, len(lengths), limits, registers)
    threads = cfg.warps * 32
    first_of = {int(n): i for i, n in reversed(list(enumerate(lengths[: len(cfg.lengths)])))}
    by_trips: dict[int, list[str]] = {}
    views: dict[int, dict[str, Any]] = {}
    for length, tile in sorted(first_of.items()):
        q, r = divmod(length, threads)
        for lo, hi, trips in ((0, r, q + 1), (r, threads, q)):
            if lo < hi:
                by_trips.setdefault(trips, []).append(f"length {length}: threads {lo}-{hi - 1}")
                views.setdefault(trips, {"thread": lo, "grid": grid, "extra": {"view_tile": tile}})
    instances = tuple(Instance(ctas=(range(grid),), view=views[t], work=work_text(t, "iteration"), iterations=t,
                               where="segments of " + "; ".join(by_trips[t]))
                      for t in sorted(by_trips, reverse=True))
    return LaunchPlan(kernel=__name__, size=int(lengths.sum()), grid=(1, 1, grid) if cfg.queue is QueueKind.STATIC
                      else (grid, 1, 1), threads=threads, smem_bytes=0, device=limits, instances=instances,
                      registers=registers, work_units="packed elements",
                      assumptions=(f"{len(lengths)} segments: the lengths {list(cfg.lengths)} repeated",))


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Packed segments into padded rows; padding keeps the fill value."""
    lengths = segment_lengths(cfg, plan.size)
    segments = len(lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    width = cfg.max_len
    packed = pattern(int(offsets[-1]) + 1)
    padded = np.full((segments, width), FILL, dtype=np.int32)
    for row, (start, length) in enumerate(zip(offsets[:-1], lengths)):
        padded[row, :length] = packed[start:start + length]
    return HostProblem({"packed": packed, "offsets": offsets}, {"padded": segments * width},
                       {"padded": padded.reshape(-1)}, ("packed", "padded", "offsets", segments, width, plan.ctas),
                       8 * int(offsets[-1]), int(offsets[-1]), plan.ctas, shapes={"padded": (segments, width)})


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile the varlen copy; call it as ``fn(packed, padded, offsets, segments, row_width, grid, stream)``."""
    from .build import compile_with_pointers
    from .contract import BuildContext

    threads = cfg.warps * 32

    @cute.kernel
    def kernel(packed: cute.Tensor, padded: cute.Tensor, offsets: cute.Tensor, row_width: cutlass.Int32,
               sched: Any, events: cutlass.Int64, progress: cutlass.Int64) -> None:
        bx, _, bz = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        gx, _, gz = cute.arch.grid_dim()
        ctx = BuildContext(on_gpu=True, block=bx + bz, thread=tx, grid=gx * gz,
                           tensors={"packed": packed, "padded": padded, "offsets": offsets},
                           extra={"row_width": row_width, "scheduler_params": sched})
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress))

    @cute.jit
    def host(packed_ptr: cute.Pointer, padded_ptr: cute.Pointer, offsets_ptr: cute.Pointer,
             segments: cutlass.Int32, row_width: cutlass.Int32, grid: cutlass.Int32, stream: cuda.CUstream,
             events: Any = None, progress: Any = None) -> None:
        packed = cute.make_tensor(packed_ptr, cute.make_layout(segments * row_width))
        padded = cute.make_tensor(padded_ptr, cute.make_layout(segments * row_width))
        offsets = cute.make_tensor(offsets_ptr, cute.make_layout(segments + 1))
        sched = utils.PersistentTileSchedulerParams((segments, 1, 1), (1, 1, 1))
        # The static scheduler numbers persistent CTAs along z; without a queue the CTA index along x is the tile.
        launch_grid = (1, 1, grid) if cutlass.const_expr(cfg.queue is QueueKind.STATIC) else (segments, 1, 1)
        kernel(packed, padded, offsets, row_width, sched, address(events), address(progress)).launch(
            grid=launch_grid, block=(threads, 1, 1), stream=stream)

    return compile_with_pointers(host, pointers=3, ints=3, arch=arch, traced=trace is not None)


__all__ = ["PackedSource", "PaddedSink", "VarlenTask", "compile", "ctas", "host_problem", "plan", "segment_lengths",
           "tile_view"]
