"""A small persistent-copy scenario for the explorer tests (independent of the catalog).

Producer task: src -> smem; consumer task: smem -> dst; the queue knob switches
between a non-persistent grid (no work queue), a static persistent queue and a
CLC queue with a scheduler task. Two bool knobs break the schedule on purpose:
``forget_commit`` (verification fails: the consumer waits forever) and
``queue_ops_in_skippable`` (TS refuses to record).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue
from ts_explore.model import QueueKind
from ts_explore.scenarios import BuildContext, Built, Scenario, knob
from ts_explore.scenarios.common import clc_scheduler_task


class Unroll(enum.Enum):
    NONE = 1
    TWO = 2


@dataclass(frozen=True)
class CopyConfig:
    rows: int = knob(4, min=1, max=16, label="rows per tile", help="domain loop trip count")
    stages: int = knob(2, min=1, max=4)
    queue: QueueKind = knob(QueueKind.STATIC, label="work queue")
    skip_tiles: bool = knob(False, label="skippable tiles")
    forget_commit: bool = False
    queue_ops_in_skippable: bool = False
    tile_lengths: tuple[int, ...] = knob((3, 4), min=0, max=64, label="tile lengths")
    unroll: Unroll = Unroll.NONE


def check(cfg: CopyConfig) -> None:
    if cfg.skip_tiles and cfg.queue is QueueKind.NONE:
        raise ValueError("skippable tiles need a work queue: choose queue static or clc, or untick skippable tiles")
    if not cfg.tile_lengths:
        raise ValueError("tile lengths needs at least one entry, e.g. 3, 4")


def build(cfg: CopyConfig, ctx: BuildContext) -> Built:
    rows = cfg.rows + cfg.tile_lengths[ctx.block % len(cfg.tile_lengths)] - cfg.tile_lengths[0]
    src, dst = R.GmemSource(name="src"), R.GmemSink(name="dst")
    smem = R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(cfg.stages))
    persistent = cfg.queue is not QueueKind.NONE
    if cfg.queue is QueueKind.CLC:
        wq = R.clc_queue(total_consumer_warps=3)
    elif persistent:
        wq = R.static_queue(cls=OversubscribedQueue if cfg.skip_tiles else None)
    skip = OversubscribedQueue.skip_work_tile_if if cfg.skip_tiles else None

    def produce(src, smem):
        with domain_loop(0, rows, 1, unroll=cfg.unroll.value):
            v = src.get_item()
            smem.acquire()
            smem.fill(v)
            if not cfg.forget_commit:
                smem.commit()

    def consume(smem, dst):
        with domain_loop(0, rows, 1, unroll=cfg.unroll.value):
            smem.wait()
            v = smem.read()
            smem.release()
            dst.set_item(v)

    def queue_tail(wq):
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()

    def persistent_body(body, wq, *res):
        with work_tile_loop(wq, skip_if=skip) as wtl:
            if skip is not None:
                with wtl.skippable():
                    body(*res)
                    if cfg.queue_ops_in_skippable:
                        queue_tail(wq)
            else:
                body(*res)
            if not cfg.queue_ops_in_skippable or skip is None:
                queue_tail(wq)

    if persistent:
        @schedule
        def producer(src, smem, wq):
            persistent_body(produce, wq, src, smem)

        @schedule
        def consumer(smem, dst, wq):
            persistent_body(consume, wq, smem, dst)

        extra = [wq]
        sp, sc = producer(src, smem, wq), consumer(smem, dst, wq)
    else:
        @schedule
        def producer(src, smem):
            produce(src, smem)

        @schedule
        def consumer(smem, dst):
            consume(smem, dst)

        extra = []
        sp, sc = producer(src, smem), consumer(smem, dst)
    tasks = [
        Task([src, *extra], [smem], 0, 1, schedule=sp, name="producer"),
        Task([smem, *extra], [dst], 1, 1, schedule=sc, name="consumer"),
    ]
    graph: dict = {smem: [src], dst: [smem]}
    if cfg.queue is QueueKind.STATIC:
        graph = {smem: [src, wq], dst: [smem]}
    elif cfg.queue is QueueKind.CLC:
        tasks.append(clc_scheduler_task(wq, warp=2))
        graph = {smem: [src], dst: [smem, wq], wq: [wq]}
    notes = ("CLC needs sm_100 to run",) if cfg.queue is QueueKind.CLC else ()
    return Built(tasks=tasks, resource_dependency_graph=graph, notes=notes)


COPY = Scenario(
    name="test_persistent_copy",
    title="Test persistent copy",
    config_type=CopyConfig,
    build_fn=build,
    description="producer/consumer copy through a pipelined buffer",
    check_fn=check,
)
