"""Warp-specialized pipelined copy: a load task and a store task share a ring of SMEM stages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import PipelineConfig
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..kernels import pipelined as kernel
from ..kernels.access import CacheHint, units
from ..kernels.pipelined import Loader, SmemStages, Storer, TileIndex, TileSink
from ..model.plan import DeviceLimits
from .base import BuildContext, Built, Scenario, knob, register
from .common import SMEM_PER_CTA_BYTES, compact, is_power_of_two, require, runtime, tensor, viewpoint


class PipelineFault(str, Enum):
    """Mistakes to launch on purpose when learning to debug: two deadlocks and two races."""

    NONE = "none"
    CONSUMER_EXTRA = "store runs one extra iteration (deadlock)"
    NO_RELEASE = "store never releases a stage (deadlock)"
    COMMIT_BEFORE_LOAD = "load commits before filling the stage (race)"
    RELEASE_BEFORE_READ = "store releases before reading the stage (race)"


@dataclass(frozen=True)
class PipelinedCopy:
    """Knobs of the producer/consumer copy through shared memory."""

    elements: int = knob(1 << 16, options=tuple(1 << i for i in range(8, 25)), label="elements (CPU view)",
                         help="int32 elements in the picture; a multiple of the tile")
    tile: int = knob(4096, options=tuple(1 << i for i in range(8, 15)), label="tile (int32 elements)",
                     help="elements per stage; each CTA walks tiles block, block+grid, ...")
    stages: int = knob(4, min=1, max=8, label="SMEM stages")
    loader: Loader = knob(Loader.TMA, label="loader", help="who fills a stage: the bulk-copy engine or the load warps")
    load_warps: int = knob(1, options=(1, 2, 4), label="warps of the load task")
    store_warps: int = knob(4, options=(1, 2, 4, 8, 16), label="warps of the store task")
    vector: int = knob(4, options=(1, 2, 4), label="vector width (int32 per access)")
    ctas: int = knob(4, min=0, max=8192, label="CTAs", help="0 fills the GPU")
    block: int = knob(0, min=0, max=8191, label="view as CTA")
    storer: Storer = knob(Storer.THREADS, label="store path",
                          help="threads read the stage and store vectors, or one thread hands the stage to the "
                               "bulk-copy engine (needs the TMA loader and one store warp)")
    bulk_stores: int = knob(1, min=1, max=2, options=(1, 2), label="bulk stores in flight",
                            help="2: a stage is released one tile late, once the engine has read it")
    cache: CacheHint = knob(CacheHint.NORMAL, label="cache hints",
                            help="bulk copies carry the L2 evict-first policy for 'L2 evict-first'")
    fault: PipelineFault = knob(PipelineFault.NONE, label="fault (for debugging)",
                                help="a deliberate mistake: the verifier reports it; launch anyway to see it run")

    @property
    def threads(self) -> int:
        return (self.store_warps + self.load_warps) * 32

    def grid(self) -> int:
        """CTAs in the CPU view: the kernel's own rule (one per tile at most) on an assumed H200."""
        return kernel.ctas(self, max(1, self.elements // self.tile), DeviceLimits.h200())

    @property
    def smem_bytes(self) -> int:
        return kernel.smem_bytes(self)


def check(cfg: PipelinedCopy) -> None:
    """Reject impossible stage/tile/warp combinations, naming the control and the fix."""
    require(cfg.vector in (1, 2, 4), f"vector width {cfg.vector} is not a 32/64/128-bit access",
            "pick vector width 1, 2 or 4", "vector")
    require(is_power_of_two(cfg.tile), f"tile {cfg.tile} is not a power of two", "pick 256, 512, ... 16384", "tile")
    store_share = cfg.vector * cfg.store_warps * 32
    require(cfg.tile % store_share == 0,
            f"a tile of {cfg.tile} elements does not split evenly over {cfg.store_warps} store warps x 32 threads "
            f"x vector width {cfg.vector}", "pick a larger tile, or fewer warps of the store task or a smaller "
            "vector width", "tile")
    require(cfg.storer is Storer.TMA or cfg.tile // store_share <= 64,
            f"each store thread would hold {cfg.tile // store_share} vectors in registers (64 at most)",
            "pick more warps of the store task, a larger vector width or a smaller tile", "tile")
    require(cfg.smem_bytes <= SMEM_PER_CTA_BYTES,
            f"{cfg.stages} SMEM stages x {cfg.tile * 4} B = {cfg.smem_bytes} B exceed the {SMEM_PER_CTA_BYTES} B of "
            "shared memory a CTA may use", "pick fewer SMEM stages or a smaller tile", "stages")
    if cfg.loader is Loader.TMA:
        require(cfg.load_warps == 1, f"the bulk-copy loader issues from one thread; {cfg.load_warps} warps of the "
                "load task would leave warps idle", "pick 1 warp of the load task, or loader threads", "load_warps")
    else:
        load_share = cfg.vector * cfg.load_warps * 32
        require(cfg.tile % load_share == 0,
                f"a tile of {cfg.tile} elements does not split evenly over {cfg.load_warps} load warps x 32 threads "
                f"x vector width {cfg.vector}", "pick a larger tile or fewer warps of the load task", "load_warps")
    require(cfg.threads <= 1024, f"{cfg.store_warps + cfg.load_warps} warps make {cfg.threads} threads, more than "
            "the 1024 a CTA may have", "pick fewer warps of the store task", "store_warps")
    grid = cfg.grid()
    require(cfg.block < grid, f"view as CTA {cfg.block}: only {grid} CTA{'' if grid == 1 else 's'} are launched",
            f"pick view as CTA below {grid}, or raise CTAs or elements", "block")
    check_store_path(cfg)


def check_store_path(cfg: PipelinedCopy) -> None:
    """The bulk store path: TMA loads and one store warp (with 2 stores in flight and 1 stage the verifier
    shows the deadlock)."""
    if cfg.storer is Storer.TMA:
        require(cfg.loader is Loader.TMA, "the bulk store path reads stages the bulk-copy engine filled; threads "
                "writing them would need a proxy fence", "pick the bulk-copy loader, or the threads store path",
                "storer")
        require(cfg.store_warps == 1, f"the bulk store path issues from one thread; {cfg.store_warps} store warps "
                "would leave warps idle", "pick 1 warp of the store task (or the threads store path)", "store_warps")
    else:
        require(cfg.bulk_stores == 1, "bulk stores in flight apply to the bulk store path",
                "pick the bulk store path, or 1 bulk store in flight", "bulk_stores")


def inactive(cfg: PipelinedCopy) -> dict[str, str]:
    """Controls that change nothing for this config, and why."""
    out = {"load_warps": "the bulk-copy loader issues from one thread"} if cfg.loader is Loader.TMA else {}
    if cfg.storer is not Storer.TMA:
        out["bulk_stores"] = "only the bulk store path keeps stores in flight"
    return out


def pipeline_config(cfg: PipelinedCopy) -> PipelineConfig:
    """TmaAsync (one issuing thread, bytes counted) or AsyncAsync (all load threads arrive)."""
    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.store_warps * 32)
    if cfg.loader is Loader.TMA:
        return PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=cfg.stages, num_bytes=cfg.tile * 4,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread), consumer_group=consumers,
            advance_on_wait=cfg.bulk_stores > 1)  # releases lag the waits: separate cursors
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=cfg.stages, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.load_warps * 32),
        consumer_group=consumers, cta_layout_vmnk=(1, 1, 1, 1))


