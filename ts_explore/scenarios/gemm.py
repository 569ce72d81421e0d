"""Hopper WGMMA GEMM: C = A·Bᵀ in bf16 with fp32 accumulation, scheduled with TS.

``dtype=fp8`` takes float8 e4m3 A and B with one fp32 scale per tensor and
writes C = (scale_a·scale_b)·(A·Bᵀ) in bf16; the schedule is the same, a
stage holding 128 elements of K instead of 64.

A load task (one warpgroup, TMA) fills a ring of A/B stages; one or two
consumer warpgroups wait for a stage, issue WGMMA into register
accumulators, release stages, and write C through shared memory with TMA
stores. The same ``build`` records the CPU view and runs inside the kernel.
``mode=PINGPONG`` builds the ping-pong task set of :mod:`.gemm_pingpong`
instead: two consumers on alternate tiles, both reading every stage of one ring.
``epilogue=HANDOFF`` keeps the cooperative consumers but hands C to a store
task through a pipeline of the epilogue buffers (:mod:`.gemm_handoff`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.enums import SignalingThreads
from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import PipelineConfig, TileSchedulerConfig, WorkQueue
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..analysis.async_reads import SCOPE_NOTE, AsyncReads
from ..verification.rules import AsyncReadRule
from ..kernels.gemm_geometry import (
    EPILOGUE_N, LOAD_WARPS, MAX_ACCUMULATORS, Cluster, DType, Epilogue, GemmMode, Geometry, Raster, Release,
    TileShape, k_blocks, launch_grid, pick_tile,
)
from ..kernels.gemm_resources import GlobalOperands, OutputTile, SmemOperands
from ..model import QueueKind
from .base import BuildContext, Built, Scenario, knob, register
from ..model.plan import DeviceLimits
from .common import clc_scheduler_task, instance_value, next_work_tile, require, runtime, tensor, viewpoint
from . import gemm_handoff as handoff
from . import gemm_pingpong as pingpong

LOAD_REGISTERS, MMA_REGISTERS = 40, 232  # setmaxnreg per warpgroup: 40 x 128 + 232 x 256 <= 64 K
CLC_MMA_REGISTERS = 168  # a 13th (scheduler) warp drops the default to 128 per thread: warpgroups must average <= 128


class GemmFault(str, Enum):
    """A mistake to plant when learning to debug the ping-pong order or the hand-off epilogue."""

    NONE = "none"
    PINGPONG_BROKEN = ("mma0's k-loop runs one stage past its work unit: after the last unit it waits for a "
                       "stage the loader never fills (deadlock)")
    HANDOFF_EARLY_RELEASE = ("the store task releases each C buffer right after issuing its TMA store, while the "
                             "store may still read it (a race TS cannot see; the async-read rule reports it)")
    HANDOFF_EXTRA_PART = ("the store task waits for one part of C more per tile than the consumers hand over: after "
                          "the last tile it waits for a buffer no one fills (deadlock)")

    @property
    def needs(self) -> str:
        """The setting this fault is planted in: 'mode=ping-pong', 'epilogue=handoff' (NONE: '')."""
        if self is GemmFault.PINGPONG_BROKEN:
            return "mode=ping-pong"
        return "" if self is GemmFault.NONE else "epilogue=handoff"


@dataclass(frozen=True)
class HopperGemm:
    """Knobs of the GEMM schedule, plus the (M, N, K) instance the CPU view records."""

    tile: TileShape = TileShape.T128x256
    stages: int = knob(4, min=2, max=8, label="A/B stages", help="bounded by 227 KiB of shared memory")
    consumer_wgs: int = knob(2, min=1, max=2, label="consumer warpgroups")
    persistence: QueueKind = QueueKind.STATIC
    cluster: Cluster = Cluster.C1x1
    raster: Raster = Raster.ALONG_M
    swizzle: int = knob(1, min=1, max=16, label="tile swizzle (group size)",
                        help="static persistence hands tiles out S columns (rows along N) at a time, so CTAs "
                             "busy at once share operand tiles in L2; 1: plain raster order")
    release: Release = Release.LAGGED
    dtype: DType = DType.BF16
    mode: GemmMode = knob(GemmMode.COOPERATIVE, label="consumer mode",
                          help="cooperative: the warpgroups split each tile; ping-pong: each owns alternate whole "
                               "tiles, one's mainloop runs under the other's epilogue")
    epilogue: Epilogue = knob(Epilogue.INLINE, label="epilogue (cooperative)",
                              help="consumers store: the consumer warpgroups send C themselves while the tensor "
                                   "cores idle; a store task sends C: they hand each part of C in a shared-memory "
                                   "buffer to a store task (warps 2-3) and go on to the next tile")
    fault: GemmFault = knob(GemmFault.NONE, label="fault (for debugging)",
                            help="a deliberate mistake: the verifier reports it with a counterexample")
    m: int = knob(512, min=1, max=65536, label="M (CPU view)")
    n: int = knob(512, min=8, max=65536, step=8, label="N (CPU view)")
    k: int = knob(256, min=8, max=65536, step=8, label="K (CPU view)",
                  help="the verifier unrolls K/64 (fp8: K/128) k-blocks per tile; keep it to a few")
    ctas: int = knob(0, min=0, max=4096, label="persistent CTAs (CPU view)", help="0: one per SM of an H200")
    block: int = knob(0, min=0, max=65535, label="view as CTA")

    def resolved(self, shape: tuple[int, int, int] | None = None, sms: int | None = None) -> HopperGemm:
        """This config with ``tile='by shape'`` replaced by the tile :func:`pick_tile` picks (else itself).

        The pick also sets the consumer warpgroups (a 64-row tile is one
        warpgroup's WGMMA) and the cluster (2x1 B multicast for a small grid of
        128-row tiles or rows of A and B that straddle 128-byte lines; otherwise
        this config's own cluster, 1x2 included), and
        keeps the stages within shared memory.
        Default shape and SMs: the CPU view's (M, N, K) and its CTAs (an H200's SMs).
        """
        if self.tile is not TileShape.BY_SHAPE:
            return self
        pick = pick_tile(tuple(shape) if shape is not None else self.shape,
                         sms or self.ctas or DeviceLimits.h200().sms, self.dtype.bytes)
        tm, tn = pick.tile.mn
        most = Geometry(tile_m=tm, tile_n=tn, stages=2, consumer_wgs=pick.consumer_wgs, dtype=self.dtype).max_stages()
        return replace(self, tile=pick.tile, consumer_wgs=pick.consumer_wgs, stages=min(self.stages, most),
                       cluster=Cluster.C2x1 if pick.cluster_m == 2 else self.cluster)

    def geometry(self) -> Geometry:
        cfg = self.resolved()
        tm, tn = cfg.tile.mn
        return Geometry(tile_m=tm, tile_n=tn, stages=cfg.stages, consumer_wgs=cfg.consumer_wgs,
                        cluster_m=cfg.cluster.m, cluster_n=cfg.cluster.n, dtype=cfg.dtype,
                        pingpong=cfg.mode is GemmMode.PINGPONG, handoff=cfg.epilogue is Epilogue.HANDOFF)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def grid(self) -> tuple[int, int, int]:
        """The CUDA grid of the CPU view's instance."""
        return launch_grid(self.shape, self.geometry(), persistent=self.persistence is QueueKind.STATIC,
                           along_m=self.raster is Raster.ALONG_M, sms=self.ctas or DeviceLimits.h200().sms)

    def ctas_launched(self) -> int:
        x, y, z = self.grid()
        return x * y * z


