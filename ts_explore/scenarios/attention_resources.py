"""TS resources of the Hopper attention schedule: what each step reads and writes, recorded on the CPU.

Data flows ``QkvGlobal`` (Q, K, V in global memory) -> ``QTile`` (one per
consumer warpgroup, loaded once per tile), ``KStages`` and ``VStages`` (rings
of K and V blocks, each on its own pipeline) -> ``OutTile`` (O and the
log-sum-exp of each row, written through shared memory). The ping-pong order
uses :class:`ts_explore.kernels.turn.Turn` (no data: the right to issue WGMMA).

This module declares the work steps and the task-local variables that route
between them, so TS records and verifies the schedule. Their kernel bodies
(TMA, WGMMA, the online softmax) are the next step of this scenario: each work
method raises :class:`KernelNotBuilt` if it is ever traced, and ``launch``
refuses the scenario before that (``Scenario.kernel`` is None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    WorkAttr,
    consumer_work,
    producer_work,
)

NOT_BUILT = ("the hopper_attention kernel is not built yet: its schedule records, draws and verifies on the CPU; "
             "launch it once the kernel bodies land")


class KernelNotBuilt(NotImplementedError):
    """Raised by a work body of this schedule if a kernel ever traces it (there is none yet)."""

    def __init__(self, step: str) -> None:
        super().__init__(f"{step}: {NOT_BUILT}")


def _registers(docs: str) -> TaskLocalVariable:
    """A per-thread register fragment routed between steps (fp32 on the kernel side)."""
    return TaskLocalVariable(dtype=cute.TensorSSA, default=None, docs=docs)


def _index(docs: str) -> TaskLocalVariable:
    return TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs=docs)


@dataclass(kw_only=True)
class QkvGlobal(MemoryResource):
    """Q, K and V in global memory ((batch, seqlen, heads, head_dim), bf16): names the blocks to load."""

    q_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    kv_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.q_block = _index("Q tile of this work tile (batch, head and row block)")
        self.kv_block = _index("K/V block of this iteration")

    @consumer_work(returns=q_block)
    @cute.jit
    def tile(self, stage_info: StageInfo) -> Any:
        """The work tile's Q tile (batch, head and row block)."""
        raise KernelNotBuilt("QkvGlobal.tile")

    @consumer_work(returns=(q_block, kv_block))
    @cute.jit
    def locate(self, stage_info: StageInfo) -> tuple:
        """The work tile's Q tile and the iteration's K/V block."""
        raise KernelNotBuilt("QkvGlobal.locate")


@dataclass(kw_only=True)
class QTile(MemoryResource):
    """One consumer warpgroup's Q tile in shared memory: TMA fills it once per tile; the warpgroup holds it
    for the whole tile, so the register work of the tile (statistics, softmax) hangs off it."""

    acc_o: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    probs: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.acc_o = _registers("fp32 O accumulators and the running row max and sum (registers)")
        self.probs = _registers("P = exp(S - row max) of the block, bf16 (registers, WGMMA's A operand)")

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32) -> None:
        """TMA: the warpgroup's rows of the Q tile."""
        raise KernelNotBuilt("QTile.load")

    @consumer_work(returns=acc_o, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init(self, stage_info: StageInfo) -> Any:
        """O = 0, row max = -inf, row sum = 0."""
        raise KernelNotBuilt("QTile.init")

    @consumer_work(returns=(acc_o, probs), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_overlapped(self, stage_info: StageInfo) -> tuple:
        """``init``, plus P's registers: with overlap, P·V of block j-1 reads the P of the iteration before."""
        raise KernelNotBuilt("QTile.init_overlapped")

    @consumer_work(returns=probs, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def softmax(self, stage_info: StageInfo, scores: Any) -> Any:
        """Online softmax in registers: scale (and mask) S, new row max, P; rescale O and the row sum."""
        raise KernelNotBuilt("QTile.softmax")


@dataclass(kw_only=True)
class KStages(MemoryResource):
    """The ring of K blocks: TMA fills a stage, S = Q·Kᵀ reads it with WGMMA (asynchronously)."""

    scores: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.scores = _registers("S = Q·Kᵀ of the block, fp32 (registers)")

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32, kv_block: cutlass.Int32) -> None:
        """TMA: K block ``kv_block`` of the tile's batch and head."""
        raise KernelNotBuilt("KStages.load")

    @consumer_work(returns=scores)
    @cute.jit
    def qk(self, stage_info: StageInfo) -> Any:
        """Issue S = Q·Kᵀ (WGMMA, both operands in shared memory) as one group; it runs on after return."""
        raise KernelNotBuilt("KStages.qk")

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def wait_s(self, stage_info: StageInfo) -> None:
        """Wait for the S GEMM's group (``wgmma.wait_group`` leaving only a later P·V group in flight):
        S is in registers and the K stage is read."""
        raise KernelNotBuilt("KStages.wait_s")


@dataclass(kw_only=True)
class VStages(MemoryResource):
    """The ring of V blocks: TMA fills a stage, O += P·V reads it with WGMMA (P from registers)."""

    acc_o: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.acc_o = _registers("fp32 O accumulators after this block's P·V (registers)")

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32, kv_block: cutlass.Int32) -> None:
        """TMA: V block ``kv_block`` of the tile's batch and head."""
        raise KernelNotBuilt("VStages.load")

    @consumer_work(returns=acc_o)
    @cute.jit
    def pv(self, stage_info: StageInfo, probs: Any, acc_o: Any) -> Any:
        """Issue O += P·V (WGMMA, P from registers, V from shared memory) as one group."""
        raise KernelNotBuilt("VStages.pv")

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def wait_o(self, stage_info: StageInfo) -> None:
        """Wait for the P·V group: O is final for the block and the V stage is read."""
        raise KernelNotBuilt("VStages.wait_o")


@dataclass(kw_only=True)
class OutTile(MemoryResource):
    """O (bf16) and the log-sum-exp per row (fp32) of one warpgroup's rows, written through shared memory."""

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, acc_o: Any) -> None:
        """Divide O by the row sum, write it to shared memory and TMA-store it; store the LSE."""
        raise KernelNotBuilt("OutTile.store")


__all__ = ["NOT_BUILT", "KStages", "KernelNotBuilt", "OutTile", "QTile", "QkvGlobal", "VStages"]
