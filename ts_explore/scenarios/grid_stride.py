"""Grid-stride copy: one task; each thread's domain starts at its global index and strides by the grid."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..kernels import grid_stride as kernel
from ..kernels.access import CacheHint, units
from ..kernels.grid_stride import VectorSink, VectorSource
from ..model.plan import DeviceLimits
from .base import BuildContext, Built, Scenario, knob, register
from .common import require, runtime, tensor, viewpoint


@dataclass(frozen=True)
class GridStrideCopy:
    """Knobs of the grid-stride copy (``elements`` sizes the CPU view; a launch takes its own sizes)."""

    elements: int = knob(1 << 14, options=tuple(1 << i for i in range(6, 23)), label="elements (CPU view)",
                         help="int32 elements copied in the picture; launch() takes its own sizes")
    ctas: int = knob(8, min=0, max=8192, label="CTAs",
                     help="CTAs launched; 0 fills the GPU (SMs x CTAs that fit); fewer CTAs = longer loops")
    warps: int = knob(4, min=1, max=32, label="warps per task")
    vector: int = knob(4, options=(1, 2, 4), label="vector width (int32 per access)",
                       help="4 = 128-bit loads and stores")
    per_thread: int = knob(1, min=1, max=8, label="vectors in flight per thread",
                           help="each iteration loads this many vectors before storing them")
    unroll: int = knob(1, min=1, max=8, label="unroll")
    cache: CacheHint = knob(CacheHint.NORMAL, label="cache hints",
                            help="how loads and stores ask L1/L2 to treat data that is read and written once")
    block: int = knob(0, min=0, max=8191, label="view as CTA")
    thread: int = knob(0, min=0, max=1023, label="view as thread")

    @property
    def threads(self) -> int:
        return self.warps * 32

    def grid(self) -> int:
        """CTAs in the CPU view: the kernel's own rule on an assumed H200."""
        return kernel.ctas(self, DeviceLimits.h200())


def check(cfg: GridStrideCopy) -> None:
    """Reject configs the kernel cannot run, naming the control and the fix."""
    require(cfg.vector in (1, 2, 4), f"vector width {cfg.vector} is not a 32/64/128-bit access",
            "pick vector width 1, 2 or 4", "vector")
    require(cfg.threads <= 1024, f"{cfg.warps} warps per task = {cfg.threads} threads, more than the 1024 a CTA "
            "may have", "pick at most 32 warps per task", "warps")
    require(cfg.elements % cfg.vector == 0, f"{cfg.elements} elements are not whole vectors of {cfg.vector}",
            "pick elements that are a multiple of the vector width", "elements")
    require(cfg.thread < cfg.threads, f"view as thread {cfg.thread}: a CTA of {cfg.warps} warps has "
            f"{cfg.threads} threads", f"pick view as thread below {cfg.threads}, or more warps per task", "thread")
    grid = cfg.grid()
    require(cfg.block < grid, f"view as CTA {cfg.block}: only {grid} CTA{'' if grid == 1 else 's'} are launched",
            f"pick view as CTA below {grid}, or raise CTAs", "block")


def build(cfg: GridStrideCopy, ctx: BuildContext) -> Built:
    """One copy task over warps [0, warps): load vectors, route them, store them."""
    where = viewpoint(cfg, ctx, cfg.grid())
    n = runtime(ctx, "n", cfg.elements)
    n_vectors = runtime(ctx, "n_vectors", units(cfg.elements, cfg.vector))
    threads = cfg.threads
    stride = where.grid * threads  # vectors between a thread's successive accesses
    common = dict(n=n, stride=stride, vector=cfg.vector, per_thread=cfg.per_thread, cache=cfg.cache)
    src = VectorSource(name="src", data=tensor(ctx, "src"), **common)
    dst = VectorSink(name="dst", data=tensor(ctx, "dst"), **common)
    start = where.block * threads + where.thread

    @schedule
    def grid_stride_copy(src: VectorSource, dst: VectorSink) -> None:
        with domain_loop(start, n_vectors, stride * cfg.per_thread, unroll=cfg.unroll):
            item = src.load()
            dst.store(item=item)

    task = Task(name="copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=cfg.warps,
                schedule=grid_stride_copy(src, dst))
    return Built(tasks=[task], resource_dependency_graph={dst: [src]},
                 notes=() if ctx.on_gpu else _notes(cfg, where, start, stride, n_vectors)
                 + (f"global memory accesses: {cfg.cache.value}",))


def _notes(cfg: GridStrideCopy, where: Any, start: int, stride: int, n_vectors: int) -> tuple[str, ...]:
    """What the viewed thread copies, or that it does no work."""
    who = f"thread {where.thread} of CTA {where.block} ({where.grid} CTAs x {cfg.threads} threads)"
    trips = len(range(start, n_vectors, stride * cfg.per_thread))
    if trips == 0:
        return (f"{who} does no work (0 iterations): it starts at vector {start} of {n_vectors}",)
    step = stride * cfg.per_thread
    return (f"{who} copies {trips} iteration{'' if trips == 1 else 's'}: vectors {start}, {start + step}, ... "
            f"of {n_vectors}, {cfg.per_thread} x {cfg.vector} int32 each",)


SCENARIO = register(Scenario(
    name="grid_stride_copy",
    title="Grid-stride copy",
    config_type=GridStrideCopy,
    build_fn=build,
    check_fn=check,
    description="One task; each thread strides over the tensor by the whole grid, "
                "moving vectors of int32 from a source to a sink resource.",
    kernel="ts_explore.kernels.grid_stride",
))
