"""The attention's TMA-store epilogue: each consumer hands its O rows to a store task through shared memory.

With ``tma_store=True`` (the default) every consumer warpgroup ``mma<c>`` owns
a one-stage pipeline ``o<c>`` (:class:`~ts_explore.kernels.attention_epilogue.OutBuffer`):

- **producer** - every thread of ``mma<c>``: acquire the buffer, ``stage``
  (write the rows' LSE, O divided by the row sums into the buffer, proxy
  fence), commit. Then it starts its next tile's mainloop at once.
- **consumer** - the task ``store`` (warps 2-3 of the load warpgroup; warp 2
  issues): per tile it walks the same work queue, waits for each consumer's
  buffer and TMA-stores it, then per buffer waits until every store has read
  shared memory (``drain``) and releases it. ``flush`` waits for every write
  before the CTA exits.

The loader keeps warps 0-1 (each arms half of a stage's bytes). TS counts a
buffer as read when ``store`` returns; the TMA engine reads it later. The
async-read rule (:func:`store_reads`) checks every release against the
drains, as it does for the WGMMA reads of the K and V rings; the planted
fault ``O_EARLY_RELEASE`` releases each buffer right after its store is issued.
"""

from __future__ import annotations

from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.resources import PipelineConfig
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..analysis.async_reads import AsyncReads
from ..kernels.attention_epilogue import STORE_WARP, OutBuffer
from ..kernels.attention_tiles import WG_THREADS
from .common import next_work_tile, tensor

STORE_WARPS = 2  # warps 2-3 of the load warpgroup; STORE_WARP (2) issues
LOADER_WARPS = STORE_WARP  # the loader keeps warps 0-1 beside the store task
STORE_SCOPE_NOTE = (
    "TS does not model the TMA store's asynchronous read of the O buffers: it counts a buffer as read when the "
    "store step returns; ts-explore's async-read rule checks the store task's releases against its read waits."
)


def out_pipeline() -> PipelineConfig:
    """One stage: every thread of the consumer warpgroup commits, every thread of the store task releases."""
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, WG_THREADS),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, STORE_WARPS * 32),
        cta_layout_vmnk=(1, 1, 1, 1))


def out_buffers(cfg: Any, geo: Any, ctx: Any, seqlen_q: Any, order: Any) -> list[OutBuffer]:
    """``o0`` (and ``o1``): one consumer warpgroup's O buffer each."""
    return [OutBuffer(name=f"o{c}", pipeline_config=out_pipeline(), index=c, geo=geo, causal=cfg.causal,
                      tma_o=tensor(ctx, "tma_o"), g_o=tensor(ctx, "g_o_tma"), g_lse=tensor(ctx, "g_lse"),
                      seqlen_q=seqlen_q, order=order)
            for c in range(cfg.consumer_wgs)]


def store_reads(resource: str, buffers: int) -> AsyncReads:
    """What the TMA stores do that TS cannot see, for the async-read rule: ``store`` returns with its read
    running; ``drain`` waits for every read (the other buffer's stores commit into the same bulk-group queue)."""
    others = tuple((f"o{c}", "store") for c in range(buffers) if f"o{c}" != resource)
    return AsyncReads(resource=resource, issue="store", in_flight=1, drains=("drain",), other_groups=others)


def hand_over(out: Any, acc: Any, stats: Any) -> None:
    """A consumer's epilogue: O and the LSE into its buffer, handed over by the commit."""
    out.try_acquire()
    out.acquire()
    out.stage(acc_o=acc, stats=stats)
    out.commit()


def send_tile(outs: list[Any], *, early_release: bool = False) -> None:
    """The store task's work per tile: wait for each buffer and TMA-store it; then per buffer wait for the
    stores' reads and release it. ``early_release`` plants a mistake: each buffer is released right after its
    store is issued, while the TMA engine may still read it. (TS wants a domain loop in every schedule: this one
    runs once per tile.)"""
    with domain_loop(0, 1, 1):
        for out in outs:
            out.try_wait()
            out.wait()
            out.store()
            if early_release:
                out.release()
        for out in outs:
            out.drain()
            if not early_release:
                out.release()


def store_task(outs: list[Any], wq: Any, registers: int, *, early_release: bool = False) -> Task:
    """The task ``store`` on warps 2-3: one tile's :func:`send_tile` per work tile, then ``flush``."""
    n = len(outs)

    def store(*proxies: Any) -> None:
        bufs, queue = list(proxies[:n]), (proxies[n] if len(proxies) > n else None)
        if queue is None:
            send_tile(bufs, early_release=early_release)
        else:
            with work_tile_loop(queue):
                send_tile(bufs, early_release=early_release)
                next_work_tile(queue)
        bufs[0].flush()

    store.__name__ = "store"
    extra = [wq] if wq is not None else []
    return Task(name="store", src_resources=[*outs, *extra], dst_resources=[], warp_idx=LOADER_WARPS,
                num_warps=STORE_WARPS, schedule=schedule(store)(*outs, *extra), num_registers=registers)


def note(cfg: Any) -> str:
    """What the CPU view says about the TMA-store epilogue."""
    owners = " and ".join(f"mma{c}" for c in range(cfg.consumer_wgs))
    return (f"TMA-store epilogue: {owners} each write the LSE and O (divided by the row sums) into their own buffer "
            f"(pipeline o<c>, one stage) and commit it, then start their next tile; the store task (warps 2-3, warp "
            f"2 issues) waits for each buffer, TMA-stores it and releases it once its store has read it; the "
            f"loader keeps warps 0-1")


__all__ = ["LOADER_WARPS", "STORE_SCOPE_NOTE", "STORE_WARPS", "hand_over", "note", "out_buffers", "out_pipeline",
           "send_tile", "store_reads", "store_task"]
