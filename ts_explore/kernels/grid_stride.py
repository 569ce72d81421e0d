"""Grid-stride copy kernel: one task, a global-memory source and sink, 128-bit accesses.

Thread ``t`` of CTA ``b`` starts at vector ``b * T + t`` and strides by the
whole grid. Each loop iteration moves ``per_thread`` vectors of ``vector``
int32 per thread (all loads issued before the stores), which is what keeps
enough bytes in flight to approach the device's copy bandwidth.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)

from .common import BuiltHook, int32_vector_ssa


@dataclass(kw_only=True)
class VectorSource(MemoryResource):
    """Global-memory source read as vectors: ``per_thread`` vectors per iteration."""

    data: Any = None  # (vector, n_vectors) view; None on the CPU
    n_vectors: Any = 0
    stride: Any = 1  # vectors between one thread's accesses in one iteration
    vector: cutlass.Constexpr[int] = 4
    per_thread: cutlass.Constexpr[int] = 1
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.item = TaskLocalVariable(
            dtype=cute.TensorSSA,
            default_factory=int32_vector_ssa(self.vector, self.per_thread),
            docs="the vectors this thread moves in one iteration (registers)",
        )

    @consumer_work(returns=item)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cute.TensorSSA:
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        for j in cutlass.range_constexpr(self.per_thread):
            idx = stage_info.loop_offset + j * self.stride
            if cutlass.const_expr(j == 0):
                cute.autovec_copy(self.data[(None, idx)], frag[(None, j)])
            else:
                if idx < self.n_vectors:
                    cute.autovec_copy(self.data[(None, idx)], frag[(None, j)])
        return frag.load()


@dataclass(kw_only=True)
class VectorSink(MemoryResource):
    """Global-memory destination written as vectors (mirrors :class:`VectorSource`)."""

    data: Any = None
    n_vectors: Any = 0
    stride: Any = 1
    vector: cutlass.Constexpr[int] = 4
    per_thread: cutlass.Constexpr[int] = 1

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, item: cute.TensorSSA) -> None:
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        frag.store(item)
        for j in cutlass.range_constexpr(self.per_thread):
            idx = stage_info.loop_offset + j * self.stride
            if cutlass.const_expr(j == 0):
                cute.autovec_copy(frag[(None, j)], self.data[(None, idx)])
            else:
                if idx < self.n_vectors:
                    cute.autovec_copy(frag[(None, j)], self.data[(None, idx)])


def vector_view(tensor: Any, vector: int) -> Any:
    """``(vector, n / vector)`` view of a 1-D tensor (None passes through, for the CPU)."""
    return None if tensor is None else cute.zipped_divide(tensor, (vector,))


def compile_copy(cfg: Any, on_built: BuiltHook | None = None, arch: str | None = None) -> Any:
    """Compile the grid-stride copy for ``cfg``; call it as ``fn(src_ptr, dst_ptr, n, grid, stream)``."""
    from ..scenarios.grid_stride import SCENARIO
    from .linear import compile_linear_copy

    return compile_linear_copy(SCENARIO, cfg, count_name="n_vectors", unit=cfg.vector,
                               threads=cfg.warps * 32, on_built=on_built, arch=arch)


__all__ = ["VectorSink", "VectorSource", "compile_copy", "vector_view"]
