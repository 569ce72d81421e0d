"""Ping-pong consumers of the Hopper GEMM: two warpgroups on alternate output tiles, written as a TS schedule.

The tile scheduler hands out *work units* of two output tiles stacked along M
(``Geometry.work_tile_m``): consumer ``mma0`` (warps 4-7) owns the upper tile
of every unit, ``mma1`` (warps 8-11) the lower one, so the CTA's tile stream
alternates between them (mma0 the 1st, 3rd, ...; mma1 the 2nd, 4th, ...) and
every task walks the queue once per unit. Each consumer accumulates a whole
tile in one warpgroup (two m64 WGMMA rows for a 128-row tile) and stores it
through epilogue buffers, a named barrier (1, 2) and an ``OutputTile`` of its own.

The order is in the schedule, where TS and our checker see it. Two data-less
one-slot pipelines (:class:`~ts_explore.kernels.turn.Turn`) carry the right
to run a mainloop; per unit::

    mma0: mainloop(upper, hand turn01 once its last k-block is issued) ; epilogue(upper) ; take turn10
    mma1: take turn01 ; mainloop(lower, hand turn10 likewise) ; epilogue(lower)

so mma1's mainloop follows mma0's and runs under mma0's epilogue, and mma0's
next mainloop waits until mma1's is issued and runs under mma1's epilogue.
The hand-over sits in the k-loop's last iteration, before the wait for the
last WGMMAs, so the next mainloop's first WGMMAs queue behind them.
mma0 starts with the turn and takes mma1's hand-over at the end of each unit,
so every hand-over is taken within its unit (no first-unit special case).

**One A/B ring and one load task per consumer.** The loader cannot serve
both consumers from one ring in TS 4.8.1: a shared ring needs each consumer
to wait for (and release) the other's stages, a second k-loop after its own,
and TS lowers a schedule with at most one ``domain_loop`` ("Multiple/
sequential domain loops require the tree-walking runtime"); one loader
alternating two rings inside one k-loop interleaves the two tiles' loads and
deadlocks as soon as the waiting consumer's ring is full. So the load
warpgroup is split: ``load0`` (warps 0-1) fills ``ring0`` for mma0 and
``load1`` (warps 2-3) fills ``ring1`` for mma1, each with one k-loop per unit.
The price, on paper: a shared ring of 128x128x64 stages (32 KiB each) would
hold 6 stages beside 2 x 16 KiB of epilogue buffers; two rings hold 3 each,
so a mainloop runs at most 3 k-blocks ahead of its loads (64x256: 40 KiB
stages, 2 per ring). The idle ring refills while the other consumer's
mainloop runs, so each mainloop starts with a full ring.

**Registers.** ``setmaxnreg`` is a warpgroup-wide instruction, and the load
warpgroup now runs two tasks, so no task sets it: 384 threads get 168
registers each, room for a consumer's 128 accumulators. (A fourth warpgroup
for a second loader would cap every thread at 128 registers, and ptxas
refuses a 64x256 WGMMA there.)
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..kernels.gemm_geometry import LOAD_WARPS, WARPGROUP_THREADS, Geometry, Release
from ..kernels.gemm_resources import EPILOGUE_BARRIER_ID, OutputTile
from ..kernels.turn import Turn, turn_pipeline

CONSUMERS = 2  # mma0 owns the upper tile of a work unit, mma1 the lower one
LOAD_WARPS_PER_RING = LOAD_WARPS // CONSUMERS  # the load warpgroup, split: warps 0-1 fill ring0, 2-3 ring1


def consumer_warp(c: int) -> int:
    """First warp of consumer ``mma<c>``: warps 4-7 and 8-11."""
    return LOAD_WARPS * (1 + c)


def load_warp(c: int) -> int:
    """First warp of ``load<c>``: warps 0-1 (feed mma0) and 2-3 (feed mma1)."""
    return LOAD_WARPS_PER_RING * c


def _next_unit(wq: Any) -> None:
    wq.try_wait()
    wq.wait()
    wq.get_and_advance_work_tile()
    wq.release()


def _take(turn: Any) -> None:
    turn.try_wait()
    turn.wait()
    turn.take()
    turn.release()


def _hand(turn: Any) -> None:
    turn.try_acquire()
    turn.acquire()
    turn.hand_over()
    turn.commit()


def output_tiles(geo: Geometry, swap: bool, tma_c: Any, g_c: Any, scale: Any = None) -> list[OutputTile]:
    """One ``OutputTile`` per consumer: its own buffers, named barrier (1, 2) and tile of the unit
    (``scale``: fp8's scale_a·scale_b, applied before the bf16 conversion)."""
    view = geo.consumer_view()
    return [OutputTile(name=f"c{c}", geo=view, swap_mn=swap, tma_c=tma_c, g_c=g_c, scale=scale,
                       consumer_thread0=consumer_warp(c) * 32, barrier_id=EPILOGUE_BARRIER_ID + c, unit_tile=c)
            for c in range(CONSUMERS)]


def turns(cluster_m: int = 1) -> tuple[Turn, Turn]:
    """``turn01`` (mma0 hands, mma1 takes) and ``turn10`` (the other way), within one CTA."""
    layout = (1, cluster_m, 1, 1)
    return (Turn(name="turn01", pipeline_config=turn_pipeline(cta_layout_vmnk=layout)),
            Turn(name="turn10", pipeline_config=turn_pipeline(cta_layout_vmnk=layout)))


def load_schedule(c: int, src: Any, ring: Any, wq: Any, n_k: Any) -> Any:
    """``load<c>``: per work unit, the k-blocks of the unit's tile ``c`` into ``ring<c>``."""
    def k_loop(src: Any, ring: Any) -> None:
        with domain_loop(0, n_k, 1):
            m, n, k = src.locate_in_unit(tile=c)
            ring.try_acquire()
            ring.acquire()
            ring.load(m_block=m, n_block=n, k_block=k)
            ring.commit()

    if wq is None:
        def load(src: Any, ring: Any) -> None:
            k_loop(src, ring)

        load.__name__ = f"load{c}"
        return schedule(load)(src, ring)

    def load(src: Any, ring: Any, wq: Any) -> None:  # type: ignore[no-redef]
        with work_tile_loop(wq):
            k_loop(src, ring)
            _next_unit(wq)

    load.__name__ = f"load{c}"
    return schedule(load)(src, ring, wq)


def consumer_schedule(c: int, ring: Any, out: Any, take: Any, hand: Any, wq: Any, n_k: Any, *, release: Release,
                      epilogue_parts: int, broken_turn: bool = False) -> Any:
    """Consumer ``mma<c>``'s schedule (see the module docstring).

    ``broken_turn`` plants a mistake: mma0 waits for mma1's hand-over *before*
    its mainloop, so both consumers wait for the turn and neither hands it over.
    """
    def mainloop(ring: Any, hand: Any) -> Any:
        """The tile's k-loop; the turn is handed over as soon as its last WGMMAs are issued."""
        acc = ring.clear()
        with domain_loop(0, n_k, 1) as kb:
            ring.try_wait()
            ring.wait()
            acc = ring.mma(acc=acc)
            if release is Release.LAGGED:
                with kb.every(1, start=1):
                    ring.release()  # the previous k-block's stage: its WGMMA group has completed
                with kb.last_iter():
                    _hand(hand)
                    ring.drain()
                    ring.release()
            else:
                with kb.last_iter():
                    _hand(hand)
                ring.release()
        if release is Release.PREMATURE:
            ring.drain()
        return acc

    def epilogue(out: Any, acc: Any) -> None:
        for part in range(epilogue_parts):
            out.stage(acc=acc, part=part)
            out.store(part=part)

    def unit(ring: Any, out: Any, take: Any, hand: Any) -> None:
        if c == 0:
            if broken_turn:
                _take(take)
            acc = mainloop(ring, hand)
            epilogue(out, acc)
            if not broken_turn:
                _take(take)  # mma1's mainloop is issued: mma0's next one may start
        else:
            _take(take)
            acc = mainloop(ring, hand)
            epilogue(out, acc)

    if wq is None:
        def mma(ring: Any, out: Any, take: Any, hand: Any) -> None:
            unit(ring, out, take, hand)
            out.flush()

        mma.__name__ = f"mma{c}"
        return schedule(mma)(ring, out, take, hand)

    def mma(ring: Any, out: Any, take: Any, hand: Any, wq: Any) -> None:  # type: ignore[no-redef]
        with work_tile_loop(wq):
            unit(ring, out, take, hand)
            _next_unit(wq)
        out.flush()

    mma.__name__ = f"mma{c}"
    return schedule(mma)(ring, out, take, hand, wq)


def tasks(src: Any, rings: list[Any], outs: list[OutputTile], turn01: Turn, turn10: Turn, wq: Any, n_k: Any, *,
          release: Release, broken_turn: bool = False) -> list[Task]:
    """``load0``, ``load1``, ``mma0`` (takes turn10, hands turn01), ``mma1`` (the other way), in warp order."""
    extra = [wq] if wq is not None else []
    # No setmaxnreg: it is a warpgroup-wide instruction and the load warpgroup runs two tasks. 384 threads
    # leave 168 registers to each, room for a consumer's 128 accumulators.
    loads = [Task(name=f"load{c}", src_resources=[src, *extra], dst_resources=[rings[c]], warp_idx=load_warp(c),
                  num_warps=LOAD_WARPS_PER_RING, schedule=load_schedule(c, src, rings[c], wq, n_k))
             for c in range(CONSUMERS)]
    consumers = []
    for c, (take, hand) in enumerate(((turn10, turn01), (turn01, turn10))):
        sched = consumer_schedule(c, rings[c], outs[c], take, hand, wq, n_k, release=release,
                                  epilogue_parts=outs[c].geo.epilogue_parts, broken_turn=broken_turn)
        consumers.append(Task(name=f"mma{c}", src_resources=[rings[c], take, *extra], dst_resources=[outs[c], hand],
                              warp_idx=consumer_warp(c), num_warps=WARPGROUP_THREADS // 32, schedule=sched))
    return [*loads, *consumers]


__all__ = ["CONSUMERS", "LOAD_WARPS_PER_RING", "consumer_schedule", "load_schedule", "output_tiles",
           "tasks", "turns"]
