"""The ping-pong GEMM's shared epilogue (``epilogue=shared``): both consumers store C through one set of buffers,
in turns.

With per-consumer buffers (``epilogue=inline``) a 128x192 ping-pong CTA holds
2 x 2 x 8 KiB of C buffers and its ring only 4 stages of 40 KiB. Here the two
consumers share one set (``TurnBuffers``, resource ``c``), so the ring takes
5 stages (``Geometry.shared_epilogue``). The buffers are a TS pipeline of one
stage, and that stage is the turn:

- ``mma0`` is its producer: after its mainloop it acquires the turn, writes
  and TMA-stores its tile's parts (``store0``), waits until those stores have
  read the buffers (``drain0``) and commits, handing the turn to mma1;
- ``mma1`` is its consumer: after its mainloop it waits for the turn, stores
  its parts (``store1``), waits for their reads (``drain1``) and releases the
  turn, handing the buffers back for mma0's next tile.

The order matches the ring's (mma0's mainloop ends first in each work unit),
so the turn rarely waits: mma0's epilogue runs under mma1's mainloop and
mma1's under mma0's next one. TS sees the turn, so the checker proves it free
of deadlocks; TS counts a buffer as read when ``store1`` returns, so the
async-read rule (:func:`turn_reads`) checks mma1's release against its read
waits, and the planted ``SHARED_EARLY_TURN`` fault (release before
``drain1``) is reported there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.resources import PipelineConfig

from ..analysis.async_reads import AsyncReads
from ..kernels.gemm_epilogue import EPILOGUE_BARRIER_ID, TurnBuffers
from ..kernels.gemm_geometry import LOAD_WARPS, WARPGROUP_THREADS, GemmMode, Geometry
from .common import require
from .gemm_config import GemmFault, HopperGemm

TURN_SCOPE_NOTE = (
    "TS does not model the TMA store's asynchronous read of the shared C buffers: it counts them as read when "
    "mma1's store step returns; ts-explore's async-read rule checks mma1's release of the turn against its read "
    "waits (mma0 waits for its reads, drain0, before its commit hands the turn over)."
)


def turn_pipeline(geo: Geometry) -> PipelineConfig:
    """AsyncAsync of one stage: every mma0 thread commits the turn, every mma1 thread releases it (TS wants the
    kernel's cluster shape on every pipeline; the turn stays inside its CTA)."""
    cfg = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=1,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, WARPGROUP_THREADS),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, WARPGROUP_THREADS),
        cta_layout_vmnk=(1, geo.cluster_m, geo.cluster_n, 1))
    return replace(cfg, advance_on_wait=False)


def turn_buffers(geo: Geometry, swap: bool, tma_c: Any, g_c: Any, scale: Any = None) -> TurnBuffers:
    """The ``c`` resource: one consumer's set of buffers, taken in turns (``scale``: fp8's scale_a·scale_b)."""
    return TurnBuffers(name="c", pipeline_config=turn_pipeline(geo), geo=geo.consumer_view(), swap_mn=swap,
                       tma_c=tma_c, g_c=g_c, scale=scale, consumer_thread0=LOAD_WARPS * 32,
                       thread0_1=2 * LOAD_WARPS * 32, barrier_id=EPILOGUE_BARRIER_ID)


def turn_reads(geo: Geometry) -> AsyncReads:
    """What mma1's TMA stores do that TS cannot see: each ``store1`` leaves at most buffers - 1 of them reading."""
    return AsyncReads(resource="c", issue="store1", in_flight=geo.epilogue_buffers - 1, drains=("drain1",))


def store_in_turn(c: Any, acc: Any, side: int, parts: int, *, early_turn: bool = False) -> None:
    """Consumer ``mma<side>``'s epilogue: take the turn, store every part, wait for the reads, hand it over.

    ``early_turn`` plants a mistake in mma1: it releases the turn right after
    issuing its last store, without waiting for the stores' reads (only the
    CTA's final flush waits for them).
    """
    if side == 0:
        c.try_acquire()
        c.acquire()
        for part in range(parts):
            c.store0(acc=acc, part=part)
        c.drain0()
        c.commit()
        return
    c.try_wait()
    c.wait()
    for part in range(parts):
        c.store1(acc=acc, part=part)
    if not early_turn:
        c.drain1()
    c.release()


def flush(c: Any, side: int) -> None:
    """Before the CTA exits: consumer ``mma<side>``'s stores have written C."""
    if side == 0:
        c.flush0()
    else:
        c.flush1()


def check(cfg: HopperGemm) -> None:
    """What the shared epilogue needs: the ping-pong mode (its two consumers take the turns)."""
    require(cfg.mode is GemmMode.PINGPONG,
            "epilogue=shared lets the two ping-pong consumers take one set of C buffers in turns; a cooperative "
            "tile's warpgroups store together", "use mode=ping-pong with epilogue=shared, or epilogue=inline",
            "epilogue")


def notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    """What the CPU view says about the shared epilogue (nothing without it)."""
    if not geo.shared_epilogue:
        return []
    notes = [f"shared epilogue: one set of {geo.epilogue_buffers} C buffers ({geo.epilogue_bytes // 1024} KiB) for "
             "both consumers, taken in turns through pipeline c of one stage: mma0 acquires it, stores its tile, "
             "waits for the stores' reads and commits; mma1 waits for it, does the same and releases it back; "
             f"the room of the other set goes to the ring ({geo.max_stages()} stages fit)"]
    if cfg.fault is GemmFault.SHARED_EARLY_TURN:
        notes.append(f"planted fault: {cfg.fault.value}")
    return notes


__all__ = ["TURN_SCOPE_NOTE", "check", "flush", "notes", "store_in_turn", "turn_buffers", "turn_pipeline",
           "turn_reads"]
