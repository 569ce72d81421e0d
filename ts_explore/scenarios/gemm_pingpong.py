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
its own tile, committing an empty group on the other's so that "one group in
flight" holds on every iteration. TS sees one uniform schedule per task, and
TS 4.8.1 lowers it (one ``domain_loop`` per task).

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
for a whole tile's 128 fp32 accumulators.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..kernels.gemm_geometry import LOAD_WARPS, WARPGROUP_THREADS, Geometry, Release
from ..kernels.gemm_resources import EPILOGUE_BARRIER_ID, OutputTile
from .common import next_work_tile

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
                      broken: bool = False) -> Any:
    """Consumer ``mma<c>``'s schedule (see the module docstring).

    ``broken`` plants a mistake in mma0: its k-loop runs one stage more than
    the unit has, so it takes the next unit's first stage as its own and, after
    the CTA's last unit, waits for a stage the loader never fills.
    """
    trips = 2 * n_k + 1 if broken and c == 0 else 2 * n_k

    def unit(ring: Any, out: Any) -> None:
        accumulate_and_store(ring, out, trips, release=release, epilogue_parts=epilogue_parts, tile=c)

    if wq is None:
        def mma(ring: Any, out: Any) -> None:
            unit(ring, out)
            out.flush()

        mma.__name__ = f"mma{c}"
        return schedule(mma)(ring, out)

    def mma(ring: Any, out: Any, wq: Any) -> None:  # type: ignore[no-redef]
        with work_tile_loop(wq):
            unit(ring, out)
            next_work_tile(wq)
        out.flush()

    mma.__name__ = f"mma{c}"
    return schedule(mma)(ring, out, wq)


def tasks(src: Any, ring: Any, outs: list[OutputTile], wq: Any, n_k: Any, *, release: Release,
          load_registers: int, mma_registers: int, broken: bool = False) -> list[Task]:
    """``load`` (warps 0-3), ``mma0`` (warps 4-7) and ``mma1`` (warps 8-11), all on the one ring."""
    extra = [wq] if wq is not None else []
    load = Task(name="load", src_resources=[src, *extra], dst_resources=[ring], warp_idx=0, num_warps=LOAD_WARPS,
                schedule=load_schedule(src, ring, wq, n_k), num_registers=load_registers)
    consumers = [Task(name=f"mma{c}", src_resources=[ring, *extra], dst_resources=[outs[c]],
                      warp_idx=consumer_warp(c), num_warps=WARPGROUP_THREADS // 32,
                      schedule=consumer_schedule(c, ring, outs[c], wq, n_k, release=release,
                                                 epilogue_parts=outs[c].geo.epilogue_parts, broken=broken),
                      num_registers=mma_registers)
                 for c in range(CONSUMERS)]
    return [load, *consumers]


__all__ = ["CONSUMERS", "accumulate", "accumulate_and_store", "consumer_schedule", "consumer_warp", "load_schedule", "output_tiles", "tasks"]