def check(cfg: HopperGemm) -> None:
    """Refuse combinations the kernel cannot run, naming the fix (``tile='by shape'``: the CPU view's pick)."""
    if cfg.mode is GemmMode.PINGPONG:
        _check_pingpong(cfg)
    if cfg.epilogue is Epilogue.HANDOFF:
        _check_handoff(cfg)
    planted_in = {"mode=ping-pong": cfg.mode is GemmMode.PINGPONG, "epilogue=handoff": cfg.epilogue is Epilogue.HANDOFF}
    require(cfg.fault is GemmFault.NONE or planted_in[cfg.fault.needs],
            f"fault {cfg.fault.value!r} is planted in the schedule of {cfg.fault.needs}, which this config does "
            "not use", f"use {cfg.fault.needs}, or fault=none", cfg.fault.needs.split("=")[0] or None)
    cfg = cfg.resolved()
    geo = cfg.geometry()
    require(geo.tile_m >= 64 * cfg.consumer_wgs or geo.pingpong,
            f"tile {cfg.tile.value} has {geo.tile_m} rows: one 64-row WGMMA for each of {cfg.consumer_wgs} "
            "consumer warpgroups does not fit", "use consumer_wgs=1 with a 64-row tile")
    require(geo.accumulators_per_thread <= MAX_ACCUMULATORS,
            f"tile {cfg.tile.value} with {cfg.consumer_wgs} consumer warpgroup(s) needs "
            f"{geo.accumulators_per_thread} fp32 accumulators per thread, more than the {MAX_ACCUMULATORS} "
            "that fit beside the addresses in 232 registers", "use consumer_wgs=2 or tile 128x128x64")
    require(cfg.stages <= geo.max_stages(),
            f"{cfg.stages} stages x {geo.stage_bytes} B + "
            f"{geo.epilogue_bytes} B of epilogue buffers exceed "
            "227 KiB of shared memory per CTA", f"use stages <= {geo.max_stages()}", "stages")
    require(cfg.stages >= 2, f"stages={cfg.stages} leaves the load task nothing to fill while WGMMA reads",
            "use stages >= 2")
    require(cfg.swizzle == 1 or cfg.persistence is QueueKind.STATIC,
            f"swizzle={cfg.swizzle} orders the tiles a static persistent scheduler hands out; with persistence="
            f"{cfg.persistence.value} tiles follow the grid (or CLC)", "use persistence=static, or swizzle=1")
    require(cfg.m >= 1 and cfg.n % 8 == 0 and cfg.k % 8 == 0,
            f"(M, N, K)=({cfg.m}, {cfg.n}, {cfg.k}) breaks TMA's 16-byte row alignment",
            "use N and K multiples of 8")
    require(cfg.dtype is DType.BF16 or cfg.k % 16 == 0,
            f"K={cfg.k} fp8 elements per row of A and B is not a multiple of 16 bytes, which TMA needs to stride "
            "them", f"use K a multiple of 16 (e.g. {cfg.k + 16 - cfg.k % 16})", "k")
    require(cfg.block < cfg.ctas_launched(),
            f"view CTA {cfg.block} is not launched ({cfg.ctas_launched()} CTAs)",
            f"pick block < {cfg.ctas_launched()}", "block")


