"""A GEMM-shaped family of task sets: n loaders, one MMA task, one epilogue (a benchmark fixture).

Each loader fills its own pipelined operand buffer (``acquire; fill;
commit``, ``stages`` stages). Per iteration the MMA task waits for and
drains every operand buffer, fills an accumulator buffer (``acc_stages``
stages), releases every operand buffer and commits the accumulator; the
epilogue waits for, drains and releases the accumulator. All loops run
``iterations`` times. The loaders touch disjoint resources, so TS's
breadth-first search multiplies its states by each extra loader while their
steps commute (what a partial-order reduction removes).

``deadlock=True`` leaves out the MMA task's release of the last operand
buffer: that loader runs out of free slots after ``stages`` iterations and
the MMA task then waits for a commit that never comes (so it deadlocks only
when ``iterations > stages``).

With the default 4 operand stages and 2 accumulator stages, TS's search
visits 10,585 states for 3 tasks x 32 iterations, 182,587 for 4 tasks and
passes its 1,000,000-state cap from 5 tasks on.

>>> case = gemm_family(2, 4)
>>> [t.name for t in case["tasks"]]
['Loader0', 'Loader1', 'Mma', 'Epilogue']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass.cute as cute
from cutlass.experimental.task_scheduling.resources import MemoryResource, StageInfo, consumer_work, producer_work
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..seed_examples.resources import async_pipeline


@dataclass(kw_only=True)
class GemmBuffer(MemoryResource):
    """A pipelined buffer one task fills and another drains (operand tile or accumulator)."""

    @producer_work
    @cute.jit
    def fill(self, stage_info: StageInfo) -> None:
        """Write the slot (a TMA copy or an MMA, on the GPU)."""

    @consumer_work
    @cute.jit
    def drain(self, stage_info: StageInfo) -> None:
        """Read the slot."""


def gemm_family(
    loaders: int, iterations: int, *, stages: int = 4, acc_stages: int = 2, deadlock: bool = False
) -> dict[str, Any]:
    """Fresh ``dict(tasks=..., resource_dependency_graph=...)``: ``loaders`` + 2 tasks, ``iterations`` each."""
    for name, value, least in (("loaders", loaders, 1), ("iterations", iterations, 1), ("stages", stages, 1),
                               ("acc_stages", acc_stages, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"gemm_family: {name} must be an int >= {least}, got {value!r}")
    operands = [GemmBuffer(name=f"smem_{i}", pipeline_config=async_pipeline(stages)) for i in range(loaders)]
    acc = GemmBuffer(name="acc", pipeline_config=async_pipeline(acc_stages))

    @schedule
    def load(buf):
        with domain_loop(0, iterations, 1):
            buf.acquire()
            buf.fill()
            buf.commit()

    @schedule
    def mma(acc, *bufs):
        with domain_loop(0, iterations, 1):
            for buf in bufs:
                buf.wait()
                buf.drain()
            acc.acquire()
            acc.fill()
            for buf in bufs[:-1] if deadlock else bufs:
                buf.release()
            acc.commit()

    @schedule
    def epilogue(acc):
        with domain_loop(0, iterations, 1):
            acc.wait()
            acc.drain()
            acc.release()

    tasks = [Task([], [buf], i, 1, schedule=load(buf), name=f"Loader{i}") for i, buf in enumerate(operands)]
    tasks.append(Task(list(operands), [acc], loaders, 1, schedule=mma(acc, *operands), name="Mma"))
    tasks.append(Task([acc], [], loaders + 1, 1, schedule=epilogue(acc), name="Epilogue"))
    graph: dict[Any, list[Any]] = {buf: [] for buf in operands}
    graph[acc] = list(operands)
    return {"tasks": tasks, "resource_dependency_graph": graph}


__all__ = ["GemmBuffer", "gemm_family"]
