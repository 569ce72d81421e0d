"""Extra CPU-verifiable resources for the deadlock gallery.

``AliasedTile`` declares shared memory at a fixed offset, so two of them can
overlap on purpose (the checker then looks for races between them).
``TmaTile`` and ``MmaAccumulator`` use DMA pipelines (TMA -> tcgen05 MMA ->
threads) so TS's DMA release-order rule applies to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    PipelineConfig,
    StageInfo,
    consumer_work,
    producer_work,
)

_CTA = (1, 1, 1, 1)


def _group(threads: int) -> Any:
    return pipeline.CooperativeGroup(pipeline.Agent.Thread, threads)


def tma_umma_pipeline(stages: int, num_bytes: int = 1024) -> PipelineConfig:
    """TMA copy into shared memory, read by tcgen05 MMA (a DMA consumer)."""
    return PipelineConfig.create_tma_umma_pipeline_cfg(
        num_stages=stages, num_bytes=num_bytes, producer_group=_group(1),
        consumer_group=_group(1), cta_layout_vmnk=_CTA,
    )


def umma_async_pipeline(stages: int) -> PipelineConfig:
    """tcgen05 MMA into tensor memory (a DMA producer), read back by one warp."""
    return PipelineConfig.create_umma_async_pipeline_cfg(
        num_stages=stages, producer_group=_group(1), consumer_group=_group(32),
        cta_layout_vmnk=_CTA,
    )


@dataclass(kw_only=True)
class AliasedTile(MemoryResource):
    """A shared-memory tile at a chosen byte offset (tiles at equal offsets alias)."""

    smem_offset: int = 0
    smem_bytes: int = 1024
    _alloc: Any = field(default=None, init=False, repr=False)

    def get_smem_requirements(self) -> list[SmemAllocation]:
        """One allocation at ``smem_offset`` (no allocator moves it, so equal offsets alias)."""
        if self._alloc is None:
            self._alloc = SmemAllocation(name=f"{self.name}.tile", size_bytes=self.smem_bytes)
            self._alloc.offset = self.smem_offset
        return [self._alloc]

    @producer_work
    @cute.jit
    def write_tile(self, stage_info: StageInfo) -> None:
        """Fill the tile."""


    @consumer_work
    @cute.jit
    def read_tile(self, stage_info: StageInfo) -> None:
        """Read the tile."""



@dataclass(kw_only=True)
class TmaTile(MemoryResource):
    """A shared-memory operand filled by TMA and read asynchronously by MMA."""

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo) -> None:
        """Copy a tile in with TMA."""


    @consumer_work
    @cute.jit
    def feed_mma(self, stage_info: StageInfo) -> None:
        """Hand the tile to the MMA (read asynchronously)."""



@dataclass(kw_only=True)
class MmaAccumulator(MemoryResource):
    """A tensor-memory accumulator written by tcgen05 MMA (which reads its operands by DMA)."""

    @producer_work
    @cute.jit
    def mma(self, stage_info: StageInfo) -> None:
        """Issue the tcgen05 MMA (reads its operands by DMA)."""


    @consumer_work
    @cute.jit
    def load_acc(self, stage_info: StageInfo) -> None:
        """Read the accumulator back."""



__all__ = ["AliasedTile", "MmaAccumulator", "TmaTile", "tma_umma_pipeline", "umma_async_pipeline"]