def _check_pingpong(cfg: HopperGemm) -> None:
    """What ping-pong needs: two consumer warpgroups, a tile one warpgroup holds, a queue it can walk."""
    require(cfg.tile is not TileShape.BY_SHAPE,
            "tile 'by shape' picks a tile for the cooperative mode; ping-pong gives each warpgroup a whole tile",
            "use mode=ping-pong with tile 128x128x64 or 64x256x64", "tile")
    require(cfg.consumer_wgs == 2,
            f"ping-pong alternates tiles between two consumer warpgroups; consumer_wgs={cfg.consumer_wgs}",
            "use consumer_wgs=2 (or mode=cooperative)", "consumer_wgs")
    geo = cfg.geometry()
    require(geo.accumulators_per_thread <= MAX_ACCUMULATORS,
            f"ping-pong tile {cfg.tile.value} in one warpgroup needs {geo.accumulators_per_thread} fp32 "
            f"accumulators per thread, more than the {MAX_ACCUMULATORS} that fit beside the addresses in a "
            f"consumer's {MMA_REGISTERS} registers", "use tile 128x128x64 or 64x256x64 with ping-pong", "tile")
    require(cfg.persistence is not QueueKind.CLC,
            "ping-pong with CLC would need a 13th (scheduler) warp, which leaves 128 registers per thread, too few "
            "beside a whole tile's 128 accumulators (and CLC runs on no GPU with WGMMA)",
            "use persistence=static or none with ping-pong", "persistence")


