"""Guards-and-conditions demo: each CTA copies one row and records which guarded blocks ran.

``flags[row, offset]`` collects one bit per block that fired on that iteration
(1 first_iter, 2 last_iter, 4 every, 8 when_true), so the host can check the
guard semantics exactly.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

from dataclasses import dataclass
from typing import Any

import cuda.bindings.driver as cuda
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

from .common import BuiltHook, run_built

FIRST, LAST, EVERY, MARKED = 1, 2, 4, 8


@dataclass(kw_only=True)
class Tape(MemoryResource):
    """Row ``block`` of the input; ``marked`` says whether the element is a multiple of ``modulus``."""

    data: Any = None
    width: cutlass.Constexpr[int] = 16
    modulus: cutlass.Constexpr[int] = 4
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    flag: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.item = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs="element of this row")
        self.flag = TaskLocalVariable(dtype=cutlass.Boolean, default=cutlass.Boolean(False),
                                      docs="element is a multiple of the modulus")

    @consumer_work(returns=item)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Int32:
        return self.data[cute.arch.block_idx()[0] * self.width + stage_info.loop_offset]

    @consumer_work(returns=flag, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def marked(self, stage_info: StageInfo) -> cutlass.Boolean:
        value = self.data[cute.arch.block_idx()[0] * self.width + stage_info.loop_offset]
        return value % self.modulus == 0


@dataclass(kw_only=True)
class Log(MemoryResource):
    """Output row plus the flag bits of the guarded blocks (written by lane 0)."""

    out: Any = None
    flags: Any = None
    width: cutlass.Constexpr[int] = 16

    @cute.jit
    def _tag(self, stage_info: StageInfo, bit: int) -> None:
        if cute.arch.thread_idx()[0] == 0:
            where = cute.arch.block_idx()[0] * self.width + stage_info.loop_offset
            self.flags[where] = self.flags[where] | bit

    @producer_work
    @cute.jit
    def copy(self, stage_info: StageInfo, item: cutlass.Int32) -> None:
        if cute.arch.thread_idx()[0] == 0:
            self.out[cute.arch.block_idx()[0] * self.width + stage_info.loop_offset] = item

    @producer_work
    @cute.jit
    def tag_first(self, stage_info: StageInfo) -> None:
        self._tag(stage_info, FIRST)

    @producer_work
    @cute.jit
    def tag_last(self, stage_info: StageInfo) -> None:
        self._tag(stage_info, LAST)

    @producer_work
    @cute.jit
    def tag_every(self, stage_info: StageInfo) -> None:
        self._tag(stage_info, EVERY)

    @producer_work
    @cute.jit
    def tag_marked(self, stage_info: StageInfo) -> None:
        self._tag(stage_info, MARKED)


def compile_copy(cfg: Any, on_built: BuiltHook | None = None, arch: str | None = None) -> Any:
    """Compile the demo; call it as ``fn(src, out, flags, rows, stream)`` (one CTA per row)."""
    from .contract import BuildContext
    from ..scenarios.guards import SCENARIO
    from .build import compile_with_pointers

    @cute.kernel
    def kernel(src: cute.Tensor, out: cute.Tensor, flags: cute.Tensor) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        gx, _, _ = cute.arch.grid_dim()
        ctx = BuildContext(on_gpu=True, block=bx, thread=tx, grid=gx,
                           tensors={"src": src, "out": out, "flags": flags})
        run_built(SCENARIO.build(cfg, ctx), on_built)

    @cute.jit
    def host(src_ptr: cute.Pointer, out_ptr: cute.Pointer, flags_ptr: cute.Pointer, rows: cutlass.Int32,
             stream: cuda.CUstream) -> None:
        layout = cute.make_layout(rows * cfg.width)
        kernel(cute.make_tensor(src_ptr, layout), cute.make_tensor(out_ptr, layout),
               cute.make_tensor(flags_ptr, layout)).launch(grid=(rows, 1, 1), block=(32, 1, 1), stream=stream)

    return compile_with_pointers(host, pointers=3, ints=1, arch=arch)


__all__ = ["EVERY", "FIRST", "LAST", "Log", "MARKED", "Tape", "compile_copy"]
