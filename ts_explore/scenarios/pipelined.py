"""Warp-specialized pipelined copy: a load task and a store task share a ring of SMEM stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import PipelineConfig
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..kernels import pipelined as kernel
from ..kernels.pipelined import Loader, SmemStages, TileIndex, TileSink
from ..model.plan import DeviceLimits
from .base import BuildContext, Built, Scenario, knob, register
from .common import SMEM_PER_CTA_BYTES, compact, is_power_of_two, require, runtime, tensor, viewpoint


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
    require(cfg.tile // store_share <= 64,
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
    require(cfg.elements % cfg.tile == 0, f"{cfg.elements} elements are not whole tiles of {cfg.tile}",
            "pick more elements or a smaller tile", "elements")
    grid = cfg.grid()
    require(cfg.block < grid, f"view as CTA {cfg.block}: only {grid} CTA{'' if grid == 1 else 's'} are launched",
            f"pick view as CTA below {grid}, or raise CTAs or elements", "block")


def inactive(cfg: PipelinedCopy) -> dict[str, str]:
    """Controls that change nothing for this config, and why."""
    return {"load_warps": "the bulk-copy loader issues from one thread"} if cfg.loader is Loader.TMA else {}


def pipeline_config(cfg: PipelinedCopy) -> PipelineConfig:
    """TmaAsync (one issuing thread, bytes counted) or AsyncAsync (all load threads arrive)."""
    consumers = pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.store_warps * 32)
    if cfg.loader is Loader.TMA:
        return PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=cfg.stages, num_bytes=cfg.tile * 4,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread), consumer_group=consumers)
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=cfg.stages, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.load_warps * 32),
        consumer_group=consumers, cta_layout_vmnk=(1, 1, 1, 1))


def build(cfg: PipelinedCopy, ctx: BuildContext) -> Built:
    """Store task on warps [0, store_warps), load task right after; both loop over this CTA's tiles."""
    where = viewpoint(cfg, ctx, cfg.grid())
    n_tiles = runtime(ctx, "n_tiles", cfg.elements // cfg.tile)
    store_threads = cfg.store_warps * 32
    index = TileIndex(name="tile_index")
    smem = SmemStages(name="smem", pipeline_config=pipeline_config(cfg), source=tensor(ctx, "src"),
                      tile=cfg.tile, stages=cfg.stages, vector=cfg.vector, use_tma=cfg.loader is Loader.TMA,
                      load_threads=cfg.load_warps * 32, load_thread0=store_threads, store_threads=store_threads)
    out = TileSink(name="dst", target=tensor(ctx, "dst"), tile=cfg.tile, vector=cfg.vector,
                   store_threads=store_threads)
    allocator = SmemAllocator()
    allocator.add_resource(smem)
    allocator.compute_layout()

    @schedule
    def load(index: TileIndex, smem: SmemStages) -> None:
        with domain_loop(where.block, n_tiles, where.grid):
            tile = index.locate()
            smem.try_acquire()
            smem.acquire()
            smem.load_tile(tile=tile)
            smem.commit()

    @schedule
    def store(smem: SmemStages, out: TileSink) -> None:
        with domain_loop(where.block, n_tiles, where.grid):
            smem.try_wait()
            smem.wait()
            item = smem.read()
            smem.release()
            out.store(item=item)

    store_task = Task(name="store", src_resources=[smem], dst_resources=[out], warp_idx=0,
                      num_warps=cfg.store_warps, schedule=store(smem, out))
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
            f"drained by {cfg.store_warps} store warp(s), {cfg.vector} int32 per access")


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
