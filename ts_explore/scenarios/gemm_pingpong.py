"""Ping-pong consumers of the Hopper GEMM: two warpgroups on alternate output tiles, fed from one A/B ring.

The tile scheduler hands out *work units* of two output tiles stacked along M
(``Geometry.work_tile_m``): consumer ``mma0`` (warps 4-7) owns the upper tile
of every unit, ``mma1`` (warps 8-11) the lower one, so the CTA's tile stream
alternates between them (mma0 the 1st, 3rd, ...; mma1 the 2nd, 4th, ...) and
every task walks the queue once per unit. Each consumer accumulates a whole
tile in one warpgroup (two m64 WGMMA rows for a 128-row tile) and stores it
through epilogue buffers, a named barrier (1, 2) and an ``OutputTile`` of its own.

**One ring, one k-loop of 2·n_k per unit.** One load task on the whole load
warpgroup fills one ring (``smem_ab``); per unit its single k-loop runs
``2 * n_k`` iterations, iteration i bringing k-block ``i mod n_k`` of the upper
tile (i < n_k) or of the lower one (``GlobalOperands.locate_in_unit``: index
arithmetic in the kernel body, not a schedule guard). Each consumer runs the
same ``2 * n_k`` iterations over the same ring: wait, ``mma``, release (one
k-block late) - both wait for and release *every* stage (the ring's consumer
count covers both warpgroups), and ``mma`` issues WGMMA only on the stages of
its own tile, each k-block's group committed right after its WGMMAs (so one
group stays in flight while the next stage is waited for), and on the other's
waits for all its groups, so "at most one group in flight" holds on every
iteration. TS sees one uniform schedule per task, and TS 4.8.1 lowers it (one
``domain_loop`` per task).

**The order is the ring's.** The ring's stages are filled and read in order,
so mma1's first own k-block is loaded only after all of mma0's: its mainloop
follows mma0's, and mma0's next mainloop follows mma1's, with no ordering
pipeline between the consumers (no turn to hand over). Our checker proves the
schedule free of deadlocks and the async-read rule checks both consumers'
releases. Per unit the overlap is:

- mma1's epilogue runs after its mainloop, while mma0's next mainloop runs on
  the stages the loader filled meanwhile;
- mma0 skips through the lower tile's stages as they are loaded, so its
  epilogue starts once the last of them has landed, under the tail of mma1's
  mainloop (the up to ``stages`` k-blocks still in the ring).

**Registers.** The load task holds the whole load warpgroup again, so
``setmaxnreg`` gives it 40 registers and each consumer warpgroup 232: room
for a whole tile's fp32 accumulators, up to 192 of a 128x192 tile (ptxas
allocates them without spilling; ``tests/unit/test_gemm_wide_tiles.py``).
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from cutlass.experimental.task_scheduling.memory import SmemAllocator

from ..analysis.async_reads import SCOPE_NOTE
from ..kernels.gemm_epilogue import EPILOGUE_BARRIER_ID, OutputTile
from ..kernels.gemm_geometry import LOAD_WARPS, MAX_ACCUMULATORS, WARPGROUP_THREADS, Geometry, Release
from ..kernels.gemm_mainloop import GlobalOperands, SmemOperands
from ..model import QueueKind
from ..verification.rules import AsyncReadRule
from . import gemm_pingpong_turns as pingpong_turns
from . import gemm_shared as shared
from .base import BuildContext, Built
from .common import next_work_tile, require, runtime, tensor
from .gemm_config import GemmFault, HopperGemm

CONSUMERS = 2  # mma0 owns the upper tile of a work unit, mma1 the lower one


def consumer_warp(c: int) -> int:
    """First warp of consumer ``mma<c>``: warps 4-7 and 8-11."""
    return LOAD_WARPS * (1 + c)


def output_tiles(geo: Geometry, swap: bool, tma_c: Any, g_c: Any, scale: Any = None) -> list[OutputTile]:
    """One ``OutputTile`` per consumer: its own buffers, named barrier (1, 2) and tile of the unit
    (``scale``: fp8's scale_a·scale_b, applied before the bf16 conversion)."""
    view = geo.consumer_view()
    return [OutputTile(name=f"c{c}", geo=view, swap_mn=swap, tma_c=tma_c, g_c=g_c, scale=scale,
                       consumer_thread0=consumer_warp(c) * 32, barrier_id=EPILOGUE_BARRIER_ID + c, unit_tile=c)
            for c in range(CONSUMERS)]


def load_schedule(src: Any, ring: Any, wq: Any, n_k: Any) -> Any:
    """``load``: per work unit, the upper tile's k-blocks then the lower tile's, into the one ring."""
    def k_loop(src: Any, ring: Any) -> None:
        with domain_loop(0, 2 * n_k, 1):
            m, n, k = src.locate_in_unit()
            ring.try_acquire()
            ring.acquire()
            ring.load(m_block=m, n_block=n, k_block=k)
            ring.commit()

    if wq is None:
        @schedule
        def load(src: Any, ring: Any) -> None:
            k_loop(src, ring)

        return load(src, ring)

    @schedule
    def load(src: Any, ring: Any, wq: Any) -> None:  # type: ignore[no-redef]
        with work_tile_loop(wq):
            k_loop(src, ring)
            next_work_tile(wq)

    return load(src, ring, wq)


def accumulate_and_store(smem: Any, out: Any, trips: Any, *, release: Release, epilogue_parts: int,
                         **mma: Any) -> None:
    """One output tile of a consumer: :func:`accumulate`, then the epilogue, part by part."""
    acc = accumulate(smem, trips, release=release, **mma)
    for part in range(epilogue_parts):
        out.stage(acc=acc, part=part)
        out.store(part=part)


def accumulate(smem: Any, trips: Any, *, release: Release, **mma: Any) -> Any:
    """A tile's mainloop: ``trips`` k-loop iterations of wait, WGMMA (``mma``: its keywords, e.g. the ping-pong
    consumer's ``tile``), release as ``release`` says; returns the accumulator.

    With the lagged release each iteration frees the previous stage (its WGMMA group has completed once
    ``mma`` returns) and the last iteration drains the last group before freeing its own stage.
    """
    acc = smem.clear()
    with domain_loop(0, trips, 1) as kb:
        smem.try_wait()
        smem.wait()
        acc = smem.mma(acc=acc, **mma)
        if release is Release.LAGGED:
            with kb.every(1, start=1):
                smem.release()
            with kb.last_iter():
                smem.drain()
                smem.release()
        else:
            smem.release()
    if release is Release.PREMATURE:
        smem.drain()
    return acc


def consumer_schedule(c: int, ring: Any, out: Any, wq: Any, n_k: Any, *, release: Release, epilogue_parts: int,
                      broken: bool = False, turns: bool = False, early_turn: bool = False) -> Any:
    """Consumer ``mma<c>``'s schedule (see the module docstring).

    ``broken`` plants a mistake in mma0: its k-loop runs one stage more than
    the unit has, so it takes the next unit's first stage as its own and, after
    the CTA's last unit, waits for a stage the loader never fills. With
    ``turns`` ``out`` is the shared epilogue's ``TurnBuffers``
    (:mod:`.gemm_pingpong_turns`; ``early_turn`` plants its fault).
    """
    trips = 2 * n_k + 1 if broken and c == 0 else 2 * n_k

    def unit(ring: Any, out: Any) -> None:
        if turns:
            acc = accumulate(ring, trips, release=release, tile=c)
            pingpong_turns.store_in_turn(out, acc, c, epilogue_parts, early_turn=early_turn)
        else:
            accumulate_and_store(ring, out, trips, release=release, epilogue_parts=epilogue_parts, tile=c)

    def finish(out: Any) -> None:
        if turns:
            pingpong_turns.flush(out, c)
        else:
            out.flush()

    if wq is None:
        def mma(ring: Any, out: Any) -> None:
            unit(ring, out)
            finish(out)

        mma.__name__ = f"mma{c}"
        return schedule(mma)(ring, out)

    def mma(ring: Any, out: Any, wq: Any) -> None:  # type: ignore[no-redef]
        with work_tile_loop(wq):
            unit(ring, out)
            next_work_tile(wq)
        finish(out)

    mma.__name__ = f"mma{c}"
    return schedule(mma)(ring, out, wq)


def tasks(src: Any, ring: Any, outs: list[Any], wq: Any, n_k: Any, *, release: Release,
          load_registers: int, mma_registers: int, broken: bool = False, early_turn: bool = False) -> list[Task]:
    """``load`` (warps 0-3), ``mma0`` (warps 4-7) and ``mma1`` (warps 8-11), all on the one ring; ``outs``: an
    ``OutputTile`` per consumer, or one ``TurnBuffers`` both take in turns (mma0 produces the turn, mma1
    consumes it)."""
    extra = [wq] if wq is not None else []
    turns = len(outs) == 1
    load = Task(name="load", src_resources=[src, *extra], dst_resources=[ring], warp_idx=0, num_warps=LOAD_WARPS,
                schedule=load_schedule(src, ring, wq, n_k), num_registers=load_registers)
    consumers = []
    for c in range(CONSUMERS):
        out = outs[0] if turns else outs[c]
        reads, writes = ([ring, out] if c == 1 else [ring], [out] if c == 0 else []) if turns else ([ring], [out])
        consumers.append(Task(name=f"mma{c}", src_resources=[*reads, *extra], dst_resources=writes,
                              warp_idx=consumer_warp(c), num_warps=WARPGROUP_THREADS // 32,
                              schedule=consumer_schedule(c, ring, out, wq, n_k, release=release,
                                                         epilogue_parts=out.geo.epilogue_parts, broken=broken,
                                                         turns=turns, early_turn=early_turn),
                              num_registers=mma_registers))
    return [load, *consumers]


def check(cfg: HopperGemm) -> None:
    """What ping-pong needs: two consumer warpgroups, a tile one warpgroup holds, a queue it can walk."""
    require(cfg.consumer_wgs == 2,
            f"ping-pong alternates tiles between two consumer warpgroups; consumer_wgs={cfg.consumer_wgs}",
            "use consumer_wgs=2 (or mode=cooperative)", "consumer_wgs")
    geo = cfg.geometry()
    require(geo.accumulators_per_thread <= MAX_ACCUMULATORS,
            f"ping-pong tile {cfg.tile.value} in one warpgroup needs {geo.accumulators_per_thread} fp32 "
            f"accumulators per thread, more than the {MAX_ACCUMULATORS} that fit beside the addresses in a "
            f"consumer's {shared.MMA_REGISTERS} registers",
            "use tile 128x192x64, 128x128x64 or 64x256x64 with ping-pong", "tile")
    require(cfg.persistence is not QueueKind.CLC,
            "ping-pong with CLC would need a 13th (scheduler) warp, which leaves 128 registers per thread, too few "
            "beside a whole tile's accumulators (and CLC runs on no GPU with WGMMA)",
            "use persistence=static or none with ping-pong", "persistence")


def build(cfg: HopperGemm, ctx: BuildContext, geo: Geometry, where: Any, n_k: Any, swap: bool,
          by_shape: bool = False) -> Built:
    """One loader and consumers ``mma0``/``mma1`` on alternate tiles, all on one ring (see ``gemm_pingpong``)."""
    src = GlobalOperands(name="global_ab", swap_mn=swap, k_blocks=n_k)
    ring = SmemOperands(name="smem_ab", pipeline_config=shared.ab_pipeline(cfg, geo), geo=geo.consumer_view(),
                        in_flight=cfg.release.in_flight, tma_a=tensor(ctx, "tma_a"), tma_b=tensor(ctx, "tma_b"),
                        g_a=tensor(ctx, "g_a"), g_b=tensor(ctx, "g_b"),
                        consumer_thread0=consumer_warp(0) * 32, k_blocks=n_k)
    if geo.shared_epilogue:
        outs = [pingpong_turns.turn_buffers(geo, swap, tensor(ctx, "tma_c"), tensor(ctx, "g_c"),
                                            runtime(ctx, "scale", None))]
    else:
        outs = output_tiles(geo, swap, tensor(ctx, "tma_c"), tensor(ctx, "g_c"), runtime(ctx, "scale", None))
    allocator = SmemAllocator()
    for resource in (ring, *outs):
        allocator.add_resource(resource)
    allocator.compute_layout()
    wq = shared.tile_queue(cfg, ctx, geo.threads)
    extra = [wq] if wq is not None else []
    built = tasks(src, ring, outs, wq, n_k, release=cfg.release, load_registers=shared.LOAD_REGISTERS,
                  mma_registers=shared.MMA_REGISTERS, broken=cfg.fault is GemmFault.PINGPONG_BROKEN,
                  early_turn=cfg.fault is GemmFault.SHARED_EARLY_TURN)
    graph: dict[Any, list[Any]] = {ring: [src, *extra]}
    graph.update({out: [ring, *extra] for out in outs})
    rules = (AsyncReadRule(shared.async_reads(cfg)),)
    if geo.shared_epilogue:
        rules += (AsyncReadRule(pingpong_turns.turn_reads(geo)),)
    return Built(tasks=built, resource_dependency_graph=graph, task_manager_kwargs={"smem_allocator": allocator},
                 notes=() if ctx.on_gpu else shared.notes(cfg, geo, where, by_shape,
                                                          notes(cfg, geo) + pingpong_turns.notes(cfg, geo)),
                 not_modelled=(SCOPE_NOTE, pingpong_turns.TURN_SCOPE_NOTE) if geo.shared_epilogue else (SCOPE_NOTE,),
                 rules=rules)


def notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    """What the CPU view says about the ping-pong consumers (nothing for another mode)."""
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


__all__ = ["CONSUMERS", "accumulate", "accumulate_and_store", "build", "check", "consumer_schedule", "consumer_warp",
           "load_schedule", "notes", "output_tiles", "tasks"]
