"""Varlen copy with a dynamic domain: each work tile's loop runs to its own segment length."""

from __future__ import annotations

from dataclasses import dataclass

from cutlass.experimental.task_scheduling.resources import TileSchedulerConfig, WorkQueue
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop

from ..kernels import varlen as kernel
from ..kernels.varlen import PackedSource, PaddedSink, VarlenTask
from ..model.plan import DeviceLimits
from ..model import QueueKind
from .base import BuildContext, Built, Scenario, knob, register
from .common import instance_value, require, runtime, tensor, viewpoint


@dataclass(frozen=True)
class VarlenCopy:
    """Knobs of the packed-to-padded copy."""

    lengths: tuple[int, ...] = knob((5, 17, 1, 40, 0, 23, 8, 31), min=0, max=65536, label="segment lengths",
                                    help="one entry per work tile; a launch repeats them to reach its size")
    dynamic: bool = knob(True, label="dynamic domain (get_domain)",
                         help="off: every tile loops to the longest length and guards each access")
    queue: QueueKind = QueueKind.STATIC
    warps: int = knob(1, min=1, max=32, label="warps per task")
    ctas: int = knob(4, min=0, max=8192, label="persistent CTAs", help="0 fills the GPU")
    view_tile: int = knob(3, min=0, max=4095, label="view tile", help="whose domain the picture shows")
    thread: int = knob(0, min=0, max=1023, label="view as thread")

    @property
    def threads(self) -> int:
        return self.warps * 32

    @property
    def max_len(self) -> int:
        return max(self.lengths)

    def grid(self, segments: int | None = None) -> int:
        """CTAs in the CPU view: the kernel's own rule on an assumed H200."""
        return kernel.ctas(self, len(self.lengths) if segments is None else segments, DeviceLimits.h200())


def check(cfg: VarlenCopy) -> None:
    """Reject impossible varlen configs, naming the fix."""
    require(len(cfg.lengths) > 0, "lengths is empty", "give at least one segment length")
    require(all(isinstance(n, int) and n >= 0 for n in cfg.lengths), f"lengths={cfg.lengths!r} must be ints >= 0",
            "use a tuple such as (5, 17, 1)")
    require(cfg.max_len > 0, "every segment is empty", "give at least one positive length")
    require(cfg.queue is not QueueKind.CLC, "the varlen demo schedules tiles statically",
            "pick queue=NONE or STATIC (CLC is shown by the persistent copy)")
    require(cfg.view_tile < len(cfg.lengths), f"view tile {cfg.view_tile} does not exist",
            f"pick view_tile < {len(cfg.lengths)}")
    require(cfg.thread < cfg.threads, f"view thread {cfg.thread} does not exist in a {cfg.threads}-thread CTA",
            f"pick thread < {cfg.threads}")


def build(cfg: VarlenCopy, ctx: BuildContext) -> Built:
    """One VarlenTask per CTA: a block-local stride loop over the tile's segment."""
    where = viewpoint(cfg, ctx, cfg.grid())
    offsets = tensor(ctx, "offsets")
    guarded = not cfg.dynamic
    src = PackedSource(name="packed", packed=tensor(ctx, "packed"), offsets=offsets, guarded=guarded)
    dst = PaddedSink(name="padded", padded=tensor(ctx, "padded"), offsets=offsets,
                     row_width=runtime(ctx, "row_width", cfg.max_len), guarded=guarded)
    end = VarlenTask.get_domain if cfg.dynamic else runtime(ctx, "row_width", cfg.max_len)
    threads = cfg.threads

    def body(src: PackedSource, dst: PaddedSink) -> None:
        with domain_loop(where.thread, end, threads):
            val = src.load()
            dst.store(val=val)

    resources = [src]
    graph: dict = {dst: [src]}
    if cfg.queue is QueueKind.STATIC:
        sched = TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=runtime(ctx, "scheduler_params", None))
        wq = WorkQueue(tile_scheduler_config=sched, name="wq")

        @schedule
        def varlen_copy(src: PackedSource, dst: PaddedSink, wq: WorkQueue) -> None:
            with work_tile_loop(wq):
                body(src, dst)
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

        tree = varlen_copy(src, dst, wq)
        resources.append(wq)
        graph = {dst: [src, wq]}
    else:
        @schedule
        def varlen_copy(src: PackedSource, dst: PaddedSink) -> None:
            body(src, dst)

        tree = varlen_copy(src, dst)
    view_tile = instance_value(ctx, "view_tile", cfg.view_tile)
    task = VarlenTask(offsets=offsets, lengths=cfg.lengths, view_tile=view_tile, name="varlen_copy",
                      src_resources=resources, dst_resources=[dst], warp_idx=0, num_warps=cfg.warps, schedule=tree)
    notes = () if ctx.on_gpu else (
        f"tile {view_tile} has {cfg.lengths[view_tile]} elements; thread {where.thread} copies offsets "
        f"{where.thread}, {where.thread}+{threads}, ... "
        + ("(loop end = get_domain)" if cfg.dynamic else f"(loop end = {cfg.max_len}, guarded)"),
    )
    return Built(tasks=[task], resource_dependency_graph=graph, notes=notes)


SCENARIO = register(Scenario(
    name="varlen_copy",
    title="Varlen copy with a dynamic domain",
    config_type=VarlenCopy,
    build_fn=build,
    check_fn=check,
    description="Packed variable-length segments copied into padded rows; the loop end comes from "
                "VarlenTask.get_domain per work tile (or the longest length, guarded).",
    kernel="ts_explore.kernels.varlen",
))
