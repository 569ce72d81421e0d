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

Here: the checks every config passes and the dispatch on ``mode``
(:data:`MODES`). The controls are :mod:`.gemm_config`'s, what the modes
share (the ring's pipeline, the tile queue, registers, notes)
:mod:`.gemm_shared`'s, and each mode's tasks, checks and notes its own
module's: :mod:`.gemm_cooperative`, :mod:`.gemm_pingpong`,
:mod:`.gemm_handoff`.
"""

from __future__ import annotations

from typing import Callable

from ..kernels.gemm_geometry import MAX_ACCUMULATORS, DType, Epilogue, GemmMode, Raster, TileShape, k_blocks
from ..model import QueueKind
from . import gemm_cooperative as cooperative
from . import gemm_fitted as fitted
from . import gemm_handoff as handoff
from . import gemm_pingpong as pingpong
from . import gemm_pingpong_turns as pingpong_turns
from .base import BuildContext, Built, Scenario, register
from .common import instance_value, require, runtime, viewpoint
from .gemm_config import GemmFault, HopperGemm
from .gemm_shared import async_reads


def check(cfg: HopperGemm) -> None:
    """Refuse combinations the kernel cannot run, naming the fix (``tile='by shape'``: the CPU view's pick)."""
    if cfg.mode is GemmMode.PINGPONG:
        pingpong.check(cfg)
    if cfg.epilogue is Epilogue.HANDOFF:
        handoff.check(cfg)
    if cfg.epilogue is Epilogue.SHARED:
        pingpong_turns.check(cfg)
    fitted.check(cfg)
    planted_in = {"mode=ping-pong": cfg.mode is GemmMode.PINGPONG, "epilogue=handoff": cfg.epilogue is Epilogue.HANDOFF,
                  "epilogue=shared": cfg.epilogue is Epilogue.SHARED, "tile_n=<a narrowed width>": cfg.tile_n > 0}
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
            "that fit beside the addresses in 232 registers", "use consumer_wgs=2 or tile 128x128x64 or 128x192x64")
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


MODES: dict[GemmMode, Callable[..., Built]] = {GemmMode.COOPERATIVE: cooperative.build,
                                                GemmMode.PINGPONG: pingpong.build}  # mode= -> its schedule


def build(cfg: HopperGemm, ctx: BuildContext) -> Built:
    """The task set of ``cfg.mode`` (:data:`MODES`): the cooperative one (:mod:`.gemm_cooperative`, with the
    hand-off of :mod:`.gemm_handoff` for ``epilogue=handoff``) or ping-pong (:mod:`.gemm_pingpong`)."""
    by_shape = cfg.tile is TileShape.BY_SHAPE
    cfg = cfg.resolved(instance_value(ctx, "shape", None), instance_value(ctx, "sms", None))
    geo = cfg.geometry()
    where = viewpoint(cfg, ctx, cfg.ctas_launched())
    n_k = runtime(ctx, "k_blocks", k_blocks(cfg.k, geo.tile_k))
    swap = cfg.raster is Raster.ALONG_N and cfg.persistence is QueueKind.NONE
    return MODES[cfg.mode](cfg, ctx, geo, where, n_k, swap, by_shape)


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

__all__ = ["MODES", "SCENARIO", "GemmFault", "HopperGemm", "async_reads", "build", "check"]
