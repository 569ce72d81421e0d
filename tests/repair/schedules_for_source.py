"""Plain schedule functions (their source is what the repair's source diff patches) and builders using them."""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.seed_examples import resources as R


def load(src, smem):
    with domain_loop(0, 4, 1):
        item = src.get_item()
        smem.acquire()
        smem.fill(item)
        smem.commit()


def store(smem, dst):
    with domain_loop(0, 4, 1):
        smem.wait()
        val = smem.read()
        dst.set_item(val)


def store_fixed(smem, dst):
    with domain_loop(0, 4, 1):
        smem.wait()
        val = smem.read()
        smem.release()
        dst.set_item(val)


def store_early(smem, dst):
    with domain_loop(0, 4, 1):
        smem.wait()
        smem.release()
        val = smem.read()
        dst.set_item(val)


def resources() -> tuple[Any, Any, Any]:
    return (R.GmemSource(name="gmem_in"), R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(1)),
            R.GmemSink(name="gmem_out"))


def pair(store_fn: Any) -> dict[str, Any]:
    """Load and a Store recorded from ``store_fn``: fresh TS objects each call."""
    src, smem, dst = resources()
    tasks = [
        Task([src], [smem], 0, 1, schedule=schedule(load)(src, smem), name="Load"),
        Task([smem], [dst], 1, 1, schedule=schedule(store_fn)(smem, dst), name="Store"),
    ]
    return {"tasks": tasks, "resource_dependency_graph": {smem: [src], dst: [smem], src: []}}
