"""Grid-stride copy kernel: one task, a global-memory source and sink, 128-bit accesses.

Thread ``t`` of CTA ``b`` starts at vector ``b * T + t`` and strides by the
whole grid. Each loop iteration moves ``per_thread`` vectors of ``vector``
int32 per thread (all loads issued before the stores), which is what keeps
enough bytes in flight to approach the device's copy bandwidth.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

import dataclasses
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

from ..model.plan import DeviceLimits, LaunchPlan
from .common import BuiltHook, int32_vector_ssa
from .host import HostProblem, pattern, require_size, strided_instances


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


def ctas(cfg: Any, limits: DeviceLimits, registers: int | None = None) -> int:
    """CTAs launched: the config's ``ctas``, or as many as fit on the device at once (0 = fill the GPU)."""
    return cfg.ctas or limits.sms * limits.ctas_per_sm(cfg.warps * 32, 0, registers)


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """One thread per lane of the grid; thread ``g`` copies vectors ``g, g + G*k, ...`` (per-thread trip counts)."""
    n = require_size(size, cfg.vector, "vector width")
    threads = cfg.warps * 32
    grid = ctas(cfg, limits, registers)
    vectors = n // cfg.vector

    def view(g: int) -> dict[str, Any]:
        return {"block": g // threads, "thread": g % threads, "grid": grid, "extra": {"n_vectors": vectors}}

    per_thread = strided_instances(vectors, grid * threads, "iteration", per=cfg.per_thread, view=view)
    instances = tuple(dataclasses.replace(i, threads=i.ctas, ctas=(range(i.ctas[0].start // threads,
                                                                           i.ctas[0][-1] // threads + 1),))
                      for i in per_thread)
    return LaunchPlan(kernel=__name__, size=n, grid=(grid, 1, 1), threads=threads, smem_bytes=0, device=limits,
                      instances=instances, registers=registers,
                      assumptions=(f"{cfg.per_thread} vector(s) of {cfg.vector} int32 per thread per iteration",))


def host_problem(cfg: Any, plan: LaunchPlan) -> HostProblem:
    """Copy ``size`` int32: the output must equal the input exactly."""
    n = plan.size
    src = pattern(n)
    return HostProblem({"src": src}, {"dst": n}, {"dst": src}, ("src", "dst", n, plan.ctas), 8 * n, n, plan.ctas)


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Compile ``scenario``'s grid-stride copy for ``cfg``; call it as ``fn(src_ptr, dst_ptr, n, grid, stream)``."""
    from .linear import compile_linear_copy

    return compile_linear_copy(scenario, cfg, count_name="n_vectors", unit=cfg.vector,
                               threads=cfg.warps * 32, on_built=on_built, arch=arch, trace=trace)


__all__ = ["VectorSink", "VectorSource", "compile", "ctas", "host_problem", "plan", "vector_view"]