def _check_handoff(cfg: HopperGemm) -> None:
    """What the hand-off epilogue needs: the cooperative mode, and a queue without a scheduler warp."""
    require(cfg.mode is GemmMode.COOPERATIVE,
            "epilogue=handoff overlaps a cooperative tile's epilogue with the next mainloop; ping-pong already "
            "hides each consumer's epilogue under the other's mainloop", "use epilogue=inline with mode=ping-pong, "
            "or mode=cooperative with the hand-off", "epilogue")
    require(cfg.persistence is not QueueKind.CLC,
            "epilogue=handoff with CLC would add the store task to the CLC queue's consumers beside the 13th "
            "(scheduler) warp, and CLC launches on no GPU with WGMMA: the hand-off would only be drawn, never "
            "measured", "use persistence=static or none with epilogue=handoff", "persistence")


def async_reads(cfg: HopperGemm) -> AsyncReads:
    """What the kernel's WGMMA does that TS cannot see, for the async-read rule (ping-pong: both consumers'
    ``mma`` steps read the one ring, and the rule replays each)."""
    return AsyncReads(resource="smem_ab", issue="mma", in_flight=cfg.release.in_flight, drains=("drain",))


def _pipeline(cfg: HopperGemm, geo: Geometry) -> PipelineConfig:
    """TmaAsync: the four load warps each bring a quarter of a stage; every consumer warp releases it
    (to both CTAs of a 2x1 or 1x2 cluster, whose TMA multicasts write into it, so each stage's barrier
    expects the releases of both CTAs' consumers). Ping-pong too: both consumer warpgroups release every
    stage, whichever tile it belongs to."""
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=cfg.stages, num_bytes=geo.stage_bytes,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.consumer_wgs * 4 * geo.cluster_size),
        cta_layout_vmnk=(1, geo.cluster_m, geo.cluster_n, 1),
        producer_signaling_threads=SignalingThreads.TaskWarpLeader,
        advance_on_wait=cfg.release is Release.LAGGED,
        num_bytes_per_warp_per_cta=geo.stage_bytes // geo.load_warps)


def _rules(cfg: HopperGemm, geo: Geometry) -> tuple[AsyncReadRule, ...]:
    """The async-read rule for WGMMA on the A/B ring, and with the hand-off for the TMA stores on ``c``."""
    wgmma = AsyncReadRule(async_reads(cfg))
    return (wgmma, AsyncReadRule(handoff.store_reads())) if geo.handoff else (wgmma,)


def _not_modelled(geo: Geometry) -> tuple[str, ...]:
    return (SCOPE_NOTE, handoff.STORE_SCOPE_NOTE) if geo.handoff else (SCOPE_NOTE,)


def _queue(cfg: HopperGemm, ctx: BuildContext, threads: int) -> WorkQueue | None:
    params = runtime(ctx, "scheduler_params", None)
    if cfg.persistence is QueueKind.STATIC:
        return WorkQueue(name="tiles", tile_scheduler_config=TileSchedulerConfig
                         .create_static_persistent_tile_scheduler_params(tile_scheduler_params=params))
    if cfg.persistence is QueueKind.CLC:
        sched = TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(
            params, response_ptr=runtime(ctx, "clc_response", None))
        fetch = PipelineConfig.create_clc_fetch_async_pipeline_cfg(
            num_stages=2, num_bytes=16, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, threads * cfg.cluster.m * cfg.cluster.n),
            cta_layout_vmnk=(1, cfg.cluster.m, cfg.cluster.n, 1))
        return WorkQueue(name="tiles", tile_scheduler_config=sched, pipeline_config=fetch)
    return None