def build(cfg: PipelinedCopy, ctx: BuildContext) -> Built:
    """Store task on warps [0, store_warps), load task right after; both loop over this CTA's tiles."""
    where = viewpoint(cfg, ctx, cfg.grid())
    n = runtime(ctx, "n", cfg.elements)
    n_tiles = runtime(ctx, "n_tiles", units(cfg.elements, cfg.tile))
    store_threads = cfg.store_warps * 32
    bulk = cfg.storer is Storer.TMA
    index = TileIndex(name="tile_index")
    smem = SmemStages(name="smem", pipeline_config=pipeline_config(cfg), source=tensor(ctx, "src"),
                      target=tensor(ctx, "dst"), n=n, tile=cfg.tile, stages=cfg.stages, vector=cfg.vector,
                      use_tma=cfg.loader is Loader.TMA, bulk_store=bulk, bulk_stores=cfg.bulk_stores,
                      cache=cfg.cache, load_threads=cfg.load_warps * 32, load_thread0=store_threads,
                      store_threads=store_threads)
    out = TileSink(name="dst", target=tensor(ctx, "dst"), source=tensor(ctx, "src"), n=n, tile=cfg.tile,
                   vector=cfg.vector, store_threads=store_threads, cache=cfg.cache)
    allocator = SmemAllocator()
    allocator.add_resource(smem)
    allocator.compute_layout()

    fault = cfg.fault

    @schedule
    def load(index: TileIndex, smem: SmemStages) -> None:
        with domain_loop(where.block, n_tiles, where.grid):
            tile = index.locate()
            smem.try_acquire()
            smem.acquire()
            if fault is PipelineFault.COMMIT_BEFORE_LOAD:  # the store task may read the stage before it is filled
                smem.commit()
                smem.load_tile(tile=tile)
            else:
                smem.load_tile(tile=tile)
                smem.commit()

    # the fault: one more iteration than the load task commits
    store_end = n_tiles + where.grid if fault is PipelineFault.CONSUMER_EXTRA else n_tiles

    @schedule
    def store(smem: SmemStages, out: TileSink) -> None:
        with domain_loop(where.block, store_end, where.grid):
            smem.try_wait()
            smem.wait()
            if fault is PipelineFault.RELEASE_BEFORE_READ:  # the load task may refill the stage while it is read
                smem.release()
                item = smem.read()
            else:
                item = smem.read()
                if fault is not PipelineFault.NO_RELEASE:
                    smem.release()
            out.store(item=item)

    @schedule
    def bulk_store(smem: SmemStages, out: TileSink) -> None:
        with domain_loop(where.block, n_tiles, where.grid) as tiles:
            smem.try_wait()
            smem.wait()
            sent = smem.send()
            if cfg.bulk_stores == 1:
                smem.release()
            else:  # release the previous tile's stage, and in the last iteration this one too
                with tiles.every(1, start=1):
                    smem.release()
                with tiles.last_iter():
                    smem.release()
            out.finish(sent=sent)

    store_task = Task(name="store", src_resources=[smem], dst_resources=[out], warp_idx=0,
                      num_warps=cfg.store_warps, schedule=(bulk_store if bulk else store)(smem, out))
    load_task = Task(name="load", src_resources=[index], dst_resources=[smem], warp_idx=cfg.store_warps,
                     num_warps=cfg.load_warps, schedule=load(index, smem))
    notes = () if ctx.on_gpu else _notes(cfg, where, n_tiles)
    return Built(tasks=[store_task, load_task], resource_dependency_graph={smem: [index], out: [smem]},
                 task_manager_kwargs={"smem_allocator": allocator}, notes=notes)


def _notes(cfg: PipelinedCopy, where: Any, n_tiles: int) -> tuple[str, ...]:
    """What the viewed CTA copies, and the stage ring it copies through."""
    mine = list(range(where.block, n_tiles, where.grid))
    loader = "the bulk-copy engine (TMA)" if cfg.loader is Loader.TMA else f"{cfg.load_warps} load warp(s)"
    return (f"CTA {where.block} of {where.grid} copies {len(mine)} of the {n_tiles} tiles: {compact(mine)}",
            f"smem: {cfg.stages} stage{'' if cfg.stages == 1 else 's'} x {cfg.tile * 4} B, filled by {loader}, "
            f"drained by {cfg.store_warps} store warp(s), {cfg.vector} int32 per access; store path: "
            f"{cfg.storer.value}; global memory accesses: {cfg.cache.value}")


SCENARIO = register(Scenario(
    name="pipelined_copy",
    title="Warp-specialized pipelined copy",
    config_type=PipelinedCopy,
    build_fn=build,
    check_fn=check,
    inactive_fn=inactive,
    description="A load task fills a ring of shared-memory stages (bulk copy engine or threads); "
                "a store task waits, reads, releases and writes global memory.",
    kernel="ts_explore.kernels.pipelined",
))
