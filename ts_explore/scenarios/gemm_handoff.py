"""The cooperative GEMM's hand-off epilogue: the consumers hand each part of C to a store task.

With ``epilogue=HANDOFF`` the epilogue buffers are a TS pipeline (``c``,
``HandoffBuffers``) of ``Geometry.epilogue_buffers`` stages:

- **producers** - every thread of the consumer task ``mma`` (warps 4-11):
  per output part, acquire a free buffer, ``stage`` the part of the
  accumulators into it (stmatrix, proxy fence), commit. The pipeline's full
  barrier counts one arrival per consumer thread, so a buffer is handed over
  only once all of them wrote it; no named barrier. Then ``mma`` goes on to
  the next tile's mainloop at once: the tensor cores no longer wait for the
  TMA issue, its read waits and two barriers per part.
- **consumer** - the task ``store`` (warps 2-3; only warp 2 issues): per
  tile it walks the same work queue, and per part (its domain loop) waits for the buffer,
  issues its TMA store (``store``: commit, then wait until one store at most
  still reads shared memory) and releases the *previous* part's buffer, whose
  store has been read by then; after the tile's last part it waits for every
  read (``drain``) and releases the last buffer. ``flush`` waits for every
  write before the CTA exits.

The load task keeps warps 0-1 (each brings half of a stage); both tasks of
the load warpgroup keep ``setmaxnreg``'s 40 registers.

TS counts a buffer as read when ``store`` returns; the TMA engine reads it
later. The async-read rule (:func:`store_reads`) checks every release of the
store task against its read waits, as it does for WGMMA on the A/B ring.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.resources import PipelineConfig
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..analysis.async_reads import AsyncReads
from ..kernels.gemm_epilogue import HandoffBuffers
from ..kernels.gemm_geometry import STORE_WARPS, GemmMode, Geometry, Release
from ..model import QueueKind
from . import gemm_pingpong as pingpong
from .common import next_work_tile, require
from .gemm_config import GemmFault, HopperGemm

STORES_IN_FLIGHT = 1  # TMA stores still reading shared memory when ``store`` returns: release one part late
STORE_SCOPE_NOTE = (
    "TS does not model the TMA store's asynchronous read of the C buffers: it counts a buffer as read when the "
    "store step returns; ts-explore's async-read rule checks the store task's releases against its read waits."
)


def handoff_pipeline(geo: Geometry) -> PipelineConfig:
    """AsyncAsync over the epilogue buffers: every consumer thread commits, every store-task thread releases.

    The wait and the release use separate cursors (the store task releases
    each buffer one part after waiting for it). The hand-off stays inside its
    CTA; ``cta_layout_vmnk`` repeats the kernel's cluster shape, which TS wants
    the same for every pipeline of a kernel.
    """
    cfg = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=geo.epilogue_buffers,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, geo.consumer_threads),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, STORE_WARPS * 32),
        cta_layout_vmnk=(1, geo.cluster_m, geo.cluster_n, 1))
    return replace(cfg, advance_on_wait=True)


def handoff_buffers(geo: Geometry, swap: bool, tma_c: Any, g_c: Any, consumer_thread0: int,
                    scale: Any = None) -> HandoffBuffers:
    """The ``c`` pipeline resource (``scale``: fp8's scale_a·scale_b, applied before the bf16 conversion)."""
    return HandoffBuffers(name="c", pipeline_config=handoff_pipeline(geo), geo=geo, swap_mn=swap, tma_c=tma_c,
                          g_c=g_c, consumer_thread0=consumer_thread0, scale=scale, store_warp=geo.store_warp0,
                          in_flight=STORES_IN_FLIGHT)


def store_reads() -> AsyncReads:
    """What the store task's TMA stores do that TS cannot see, for the async-read rule."""
    return AsyncReads(resource="c", issue="store", in_flight=STORES_IN_FLIGHT, drains=("drain",))


def hand_off(c: Any, acc: Any, parts: int) -> None:
    """``mma``'s epilogue: each part into a free buffer, handed over by the commit."""
    for part in range(parts):
        c.try_acquire()
        c.acquire()
        c.stage(acc=acc, part=part)
        c.commit()


def send_tile(c: Any, parts: int, *, early_release: bool = False) -> None:
    """``store``'s work per tile, one domain-loop iteration per part: wait, send, release the previous part's
    buffer; in the last part drain the reads and release its own buffer too.

    ``early_release`` plants a mistake: each buffer is released right after
    its store is issued, while the TMA engine may still read it.
    """
    with domain_loop(0, parts, 1) as part:
        c.try_wait()
        c.wait()
        c.store()
        if early_release:
            c.release()
            with part.last_iter():
                c.drain()
        else:
            with part.every(1, start=1):
                c.release()
            with part.last_iter():
                c.drain()
                c.release()


def tasks(smem: Any, c: HandoffBuffers, wq: Any, n_k: Any, *, release: Release, parts: int, consumer_wgs: int,
          load_warps: int, registers: tuple[int, int], extra_part: bool = False, early_release: bool = False
          ) -> tuple[Task, Task]:
    """``store`` (warps 2-3) and ``mma`` (warps 4-11); the caller builds ``load`` (warps 0-1).

    ``registers``: (load warpgroup, consumers). ``extra_part`` plants a
    mistake: the store task waits for one part more per tile than ``mma``
    hands over, so after the last tile it waits for a buffer no one fills.
    """
    load_registers, mma_registers = registers
    extra = [wq] if wq is not None else []
    sent = parts + 1 if extra_part else parts

    def one_tile(smem: Any, c: Any) -> None:
        hand_off(c, pingpong.accumulate(smem, n_k, release=release), parts)

    if wq is None:
        @schedule
        def mma(smem: Any, c: Any) -> None:
            one_tile(smem, c)

        @schedule
        def store(c: Any) -> None:
            send_tile(c, sent, early_release=early_release)
            c.flush()

        mma_sched, store_sched = mma(smem, c), store(c)
    else:
        @schedule
        def mma(smem: Any, c: Any, wq: Any) -> None:  # type: ignore[no-redef]
            with work_tile_loop(wq):
                one_tile(smem, c)
                next_work_tile(wq)

        @schedule
        def store(c: Any, wq: Any) -> None:  # type: ignore[no-redef]
            with work_tile_loop(wq):
                send_tile(c, sent, early_release=early_release)
                next_work_tile(wq)
            c.flush()

        mma_sched, store_sched = mma(smem, c, wq), store(c, wq)
    store_task = Task(name="store", src_resources=[c, *extra], dst_resources=[], warp_idx=load_warps,
                      num_warps=STORE_WARPS, schedule=store_sched, num_registers=load_registers)
    mma_task = Task(name="mma", src_resources=[smem, *extra], dst_resources=[c], warp_idx=load_warps + STORE_WARPS,
                    num_warps=4 * consumer_wgs, schedule=mma_sched, num_registers=mma_registers)
    return store_task, mma_task


def check(cfg: HopperGemm) -> None:
    """What the hand-off epilogue needs: the cooperative mode, and a queue without a scheduler warp."""
    require(cfg.mode is GemmMode.COOPERATIVE,
            "epilogue=handoff overlaps a cooperative tile's epilogue with the next mainloop; ping-pong already "
            "hides each consumer's epilogue under the other's mainloop", "use epilogue=inline with mode=ping-pong, "
            "or mode=cooperative with the hand-off", "epilogue")
    require(cfg.persistence is not QueueKind.CLC,
            "epilogue=handoff with CLC would add the store task to the CLC queue's consumers beside the 13th "
            "(scheduler) warp, and CLC launches on no GPU with WGMMA: the hand-off would only be drawn, never "
            "measured", "use persistence=static or none with epilogue=handoff", "persistence")


def notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    """What the CPU view says about the hand-off epilogue (nothing without it)."""
    if not geo.handoff:
        return []
    last = 3 + 4 * cfg.consumer_wgs
    notes = [f"hand-off epilogue: mma (warps 4-{last}) stages each of the {geo.epilogue_parts} {geo.epilogue_n}-column "
             f"parts of C into one of {geo.epilogue_buffers} buffers of pipeline c and commits it (every consumer "
             "thread arrives; no named barrier), then starts the next tile's mainloop; the store task (warps 2-3, "
             "warp 2 issues) waits for each buffer, TMA-stores it and releases it one part later, once its store has "
             "read it; the load task keeps warps 0-1 (each brings half of a stage)"]
    if cfg.fault is not GemmFault.NONE:
        notes.append(f"planted fault: {cfg.fault.value}")
    return notes


__all__ = ["STORES_IN_FLIGHT", "STORE_SCOPE_NOTE", "check", "hand_off", "handoff_buffers", "handoff_pipeline", "notes",
           "send_tile", "store_reads", "tasks"]