def build(cfg: HopperGemm, ctx: BuildContext) -> Built:
    """Load task on warps 0-3, consumer task on the next 4 x consumer_wgs warps (+ a CLC scheduler warp)."""
    by_shape = cfg.tile is TileShape.BY_SHAPE
    cfg = cfg.resolved(instance_value(ctx, "shape", None), instance_value(ctx, "sms", None))
    geo = cfg.geometry()
    where = viewpoint(cfg, ctx, cfg.ctas_launched())
    n_k = runtime(ctx, "k_blocks", k_blocks(cfg.k, geo.tile_k))
    swap = cfg.raster is Raster.ALONG_N and cfg.persistence is QueueKind.NONE
    consumer0 = LOAD_WARPS * 32
    if geo.pingpong:
        return _build_pingpong(cfg, ctx, geo, where, n_k, swap)
    src = GlobalOperands(name="global_ab", swap_mn=swap)
    smem = SmemOperands(name="smem_ab", pipeline_config=_pipeline(cfg, geo), geo=geo, in_flight=cfg.release.in_flight,
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
    wq = _queue(cfg, ctx, geo.threads + (32 if clc else 0))
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
                     notes=() if ctx.on_gpu else _notes(cfg, geo, where, by_shape), not_modelled=_not_modelled(geo),
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
                 notes=() if ctx.on_gpu else _notes(cfg, geo, where, by_shape), not_modelled=(SCOPE_NOTE,),
                 rules=(AsyncReadRule(async_reads(cfg)),))


def _build_pingpong(cfg: HopperGemm, ctx: BuildContext, geo: Geometry, where: Any, n_k: Any, swap: bool) -> Built:
    """One loader and consumers ``mma0``/``mma1`` on alternate tiles, all on one ring (see ``gemm_pingpong``)."""
    src = GlobalOperands(name="global_ab", swap_mn=swap, k_blocks=n_k)
    ring = SmemOperands(name="smem_ab", pipeline_config=_pipeline(cfg, geo), geo=geo.consumer_view(),
                        in_flight=cfg.release.in_flight, tma_a=tensor(ctx, "tma_a"), tma_b=tensor(ctx, "tma_b"),
                        g_a=tensor(ctx, "g_a"), g_b=tensor(ctx, "g_b"),
                        consumer_thread0=pingpong.consumer_warp(0) * 32, k_blocks=n_k)
    outs = pingpong.output_tiles(geo, swap, tensor(ctx, "tma_c"), tensor(ctx, "g_c"), runtime(ctx, "scale", None))
    allocator = SmemAllocator()
    for resource in (ring, *outs):
        allocator.add_resource(resource)
    allocator.compute_layout()
    wq = _queue(cfg, ctx, geo.threads)
    extra = [wq] if wq is not None else []
    tasks = pingpong.tasks(src, ring, outs, wq, n_k, release=cfg.release, load_registers=LOAD_REGISTERS,
                           mma_registers=MMA_REGISTERS, broken=cfg.fault is GemmFault.PINGPONG_BROKEN)
    graph: dict[Any, list[Any]] = {ring: [src, *extra]}
    graph.update({out: [ring, *extra] for out in outs})
    return Built(tasks=tasks, resource_dependency_graph=graph, task_manager_kwargs={"smem_allocator": allocator},
                 notes=() if ctx.on_gpu else _notes(cfg, geo, where), not_modelled=(SCOPE_NOTE,),
                 rules=(AsyncReadRule(async_reads(cfg)),))


