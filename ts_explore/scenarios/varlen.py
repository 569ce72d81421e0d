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
from .common import instance_value, next_work_tile, require, runtime, tensor, viewpoint


@dataclass(frozen=True)
class VarlenCopy:
    """Knobs of the packed-to-padded copy."""

    lengths: tuple[int, ...] = knob((5, 17, 1, 40, 0, 23, 8, 31), min=0, max=65536, label="segment lengths",
                                    help="one entry per work tile; a launch repeats them to reach its size")
    dynamic: bool = knob(True, label="dynamic domain (get_domain)",
                         help="off: every tile loops to the longest length and guards each access")
    queue: QueueKind = knob(QueueKind.STATIC, options=(QueueKind.NONE, QueueKind.STATIC), label="work queue",
                            help="none: one CTA per segment; static: each CTA walks its own segments")
    warps: int = knob(1, min=1, max=32, label="warps per task")
    ctas: int = knob(4, min=0, max=8192, label="persistent CTAs", help="0 fills the GPU (static queue only)")
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
    """Reject impossible varlen configs, naming the control and the fix."""
    require(len(cfg.lengths) > 0, "segment lengths is empty", "type at least one length, e.g. 5, 17, 1")
    require(all(isinstance(n, int) and n >= 0 for n in cfg.lengths),
            f"segment lengths {cfg.lengths!r} must be whole numbers 0 or more", "type e.g. 5, 17, 1")
    require(cfg.max_len > 0, "every segment is empty", "type at least one positive segment length")
    require(cfg.queue is not QueueKind.CLC, "the varlen copy hands segments out statically",
            "pick work queue none or static (the persistent copy shows clc)", "queue")
    require(cfg.view_tile < len(cfg.lengths), f"view tile {cfg.view_tile}: there are {len(cfg.lengths)} segments",
            f"pick view tile below {len(cfg.lengths)}, or type more segment lengths", "view_tile")
    require(cfg.thread < cfg.threads, f"view as thread {cfg.thread}: a CTA of {cfg.warps} warps has "
            f"{cfg.threads} threads", f"pick view as thread below {cfg.threads}, or more warps per task", "thread")


def inactive(cfg: VarlenCopy) -> dict[str, str]:
    """Controls that change nothing for this config, and why."""
    return {"ctas": "without a work queue each segment gets its own CTA"} if cfg.queue is not QueueKind.STATIC else {}


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
                next_work_tile(wq)

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
    notes: tuple[str, ...] = ()
    captions: dict[str, str] = {}
    if not ctx.on_gpu:
        length = cfg.lengths[view_tile]
        trips = len(range(where.thread, length, threads))
        end = "get_domain" if cfg.dynamic else f"{cfg.max_len}, guarded"
        who = f"thread {where.thread} in work tile {view_tile} ({length} elements; loop end = {end})"
        walk = (f"{where.grid} CTA{'' if where.grid == 1 else 's'} walk the {len(cfg.lengths)} work tiles"
                if cfg.queue is QueueKind.STATIC else f"one CTA for each of the {len(cfg.lengths)} work tiles")
        notes = (f"{who} does no work (0 iterations)" if trips == 0 else
                 f"{who} copies offsets {where.thread}, {where.thread + threads}, ...: {trips} iteration"
                 f"{'' if trips == 1 else 's'}", walk)
        captions = {"domain_loop": f"segment lengths {_lengths_text(cfg.lengths)}; work tile {view_tile}: "
                                   f"{length} elements, {trips} iteration{'' if trips == 1 else 's'} for this thread"}
    return Built(tasks=[task], resource_dependency_graph=graph, notes=notes, captions=captions)


def _lengths_text(lengths: tuple[int, ...], most: int = 12) -> str:
    """The first few lengths and how many there are."""
    shown = ", ".join(str(n) for n in lengths[:most])
    return shown if len(lengths) <= most else f"{shown}, ... ({len(lengths)} segments)"


SCENARIO = register(Scenario(
    name="varlen_copy",
    title="Varlen copy with a dynamic domain",
    config_type=VarlenCopy,
    build_fn=build,
    check_fn=check,
    inactive_fn=inactive,
    description="Packed variable-length segments copied into padded rows; the loop end comes from "
                "VarlenTask.get_domain per work tile (or the longest length, guarded).",
    kernel="ts_explore.kernels.varlen",
))
