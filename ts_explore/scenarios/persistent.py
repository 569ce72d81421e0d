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
from .common import clc_scheduler_task, next_work_tile, SkipRule, compact, ordinal, is_power_of_two, require, runtime, skip_tile, tensor, viewpoint
from .knobs import LAMBDA_EXAMPLE, callable_text


POW2_TILES = tuple(1 << i for i in range(9, 17))  # 512 ... 65536 int32


def _even_tiles(tile: Any) -> Any:
    """Skips tiles 0, 2, 4, ..."""
    return tile % 2 == 0


def _odd_tiles(tile: Any) -> Any:
    """Skips tiles 1, 3, 5, ..."""
    return tile % 2 == 1


def _every_fourth_tile(tile: Any) -> Any:
    """Skips tiles 0, 4, 8, ..."""
    return tile % 4 == 0


def _first_tile(tile: Any) -> Any:
    """Skips tile 0 only."""
    return tile == 0


# what text (a control, --set, a candidates file, a sweep table) may pick for skip_fn; text is never run as code
SKIP_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "every 4th tile": _every_fourth_tile, "even tiles": _even_tiles, "odd tiles": _odd_tiles,
    "first tile": _first_tile}


class PersistentFault(str, Enum):
    """Mistakes to launch (or try to) on purpose: queue bookkeeping misplaced, PDL out of order."""

    NONE = "none"
    PDL_LAUNCH_BEFORE_WAIT = "launch_griddep before wait_griddep (ordering)"
    QUEUE_IN_SKIPPABLE = "queue bookkeeping inside skippable() (TS refuses to record it)"


@dataclass(frozen=True)
class PersistentCopy:
    """Knobs of the tiled copy and its work queue."""

    queue: QueueKind = knob(QueueKind.STATIC, label="work queue",
                            help="none: one CTA per tile; static: each CTA walks its own tiles; "
                                 "clc: a scheduler task fetches tiles at run time (sm_100+ to launch)")
    tiles: int = knob(12, min=1, max=4096, label="tiles (CPU view)",
                      help="logical tiles in the picture; a launch derives them from its size")
    overlaunch: int = knob(2, min=0, max=64, label="over-launched tiles",
                           help="extra tiles handed out by the queue and skipped")
    skip: SkipRule = knob(SkipRule.NONE, label="skip rule", help="which tiles the queue skips")
    every_k: int = knob(3, min=2, max=64, label="skip every k-th tile")
    mask: tuple[int, ...] = knob((1,), min=0, max=65535, label="tile mask",
                                 help="tile indices to skip (skip rule 'tile mask')")
    skip_fn: Callable[[Any], Any] | None = knob(None, label="skip rule: user callable", named=SKIP_FUNCTIONS,
                                                help="tile -> bool, traced in the kernel too (skip rule 'user "
                                                     "callable'): pick a named one, or pass a function from Python")
    tile: int = knob(8192, options=POW2_TILES, label="tile (int32 elements)")
    warps: int = knob(4, options=(1, 2, 4, 8, 16, 32), label="warps per task")
    vector: int = knob(4, options=(1, 2, 4), label="vector width (int32 per access)",
                       help="4 = 128-bit loads and stores")
    per_thread: int = knob(1, options=(1, 2, 4, 8), label="vectors in flight per thread")
    unroll: int = knob(1, min=1, max=8, label="unroll")
    ctas: int = knob(4, min=0, max=8192, label="persistent CTAs", help="0 fills the GPU (static queue only)")
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
    """Reject queue/skip/tile combinations that cannot work, naming the control and the fix."""
    if cfg.queue is QueueKind.NONE:
        require(cfg.overlaunch == 0, "over-launched tiles are skipped by the work queue; without one they would "
                "be copied out of bounds", "set over-launched tiles to 0, or pick work queue static or clc",
                "overlaunch")
        require(cfg.skip is SkipRule.NONE, f"skip rule '{cfg.skip.value}' needs a work queue to skip tiles",
                "pick work queue static or clc, or skip rule none", "skip")
        require(cfg.fault is PersistentFault.NONE, f"fault '{cfg.fault.value}' plants a mistake in the work "
                "queue's bookkeeping, so it needs a work queue", "pick work queue static or clc, or fault none",
                "queue")
    require(cfg.vector in (1, 2, 4), f"vector width {cfg.vector} is not a 32/64/128-bit access",
            "pick vector width 1, 2 or 4", "vector")
    require(is_power_of_two(cfg.tile), f"tile {cfg.tile} is not a power of two", "pick 512, 1024, ... 65536",
            "tile")
    row = cfg.threads * cfg.vector * cfg.per_thread
    require(cfg.tile % row == 0 and cfg.tile >= row,
            f"a tile of {cfg.tile} elements is not whole rows of {cfg.warps} warps x 32 threads x vector width "
            f"{cfg.vector} x {cfg.per_thread} in flight ({row} elements)",
            "pick a larger tile, or fewer warps per task, a smaller vector width or fewer vectors in flight", "tile")
    require(cfg.threads_per_cta <= 1024, f"{cfg.warps} warps per task and the scheduler warp make "
            f"{cfg.threads_per_cta} threads, more than the 1024 a CTA may have", "pick fewer warps per task",
            "warps")
    if cfg.skip is SkipRule.CUSTOM:
        require(callable(cfg.skip_fn), "skip rule 'user callable' has no function",
                f"pick a named function in 'skip rule: user callable' (e.g. {next(iter(SKIP_FUNCTIONS))!r}), or "
                f"pass one from Python, e.g. {LAMBDA_EXAMPLE}", "skip_fn")
    if cfg.skip is SkipRule.MASK:
        require(all(isinstance(m, int) and m >= 0 for m in cfg.mask), f"tile mask {cfg.mask!r} must hold tile "
                "indices", "type tile indices 0 or more, e.g. 1, 4")
    grid = cfg.grid()
    require(cfg.block < grid, f"view as CTA {cfg.block}: only {grid} CTA{'' if grid == 1 else 's'} are launched",
            f"pick view as CTA below {grid}" + (", or raise persistent CTAs" if cfg.queue is QueueKind.STATIC
                                                else ", or raise tiles"), "block")