def _notes(cfg: HopperGemm, geo: Geometry, where: Any, by_shape: bool = False) -> tuple[str, ...]:
    tiles_m, tiles_n = -(-cfg.m // geo.tile_m), -(-cfg.n // geo.tile_n)
    notes = [
        f"CPU view: C[{cfg.m} x {cfg.n}] = A[{cfg.m} x {cfg.k}] · B[{cfg.n} x {cfg.k}]ᵀ, {tiles_m} x {tiles_n} "
        f"output tiles of {geo.tile_m} x {geo.tile_n}, {k_blocks(cfg.k, geo.tile_k)} k-blocks of {geo.tile_k} "
        "per tile",
        f"{cfg.stages} A/B stages x {geo.stage_bytes // 1024} KiB + "
        f"{geo.epilogue_bytes // 1024} KiB of epilogue "
        f"buffers = {geo.smem_bytes // 1024} KiB of shared memory; "
        f"{geo.accumulators_per_thread} fp32 accumulators per consumer thread",
        f"release: {cfg.release.value}",
        *_pingpong_notes(cfg, geo),
        *_handoff_notes(cfg, geo),
        "TS does not model WGMMA's asynchronous shared-memory reads; the async-read rule checks the releases",
    ]
    if cfg.dtype is DType.FP8:
        notes.append("fp8 e4m3 A and B (one 128-byte swizzle row = 128 elements of K per stage); the epilogue "
                     "multiplies the fp32 accumulators by scale_a·scale_b before the bf16 conversion")
    if by_shape:
        sms = cfg.ctas or DeviceLimits.h200().sms
        notes.append(f"tile by shape: {pick_tile(cfg.shape, sms, cfg.dtype.bytes).text}")
    unit = "work units of two tiles" if geo.pingpong else "tiles"
    if cfg.persistence is QueueKind.STATIC:
        order = f"in groups of {cfg.swizzle} tile {'columns' if cfg.raster is Raster.ALONG_M else 'rows'}, " \
            if cfg.swizzle > 1 else ""
        notes.append(f"CTA {where.block} of {cfg.ctas_launched()} persistent CTAs walks {unit} "
                     f"{where.block}, {where.block}+{cfg.ctas_launched()}, ... ({order}{cfg.raster.value})")
    elif cfg.persistence is QueueKind.CLC:
        notes.append("CLC hands tiles out at run time; it needs sm_100+, where WGMMA does not exist: "
                     "this variant records and verifies but launches on no GPU")
    if cfg.cluster is Cluster.C2x1:
        notes.append("2x1 cluster: each CTA loads half of the shared B tile and multicasts it to both")
    elif cfg.cluster is Cluster.C1x2:
        notes.append("1x2 cluster: two N-neighbour CTAs share one A tile; each loads half of it and multicasts it "
                     "to both (B is each CTA's own)")
    return tuple(notes)


def _handoff_notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    if not geo.handoff:
        return []
    last = 3 + 4 * cfg.consumer_wgs
    notes = [f"hand-off epilogue: mma (warps 4-{last}) stages each of the {geo.epilogue_parts} {EPILOGUE_N}-column "
             f"parts of C into one of {geo.epilogue_buffers} buffers of pipeline c and commits it (every consumer "
             "thread arrives; no named barrier), then starts the next tile's mainloop; the store task (warps 2-3, "
             "warp 2 issues) waits for each buffer, TMA-stores it and releases it one part later, once its store has "
             "read it; the load task keeps warps 0-1 (each brings half of a stage)"]
    if cfg.fault is not GemmFault.NONE:
        notes.append(f"planted fault: {cfg.fault.value}")
    return notes


def _pingpong_notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    if not geo.pingpong:
        return []
    notes = [f"ping-pong: each work unit is two {geo.tile_m}x{geo.tile_n} tiles stacked along M; mma0 (warps 4-7) "
             "owns the upper, mma1 (warps 8-11) the lower; one's epilogue runs under the other's mainloop",
             f"one ring of {cfg.stages} A/B stages for both: per unit the loader brings the upper tile's k-blocks, "
             "then the lower's (one k-loop of 2 x k-blocks); each consumer waits for and releases every stage and "
             "issues WGMMA on its own tile's, so the ring's order runs mma1's mainloop after mma0's"]
    if cfg.fault is GemmFault.PINGPONG_BROKEN:
        notes.append(f"planted fault: {cfg.fault.value}")
    return notes


SCENARIO = register(Scenario(
    name="hopper_gemm",
    title="Hopper WGMMA GEMM (bf16 or fp8 e4m3, fp32 accumulate)",
    config_type=HopperGemm,
    build_fn=build,
    check_fn=check,
    description="C = A·Bᵀ: a TMA load warpgroup fills A/B stages; WGMMA consumer warpgroups accumulate in "
                "registers, release each stage one k-block late and store C through shared memory with TMA; "
                "cooperative (the warpgroups split a tile; optionally handing C to a store task so that their "
                "next mainloop starts at once) or ping-pong (each owns alternate tiles, one's epilogue under the "
                "other's mainloop).",
    kernel="ts_explore.kernels.gemm",
))
