"""Every schedule shape of the user's guide, recordable on the CPU.

Each ``SEED`` entry is a zero-argument function returning a :class:`Recording`.
They are the golden cases of the test suite and the material of the tutorials.
Where the guide and nvidia-cutlass-dsl 4.8.1 disagree, these follow 4.8.1
(e.g. the dynamic-domain method is named ``get_domain``; a CLC scheduler
schedule carries an empty domain loop).
"""

from __future__ import annotations

from typing import Callable

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling import when_true
from cutlass.experimental.task_scheduling.resources import WorkQueue
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..reader import Recording, record
from . import resources as R


def reference_shape() -> Recording:
    """Persistent per-tile prefetch, a first-iteration multi-return, and a per-tile drain."""

    @schedule
    def my_schedule(gmem_qkv, smem_q, smem_kv, tmem_c, wq):
        with work_tile_loop(wq):
            smem_q.try_acquire()
            smem_q.acquire()
            with domain_loop(0, 4, 1) as d:
                with d.first_iter():
                    coord_q, coord_k = gmem_qkv.compute_coords()
                    smem_q.q_load(coord_q)
                    smem_q.commit()
                smem_kv.try_acquire()
                smem_kv.acquire()
                smem_kv.k_load(coord_k)
                smem_kv.commit()
            tmem_c.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(
        my_schedule,
        R.QkvCoords(name="gmem_qkv"),
        R.SmemQ(name="smem_q", pipeline_config=R.async_pipeline(1)),
        R.SmemKV(name="smem_kv", pipeline_config=R.async_pipeline(2)),
        R.TmemAcc(name="tmem_c", pipeline_config=R.async_pipeline(1)),
        R.static_queue(),
    )


def grid_stride(num_entries: int = 4096, bx: int = 1, tx: int = 5, gdimx: int = 4,
                num_warps: int = 4, unroll: int = 1) -> Recording:
    """Grid-stride domain: the bounds are trace-time values for one CTA/thread."""

    @schedule
    def grid_stride_copy(input_gmem, output_gmem):
        threads_per_block = num_warps * 32
        start = bx * threads_per_block + tx
        step = gdimx * threads_per_block
        with domain_loop(start, num_entries, step, unroll=unroll):
            res = input_gmem.get_item()
            output_gmem.set_item(data=res)

    return record(grid_stride_copy, R.GmemSource(name="input_gmem"), R.GmemSink(name="output_gmem"))


def guarded() -> Recording:
    """first_iter / every(4) / last_iter guards inside one domain loop."""

    @schedule
    def guarded_schedule(smem, page_offsets):
        with domain_loop(0, 8, 1) as d:
            with d.first_iter():
                smem.try_acquire()
            with d.every(4, start=0):
                page_offsets.advance()
            smem.acquire()
            smem.producer_work()
            with d.last_iter():
                smem.commit()

    return record(guarded_schedule, R.Signal(name="smem", pipeline_config=R.async_pipeline(2)),
                  R.PageTable(name="page_offsets"))


def when_true_condition() -> Recording:
    """A data-dependent epilogue guarded by a work call's output."""

    @schedule
    def conditional_schedule(page_offsets, smem):
        with domain_loop(0, 4, 1):
            page_offsets.advance()
            smem.acquire()
            needs_epilogue = smem.needs_epilogue()
            with when_true(needs_epilogue):
                smem.epilogue()
            smem.commit()

    return record(conditional_schedule, R.PageTable(name="page_offsets"),
                  R.EpilogueSmem(name="smem", pipeline_config=R.async_pipeline(2)))


def static_persistent() -> Recording:
    """Static persistent copy: every task runs the queue epilogue itself."""

    @schedule
    def persistent_copy(src, dst, wq):
        with work_tile_loop(wq):
            with domain_loop(0, 4, 1):
                val = src.get_item()
                dst.set_item(val)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(persistent_copy, R.GmemSource(name="src"), R.GmemSink(name="dst"), R.static_queue())