def inactive(cfg: PersistentCopy) -> dict[str, str]:
    """Controls that change nothing for this config, and why."""
    off = {}
    if cfg.queue is not QueueKind.STATIC:
        off["ctas"] = ("without a work queue each tile gets its own CTA" if cfg.queue is QueueKind.NONE else
                       "CLC launches one CTA per tile and hands tiles out at run time")
    if cfg.queue is not QueueKind.CLC:
        off["scheduler_stages"] = "only work queue clc has a scheduler task"
    else:
        off["block"] = "CLC hands tiles out at run time: every CTA records the same schedule"
    if cfg.skip is not SkipRule.EVERY_KTH:
        off["every_k"] = "only skip rule 'every k-th tile' uses it"
    if cfg.skip is not SkipRule.MASK:
        off["mask"] = "only skip rule 'tile mask' uses it"
    if cfg.skip is not SkipRule.CUSTOM:
        off["skip_fn"] = "only skip rule 'user callable' uses it"
    return off


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
                        next_work_tile(wq)
            else:
                with domain_loop(0, cfg.rows, 1, unroll=cfg.unroll):
                    dst.store(item=src.load())
            if fault is not PersistentFault.QUEUE_IN_SKIPPABLE:
                next_work_tile(wq)

    copy = Task(name="copy", src_resources=[src, wq, *([pdl_wait] if pdl else [])],
                dst_resources=[dst, *([pdl_launch] if pdl else [])], warp_idx=0, num_warps=cfg.warps,
                schedule=persistent_copy(src, dst, wq, pdl_wait, pdl_launch))
    graph: dict[Any, list[Any]] = {dst: [src, wq]}
    if pdl:
        graph.update({src: [pdl_wait], pdl_wait: [], pdl_launch: []})
    tasks = [copy]
    if cfg.queue is QueueKind.CLC:
        tasks.append(clc_scheduler_task(wq, cfg.warps))
        graph[wq] = [wq]
    captions = {} if ctx.on_gpu or skip_if is None else {"skippable": skip_caption(cfg, _tiles_of(cfg, where))}
    return Built(tasks=tasks, resource_dependency_graph=graph, notes=_notes(cfg, where, ctx), captions=captions)


def skip_caption(cfg: PersistentCopy, tiles: list[int] | None = None) -> str:
    """The skip rule and the tiles it skips (of ``tiles``, default all), in a few words."""
    total = cfg.total_tiles()
    rule = {SkipRule.NONE: "over-launched tiles only", SkipRule.EVERY_KTH: f"every {ordinal(cfg.every_k)} tile",
            SkipRule.MASK: f"tile mask {compact(cfg.mask)}",
            SkipRule.CUSTOM: callable_text(cfg.skip_fn) or "no function"}[cfg.skip]
    skipped = [t for t in (range(total) if tiles is None else tiles) if cfg.skipped(t)]
    return f"skip rule: {rule}; skips tiles {compact(skipped)}"


def _tiles_of(cfg: PersistentCopy, where: Any) -> list[int] | None:
    """The tiles the viewed CTA gets (None: handed out at run time, any of them)."""
    if cfg.queue is QueueKind.STATIC:
        return list(range(where.block, cfg.total_tiles(), where.grid))
    return None if cfg.queue is QueueKind.CLC else [where.block]


def _notes(cfg: PersistentCopy, where: Any, ctx: BuildContext) -> tuple[str, ...]:
    """What the viewed CTA does, and how it touches global memory."""
    if ctx.on_gpu:
        return ()
    return _work_notes(cfg, where) + (f"global memory accesses: {cfg.cache.value}",)


def _work_notes(cfg: PersistentCopy, where: Any) -> tuple[str, ...]:
    """What the viewed CTA does, in words that stay short for thousands of tiles."""
    total = cfg.total_tiles()
    shape = f"{cfg.rows} row{'' if cfg.rows == 1 else 's'} of {cfg.threads} threads x {cfg.vector} x {cfg.per_thread}"
    if cfg.queue is QueueKind.NONE:
        return (f"CTA {where.block} of {where.grid} copies tile {where.block}: {shape}",)
    if cfg.queue is QueueKind.CLC:
        return (f"{total} tiles ({cfg.tiles} + {cfg.overlaunch} over-launched) are handed out at run time; "
                f"each copied tile is {shape}", skip_caption(cfg))
    mine = _tiles_of(cfg, where) or []
    copied = [t for t in mine if not cfg.skipped(t)]
    if not copied:
        return (f"CTA {where.block} of {where.grid} does no work: it skips all its tiles ({compact(mine)})",
                skip_caption(cfg, mine))
    return (f"CTA {where.block} of {where.grid} gets tiles {compact(mine)} and copies {len(copied)} of them: {shape}",
            skip_caption(cfg, mine))


SCENARIO = register(Scenario(
    name="persistent_copy",
    title="Persistent copy with skippable tiles",
    config_type=PersistentCopy,
    build_fn=build,
    check_fn=check,
    inactive_fn=inactive,
    description="A tiled copy scheduled three ways: one CTA per tile, a static persistent work queue, "
                "or CLC dynamic persistence with a scheduler task; tiles can be skipped.",
    kernel="ts_explore.kernels.persistent",
))
