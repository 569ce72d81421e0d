"""The cooperative Hopper GEMM (``mode=cooperative``): the consumer warpgroups split each output tile.

A load task (warps 0-3, TMA) fills the A/B ring; one consumer task (warps
4-7, or 4-11 with two warpgroups) waits for each stage, issues WGMMA on its
64-row slice of the tile, releases the stage one k-block late and writes C
through the epilogue buffers. ``epilogue=handoff`` keeps this mainloop but
hands each part of C to a store task on warps 2-3 (:mod:`.gemm_handoff`);
``persistence=CLC`` adds the scheduler warp.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import WorkQueue
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..analysis.async_reads import SCOPE_NOTE
from ..kernels.gemm_epilogue import OutputTile
from ..kernels.gemm_geometry import LOAD_WARPS, Geometry
from ..kernels.gemm_mainloop import GlobalOperands, SmemOperands
from ..model import QueueKind
from ..verification.rules import AsyncReadRule
from . import gemm_fitted as fitted
from . import gemm_handoff as handoff
from . import gemm_pingpong as pingpong
from .base import BuildContext, Built
from .common import clc_scheduler_task, next_work_tile, runtime, tensor
from .gemm_config import GemmFault, HopperGemm
from .gemm_shared import (
    CLC_MMA_REGISTERS, LOAD_REGISTERS, MMA_REGISTERS, ab_pipeline, async_reads, notes, tile_queue,
)


def _rules(cfg: HopperGemm, geo: Geometry) -> tuple[AsyncReadRule, ...]:
    """The async-read rule for WGMMA on the A/B ring, and with the hand-off for the TMA stores on ``c``."""
    wgmma = AsyncReadRule(async_reads(cfg))
    return (wgmma, AsyncReadRule(handoff.store_reads())) if geo.handoff else (wgmma,)




def _not_modelled(cfg: HopperGemm, geo: Geometry) -> tuple[str, ...]:
    """What TS does not model: WGMMA's asynchronous reads, with the hand-off the TMA stores' reads too, and with
    a fitted width which rows each load warp brings."""
    return ((SCOPE_NOTE,) + ((handoff.STORE_SCOPE_NOTE,) if geo.handoff else ())
            + ((fitted.LOADS_SCOPE_NOTE,) if fitted.is_fitted(cfg) else ()))




def mode_notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    """The CPU view's notes of the hand-off epilogue and of a fitted width (each empty without it)."""
    return handoff.notes(cfg, geo) + fitted.notes(cfg, geo)