def clc_scheduler() -> Recording:
    """The CLC scheduler task: fetches tiles; 4.8.1 needs an (empty) domain loop."""

    @schedule
    def scheduler_schedule(wq):
        with work_tile_loop(wq):
            with domain_loop(0, 0, 1):
                pass
            wq.try_acquire()
            wq.acquire()
            wq.fetch_work_tile()
            wq.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(scheduler_schedule, R.clc_queue(total_consumer_warps=2))


class VarlenTask(Task):
    """Per-tile domain from an offsets table; TS 4.8.1 requires the name ``get_domain``."""

    offsets: tuple[int, ...] = (0, 3, 7, 12)

    @cute.jit
    def get_domain(self, tile_coord):  # noqa: ANN001 - TS checks this exact signature
        return self.offsets[tile_coord[0] + 1] - self.offsets[tile_coord[0]]


def dynamic_domain(tx: int = 0, threads_per_block: int = 128) -> Recording:
    """Varlen copy: the loop end is evaluated per work tile."""

    @schedule
    def main_schedule(src, dst, wq):
        with work_tile_loop(wq):
            with domain_loop(tx, VarlenTask.get_domain, threads_per_block):
                val = src.get_item()
                dst.set_item(data=val)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(main_schedule, R.GmemSource(name="src"), R.GmemSink(name="dst"), R.static_queue())


class OversubscribedQueue(WorkQueue):
    """Skips the tiles launched beyond the logical tile count."""

    logical_tiles = 4

    @cute.jit
    def skip_work_tile_if(self, work_tile):  # noqa: ANN001
        tile_x, _, _ = work_tile.tile_idx
        return tile_x >= self.logical_tiles


def skippable_copy(num_rows: int = 4) -> Recording:
    """Only the row copy is skippable; the queue bookkeeping runs for every tile."""

    @schedule
    def copy_schedule(copy_res, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtwl:
            with wtwl.skippable(), domain_loop(0, num_rows, 1):
                copy_res.copy_tile_row()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(copy_schedule, R.TileCopy(name="copy_res"), R.static_queue(cls=OversubscribedQueue))


def constexpr_forwarding() -> Recording:
    """The same load/store methods, told apart only by their slot_index literal."""

    @schedule
    def slot_schedule(input_gmem, output_gmem):
        with domain_loop(0, 2, 1):
            frag0 = input_gmem.load(slot_index=0)
            output_gmem.store(frag=frag0, slot_index=1)
            frag1 = input_gmem.load(slot_index=1)
            output_gmem.store(frag=frag1, slot_index=0)

    return record(slot_schedule, R.SlotSource(name="input_gmem"), R.SlotSink(name="output_gmem"))


def subtile_loop(subtile_cnt: int = 4, num_k_tiles: int = 8) -> Recording:
    """A trace-time ``range_constexpr`` loop unrolls into separate steps; domain_loop stays a loop."""

    @schedule
    def store_schedule(tmem_c, gmem_d, wq):
        with work_tile_loop(wq):
            with domain_loop(0, num_k_tiles, 1):
                pass
            for subtile_idx in cutlass.range_constexpr(subtile_cnt):
                t2r_rmem = tmem_c.load_subtile(subtile_idx=subtile_idx)
                gmem_d.store(t2r_rmem=t2r_rmem, subtile_idx=subtile_idx)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    return record(store_schedule, R.TmemAcc(name="tmem_c"), R.GmemOut(name="gmem_d"), R.static_queue())


SEED: dict[str, Callable[[], Recording]] = {
    "reference_shape": reference_shape,
    "grid_stride": grid_stride,
    "guarded": guarded,
    "when_true_condition": when_true_condition,
    "static_persistent": static_persistent,
    "clc_scheduler": clc_scheduler,
    "dynamic_domain": dynamic_domain,
    "skippable_copy": skippable_copy,
    "constexpr_forwarding": constexpr_forwarding,
    "subtile_loop": subtile_loop,
}

__all__ = ["SEED", "OversubscribedQueue", "VarlenTask", *SEED]
