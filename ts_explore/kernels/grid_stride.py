"""Grid-stride copy kernel: one task, a global-memory source and sink, 128-bit accesses, any size.

Thread ``t`` of CTA ``b`` starts at vector ``b * T + t`` and strides by the
whole grid. Each loop iteration moves ``per_thread`` vectors of ``vector``
int32 per thread (all loads issued before the stores), which is what keeps
enough bytes in flight to approach the device's copy bandwidth. The domain
counts vectors up to ``ceil(n / vector)``: when ``n`` is not a multiple of the
vector width, the thread that owns the last vector copies its ``n % vector``
elements one by one (a bounds check inside the work bodies, so every thread
runs the same schedule).
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
from .access import CacheHint, load_vector, store_vector, units, vectors
from .common import BuiltHook, int32_vector_ssa
from .host import MAX_ELEMENTS, HostProblem, SizeError, pattern, require_size, split_out, strided_instances


@dataclass(kw_only=True)
class VectorSource(MemoryResource):
    """Global-memory source read as vectors: ``per_thread`` vectors per iteration, the partial last one by element."""

    data: Any = None  # 1-D tensor of n int32; None on the CPU
    n: Any = 0  # elements
    stride: Any = 1  # vectors between one thread's accesses in one iteration
    vector: cutlass.Constexpr[int] = 4
    per_thread: cutlass.Constexpr[int] = 1
    cache: cutlass.Constexpr = CacheHint.NORMAL
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
        data, n, stride = self.data, self.n, self.stride  # bound outside the branches below
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        whole = n // self.vector
        view = vectors(data, self.vector, whole)
        for j in cutlass.range_constexpr(self.per_thread):
            idx = stage_info.loop_offset + j * stride
            if idx < whole:
                load_vector(self.cache, view[(None, idx)], frag[(None, j)])
            else:
                if cutlass.const_expr(self.vector > 1):
                    # The vector that runs past the end (one in the whole grid); comparing the index
                    # first keeps idx * vector, which can wrap for slots past the end, out of the test.
                    if idx == whole:
                        for k in cutlass.range_constexpr(self.vector):
                            if whole * self.vector + k < n:
                                frag[k, j] = data[whole * self.vector + k]
        return frag.load()


@dataclass(kw_only=True)
class VectorSink(MemoryResource):
    """Global-memory destination written as vectors (mirrors :class:`VectorSource`)."""

    data: Any = None
    n: Any = 0
    stride: Any = 1
    vector: cutlass.Constexpr[int] = 4
    per_thread: cutlass.Constexpr[int] = 1
    cache: cutlass.Constexpr = CacheHint.NORMAL

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, item: cute.TensorSSA) -> None:
        data, n, stride = self.data, self.n, self.stride
        frag = cute.make_rmem_tensor((self.vector, self.per_thread), cutlass.Int32)
        frag.store(item)
        whole = n // self.vector
        view = vectors(data, self.vector, whole)
        for j in cutlass.range_constexpr(self.per_thread):
            idx = stage_info.loop_offset + j * stride
            if idx < whole:
                store_vector(self.cache, frag[(None, j)], view[(None, idx)])
            else:
                if cutlass.const_expr(self.vector > 1):
                    if idx == whole:
                        for k in cutlass.range_constexpr(self.vector):
                            if whole * self.vector + k < n:
                                data[whole * self.vector + k] = frag[k, j]


def ctas(cfg: Any, limits: DeviceLimits, registers: int | None = None) -> int:
    """CTAs launched: the config's ``ctas``, or as many as fit on the device at once (0 = fill the GPU)."""
    return cfg.ctas or limits.sms * limits.ctas_per_sm(cfg.warps * 32, 0, registers)


def plan(cfg: Any, size: int, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """One thread per lane of the grid; thread ``g`` copies vectors ``g, g + G*k, ...`` (per-thread trip counts).

    When ``size`` is not a multiple of the vector width, the thread owning the
    partial last vector is an instance of its own (same schedule, named).
    """
    n = require_size(size)
    threads = cfg.warps * 32
    grid = ctas(cfg, limits, registers)
    count = units(n, cfg.vector)
    step = grid * threads * cfg.per_thread
    if count + step > MAX_ELEMENTS:
        # The loop index would pass 2**31 - 1 on its way out of the domain (int32 in the kernel).
        raise SizeError(f"size {n} leaves no room for the loop index to step past the end "
                        f"({count} vectors + a stride of {step} > {MAX_ELEMENTS}); use a wider vector "
                        f"(vector=4) or a size <= {MAX_ELEMENTS - step}")

    def view(g: int) -> dict[str, Any]:
        return {"block": g // threads, "thread": g % threads, "grid": grid, "extra": {"n": n, "n_vectors": count}}

    per_thread = strided_instances(count, grid * threads, "iteration", per=cfg.per_thread, view=view)
    if n % cfg.vector:
        owner = (count - 1) % (grid * threads)
        per_thread = split_out(per_thread, owner, view,
                               f", the last a {n % cfg.vector}-element tail (a partial vector)")
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


__all__ = ["VectorSink", "VectorSource", "compile", "ctas", "host_problem", "plan"]
