"""Guards-and-conditions demo: each CTA copies one row and records which guarded blocks ran.

``flags[row, offset]`` collects one bit per block that fired on that iteration
(1 first_iter, 2 last_iter, 4 every, 8 when_true), so the host can check the
guard semantics exactly.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

import math
from dataclasses import dataclass
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import numpy as np
from cutlass.experimental.task_scheduling.enums import Every
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    WorkAttr,
    consumer_work,
    producer_work,
)

from ..model.plan import DeviceLimits, Instance, LaunchPlan
from .common import BuiltHook, run_built
from .trace import address, recorder_for
from .host import FILL, HostProblem, pattern, require_size, work_text

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


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """One CTA of one warp per row of ``width`` elements; every row runs the same domain."""
    size = require_size(size)
    rows = max(1, math.ceil(size / cfg.width))
    trips = len(cfg.iterations())
    instance = Instance(ctas=(range(rows),), view={"block": 0, "grid": rows}, work=work_text(trips, "iteration"),
                        iterations=trips)
    return LaunchPlan(kernel=__name__, size=rows * cfg.width, grid=(rows, 1, 1), threads=32, smem_bytes=0,
                      device=limits, instances=(instance,), registers=registers,
                      assumptions=(f"rows of {cfg.width} elements (the domain's end)",))


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Copied elements and the flag bits each guarded block must leave, computed on the host."""
    width, rows = cfg.width, plan.ctas
    src = pattern(rows * width).reshape(rows, width) % 1000
    out = np.full((rows, width), FILL, dtype=np.int32)
    flags = np.zeros((rows, width), dtype=np.int32)
    its = cfg.iterations()
    every = Every(cfg.every_period, cfg.every_start)
    for k, offset in enumerate(its):
        out[:, offset] = src[:, offset]
        bits = (FIRST if cfg.first and k == 0 else 0) | (LAST if cfg.last and k == len(its) - 1 else 0)
        bits |= EVERY if cfg.every and every.fires(k, len(its)) else 0
        flags[:, offset] |= bits
        if cfg.when:
            flags[:, offset] |= np.where(src[:, offset] % cfg.modulus == 0, MARKED, 0).astype(np.int32)
    return HostProblem({"src": src.reshape(-1).astype(np.int32)}, {"out": rows * width, "flags": rows * width},
                       {"out": out.reshape(-1), "flags": flags.reshape(-1)}, ("src", "out", "flags", rows),
                       8 * rows * len(its), rows * width, rows,
                       shapes={"out": (rows, width), "flags": (rows, width)}, zero_filled=("flags",))


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile the demo; call it as ``fn(src, out, flags, rows, stream)`` (one CTA per row)."""
    from .build import compile_with_pointers
    from .contract import BuildContext

    @cute.kernel
    def kernel(src: cute.Tensor, out: cute.Tensor, flags: cute.Tensor, events: cutlass.Int64,
               progress: cutlass.Int64) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        gx, _, _ = cute.arch.grid_dim()
        ctx = BuildContext(on_gpu=True, block=bx, thread=tx, grid=gx,
                           tensors={"src": src, "out": out, "flags": flags})
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress))

    @cute.jit
    def host(src_ptr: cute.Pointer, out_ptr: cute.Pointer, flags_ptr: cute.Pointer, rows: cutlass.Int32,
             stream: cuda.CUstream, events: Any = None, progress: Any = None) -> None:
        layout = cute.make_layout(rows * cfg.width)
        kernel(cute.make_tensor(src_ptr, layout), cute.make_tensor(out_ptr, layout),
               cute.make_tensor(flags_ptr, layout), address(events), address(progress)).launch(grid=(rows, 1, 1), block=(32, 1, 1), stream=stream)

    return compile_with_pointers(host, pointers=3, ints=1, arch=arch, traced=trace is not None)


__all__ = ["EVERY", "FIRST", "LAST", "Log", "MARKED", "Tape", "compile", "host_problem", "plan"]
