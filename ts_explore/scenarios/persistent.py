"""Persistent copy with skippable tiles: the three scheduling shapes (none / static / CLC)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.resources import (
    PdlLaunchBarrier,
    PdlWaitBarrier,
    PipelineConfig,
    TileSchedulerConfig,
)
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ..kernels import persistent as kernel
from ..kernels.access import CacheHint
from ..kernels.persistent import SkippingQueue, TileRows
from ..model.plan import DeviceLimits
from ..model import QueueKind
from .base import BuildContext, Built, Scenario, knob, register
from .common import SkipRule, is_power_of_two, require, runtime, skip_tile, tensor, viewpoint


class PersistentFault(str, Enum):
    """Mistakes to launch (or try to) on purpose: queue bookkeeping misplaced, PDL out of order."""

    NONE = "none"
    PDL_LAUNCH_BEFORE_WAIT = "launch_griddep before wait_griddep (ordering)"
    QUEUE_IN_SKIPPABLE = "queue bookkeeping inside skippable() (TS refuses to record it)"


@dataclass(frozen=True)
class PersistentCopy:
    """Knobs of the tiled copy and its work queue."""

    queue: QueueKind = QueueKind.STATIC
    tiles: int = knob(12, min=1, max=4096, label="tiles (CPU view)",
                      help="logical tiles in the picture; a launch derives them from its size")
    overlaunch: int = knob(2, min=0, max=64, label="over-launched tiles",
                           help="extra tiles handed out by the queue and skipped")
    skip: SkipRule = SkipRule.NONE
    every_k: int = knob(3, min=2, max=64, label="skip every k-th tile")
    mask: tuple[int, ...] = knob((1,), label="tile mask", help="tile indices to skip (rule 'tile mask')")
    skip_fn: Callable[[Any], Any] | None = None  # rule 'user callable': tile -> bool, traced in the kernel too
    tile: int = knob(8192, min=512, max=65536, step=512, label="tile (int32 elements)")
    warps: int = knob(4, min=1, max=32, label="warps per task")
    vector: int = knob(4, min=1, max=4, label="vector width (int32 per access)")
    per_thread: int = knob(1, min=1, max=8, label="vectors in flight per thread")
    unroll: int = knob(1, min=1, max=8, label="unroll")
    ctas: int = knob(4, min=0, max=8192, label="persistent CTAs", help="0 fills the GPU; ignored without a queue")
    scheduler_stages: int = knob(2, min=1, max=4, label="CLC scheduler stages")
    block: int = knob(0, min=0, max=8191, label="view as CTA")
    cache: CacheHint = knob(CacheHint.NORMAL, label="cache hints",
                            help="how loads and stores ask L1/L2 to treat data that is read and written once")
    fault: PersistentFault = knob(PersistentFault.NONE, label="fault (for debugging)",
                                  help="a deliberate mistake: the verifier reports it; launch anyway to see it run")

    @property
    def threads(self) -> int:
        return self.warps * 32

    @property
    def threads_per_cta(self) -> int:
        return self.threads + (32 if self.queue is QueueKind.CLC else 0)

    @property
    def rows(self) -> int:
        return self.tile // (self.threads * self.vector * self.per_thread)

    def total_tiles(self, logical: int | None = None) -> int:
        return (self.tiles if logical is None else logical) + self.overlaunch

    def grid(self, logical: int | None = None) -> int:
        """CTAs in the CPU view: the kernel's own rule on an assumed H200."""
        return kernel.ctas(self, self.total_tiles(logical), DeviceLimits.h200())

    def skipped(self, tile: int, logical: int | None = None) -> bool:
        """Host-side: whether ``tile`` is skipped (over-launched or named by the rule)."""
        if self.queue is QueueKind.NONE:
            return False
        return bool(skip_tile(self.skip, tile, k=self.every_k, mask=self.mask, fn=self.skip_fn,
                              logical_tiles=self.tiles if logical is None else logical))


