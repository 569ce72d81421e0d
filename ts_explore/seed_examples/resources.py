"""Small TS resources used by the seed examples, the gallery and the tutorials.

They declare the work methods and task-local variables the examples record;
their bodies are real DSL code only where a kernel runs them (see
``ts_explore.kernels``); here they exist so TS can record and verify.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    PipelineConfig,
    StageInfo,
    TaskLocalVariable,
    TileSchedulerConfig,
    WorkAttr,
    WorkQueue,
    consumer_work,
    producer_work,
)


def _var(dtype: Any, docs: str) -> TaskLocalVariable:
    return TaskLocalVariable(dtype=dtype, default=dtype(0), docs=docs)


def async_pipeline(stages: int, producer_threads: int = 32, consumer_threads: int = 32) -> PipelineConfig:
    """A thread-to-thread (AsyncAsync, mbarrier) pipeline config usable on the CPU."""
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, producer_threads),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_threads),
        cta_layout_vmnk=(1, 1, 1, 1),
    )


def static_queue(name: str = "wq", cls: type | None = None, **kwargs: Any) -> WorkQueue:
    """A static persistent WorkQueue (params are only needed on the GPU)."""
    cfg = TileSchedulerConfig.create_static_persistent_tile_scheduler_params(tile_scheduler_params=None)
    return (cls or WorkQueue)(tile_scheduler_config=cfg, name=name, **kwargs)


def clc_queue(total_consumer_warps: int, stages: int = 1, name: str = "wq") -> WorkQueue:
    """A CLC dynamic persistent WorkQueue; a scheduler task fetches its tiles (sm_100+ to run)."""
    cfg = TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(None, response_ptr=None)
    pipe = PipelineConfig.create_clc_fetch_async_pipeline_cfg(
        num_stages=stages,
        num_bytes=16,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32 * total_consumer_warps),
        cta_layout_vmnk=(1, 1, 1, 1),
    )
    return WorkQueue(tile_scheduler_config=cfg, pipeline_config=pipe, name=name)


@dataclass(kw_only=True)
class GmemSource(MemoryResource):
    """A global-memory source: one ``item`` per domain iteration."""

    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.item = _var(cutlass.Int32, "element read this iteration")

    @consumer_work(returns=item)
    @cute.jit
    def get_item(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(0)


@dataclass(kw_only=True)
class GmemSink(MemoryResource):
    """A global-memory destination that stores an ``item``/``val``."""

    @producer_work
    @cute.jit
    def set_item(self, stage_info: StageInfo, data: cutlass.Int32) -> None:
        pass


@dataclass(kw_only=True)
class SmemBuffer(MemoryResource):
    """A pipelined shared-memory buffer: filled by a producer, read by a consumer."""

    val: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.val = _var(cutlass.Int32, "value read from the buffer")

    @producer_work
    @cute.jit
    def fill(self, stage_info: StageInfo, data: cutlass.Int32) -> None:
        pass

    @consumer_work(returns=val)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(0)


@dataclass(kw_only=True)
class Signal(MemoryResource):
    """A pipelined resource that carries no data: plain acquire/commit/wait/release."""

    @producer_work
    @cute.jit
    def produce(self, stage_info: StageInfo) -> None:
        pass

    @consumer_work
    @cute.jit
    def consume(self, stage_info: StageInfo) -> None:
        pass


@dataclass(kw_only=True)
class QkvCoords(MemoryResource):
    """Computes two coordinates at once (a multi-return work call)."""

    coord_q: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    coord_k: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.coord_q = _var(cutlass.Int32, "Q tile coordinate")
        self.coord_k = _var(cutlass.Int32, "K tile coordinate")

    @consumer_work(returns=(coord_q, coord_k))
    @cute.jit
    def compute_coords(self, stage_info: StageInfo) -> tuple[cutlass.Int32, cutlass.Int32]:
        return cutlass.Int32(0), cutlass.Int32(0)


@dataclass(kw_only=True)
class SmemQ(MemoryResource):
    @producer_work
    @cute.jit
    def q_load(self, stage_info: StageInfo, coord_q: cutlass.Int32) -> None:
        pass


@dataclass(kw_only=True)
class SmemKV(MemoryResource):
    @producer_work
    @cute.jit
    def k_load(self, stage_info: StageInfo, coord_k: cutlass.Int32) -> None:
        pass


@dataclass(kw_only=True)
class TmemAcc(MemoryResource):
    """An accumulator read back in sub-tiles (``load_subtile(subtile_idx=...)``)."""

    t2r_rmem: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.t2r_rmem = _var(cutlass.Float32, "sub-tile copied to registers")

    @producer_work
    @cute.jit
    def mma(self, stage_info: StageInfo) -> None:
        pass

    @consumer_work(returns=t2r_rmem)
    @cute.jit
    def load_subtile(self, stage_info: StageInfo, *, subtile_idx: cutlass.Constexpr[int]) -> cutlass.Float32:
        return cutlass.Float32(0)


@dataclass(kw_only=True)
class GmemOut(MemoryResource):
    """An output written per sub-tile or slot."""

    @producer_work
    @cute.jit
    def store(
        self, stage_info: StageInfo, *, t2r_rmem: cutlass.Float32, subtile_idx: cutlass.Constexpr[int]
    ) -> None:
        pass


@dataclass(kw_only=True)
class SlotSource(MemoryResource):
    """A source with a compile-time ``slot_index`` (Constexpr forwarding)."""

    frag: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.frag = _var(cutlass.Float32, "fragment loaded from one slot")

    @consumer_work(returns=frag)
    @cute.jit
    def load(self, stage_info: StageInfo, *, slot_index: cutlass.Constexpr[int]) -> cutlass.Float32:
        return cutlass.Float32(0)


@dataclass(kw_only=True)
class SlotSink(MemoryResource):
    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, *, frag: cutlass.Float32, slot_index: cutlass.Constexpr[int]) -> None:
        pass


@dataclass(kw_only=True)
class EpilogueSmem(MemoryResource):
    """A buffer whose epilogue runs only when a runtime flag says so."""

    needs_epilogue_flag: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.needs_epilogue_flag = _var(cutlass.Boolean, "whether this tile needs the epilogue")

    @consumer_work(returns=needs_epilogue_flag, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def needs_epilogue(self, stage_info: StageInfo) -> cutlass.Boolean:
        return cutlass.Boolean(False)

    @producer_work
    @cute.jit
    def epilogue(self, stage_info: StageInfo) -> None:
        pass


@dataclass(kw_only=True)
class PageTable(MemoryResource):
    """Metadata advanced periodically (``every(4)``)."""

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def advance(self, stage_info: StageInfo) -> None:
        pass


@dataclass(kw_only=True)
class TileCopy(MemoryResource):
    """Copies one row of the current work tile (persistent copies)."""

    @producer_work
    @cute.jit
    def copy_tile_row(self, stage_info: StageInfo) -> None:
        pass


__all__ = [
    "EpilogueSmem",
    "GmemOut",
    "GmemSink",
    "GmemSource",
    "PageTable",
    "QkvCoords",
    "Signal",
    "SlotSink",
    "SlotSource",
    "SmemBuffer",
    "SmemKV",
    "SmemQ",
    "TileCopy",
    "TmemAcc",
    "async_pipeline",
    "clc_queue",
    "static_queue",
]
