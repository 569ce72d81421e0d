"""Gallery schedules that stall: each build returns fresh tasks for ``verify(**...)``.

Every function takes ``broken`` (the mistake, or its fixed twin) and ``n``
(the domain length, so the smallest failing length can be searched).
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..seed_examples import resources as R


def _signal(name: str, stages: int = 1) -> R.Signal:
    return R.Signal(name=name, pipeline_config=R.async_pipeline(stages))


def cross_wait(broken: bool, n: int) -> dict[str, Any]:
    """Ping and Pong each wait for the other's commit before committing their own."""
    left, right = _signal("left"), _signal("right")

    @schedule
    def ping(left, right):
        with domain_loop(0, n, 1):
            if broken:  # waits for Pong first ...
                right.wait()
                right.consume()
                right.release()
            left.acquire()
            left.produce()
            left.commit()
            if not broken:  # ... the fix: Ping gives first, then takes
                right.wait()
                right.consume()
                right.release()

    @schedule
    def pong(left, right):
        with domain_loop(0, n, 1):
            left.wait()
            left.consume()
            left.release()
            right.acquire()
            right.produce()
            right.commit()

    tasks = [
        Task([right], [left], 0, 1, schedule=ping(left, right), name="Ping"),
        Task([left], [right], 1, 1, schedule=pong(left, right), name="Pong"),
    ]
    return {"tasks": tasks, "resource_dependency_graph": {left: [right], right: [left]}}


def cycle_of_three(broken: bool, n: int) -> dict[str, Any]:
    """Alpha waits for Gamma, Gamma for Beta, Beta for Alpha: a ring where nobody starts."""
    a, b, c = _signal("a"), _signal("b"), _signal("c")

    def stage(mine: Any, upstream: Any, give_first: bool) -> Any:
        @schedule
        def body(mine, upstream):
            with domain_loop(0, n, 1):
                if give_first:
                    mine.acquire()
                    mine.produce()
                    mine.commit()
                upstream.wait()
                upstream.consume()
                upstream.release()
                if not give_first:
                    mine.acquire()
                    mine.produce()
                    mine.commit()

        return body(mine, upstream)

    tasks = [
        Task([c], [a], 0, 1, schedule=stage(a, c, give_first=not broken), name="Alpha"),
        Task([a], [b], 1, 1, schedule=stage(b, a, give_first=False), name="Beta"),
        Task([b], [c], 2, 1, schedule=stage(c, b, give_first=False), name="Gamma"),
    ]
    return {"tasks": tasks, "resource_dependency_graph": {a: [c], b: [a], c: [b]}}


def _copy_pair(smem: Any, n_producer: int, n_consumer: int, release: bool = True) -> list[Any]:
    src, dst = R.GmemSource(name="gmem_in"), R.GmemSink(name="gmem_out")

    @schedule
    def load(src, smem):
        with domain_loop(0, n_producer, 1):
            item = src.get_item()
            smem.acquire()
            smem.fill(item)
            smem.commit()

    @schedule
    def store(smem, dst):
        with domain_loop(0, n_consumer, 1):
            smem.wait()
            val = smem.read()
            dst.set_item(val)
            if release:
                smem.release()

    tasks = [
        Task([src], [smem], 0, 1, schedule=load(src, smem), name="Load"),
        Task([smem], [dst], 1, 1, schedule=store(smem, dst), name="Store"),
    ]
    return [tasks, {smem: [src], dst: [smem], src: []}]


def missing_release(broken: bool, n: int) -> dict[str, Any]:
    """Store never releases the one-stage buffer, so Load's second acquire waits forever."""
    smem = R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(1))
    tasks, graph = _copy_pair(smem, n, n, release=not broken)
    return {"tasks": tasks, "resource_dependency_graph": graph}


def consumer_longer(broken: bool, n: int) -> dict[str, Any]:
    """Store loops once more than Load: its last wait needs a commit nobody will make."""
    smem = R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2))
    tasks, graph = _copy_pair(smem, n, n + 1 if broken else n)
    return {"tasks": tasks, "resource_dependency_graph": graph}


def producer_longer(broken: bool, n: int) -> dict[str, Any]:
    """Load loops once more than Store: one commit is never waited for (no stall, a lost tile)."""
    smem = R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2))
    tasks, graph = _copy_pair(smem, n + 1 if broken else n, n)
    return {"tasks": tasks, "resource_dependency_graph": graph}


def self_wait(broken: bool, n: int) -> dict[str, Any]:
    """One task waits on a buffer it fills itself later in the same iteration."""
    smem = R.SmemBuffer(name="scratch", pipeline_config=R.async_pipeline(1))
    src, dst = R.GmemSource(name="gmem_in"), R.GmemSink(name="gmem_out")

    @schedule
    def worker(src, smem, dst):
        with domain_loop(0, n, 1):
            item = src.get_item()
            if broken:  # reads the scratch slot before writing it
                smem.wait()
                val = smem.read()
                smem.release()
            smem.acquire()
            smem.fill(item)
            smem.commit()
            if not broken:
                smem.wait()
                val = smem.read()
                smem.release()
            dst.set_item(val)

    task = Task([src, smem], [smem, dst], 0, 1, schedule=worker(src, smem, dst), name="Worker")
    return {"tasks": [task], "resource_dependency_graph": {smem: [src], dst: [smem], src: []}}


__all__ = ["consumer_longer", "cross_wait", "cycle_of_three", "missing_release", "producer_longer", "self_wait"]
