"""What every mode of the Hopper GEMM builds the same way: register budgets, the A/B ring's pipeline, the tile
queue, the async-read rule's description, and the CPU view's notes.

The cooperative schedule (:mod:`.gemm_cooperative`, with or without the
hand-off of :mod:`.gemm_handoff`) and the ping-pong one
(:mod:`.gemm_pingpong`) take these and add their own tasks.
"""

from __future__ import annotations

from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.enums import SignalingThreads
from cutlass.experimental.task_scheduling.resources import PipelineConfig, TileSchedulerConfig, WorkQueue

from ..analysis.async_reads import AsyncReads
from ..kernels.gemm_geometry import Cluster, DType, Geometry, Raster, Release, k_blocks
from ..kernels.gemm_tile_pick import pick_tile
from ..model import QueueKind
from ..model.plan import DeviceLimits
from . import gemm_fitted as fitted
from .base import BuildContext
from .common import runtime
from .gemm_config import HopperGemm

LOAD_REGISTERS, MMA_REGISTERS = 40, 232  # setmaxnreg per warpgroup: 40 x 128 + 232 x 256 <= 64 K


CLC_MMA_REGISTERS = 168  # a 13th (scheduler) warp drops the default to 128 per thread: warpgroups must average <= 128


def async_reads(cfg: HopperGemm) -> AsyncReads:
    """What the kernel's WGMMA does that TS cannot see, for the async-read rule (ping-pong: both consumers'
    ``mma`` steps read the one ring, and the rule replays each)."""
    return AsyncReads(resource="smem_ab", issue="mma", in_flight=cfg.release.in_flight, drains=("drain",))


def ab_pipeline(cfg: HopperGemm, geo: Geometry) -> PipelineConfig:
    """TmaAsync: the load warps each bring their slices of a stage (a fitted width may leave one without B:
    ``kernels.gemm_cluster.load_split``) and the task's leader warp arrives once, expecting the stage's bytes,
    which TS checks against the bytes per load warp; every consumer warp releases it
    (to both CTAs of a 2x1 or 1x2 cluster, whose TMA multicasts write into it, so each stage's barrier
    expects the releases of both CTAs' consumers). Ping-pong too: both consumer warpgroups release every
    stage, whichever tile it belongs to. The planted ``FITTED_FULL_WIDTH_BYTES`` makes the barrier expect
    the unnarrowed tile's bytes."""
    expected = fitted.full_width_stage_bytes(cfg, geo) if fitted.planted(cfg) else geo.stage_bytes
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=cfg.stages, num_bytes=expected,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.consumer_wgs * 4 * geo.cluster_size),
        cta_layout_vmnk=(1, geo.cluster_m, geo.cluster_n, 1),
        producer_signaling_threads=SignalingThreads.TaskWarpLeader,
        advance_on_wait=cfg.release is Release.LAGGED,
        num_bytes_per_warp_per_cta=geo.stage_bytes // geo.load_warps)


def tile_queue(cfg: HopperGemm, ctx: BuildContext, threads: int) -> WorkQueue | None:
    """The work queue of ``persistence`` (static, or CLC with its fetch pipeline for ``threads``); none for a
    grid of one tile per CTA."""
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


def notes(cfg: HopperGemm, geo: Geometry, where: Any, by_shape: bool = False,
          mode_notes: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The CPU view's notes: the instance, shared memory, the release, the mode's own ``mode_notes``, the queue
    and the cluster."""
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
        *mode_notes,
        "TS does not model WGMMA's asynchronous shared-memory reads; the async-read rule checks the releases",
    ]
    if cfg.dtype is DType.FP8:
        notes.append("fp8 e4m3 A and B (one 128-byte swizzle row = 128 elements of K per stage); the epilogue "
                     "multiplies the fp32 accumulators by scale_a·scale_b before the bf16 conversion")
    if by_shape:
        sms = cfg.ctas or DeviceLimits.h200().sms
        notes.append(f"tile by shape: {pick_tile(cfg.shape, sms, cfg.dtype.bytes, geo.pingpong).text}")
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


__all__ = ["CLC_MMA_REGISTERS", "LOAD_REGISTERS", "MMA_REGISTERS", "ab_pipeline", "async_reads", "notes",
           "tile_queue"]