def build(cfg: HopperGemm, ctx: BuildContext, geo: Geometry, where: Any, n_k: Any, swap: bool,
          by_shape: bool = False) -> Built:
    """Load task on warps 0-3 (0-1 with the hand-off), consumer task on the next 4 x consumer_wgs warps
    (+ a CLC scheduler warp, or the hand-off's store task on warps 2-3)."""
    consumer0 = LOAD_WARPS * 32
    src = GlobalOperands(name="global_ab", swap_mn=swap)
    smem = SmemOperands(name="smem_ab", pipeline_config=ab_pipeline(cfg, geo), geo=geo, in_flight=cfg.release.in_flight,
                        tma_a=tensor(ctx, "tma_a"), tma_b=tensor(ctx, "tma_b"), g_a=tensor(ctx, "g_a"),
                        g_b=tensor(ctx, "g_b"), consumer_thread0=consumer0, load_warps=geo.load_warps)
    if geo.handoff:
        out = handoff.handoff_buffers(geo, swap, tensor(ctx, "tma_c"), tensor(ctx, "g_c"), consumer0,
                                      runtime(ctx, "scale", None))
    else:
        out = OutputTile(name="c", geo=geo, swap_mn=swap, tma_c=tensor(ctx, "tma_c"), g_c=tensor(ctx, "g_c"),
                         consumer_thread0=consumer0, scale=runtime(ctx, "scale", None))
    allocator = SmemAllocator()
    allocator.add_resource(smem)
    allocator.add_resource(out)
    allocator.compute_layout()
    clc = cfg.persistence is QueueKind.CLC
    wq = tile_queue(cfg, ctx, geo.threads + (32 if clc else 0))
    parts, release = geo.epilogue_parts, cfg.release

    def load_k_blocks(src: Any, smem: Any) -> None:
        with domain_loop(0, n_k, 1):
            m, n, k = src.locate()
            smem.try_acquire()
            smem.acquire()
            smem.load(m_block=m, n_block=n, k_block=k)
            smem.commit()

    def one_tile(smem: Any, out: Any) -> None:
        pingpong.accumulate_and_store(smem, out, n_k, release=release, epilogue_parts=parts)

    if wq is None:
        @schedule
        def load(src: GlobalOperands, smem: SmemOperands) -> None:
            load_k_blocks(src, smem)

        @schedule
        def mma(smem: SmemOperands, out: OutputTile) -> None:
            one_tile(smem, out)
            out.flush()

        load_sched, extra = load(src, smem), []
        mma_sched = None if geo.handoff else mma(smem, out)  # the hand-off builds its own mma
    else:
        @schedule
        def load(src: GlobalOperands, smem: SmemOperands, wq: WorkQueue) -> None:
            with work_tile_loop(wq):
                load_k_blocks(src, smem)
                next_work_tile(wq)

        @schedule
        def mma(smem: SmemOperands, out: OutputTile, wq: WorkQueue) -> None:
            with work_tile_loop(wq):
                one_tile(smem, out)
                next_work_tile(wq)
            out.flush()

        load_sched, extra = load(src, smem, wq), [wq]
        mma_sched = None if geo.handoff else mma(smem, out, wq)

    load_task = Task(name="load", src_resources=[src, *extra], dst_resources=[smem], warp_idx=0,
                     num_warps=geo.load_warps, schedule=load_sched, num_registers=LOAD_REGISTERS)
    if geo.handoff:
        store_task, mma_task = handoff.tasks(
            smem, out, wq, n_k, release=release, parts=parts, consumer_wgs=cfg.consumer_wgs,
            load_warps=geo.load_warps, registers=(LOAD_REGISTERS, MMA_REGISTERS),
            extra_part=cfg.fault is GemmFault.HANDOFF_EXTRA_PART,
            early_release=cfg.fault is GemmFault.HANDOFF_EARLY_RELEASE)
        return Built(tasks=[load_task, store_task, mma_task], resource_dependency_graph={smem: [src, *extra],
                                                                                         out: [smem, *extra]},
                     task_manager_kwargs={"smem_allocator": allocator},
                     notes=() if ctx.on_gpu else notes(cfg, geo, where, by_shape, mode_notes(cfg, geo)),
                     not_modelled=_not_modelled(cfg, geo),
                     rules=_rules(cfg, geo))
    mma_task = Task(name="mma", src_resources=[smem, *extra], dst_resources=[out], warp_idx=LOAD_WARPS,
                    num_warps=4 * cfg.consumer_wgs, schedule=mma_sched,
                    num_registers=CLC_MMA_REGISTERS if clc else MMA_REGISTERS)
    tasks = [load_task, mma_task]
    graph: dict[Any, list[Any]] = {smem: [src, *extra], out: [smem, *extra]}
    if clc:
        tasks.append(clc_scheduler_task(wq, LOAD_WARPS + 4 * cfg.consumer_wgs))
        graph[wq] = [wq]
    return Built(tasks=tasks, resource_dependency_graph=graph, task_manager_kwargs={"smem_allocator": allocator},
                 notes=() if ctx.on_gpu else notes(cfg, geo, where, by_shape, mode_notes(cfg, geo)),
                 not_modelled=_not_modelled(cfg, geo),
                 rules=(AsyncReadRule(async_reads(cfg)),))


__all__ = ["build"]
