"""Gallery schedules that break an ordering or placement rule rather than stalling.

Same contract as :mod:`deadlocks`: ``build(broken, n)`` returns fresh
``dict(tasks=..., resource_dependency_graph=...)``.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.resources import PdlLaunchBarrier, PdlWaitBarrier
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..reader import Recording, record
from ..seed_examples import resources as R
from ..seed_examples.seed import OversubscribedQueue
from . import resources as G


def dma_release_early(broken: bool, n: int) -> dict[str, Any]:
    """Mma releases the TMA-filled tile before the MMA that reads it (asynchronously) is issued."""
    tile = G.TmaTile(name="smem_a", pipeline_config=G.tma_umma_pipeline(2))
    acc = G.MmaAccumulator(name="tmem_acc", pipeline_config=G.umma_async_pipeline(1))

    @schedule
    def load(tile):
        with domain_loop(0, n, 1):
            tile.acquire()
            tile.tma_load()
            tile.commit()

    @schedule
    def mma(tile, acc):
        acc.acquire()
        with domain_loop(0, n, 1):
            tile.wait()
            tile.feed_mma()
            if broken:  # the TMA may refill smem_a while the MMA still reads it
                tile.release()
            acc.mma()
            if not broken:
                tile.release()
        acc.commit()

    @schedule
    def epilogue(acc):
        with domain_loop(0, 1, 1):
            acc.wait()
            acc.load_acc()
            acc.release()

    tasks = [
        Task([], [tile], 0, 1, schedule=load(tile), name="Load"),
        Task([tile], [acc], 1, 1, schedule=mma(tile, acc), name="Mma"),
        Task([acc], [], 2, 1, schedule=epilogue(acc), name="Epilogue"),
    ]
    return {"tasks": tasks, "resource_dependency_graph": {tile: [], acc: [tile]}}


def workqueue_in_loop(broken: bool, n: int) -> dict[str, Any]:
    """The WorkQueue bookkeeping sits inside the domain loop: it would advance the tile every row."""
    src, dst, wq = R.GmemSource(name="src"), R.GmemSink(name="dst"), R.static_queue()

    @schedule
    def copy(src, dst, wq):
        with work_tile_loop(wq):
            with domain_loop(0, n, 1):
                val = src.get_item()
                dst.set_item(val)
                if broken:
                    wq.try_wait()
                    wq.wait()
                    wq.get_and_advance_work_tile()
                    wq.release()
            if not broken:
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

    task = Task([src, wq], [dst], 0, 1, schedule=copy(src, dst, wq), name="Copy")
    return {"tasks": [task], "resource_dependency_graph": {dst: [src], src: [], wq: []}}


def workqueue_in_skippable() -> Recording:
    """The other wrong place: inside ``skippable()``. TS refuses this while recording."""

    @schedule
    def copy_schedule(copy_res, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtl:
            with wtl.skippable():
                with domain_loop(0, 4, 1):
                    copy_res.copy_tile_row()
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

    return record(copy_schedule, R.TileCopy(name="copy_res"), R.static_queue(cls=OversubscribedQueue))


def pdl_launch_before_wait(broken: bool, n: int) -> dict[str, Any]:
    """Producer lets the next grid launch before it has waited for the previous grid."""
    pdl_wait, pdl_launch = PdlWaitBarrier(name="pdl_wait"), PdlLaunchBarrier(name="pdl_launch")
    src = R.GmemSource(name="gmem_in")
    smem = R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2))
    dst = R.GmemSink(name="gmem_out")

    @schedule
    def producer(pdl_wait, pdl_launch, src, smem):
        if broken:
            pdl_launch.launch_griddep()
        pdl_wait.wait_griddep()
        with domain_loop(0, n, 1):
            item = src.get_item()
            smem.acquire()
            smem.fill(item)
            smem.commit()
        if not broken:
            pdl_launch.launch_griddep()

    @schedule
    def consumer(smem, dst):
        with domain_loop(0, n, 1):
            smem.wait()
            val = smem.read()
            dst.set_item(val)
            smem.release()

    tasks = [
        Task([pdl_wait, src], [pdl_launch, smem], 0, 1,
             schedule=producer(pdl_wait, pdl_launch, src, smem), name="Producer"),
        Task([smem], [dst], 1, 1, schedule=consumer(smem, dst), name="Consumer"),
    ]
    graph = {smem: [src], dst: [smem], src: [pdl_wait], pdl_wait: [], pdl_launch: []}
    return {"tasks": tasks, "resource_dependency_graph": graph}


def smem_alias_race(broken: bool, n: int) -> dict[str, Any]:
    """Two tiles alive at the same time share shared-memory bytes, and nothing orders their writers."""
    tile_a = G.AliasedTile(name="tile_a", pipeline_config=R.async_pipeline(1), smem_offset=0)
    # the fix: give tile_b its own bytes (aliasing is only safe when a pipeline orders the writers)
    tile_b = G.AliasedTile(name="tile_b", pipeline_config=R.async_pipeline(1), smem_offset=0 if broken else 1024)

    def writer(tile: Any) -> Any:
        @schedule
        def write(tile):
            with domain_loop(0, n, 1):
                tile.acquire()
                tile.write_tile()
                tile.commit()

        return write(tile)

    @schedule
    def reader(tile_a, tile_b):
        with domain_loop(0, n, 1):
            tile_a.wait()
            tile_a.read_tile()
            tile_a.release()
            tile_b.wait()
            tile_b.read_tile()
            tile_b.release()

    tasks = [
        Task([], [tile_a], 0, 1, schedule=writer(tile_a), name="WriterA"),
        Task([], [tile_b], 1, 1, schedule=writer(tile_b), name="WriterB"),
        Task([tile_a, tile_b], [], 2, 1, schedule=reader(tile_a, tile_b), name="Reader"),
    ]
    return {"tasks": tasks, "resource_dependency_graph": {tile_a: [], tile_b: []}}


__all__ = [
    "dma_release_early",
    "pdl_launch_before_wait",
    "smem_alias_race",
    "workqueue_in_loop",
    "workqueue_in_skippable",
]