def check(cfg: PersistentCopy) -> None:
    """Reject queue/skip/tile combinations that cannot work, naming the fix."""
    if cfg.queue is QueueKind.NONE:
        require(cfg.skip is SkipRule.NONE, f"skip rule {cfg.skip.value!r} needs a work queue to skip tiles",
                "pick queue=STATIC or CLC, or skip=NONE")
        require(cfg.overlaunch == 0, "over-launched tiles are skipped by the work queue; without one they "
                "would copy out of bounds", "set overlaunch=0 or pick queue=STATIC/CLC")
    require(cfg.vector in (1, 2, 4), f"vector={cfg.vector} is not a 32/64/128-bit access", "use 1, 2 or 4")
    require(is_power_of_two(cfg.tile), f"tile={cfg.tile} is not a power of two", "use 512, 1024, ... 65536")
    row = cfg.threads * cfg.vector * cfg.per_thread
    require(cfg.tile % row == 0 and cfg.tile >= row,
            f"a {cfg.tile}-element tile is not whole rows of {cfg.threads} threads x {cfg.vector} x {cfg.per_thread}",
            "raise the tile or lower warps/vector/per_thread")
    require(cfg.threads_per_cta <= 1024, f"{cfg.threads_per_cta} threads exceed 1024 per CTA", "use fewer warps")
    if cfg.skip is SkipRule.CUSTOM:
        require(callable(cfg.skip_fn), "skip rule 'user callable' has no skip_fn",
                "pass skip_fn=lambda tile: tile % 4 == 0 (it must also trace on DSL Int32)")
    if cfg.skip is SkipRule.MASK:
        require(all(isinstance(m, int) and m >= 0 for m in cfg.mask), f"mask={cfg.mask!r} must hold tile indices",
                "use a tuple of non-negative ints, e.g. (1, 4)")
    require(cfg.block < cfg.grid(), f"view CTA {cfg.block} is not launched ({cfg.grid()} CTAs)",
            f"pick block < {cfg.grid()}")


def _queue(cfg: PersistentCopy, ctx: BuildContext) -> SkippingQueue:
    params = runtime(ctx, "scheduler_params", None)
    skip = dict(rule=cfg.skip, every_k=cfg.every_k, mask=cfg.mask, skip_fn=cfg.skip_fn,
                logical_tiles=runtime(ctx, "logical_tiles", cfg.tiles))
    if cfg.queue is QueueKind.STATIC:
        sched = TileSchedulerConfig.create_static_persistent_tile_scheduler_params(tile_scheduler_params=params)
        return SkippingQueue(tile_scheduler_config=sched, name="wq", **skip)
    sched = TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(
        params, response_ptr=runtime(ctx, "clc_response", None))
    fetch = PipelineConfig.create_clc_fetch_async_pipeline_cfg(
        num_stages=cfg.scheduler_stages, num_bytes=16,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.threads_per_cta),
        cta_layout_vmnk=(1, 1, 1, 1))
    return SkippingQueue(tile_scheduler_config=sched, pipeline_config=fetch, name="wq", **skip)


