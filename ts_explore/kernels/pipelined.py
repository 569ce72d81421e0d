"""Warp-specialized pipelined copy: a load task fills SMEM stages, a store task drains them.

The load task (``load_warps`` warps after the store warps) fetches one tile per
iteration into a free stage, either with the bulk-copy engine (``cp.async.bulk``,
completing on the stage's mbarrier; TmaAsync pipeline) or with ordinary vector
loads and shared stores (AsyncAsync pipeline). The store task waits for a full
stage, reads its share into registers, releases the stage and writes global
memory. Both tasks walk the same per-CTA domain over tiles.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.experimental import primitives as prims
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)

from ..model.plan import DeviceLimits, LaunchPlan
from .common import BuiltHook, int32_vector_ssa, thread_vectors, tile_start
from .host import HostProblem, pattern, require_size, strided_instances


class Loader(str, Enum):
    """How the load task fills a stage."""

    TMA = "bulk copy engine (TMA)"
    THREADS = "threads (vector loads + shared stores)"


@dataclass(kw_only=True)
class TileIndex(MemoryResource):
    """Names the tile the load task fetches this iteration (the loop offset)."""

    tile: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.tile = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0),
                                      docs="index of the tile to fetch")

    @consumer_work(returns=tile)
    @cute.jit
    def locate(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class SmemStages(MemoryResource):
    """A ring of ``stages`` SMEM tiles of ``tile`` int32, filled by TMA or by threads."""

    source: Any = None  # 1-D global tensor; None on the CPU
    tile: cutlass.Constexpr[int] = 4096
    stages: cutlass.Constexpr[int] = 2
    vector: cutlass.Constexpr[int] = 4
    use_tma: cutlass.Constexpr[bool] = True
    load_threads: cutlass.Constexpr[int] = 32
    load_thread0: cutlass.Constexpr[int] = 128  # first thread of the load task
    store_threads: cutlass.Constexpr[int] = 128
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        per_thread = self.tile // (self.vector * self.store_threads)
        self.item = TaskLocalVariable(dtype=cute.TensorSSA, default_factory=int32_vector_ssa(self.vector, per_thread),
                                      docs="this thread's share of the stage, in registers")
        self._alloc = SmemAllocation("stages", dtype=cutlass.Int32, count=self.stages * self.tile, alignment=128)

    def get_smem_requirements(self) -> list[SmemAllocation]:
        return [self._alloc]

    @cute.jit
    def _stage(self, stage_info: StageInfo) -> Any:
        base = cute.make_ptr(cutlass.Int32, stage_info.context.smem_base.data_ptr() + self._alloc.offset,
                             mem_space=cute.AddressSpace.smem, assumed_align=128)
        return base + stage_info.stage_idx * self.tile

    @producer_work
    @cute.jit
    def load_tile(self, stage_info: StageInfo, tile: cutlass.Int32) -> None:
        stage = self._stage(stage_info)
        first = tile_start(self.source, self.tile, tile)
        if cutlass.const_expr(self.use_tma):
            if prims.elect_sync():
                prims.cp_async_bulk_shared_cluster_global(stage, first, stage_info.barrier, self.tile * 4)
        else:
            per_thread = self.tile // (self.vector * self.load_threads)
            tid = cute.arch.thread_idx()[0] - self.load_thread0
            frag = cute.make_rmem_tensor((self.vector, per_thread), cutlass.Int32)
            cute.autovec_copy(thread_vectors(first, self.load_threads, self.vector, per_thread)[(None, tid, None)],
                              frag)
            cute.autovec_copy(frag, thread_vectors(stage, self.load_threads, self.vector, per_thread)[(None, tid, None)])

    @consumer_work(returns=item)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cute.TensorSSA:
        per_thread = self.tile // (self.vector * self.store_threads)
        tid = cute.arch.thread_idx()[0]
        frag = cute.make_rmem_tensor((self.vector, per_thread), cutlass.Int32)
        view = thread_vectors(self._stage(stage_info), self.store_threads, self.vector, per_thread)
        cute.autovec_copy(view[(None, tid, None)], frag)
        if cutlass.const_expr(self.use_tma):
            # The next write to this stage comes from the bulk-copy engine (the async proxy):
            # order these shared-memory reads before the release lets it in. Without the
            # fence a refill can land while a few lanes are still reading (seen on an H200:
            # tens of elements per 512 MiB came from the tile `stages` iterations later).
            cute.arch.fence_view_async_shared()
        return frag.load()


@dataclass(kw_only=True)
class TileSink(MemoryResource):
    """Global destination: the store task writes its share of tile ``loop_offset``."""

    target: Any = None
    tile: cutlass.Constexpr[int] = 4096
    vector: cutlass.Constexpr[int] = 4
    store_threads: cutlass.Constexpr[int] = 128

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, item: cute.TensorSSA) -> None:
        per_thread = self.tile // (self.vector * self.store_threads)
        tid = cute.arch.thread_idx()[0]
        frag = cute.make_rmem_tensor((self.vector, per_thread), cutlass.Int32)
        frag.store(item)
        first = tile_start(self.target, self.tile, stage_info.loop_offset)
        cute.autovec_copy(frag, thread_vectors(first, self.store_threads, self.vector, per_thread)[(None, tid, None)])


def smem_bytes(cfg: Any) -> int:
    """Shared memory one CTA uses: the stage ring plus its barriers."""
    return cfg.stages * cfg.tile * 4 + 64 * cfg.stages


def ctas(cfg: Any, tiles: int, limits: DeviceLimits, registers: int | None = None) -> int:
    """CTAs launched: at most one per tile; the config's ``ctas`` or as many as fit at once (0 = fill)."""
    threads = (cfg.store_warps + cfg.load_warps) * 32
    fit = limits.sms * limits.ctas_per_sm(threads, smem_bytes(cfg), registers)
    return max(1, min(tiles, cfg.ctas or fit))


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """CTA ``b`` copies tiles ``b, b + grid, ...``: two trip counts at most."""
    n = require_size(size, cfg.tile, "tile")
    tiles = n // cfg.tile
    grid = ctas(cfg, tiles, limits, registers)
    instances = strided_instances(tiles, grid, "tile",
                                  view=lambda b: {"block": b, "grid": grid, "extra": {"n_tiles": tiles}})
    return LaunchPlan(kernel=__name__, size=n, grid=(grid, 1, 1), threads=(cfg.store_warps + cfg.load_warps) * 32,
                      smem_bytes=smem_bytes(cfg), device=limits, instances=instances, registers=registers)


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Copy ``size`` int32 tile by tile: the output must equal the input exactly."""
    n = plan.size
    src = pattern(n)
    return HostProblem({"src": src}, {"dst": n}, {"dst": src}, ("src", "dst", n, plan.ctas), 8 * n, n, plan.ctas,
                       shapes={"dst": (n // cfg.tile, cfg.tile)})


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile ``scenario``'s pipelined copy for ``cfg``; call it as ``fn(src_ptr, dst_ptr, n, grid, stream)``."""
    from .linear import compile_linear_copy

    return compile_linear_copy(scenario, cfg, count_name="n_tiles", unit=cfg.tile,
                               threads=(cfg.store_warps + cfg.load_warps) * 32, on_built=on_built, arch=arch, trace=trace)


__all__ = ["Loader", "SmemStages", "TileIndex", "TileSink", "compile", "ctas", "host_problem", "plan", "smem_bytes"]
