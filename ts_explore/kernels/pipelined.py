"""Warp-specialized pipelined copy: a load task fills SMEM stages, a store task drains them; any size.

The load task (``load_warps`` warps after the store warps) fetches one tile per
iteration into a free stage, either with the bulk-copy engine (``cp.async.bulk``,
completing on the stage's mbarrier; TmaAsync pipeline) or with ordinary vector
loads and shared stores (AsyncAsync pipeline). The store task waits for a full
stage and either reads its share into registers, releases the stage and writes
global memory (threads), or has one thread hand the whole stage to the
bulk-copy engine (``cp.async.bulk`` shared -> global) and release it once the
engine has finished *reading* it (``cp.async.bulk.wait_group.read``), at most
``bulk_stores`` stores in flight. Both tasks walk the same per-CTA domain over
``ceil(n / tile)`` tiles.

Any size: the first ``n - n % 4`` elements (whole 16-byte chunks, what a bulk
copy can move) go through the stages, so the last tile may be partial (its
loader copies fewer bytes and reports the rest to the stage's barrier with
``mbarrier.complete_tx``); the final ``n % 4`` elements (at most 3) are copied
directly by the store task's first thread during the last tile.
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
from .access import L2_EVICT_FIRST, CacheHint, load_vector, store_vector, units
from .common import BuiltHook, int32_vector_ssa, thread_vectors, tile_start
from .host import HostProblem, pattern, require_size, split_out, strided_instances

CHUNK = 4  # int32 per 16 bytes: the granule of a bulk copy


class Loader(str, Enum):
    """How the load task fills a stage."""

    TMA = "bulk copy engine (TMA)"
    THREADS = "threads (vector loads + shared stores)"


class Storer(str, Enum):
    """How the store task writes a full stage to global memory."""

    THREADS = "threads (shared loads + vector stores)"
    TMA = "bulk copy engine (TMA)"


def staged(n: Any) -> Any:
    """Elements that go through the stages: whole 16-byte chunks (``n`` rounded down to a multiple of 4)."""
    return n // CHUNK * CHUNK


def _hint(cache: CacheHint) -> Any:
    """The L2 policy a bulk copy carries for ``cache`` (None: the default)."""
    return cutlass.Int64(L2_EVICT_FIRST) if cache is CacheHint.EVICT_FIRST else None


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
    """A ring of ``stages`` SMEM tiles of ``tile`` int32, filled by TMA or by threads, drained by either."""

    source: Any = None  # 1-D global tensors; None on the CPU
    target: Any = None
    n: Any = 0  # elements of the whole copy
    tile: cutlass.Constexpr[int] = 4096
    stages: cutlass.Constexpr[int] = 2
    vector: cutlass.Constexpr[int] = 4
    use_tma: cutlass.Constexpr[bool] = True
    bulk_store: cutlass.Constexpr[bool] = False
    bulk_stores: cutlass.Constexpr[int] = 1  # bulk stores a store thread keeps in flight
    cache: cutlass.Constexpr = CacheHint.NORMAL
    load_threads: cutlass.Constexpr[int] = 32
    load_thread0: cutlass.Constexpr[int] = 128  # first thread of the load task
    store_threads: cutlass.Constexpr[int] = 128
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    sent: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        per_thread = 1 if self.bulk_store else self.tile // (self.vector * self.store_threads)
        self.item = TaskLocalVariable(dtype=cute.TensorSSA, default_factory=int32_vector_ssa(self.vector, per_thread),
                                      docs="this thread's share of the stage, in registers")
        self.sent = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0),
                                      docs="bytes of the stage handed to the bulk-copy engine")
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
        left = staged(self.n) - tile * self.tile  # staged elements from this tile on (no int32 overflow)
        if cutlass.const_expr(self.use_tma):
            if prims.elect_sync():
                if left >= self.tile:
                    prims.cp_async_bulk_shared_cluster_global(stage, first, stage_info.barrier, self.tile * 4,
                                                              l2_cache_hint=_hint(self.cache))
                else:
                    # The partial last tile: copy what there is and report the bytes that will
                    # never come, so the stage's barrier still completes its phase.
                    if left > 0:
                        prims.cp_async_bulk_shared_cluster_global(stage, first, stage_info.barrier, left * 4,
                                                                  l2_cache_hint=_hint(self.cache))
                        prims.mbarrier_complete_tx(stage_info.barrier, (self.tile - left) * 4)
                    else:
                        prims.mbarrier_complete_tx(stage_info.barrier, self.tile * 4)
        else:
            per_thread = self.tile // (self.vector * self.load_threads)
            tid = cute.arch.thread_idx()[0] - self.load_thread0
            frag = cute.make_rmem_tensor((self.vector, per_thread), cutlass.Int32)
            src = thread_vectors(first, self.load_threads, self.vector, per_thread)
            dst = thread_vectors(stage, self.load_threads, self.vector, per_thread)
            if left >= self.tile:
                for j in cutlass.range_constexpr(per_thread):
                    load_vector(self.cache, src[(None, tid, j)], frag[(None, j)])
                cute.autovec_copy(frag, dst[(None, tid, None)])
            else:
                for j in cutlass.range_constexpr(per_thread):
                    if (j * self.load_threads + tid) * self.vector < left:
                        load_vector(self.cache, src[(None, tid, j)], frag[(None, j)])
                        cute.autovec_copy(frag[(None, j)], dst[(None, tid, j)])

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

    @consumer_work(returns=sent)
    @cute.jit
    def send(self, stage_info: StageInfo) -> cutlass.Int32:
        """Store thread 0 hands the stage to the bulk-copy engine and waits until it has read it.

        With ``bulk_stores`` = 2 it waits only for the previous tile's store
        (the schedule releases that stage one iteration late), except in the
        last iteration, which drains both.
        """
        target, n, stage = self.target, self.n, self._stage(stage_info)  # bound outside the branches below
        nbytes = cutlass.Int32(0)
        if cute.arch.thread_idx()[0] == 0:
            tile = stage_info.loop_offset
            left = staged(n) - tile * self.tile
            nbytes = cutlass.Int32(self.tile * 4)
            if left < self.tile:
                nbytes = cutlass.Int32(left * 4)  # the partial last tile (it starts at a multiple of 4 <= n)
            if nbytes > 0:
                prims.cp_async_bulk_global_shared_cta(tile_start(target, self.tile, tile), stage, nbytes,
                                                      l2_cache_hint=_hint(self.cache))
            cute.arch.cp_async_bulk_commit_group()
            if cutlass.const_expr(self.bulk_stores == 1):
                cute.arch.cp_async_bulk_wait_group(0, read=True)
            else:
                if tile + stage_info.loop_step >= stage_info.loop_end:
                    cute.arch.cp_async_bulk_wait_group(0, read=True)
                else:
                    cute.arch.cp_async_bulk_wait_group(self.bulk_stores - 1, read=True)
        return nbytes


@cute.jit
def copy_leftovers(source: Any, target: Any, n: Any, tile: Any, tile_size: cutlass.Constexpr[int]) -> None:
    """Thread 0 copies the last ``n % 4`` elements (never staged) while its task handles the last tile."""
    if cute.arch.thread_idx()[0] == 0:
        if tile == (n - 1) // tile_size:
            first = staged(n)
            for k in cutlass.range_constexpr(CHUNK - 1):
                if first + k < n:
                    target[first + k] = source[first + k]


@dataclass(kw_only=True)
class TileSink(MemoryResource):
    """Global destination: the store task writes its share of tile ``loop_offset`` and the last few elements."""

    target: Any = None
    source: Any = None  # for the last n % 4 elements, copied directly
    n: Any = 0
    tile: cutlass.Constexpr[int] = 4096
    vector: cutlass.Constexpr[int] = 4
    store_threads: cutlass.Constexpr[int] = 128
    cache: cutlass.Constexpr = CacheHint.NORMAL

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, item: cute.TensorSSA) -> None:
        per_thread = self.tile // (self.vector * self.store_threads)
        tid = cute.arch.thread_idx()[0]
        frag = cute.make_rmem_tensor((self.vector, per_thread), cutlass.Int32)
        frag.store(item)
        source, target, n = self.source, self.target, self.n  # bound outside the branches below
        first = tile_start(target, self.tile, stage_info.loop_offset)
        view = thread_vectors(first, self.store_threads, self.vector, per_thread)
        left = staged(n) - stage_info.loop_offset * self.tile
        if left >= self.tile:
            if cutlass.const_expr(self.cache in (CacheHint.NORMAL, CacheHint.READ_ONLY)):
                cute.autovec_copy(frag, view[(None, tid, None)])
            else:
                for j in cutlass.range_constexpr(per_thread):
                    store_vector(self.cache, frag[(None, j)], view[(None, tid, j)])
        else:
            for j in cutlass.range_constexpr(per_thread):
                if (j * self.store_threads + tid) * self.vector < left:
                    store_vector(self.cache, frag[(None, j)], view[(None, tid, j)])
            copy_leftovers(source, target, n, stage_info.loop_offset, self.tile)

    @producer_work
    @cute.jit
    def finish(self, stage_info: StageInfo, sent: cutlass.Int32) -> None:
        """After a bulk store: the last few elements, which no bulk copy can move."""
        source, target, n = self.source, self.target, self.n
        if sent < self.tile * 4:
            copy_leftovers(source, target, n, stage_info.loop_offset, self.tile)


def smem_bytes(cfg: Any) -> int:
    """Shared memory one CTA uses: the stage ring plus its barriers."""
    return cfg.stages * cfg.tile * 4 + 64 * cfg.stages


def ctas(cfg: Any, tiles: int, limits: DeviceLimits, registers: int | None = None) -> int:
    """CTAs launched: at most one per tile; the config's ``ctas`` or as many as fit at once (0 = fill)."""
    threads = (cfg.store_warps + cfg.load_warps) * 32
    fit = limits.sms * limits.ctas_per_sm(threads, smem_bytes(cfg), registers)
    return max(1, min(tiles, cfg.ctas or fit))


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """CTA ``b`` copies tiles ``b, b + grid, ...``: two trip counts at most, plus the owner of a partial tile."""
    n = require_size(size)
    tiles = units(n, cfg.tile)
    grid = ctas(cfg, tiles, limits, registers)

    def view(b: int) -> dict[str, Any]:
        return {"block": b, "grid": grid, "extra": {"n": n, "n_tiles": tiles}}

    instances = strided_instances(tiles, grid, "tile", view=view)
    if n % cfg.tile:
        tail = n % cfg.tile
        how = (f"{staged(tail)} staged + {tail % CHUNK} copied directly" if tail % CHUNK and staged(tail)
               else "copied directly" if tail % CHUNK else "staged")
        instances = split_out(instances, (tiles - 1) % grid, view,
                              f", the last a {tail}-element tail ({how})")
    return LaunchPlan(kernel=__name__, size=n, grid=(grid, 1, 1), threads=(cfg.store_warps + cfg.load_warps) * 32,
                      smem_bytes=smem_bytes(cfg), device=limits, instances=instances, registers=registers)


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Copy ``size`` int32 tile by tile: the output must equal the input exactly."""
    n = plan.size
    src = pattern(n)
    return HostProblem({"src": src}, {"dst": n}, {"dst": src}, ("src", "dst", n, plan.ctas), 8 * n, n, plan.ctas,
                       shapes={"dst": (units(n, cfg.tile), cfg.tile)})


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile ``scenario``'s pipelined copy for ``cfg``; call it as ``fn(src_ptr, dst_ptr, n, grid, stream)``."""
    from .linear import compile_linear_copy

    return compile_linear_copy(scenario, cfg, count_name="n_tiles", unit=cfg.tile,
                               threads=(cfg.store_warps + cfg.load_warps) * 32, on_built=on_built, arch=arch, trace=trace)


__all__ = ["CHUNK", "Loader", "SmemStages", "Storer", "TileIndex", "TileSink", "compile", "ctas", "host_problem",
           "plan", "smem_bytes", "staged"]