def build(cfg: PersistentCopy, ctx: BuildContext) -> Built:
    """A copy task (plus, for CLC, a one-warp scheduler task) over the queue's tiles."""
    where = viewpoint(cfg, ctx, cfg.grid())
    rows = dict(n=runtime(ctx, "n", cfg.tiles * cfg.tile), tile=cfg.tile, threads=cfg.threads, vector=cfg.vector,
                per_thread=cfg.per_thread, cache=cfg.cache)
    src = TileRows(name="src", data=tensor(ctx, "src"), **rows)
    dst = TileRows(name="dst", data=tensor(ctx, "dst"), **rows)
    if cfg.queue is QueueKind.NONE:
        require(cfg.fault is PersistentFault.NONE, f"fault {cfg.fault.value!r} needs a work queue",
                "pick queue=STATIC (or CLC), or fault=NONE")

        @schedule
        def tile_copy(src: TileRows, dst: TileRows) -> None:
            with domain_loop(0, cfg.rows, 1, unroll=cfg.unroll):
                dst.store(item=src.load())

        task = Task(name="copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=cfg.warps,
                    schedule=tile_copy(src, dst))
        return Built(tasks=[task], resource_dependency_graph={dst: [src]}, notes=_notes(cfg, where, ctx))

    wq = _queue(cfg, ctx)
    fault = cfg.fault
    skip_if = (SkippingQueue.skip_work_tile_if if cfg.skip is not SkipRule.NONE or cfg.overlaunch
               or fault is PersistentFault.QUEUE_IN_SKIPPABLE else None)
    pdl = fault is PersistentFault.PDL_LAUNCH_BEFORE_WAIT
    pdl_wait, pdl_launch = PdlWaitBarrier(name="pdl_wait"), PdlLaunchBarrier(name="pdl_launch")

    def advance(wq: SkippingQueue) -> None:
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()

    @schedule
    def persistent_copy(src: TileRows, dst: TileRows, wq: SkippingQueue, pdl_wait: Any, pdl_launch: Any) -> None:
        if pdl:  # the fault: dependent grids may start before this one waited for its own prerequisites
            pdl_launch.launch_griddep()
            pdl_wait.wait_griddep()
        with work_tile_loop(wq, skip_if=skip_if) as tiles:
            if skip_if is not None:
                with tiles.skippable():
                    with domain_loop(0, cfg.rows, 1, unroll=cfg.unroll):
                        dst.store(item=src.load())
                    if fault is PersistentFault.QUEUE_IN_SKIPPABLE:  # a skipped tile would never advance
                        advance(wq)
            else:
                with domain_loop(0, cfg.rows, 1, unroll=cfg.unroll):
                    dst.store(item=src.load())
            if fault is not PersistentFault.QUEUE_IN_SKIPPABLE:
                advance(wq)

    copy = Task(name="copy", src_resources=[src, wq, *([pdl_wait] if pdl else [])],
                dst_resources=[dst, *([pdl_launch] if pdl else [])], warp_idx=0, num_warps=cfg.warps,
                schedule=persistent_copy(src, dst, wq, pdl_wait, pdl_launch))
    graph: dict[Any, list[Any]] = {dst: [src, wq]}
    if pdl:
        graph.update({src: [pdl_wait], pdl_wait: [], pdl_launch: []})
    tasks = [copy]
    if cfg.queue is QueueKind.CLC:
        @schedule
        def scheduler(wq: SkippingQueue) -> None:
            with work_tile_loop(wq):
                with domain_loop(0, 0, 1):
                    pass
                wq.try_acquire()
                wq.acquire()
                wq.fetch_work_tile()
                wq.commit()
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

        tasks.append(Task(name="scheduler", src_resources=[wq], dst_resources=[wq], warp_idx=cfg.warps,
                          num_warps=1, schedule=scheduler(wq)))
        graph[wq] = [wq]
    return Built(tasks=tasks, resource_dependency_graph=graph, notes=_notes(cfg, where, ctx))


def _notes(cfg: PersistentCopy, where: Any, ctx: BuildContext) -> tuple[str, ...]:
    if ctx.on_gpu:
        return ()
    total = cfg.total_tiles()
    if cfg.queue is QueueKind.NONE:
        mine = [where.block]
    elif cfg.queue is QueueKind.STATIC:
        mine = list(range(where.block, total, where.grid))
    else:
        mine = []
    skipped = [t for t in range(total) if cfg.skipped(t)]
    notes = [f"{total} tiles ({cfg.tiles} logical + {cfg.overlaunch} over-launched), {cfg.rows} rows each; "
             f"skipped: {skipped or 'none'}"]
    if cfg.queue is QueueKind.CLC:
        notes.append("CLC dynamic persistence hands tiles out at run time (no fixed CTA-to-tile map); it needs "
                     "a scheduler task and an sm_100+ GPU to run, and still records and verifies here")
    else:
        notes.append(f"CTA {where.block} of {where.grid} copies tiles {mine}")
    return tuple(notes)


SCENARIO = register(Scenario(
    name="persistent_copy",
    title="Persistent copy with skippable tiles",
    config_type=PersistentCopy,
    build_fn=build,
    check_fn=check,
    description="A tiled copy scheduled three ways: one CTA per tile, a static persistent work queue, "
                "or CLC dynamic persistence with a scheduler task; tiles can be skipped.",
    kernel="ts_explore.kernels.persistent",
))
