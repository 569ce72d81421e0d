"""Persistent copy over tiles: no queue (one CTA per tile), static persistent, or CLC dynamic.

A tile is ``tile`` int32 elements, walked in rows of ``threads x vector x
per_thread`` elements by a domain loop. The work queue (when there is one)
hands each CTA its next tile; ``skip_work_tile_if`` drops over-launched tiles
and the ones the configured skip rule names, and their output stays untouched.
Any size: the last tile may be partial; its rows past the end copy nothing
(the bounds checks live in the work bodies, so every CTA runs one schedule).
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    WorkQueue,
    consumer_work,
    producer_work,
)

from ..model import QueueKind
from ..model.plan import DeviceLimits, Instance, LaunchPlan, TileOwners
from .access import CacheHint, load_vector, store_vector, units
from .common import BuiltHook, int32_vector_ssa, run_built, thread_vectors
from .host import FILL, HostProblem, pattern, require_size, split_out, strided_instances
from .skip import SkipRule, skip_tile
from .trace import address, recorder_for


@dataclass(kw_only=True)
class TileRows(MemoryResource):
    """Global memory seen as tiles of rows; each thread owns ``per_thread`` vectors of a row.

    The last tile may be partial (``n`` is any size): rows past the end do
    nothing, the row that crosses it copies its whole vectors and then the
    partial vector element by element.
    """

    data: Any = None  # 1-D global tensor of n int32; None on the CPU
    n: Any = 0
    tile: cutlass.Constexpr[int] = 8192
    threads: cutlass.Constexpr[int] = 128
    vector: cutlass.Constexpr[int] = 4
    per_thread: cutlass.Constexpr[int] = 1
    cache: cutlass.Constexpr = CacheHint.NORMAL
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.item = TaskLocalVariable(dtype=cute.TensorSSA,
                                      default_factory=int32_vector_ssa(self.vector, self.per_thread),
                                      docs="this thread's vectors of the current row")

    @consumer_work(returns=item)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cute.TensorSSA:
        data, n = self.data, self.n  # bound outside the branches below
        row_elems = self.threads * self.vector * self.per_thread
        tile_x = stage_info.work_tile.tile_idx[0]
        row = tile_x * (self.tile // row_elems) + stage_info.loop_offset
        left = (n - tile_x * self.tile) - stage_info.loop_offset * row_elems  # elements from this row on
        tid = cute.arch.thread_idx()[0] % self.threads
        start = cute.zipped_divide(data, (row_elems,))[(None, row)].iterator
        mine = thread_vectors(start, self.threads, self.vector, self.per_thread)[(None, tid, None)]
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        if left >= row_elems:
            for j in cutlass.range_constexpr(self.per_thread):
                load_vector(self.cache, mine[(None, j)], frag[(None, j)])
        else:
            for j in cutlass.range_constexpr(self.per_thread):
                at = (j * self.threads + tid) * self.vector  # this vector's first element, from the row start
                if at + self.vector <= left:
                    load_vector(self.cache, mine[(None, j)], frag[(None, j)])
                else:
                    if cutlass.const_expr(self.vector > 1):
                        for k in cutlass.range_constexpr(self.vector):
                            if at + k < left:
                                frag[k, j] = data[n - left + at + k]
        return frag.load()

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, item: cute.TensorSSA) -> None:
        data, n = self.data, self.n
        row_elems = self.threads * self.vector * self.per_thread
        tile_x = stage_info.work_tile.tile_idx[0]
        row = tile_x * (self.tile // row_elems) + stage_info.loop_offset
        left = (n - tile_x * self.tile) - stage_info.loop_offset * row_elems
        tid = cute.arch.thread_idx()[0] % self.threads
        start = cute.zipped_divide(data, (row_elems,))[(None, row)].iterator
        mine = thread_vectors(start, self.threads, self.vector, self.per_thread)[(None, tid, None)]
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        frag.store(item)
        if left >= row_elems:
            for j in cutlass.range_constexpr(self.per_thread):
                store_vector(self.cache, frag[(None, j)], mine[(None, j)])
        else:
            for j in cutlass.range_constexpr(self.per_thread):
                at = (j * self.threads + tid) * self.vector
                if at + self.vector <= left:
                    store_vector(self.cache, frag[(None, j)], mine[(None, j)])
                else:
                    if cutlass.const_expr(self.vector > 1):
                        for k in cutlass.range_constexpr(self.vector):
                            if at + k < left:
                                data[n - left + at + k] = frag[k, j]


@dataclass(kw_only=True)
class SkippingQueue(WorkQueue):
    """A work queue whose ``skip_work_tile_if`` applies the scenario's skip rule."""

    rule: cutlass.Constexpr = field(init=False, default=SkipRule.NONE)
    every_k: cutlass.Constexpr[int] = field(init=False, default=2)
    mask: cutlass.Constexpr = field(init=False, default=())
    skip_fn: cutlass.Constexpr = field(init=False, default=None)
    logical_tiles: Any = field(init=False, default=None)  # tiles at or past this index were over-launched

    def __init__(self, *, rule: SkipRule = SkipRule.NONE, every_k: int = 2, mask: tuple = (),
                 skip_fn: Any = None, logical_tiles: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule, self.every_k, self.mask, self.skip_fn = rule, every_k, tuple(mask), skip_fn
        self.logical_tiles = logical_tiles

    def skip_work_tile_if(self, work_tile: Any) -> Any:
        """True for over-launched tiles and for those the skip rule names."""
        return skip_tile(self.rule, work_tile.tile_idx[0], k=self.every_k, mask=self.mask, fn=self.skip_fn,
                         logical_tiles=self.logical_tiles)


def features(cfg: Any) -> frozenset[str]:
    """Hardware features this config's kernel uses (:data:`ts_explore.gpu.safety.FEATURES` says which GPUs have them)."""
    return frozenset({"clc"}) if cfg.queue is QueueKind.CLC else frozenset()


def ctas(cfg: Any, total_tiles: int, limits: DeviceLimits, registers: int | None = None) -> int:
    """CTAs launched: one per tile without a queue or with CLC; static persistence fills the GPU at most."""
    if cfg.queue is QueueKind.STATIC:
        fit = limits.sms * limits.ctas_per_sm(cfg.threads_per_cta, 0, registers)
        return max(1, min(total_tiles, cfg.ctas or fit))
    return total_tiles


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """Tiles of ``tile`` elements, the last possibly partial; a static queue hands CTA ``b`` tiles ``b, b+grid, ...``.

    The CTA that copies the partial tile (with a static queue or none) is an
    instance of its own: the same schedule, named.
    """
    n = require_size(size)
    logical = units(n, cfg.tile)
    total = logical + (cfg.overlaunch if cfg.queue is not QueueKind.NONE else 0)
    grid = ctas(cfg, total, limits, registers)
    extra = {"n": n, "logical_tiles": logical}
    rows = f"{cfg.rows} row(s) each"
    tail = n % cfg.tile
    last = logical - 1
    tail_note = (f"; tile {last} holds {tail} of {cfg.tile} elements (the tail"
                 + (", skipped)" if cfg.skipped(last, logical) else ")"))
    assumptions: tuple[str, ...] = ()

    def view(b: int) -> dict[str, Any]:
        return {"block": b, "grid": grid, "extra": extra}

    if cfg.queue is QueueKind.STATIC:
        instances = strided_instances(total, grid, "tile", view=view)
        instances = tuple(dataclasses.replace(i, work=f"{i.work}, {rows}") for i in instances)
        if tail:
            instances = split_out(instances, last % grid, view, tail_note)
    elif cfg.queue is QueueKind.CLC:
        instances = (Instance(ctas=(range(grid),), view=view(0), work=f"tiles handed out at run time, {rows}",
                              iterations=cfg.rows),)
        assumptions = ("CLC assigns tiles at run time: every CTA runs the same schedule over whichever tiles it gets",)
        if tail:
            assumptions += (f"tile {last} holds {tail} of {cfg.tile} elements (the tail): whichever CTA gets it "
                            "copies only those (the same schedule, its accesses bounds-checked)",)
    else:
        instances = (Instance(ctas=(range(grid),), view=view(0), work=f"1 tile, {rows}", iterations=cfg.rows),)
        if tail:
            instances = split_out(instances, last, view, tail_note)
    return LaunchPlan(kernel=__name__, size=n, grid=(1, 1, grid) if cfg.queue is QueueKind.STATIC else (grid, 1, 1),
                      threads=cfg.threads_per_cta, smem_bytes=16 * cfg.scheduler_stages
                      if cfg.queue is QueueKind.CLC else 0, device=limits, instances=instances,
                      registers=registers, assumptions=assumptions,
                      tile_owners=TileOwners(total, 0 if cfg.queue is QueueKind.CLC else grid))


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Copy every tile the rule keeps (the last may be partial); skipped tiles must keep the fill value."""
    n = plan.size
    logical = units(n, cfg.tile)
    total = logical + (cfg.overlaunch if cfg.queue is not QueueKind.NONE else 0)
    src = pattern(n)
    expected = src.copy()
    copied = n
    for t in range(logical):
        if cfg.skipped(t, logical):
            part = expected[t * cfg.tile:(t + 1) * cfg.tile]
            part[:] = FILL
            copied -= len(part)
    return HostProblem({"src": src}, {"dst": n}, {"dst": expected},
                       ("src", "dst", n, logical, total, plan.ctas), 8 * copied, n, plan.ctas,
                       shapes={"dst": (logical, cfg.tile)})


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile the persistent copy; call it as ``fn(src_ptr, dst_ptr, n, logical_tiles, total_tiles, grid, stream)``."""
    from .build import compile_with_pointers
    from .contract import BuildContext

    threads = cfg.threads_per_cta

    @cute.kernel
    def kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32, logical_tiles: cutlass.Int32, sched: Any,
               events: cutlass.Int64, progress: cutlass.Int64) -> None:
        bx, _, bz = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        gx, _, gz = cute.arch.grid_dim()
        extra = {"n": n, "logical_tiles": logical_tiles, "scheduler_params": sched}
        if cutlass.const_expr(cfg.queue is QueueKind.CLC):
            extra["clc_response"] = cute.arch.alloc_smem(cutlass.Int128, cfg.scheduler_stages)
        ctx = BuildContext(on_gpu=True, block=bx + bz, thread=tx, grid=gx * gz, tensors={"src": src, "dst": dst},
                           extra=extra)
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress))

    @cute.jit
    def host(src_ptr: cute.Pointer, dst_ptr: cute.Pointer, n: cutlass.Int32, logical_tiles: cutlass.Int32,
             total_tiles: cutlass.Int32, grid: cutlass.Int32, stream: cuda.CUstream, events: Any = None,
             progress: Any = None) -> None:
        src = cute.make_tensor(src_ptr, cute.make_layout(n))
        dst = cute.make_tensor(dst_ptr, cute.make_layout(n))
        if cutlass.const_expr(cfg.queue is QueueKind.CLC):
            sched = utils.ClcDynamicPersistentTileSchedulerParams((total_tiles, 1, 1), (1, 1, 1), 1, True)
            launch_grid = utils.ClcDynamicPersistentTileScheduler.get_grid_shape(sched)
        else:
            sched = utils.PersistentTileSchedulerParams((total_tiles, 1, 1), (1, 1, 1))
            # The static scheduler numbers persistent CTAs along z (one per cluster); without a
            # queue the CTA index along x is the tile.
            launch_grid = (1, 1, grid) if cutlass.const_expr(cfg.queue is QueueKind.STATIC) else (grid, 1, 1)
        kernel(src, dst, n, logical_tiles, sched, address(events), address(progress)).launch(
            grid=launch_grid, block=(threads, 1, 1), stream=stream)

    return compile_with_pointers(host, pointers=2, ints=4, arch=arch, traced=trace is not None)


__all__ = ["SkippingQueue", "TileRows", "compile", "ctas", "features", "host_problem", "plan"]
