"""Hopper attention forward (FlashAttention-3 style): O = softmax(Q·Kᵀ·scale [+ causal mask])·V, scheduled with TS.

A load warpgroup brings each consumer warpgroup's Q tile once per tile and the
K and V blocks on two pipelines of their own. One, two or three consumer warpgroups
(each its own task, owning ``tile_q / consumer_wgs`` rows) compute
S = Q·Kᵀ with WGMMA, the online softmax in registers, O += P·V with P from
registers, and the epilogue. Ping-pong hands the right to issue WGMMA from one
consumer to the next through data-less pipelines in a ring (``turn01``, ``turn10``),
so the checker sees the order; intra-warpgroup overlap issues the next S GEMM
before the softmax of the current block (the P·V GEMM lags one block).

The same build records the schedule on the CPU and, inside the kernel
(:mod:`ts_explore.kernels.attention`), runs it with the bodies of
:mod:`ts_explore.kernels.attention_mainloop` (TMA, WGMMA),
:mod:`~ts_explore.kernels.attention_softmax` (the online softmax) and
:mod:`~ts_explore.kernels.attention_epilogue` (O and LSE).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.enums import SignalingThreads
from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import PipelineConfig, TileSchedulerConfig, WorkQueue
from cutlass.experimental.task_scheduling.task import Task

from ..analysis.async_reads import SCOPE_NOTE, AsyncReads
from ..verification.rules import AsyncReadRule
from ..kernels.attention_geometry import (
    HEAD_DIMS, LOAD_REGISTERS, SMEM_LIMIT, Geometry, Persistence, cta_walk, kv_blocks, q_tiles, snake,
)
from ..kernels.attention_epilogue import OutTile
from . import attention_store as o_store
from . import attention_view as view
from .attention_view import PERSISTENT_CTAS, mixed_walk, recorded_walk, turn_names
from ..kernels.attention_mainloop import ExtraKvBlockTask, KStages, KvBlocksTask, QkvGlobal, VStages
from ..kernels.attention_softmax import QTile
from ..kernels.attention_tiles import WorkOrder, q_tile_index, work_coord
from ..kernels.turn import Turn, turn_pipeline
from .attention_schedule import consumer_schedule, load_schedule
from .base import BuildContext, Built, Scenario, knob, register
from .common import require, runtime, tensor

LOAD_WARPS = 4


class AttentionFault(str, Enum):
    """Mistakes to plant when learning to debug: four races and two deadlocks (two races need overlap on, the
    last the TMA-store epilogue)."""

    NONE = "none"
    EARLY_K_RELEASE = "consumer releases a K stage before its S GEMM completes (race)"
    PINGPONG_BROKEN = "both consumers wait for the turn before either hands it over (deadlock)"
    CONSUMER_EXTRA = "a consumer's loop runs one K/V block more than the loader's (deadlock)"
    OVERLAP_EARLY_V_RELEASE = "with overlap, V[j-1] is released right after the lagged P·V is issued (race)"
    OVERLAP_S_WAIT_FIRST = ("with overlap, the wait that leaves one WGMMA group running comes before the lagged "
                            "P·V is issued, so the S GEMM is still reading K when K is released (race)")
    O_EARLY_RELEASE = ("the store task releases an O buffer right after issuing its TMA store, which may still be "
                       "reading it when the consumer writes its next tile there (race)")


# the schedule's planted mistakes (:data:`~.attention_schedule.FAULTS`) behind each fault of the consumers
_SCHEDULE_FAULTS = {AttentionFault.PINGPONG_BROKEN: "broken_turn", AttentionFault.EARLY_K_RELEASE: "early_release",
                    AttentionFault.OVERLAP_EARLY_V_RELEASE: "early_v_release",
                    AttentionFault.OVERLAP_S_WAIT_FIRST: "s_wait_before_pv"}
OVERLAP_FAULTS = (AttentionFault.OVERLAP_EARLY_V_RELEASE, AttentionFault.OVERLAP_S_WAIT_FIRST)


@dataclass(frozen=True)
class HopperAttention:
    """Knobs of the attention schedule, plus the problem instance the CPU view records."""

    tile_q: int = knob(128, options=(64, 128, 192), label="Q tile (rows per CTA)",
                       help="each consumer warpgroup owns tile_q / consumer_wgs rows, a multiple of 64; 192 rows are "
                            "three consumer warpgroups (head_dim 64: their 160 registers each hold S and O of a "
                            "64 x 128 block)")
    tile_k: int = knob(128, options=(64, 128, 160, 192, 256), label="K/V block (keys)",
                       help="192 and 256 fit registers and shared memory at head_dim 64 only")
    stages: int = knob(2, min=2, max=8, label="K/V stages",
                       help="each of K and V has this many; bounded by 227 KiB. One stage deadlocks the "
                            "ping-pong consumers (mma1 waits for K[j+1] while mma0 holds the turn and K[j])")
    head_dim: int = knob(128, options=(32, 64, 96, 128, 192, 256), label="head_dim",
                         help="64 and 128 are laid out; the others are refused with the reason")
    consumer_wgs: int = knob(2, min=1, max=3, label="consumer warpgroups",
                             help="three take turns in a ring (ping-pong) and get 160 registers each, not 240")
    pingpong: bool = knob(True, label="ping-pong",
                          help="the consumers take turns issuing WGMMA: one's softmax runs under the others' GEMMs")
    overlap: bool = knob(True, label="softmax / next S GEMM overlap",
                         help="issue the next block's S GEMM and the lagged P·V of the block before, and run this "
                              "block's softmax under that P·V; ptxas keeps its WGMMAs asynchronous (on an H100: 567 "
                              "against 503 TFLOP/s at hd128 8k causal, 644 against 527 non-causal)")
    tma_store: bool = knob(True, label="O through shared memory and a TMA store",
                           help="each consumer hands O to a store task (warps 2-3) through a buffer of its own and "
                                "starts its next tile; off: the consumers store O from registers, 2 bytes a store")
    persistence: Persistence = knob(Persistence.NONE, label="persistence")
    causal: bool = knob(False, label="causal", help="bottom-right aligned mask: fewer K/V blocks for early Q tiles")
    seqlen_q: int = knob(384, min=1, max=2048, label="seqlen_q (CPU view)")
    seqlen_kv: int = knob(384, min=1, max=1024, label="seqlen_kv (CPU view)",
                          help="the checker unrolls one iteration per K/V block; keep it to a few")
    batch: int = knob(1, min=1, max=64, label="batch (CPU view)")
    heads: int = knob(1, min=1, max=128, label="heads (CPU view)")
    q_tile: int = knob(0, min=0, max=31, label="view Q tile", help="the Q tile whose K/V loop the CPU view records")
    fault: AttentionFault = knob(AttentionFault.NONE, label="fault (for debugging)",
                                 help="a deliberate mistake: the verifier reports it with a counterexample")

    def geometry(self) -> Geometry:
        return Geometry(tile_q=self.tile_q, tile_k=self.tile_k, head_dim=self.head_dim, stages=self.stages,
                        consumer_wgs=self.consumer_wgs)

    @property
    def q_tiles(self) -> int:
        return q_tiles(self.seqlen_q, self.tile_q)

    @property
    def kv_blocks(self) -> int:
        """K/V blocks the viewed Q tile visits (what the loader loads and each consumer reads)."""
        return kv_blocks(self.seqlen_q, self.seqlen_kv, self.tile_q, self.tile_k, self.q_tile, self.causal)

    @property
    def work_tiles(self) -> int:
        return self.q_tiles * self.heads * self.batch

    @property
    def pingponging(self) -> bool:
        return self.pingpong and self.consumer_wgs >= 2

    @property
    def viewed_cta(self) -> int:
        """Under static persistence: the CTA that runs the viewed Q tile of head 0, batch 0."""
        ctas = min(PERSISTENT_CTAS, self.work_tiles)
        if not self.causal:
            return self.q_tile % ctas  # head 0's Q tiles come first, one after another (by_q_tile)
        tile = (self.q_tiles - 1 - self.q_tile) * self.heads * self.batch  # its place in the longest-first order
        return snake(tile, self.work_tiles, ctas) % ctas  # snake undoes itself

    @property
    def viewed_walk(self) -> tuple[int, ...]:
        """Under static persistence: the K/V blocks of each work tile the viewed CTA walks, in order."""
        return cta_walk(self.seqlen_q, self.seqlen_kv, self.tile_q, self.tile_k, self.heads * self.batch,
                        self.causal, min(PERSISTENT_CTAS, self.work_tiles), self.viewed_cta)


def check(cfg: HopperAttention) -> None:
    """Refuse what the schedule cannot lay out, naming the cause, the fix and the knob."""
    geo = cfg.geometry()
    require(cfg.head_dim in HEAD_DIMS,
            f"head_dim {cfg.head_dim} is not laid out: the Q/K/V tiles and their 128-byte swizzle are built for "
            f"head_dim {' and '.join(map(str, HEAD_DIMS))}", "use head_dim 64 or 128", "head_dim")
    require(geo.rows_per_wg >= 64 and geo.rows_per_wg % 64 == 0,
            f"a {cfg.tile_q}-row Q tile over {cfg.consumer_wgs} consumer warpgroups gives each {geo.rows_per_wg} "
            "rows; a warpgroup's WGMMA covers 64 rows", "use one consumer warpgroup, or a 128-row Q tile",
            "consumer_wgs")
    require(geo.register_floats <= geo.max_register_floats,
            f"{geo.rows_per_wg} rows x (K/V block {cfg.tile_k} + head_dim {cfg.head_dim}) need "
            f"{geo.register_floats} fp32 registers per consumer thread for S and O, more than the "
            f"{geo.max_register_floats} that leave room for P and addresses in {geo.mma_registers}",
            "use two consumer warpgroups, or a smaller Q tile or K/V block" if cfg.consumer_wgs < 3 else
            "use head_dim 64 with K/V blocks of 128 keys or fewer, or two consumer warpgroups", "tile_q")
    require(geo.smem_bytes <= SMEM_LIMIT,
            f"Q {geo.q_bytes} B + {cfg.stages} K and {cfg.stages} V stages x {geo.kv_stage_bytes} B + O "
            f"{geo.out_bytes} B + barriers = {geo.smem_bytes} B exceed the {SMEM_LIMIT} B (227 KiB) of shared "
            "memory per CTA", f"use stages <= {geo.max_stages()}" if geo.max_stages() >= 2 else
            f"use a smaller K/V block: not even two stages of {cfg.tile_k} keys fit",
            "stages")
    require(cfg.q_tile < cfg.q_tiles, f"view Q tile {cfg.q_tile} does not exist: seqlen_q {cfg.seqlen_q} makes "
            f"{cfg.q_tiles} tiles of {cfg.tile_q} rows", f"pick q_tile < {cfg.q_tiles}", "q_tile")
    require(cfg.fault is not AttentionFault.PINGPONG_BROKEN or cfg.pingponging,
            "the broken ping-pong order needs ping-pong between two or three consumer warpgroups",
            "use consumer_wgs=2 and ping-pong on", "consumer_wgs")
    require(cfg.fault is not AttentionFault.O_EARLY_RELEASE or cfg.tma_store,
            "this planted fault is in the store task of the TMA-store epilogue, which runs with tma_store on only",
            "turn tma_store on", "tma_store")
    require(cfg.fault not in OVERLAP_FAULTS or cfg.overlap,
            "this planted fault is in the overlapped loop (the lagged P·V), which runs with overlap on only",
            "turn overlap on", "overlap")
    require(cfg.fault is AttentionFault.NONE or cfg.kv_blocks > 0,
            f"Q tile {cfg.q_tile} sees no key under the causal mask, so a planted fault has no K/V loop to live in",
            "view a later Q tile, or causal off", "q_tile")


def inactive(cfg: HopperAttention) -> Mapping[str, str]:
    """Knobs that change nothing for this config, and why."""
    out: dict[str, str] = {}
    if cfg.consumer_wgs == 1:
        out["pingpong"] = "ping-pong orders two consumer warpgroups; there is one"
    return out


def async_reads(resource: str) -> AsyncReads:
    """WGMMA's asynchronous reads of the K (S GEMM) or V (P·V GEMM) stages, for the async-read rule.

    The two GEMMs commit into one queue of WGMMA groups per warpgroup: ``wait_s_keep_pv`` (overlap) completes
    the S GEMM only where the lagged P·V was issued after it, which the rule checks by counting both kinds.
    """
    if resource == "k_smem":
        return AsyncReads(resource="k_smem", issue="qk", in_flight=1, drains=("wait_s",),
                          drains_but_newest=("wait_s_keep_pv",), other_groups=(("v_smem", "pv"),))
    return AsyncReads(resource="v_smem", issue="pv", in_flight=1, drains=("wait_o",),
                      other_groups=(("k_smem", "qk"),))


def _tma(stages: int, nbytes: int, consumer_warps: int, load_warps: int) -> PipelineConfig:
    """TMA fills a stage (each load warp arms its share of the bytes); every consumer warp releases it."""
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=nbytes, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_warps),
        cta_layout_vmnk=(1, 1, 1, 1), producer_signaling_threads=SignalingThreads.TaskWarpLeader,
        num_bytes_per_warp_per_cta=nbytes // load_warps)


def _queue(cfg: HopperAttention, ctx: BuildContext) -> WorkQueue | None:
    if cfg.persistence is Persistence.NONE:
        return None
    params = runtime(ctx, "scheduler_params", None)
    return WorkQueue(name="tiles", tile_scheduler_config=TileSchedulerConfig
                     .create_static_persistent_tile_scheduler_params(tile_scheduler_params=params))


def _per_tile_bound(coord: Any) -> None:
    """The CPU stand-in of a K/V loop whose length differs from tile to tile: no single number answers."""
    return None


def _kv_domain(cfg: HopperAttention, ctx: BuildContext) -> tuple[Any, type]:
    """The K/V loop length and the task class: a number on the CPU (the viewed tile's), per work tile on the GPU.

    Inside the kernel the causal mask gives each Q tile its own count, so the
    loop's end is :class:`KvBlocksTask`'s ``get_domain`` (TS calls it per tile).
    On the CPU a persistent CTA whose tiles differ in length records that
    per-tile bound too: TS's tile loop repeats one loop length, so no search
    covers such a walk and the verdict says so (INCONCLUSIVE) rather than
    proving a walk of one length in its place.
    """
    if not ctx.on_gpu and not mixed_walk(recorded_walk(cfg, ctx)):
        return runtime(ctx, "kv_blocks", cfg.kv_blocks), Task
    return KvBlocksTask.get_domain, KvBlocksTask


def work_order(cfg: HopperAttention, ctx: BuildContext) -> Any:
    """In the kernel: the order work tiles are taken in, with the sizes it needs
    (:func:`~ts_explore.kernels.attention_tiles.work_coord`). Non-causal, the Q tiles of one head follow each
    other; causal, longest first in groups of heads whose K and V fit in L2, or under static persistence the
    snake. None on the CPU, which records one tile's steps and names the walks with the same order
    (``cta_walk``, ``viewed_cta``)."""
    if not ctx.on_gpu:
        return None
    how = ("snake" if cfg.persistence is Persistence.STATIC else "grouped") if cfg.causal else "by q tile"
    return WorkOrder(*runtime(ctx, "work_order", None), how=how)


def kv_bounds(cfg: HopperAttention, seqlen_q: Any, seqlen_kv: Any, order: Any = None) -> Any:
    """In the kernel: a work tile's K/V block count from its coordinates ``(head, batch, z)``.

    The DSL form of :func:`~ts_explore.kernels.attention_geometry.kv_blocks` (floor division of
    a negative last key is clamped to 0 by the max).
    """
    import cutlass

    def count(coord: Any) -> Any:
        total = (seqlen_kv + cfg.tile_k - 1) // cfg.tile_k
        if not cfg.causal:
            return total
        m = q_tile_index(work_coord(coord, order), seqlen_q, cfg.tile_q, cfg.causal)
        last_row = cutlass.min((m + 1) * cfg.tile_q, seqlen_q) - 1
        last_key = last_row + seqlen_kv - seqlen_q
        return cutlass.max(cutlass.Int32(0), cutlass.min(total, (last_key + cfg.tile_k) // cfg.tile_k))

    return count


def fences_sums(cfg: HopperAttention) -> bool:
    """Whether each block's softmax ends with a branch on its rows' sums (``QTile.fence_sums``), which ends the
    basic block after every exp2 and row-sum add, so that all of them precede the P·V wait (66 of 66 exp2s in the
    SASS of the default kernel, against 54 with :func:`fences_pv_wait`'s branch). Off everywhere: in place of that
    branch it ran at 0.97x to 1.00x of its speed on an H100 (hd128 non-causal 2k, 8k and 16k, causal 8k;
    ``benchmarks/attention_boundary.py``, which builds and times both in one process:
    ``benchmarks/results/attention_boundary.h100.txt``)."""
    return False


def fences_pv_wait(cfg: HopperAttention) -> bool:
    """Whether the consumers' wait for the lagged P·V starts a basic block (``VStages.fence_pv_wait``): with
    overlap, on one or two consumer warpgroups. Without it ptxas hoisted the wait above the softmax, which then
    ran after the GEMM it should hide under. Timed on an H100 (``benchmarks/attention.py``): hd128 8k non-causal
    644 and 655 TFLOP/s (0.97x and 0.98x FA4; 527 and 543 in order), hd64 8k on two warpgroups 403 to 435; the
    default kernel built without it ran at 0.91x to 0.96x of its speed (``attention_boundary.h100.txt``). Three
    warpgroups (160 registers each, two others' GEMMs to hide each softmax under) ran 492 against 543 with it, so
    they go without. In order there is no softmax between the P·V GEMM and its wait."""
    return cfg.overlap and cfg.consumer_wgs < 3


def pingpong_turns(cfg: HopperAttention) -> list[Turn]:
    """Ping-pong's data-less pipelines, a ring: ``mma<c>`` hands the right to issue WGMMA to the next consumer
    through ``turn<c><c+1>`` (two consumers: ``turn01`` and ``turn10``; three: ``turn01``, ``turn12``, ``turn20``)
    and takes it from the one before (none without ping-pong). The consumers' steps on them are
    :class:`~.attention_schedule.Consumer`'s ping-pong methods."""
    if not cfg.pingponging:
        return []
    return [Turn(name=name, pipeline_config=turn_pipeline()) for name in turn_names(cfg.consumer_wgs)]


def build(cfg: HopperAttention, ctx: BuildContext) -> Built:
    """Load task on warps 0-3 (0-1 beside the store task on 2-3 with ``tma_store``); consumer ``mma<c>`` on warps
    4 + 4c .. 7 + 4c."""
    geo, wgs = cfg.geometry(), cfg.consumer_wgs
    load_warps = o_store.LOADER_WARPS if cfg.tma_store else LOAD_WARPS
    n_kv, task_type = _kv_domain(cfg, ctx)
    sq, skv = runtime(ctx, "seqlen_q", cfg.seqlen_q), runtime(ctx, "seqlen_kv", cfg.seqlen_kv)
    order = work_order(cfg, ctx)
    src = QkvGlobal(name="qkv_global", geo=geo, causal=cfg.causal, seqlen_q=sq, order=order)
    qs = [QTile(name=f"q{c}", pipeline_config=_tma(1, geo.q_bytes // wgs, 4, load_warps), index=c, geo=geo,
                causal=cfg.causal,
                tma_q=tensor(ctx, "tma_q"), g_q=tensor(ctx, "g_q"), seqlen_q=sq, seqlen_kv=skv, order=order,
                fence_sums=fences_sums(cfg))
          for c in range(wgs)]
    k = KStages(name="k_smem", pipeline_config=_tma(cfg.stages, geo.kv_stage_bytes, 4 * wgs, load_warps), geo=geo,
                q_tiles=qs,
                tma_k=tensor(ctx, "tma_k"), g_k=tensor(ctx, "g_k"), order=order)
    v = VStages(name="v_smem", pipeline_config=_tma(cfg.stages, geo.kv_stage_bytes, 4 * wgs, load_warps), geo=geo,
                tma_v=tensor(ctx, "tma_v"), g_v=tensor(ctx, "g_v"), order=order, fence_pv_wait=fences_pv_wait(cfg))
    if cfg.tma_store:
        outs: list[Any] = o_store.out_buffers(cfg, geo, ctx, sq, order)
    else:
        outs = [OutTile(name=f"o{c}", index=c, geo=geo, causal=cfg.causal, g_o=tensor(ctx, "g_o"),
                        g_lse=tensor(ctx, "g_lse"), seqlen_q=sq, order=order) for c in range(wgs)]
    allocator = SmemAllocator()  # Q of each consumer, K and V stages, O buffers: side by side (no overlap)
    for resource in (*qs, k, v, *(outs if cfg.tma_store else ())):
        allocator.add_resource(resource)
    allocator.compute_layout()
    turns = pingpong_turns(cfg)
    wq = _queue(cfg, ctx)
    extra = [wq] if wq is not None else []
    loader = task_type(name="load", src_resources=[src, *extra], dst_resources=[*qs, k, v], warp_idx=0,
                       num_warps=load_warps, schedule=load_schedule(src, qs, k, v, wq, n_kv),
                       num_registers=LOAD_REGISTERS)
    tasks = [loader]
    if cfg.tma_store:
        tasks.append(o_store.store_task(outs, wq, LOAD_REGISTERS,
                                        early_release=cfg.fault is AttentionFault.O_EARLY_RELEASE))
    graph: dict[Any, list[Any]] = {r: [src, *extra] for r in (*qs, k, v)}
    for c in range(wgs):
        take = turns[c - 1] if turns else None  # mma<c> takes from the one before and hands to the next
        hand = turns[c] if turns else None
        n_cons, consumer_type = n_kv, task_type
        if cfg.fault is AttentionFault.CONSUMER_EXTRA and c == wgs - 1:  # one block more than the loader loads
            n_cons, consumer_type = ((ExtraKvBlockTask.get_domain, ExtraKvBlockTask) if task_type is KvBlocksTask
                                     else (n_kv + 1, Task))
        planted = frozenset({_SCHEDULE_FAULTS[cfg.fault]} if cfg.fault in _SCHEDULE_FAULTS else ())
        sched = consumer_schedule(qs[c], k, v, outs[c], take, hand, wq, n_cons, first=c == 0, overlap=cfg.overlap,
                                  faults=planted, hand_over=cfg.tma_store)
        tasks.append(consumer_type(name=f"mma{c}", src_resources=[qs[c], k, v, *([take] if take else []), *extra],
                                   dst_resources=[outs[c], *([hand] if hand else [])], warp_idx=LOAD_WARPS * (1 + c),
                                   num_warps=4, schedule=sched, num_registers=geo.mma_registers))
        graph[outs[c]] = [qs[c], k, v, *extra]
        if hand is not None:
            graph[hand] = [k]
    if ctx.on_gpu or task_type is KvBlocksTask:
        bounds = kv_bounds(cfg, sq, skv, order) if ctx.on_gpu else _per_tile_bound
        for task in tasks:
            task.kv_bounds = bounds
    not_modelled = (SCOPE_NOTE, *((o_store.STORE_SCOPE_NOTE,) if cfg.tma_store else ()))
    rules = (AsyncReadRule(async_reads("k_smem")), AsyncReadRule(async_reads("v_smem")),
             *(AsyncReadRule(o_store.store_reads(out.name, wgs)) for out in (outs if cfg.tma_store else ())))
    return Built(tasks=tasks, resource_dependency_graph=graph, task_manager_kwargs={"smem_allocator": allocator},
                 notes=() if ctx.on_gpu else view.notes(cfg, geo, recorded_walk(cfg, ctx)),
                 not_modelled=not_modelled, rules=rules)


SCENARIO = register(Scenario(
    name="hopper_attention",
    title="Hopper attention forward (FlashAttention-3 style schedule)",
    config_type=HopperAttention,
    build_fn=build,
    check_fn=check,
    description="O = softmax(Q·Kᵀ·scale)·V: a TMA load warpgroup brings Q once per tile and K, V per block on "
                "their own pipelines; one to three consumer warpgroups run S = Q·Kᵀ, the online softmax and "
                "O += P·V, optionally taking turns (ping-pong).",
    kernel="ts_explore.kernels.attention",
    inactive_fn=inactive,
))
