"""A traced launch beside the schedule recorded on the CPU: which schedule each warp runs, and how it went.

:func:`schedule_for` records the plan instance a CTA belongs to, as that CTA
(and warp) sees it; :func:`compare` checks every traced warp step by step
against it and :func:`predicted_order` gives each task's expected steps for
the comparison figure. Nothing here touches the GPU.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..kernels.contract import optional
from ..model.timeline import Timeline


def schedule_for(scenario: Any, config: Any, plan: Any, cta: int, warp: int,
                 edits: tuple[Any, ...] = ()) -> tuple[Any, Any] | None:
    """The schedule tree warp ``warp`` of CTA ``cta`` runs, recorded on the CPU, and its trips per tile.

    Records the plan instance that CTA belongs to, seen from that CTA (and
    from lane 0 of the warp, for per-thread schedules). When the instance
    view names a work tile (``extra["view_tile"]``: a domain that depends on
    the tile), the trips are recorded tile by tile, with the view the kernel
    module's ``tile_view(cfg, tile)`` gives (or ``view_tile=tile``). ``edits``
    (a launched repair's) are written onto each recorded build, as the kernel wrote them.
    """
    from ..kernels.contract import BuildContext
    from ..reader import capture_task_set
    from ..reader.materialise import write_edits

    thread = warp * 32
    instance = None
    for inst in plan.instances:
        hit = (any(cta * plan.threads + thread in r for r in inst.threads) if inst.threads
               else any(cta in r for r in inst.ctas))
        if hit:
            instance = inst
            break
    if instance is None:
        return None
    view = {**instance.view, "block": cta}
    if instance.threads or "thread" in instance.view:
        view["thread"] = thread

    tile_view = optional(importlib.import_module(scenario.kernel), "tile_view") if scenario.kernel else None

    def record(tile: int | None) -> tuple[Any, int] | None:
        named = tile_view(config, tile) if tile_view is not None and tile is not None else {"view_tile": tile}
        v = view if tile is None else {**view, "extra": {**view.get("extra", {}), **named}}
        built = scenario.build(config, BuildContext.for_instance(v))
        if edits:
            write_edits(built.tasks, built.resource_dependency_graph, edits)
        task_set = capture_task_set(built.tasks, built.resource_dependency_graph)
        task = next((t for t in task_set.tasks if t.warp_start <= warp < t.warp_end), None)
        if task is None:
            return None
        loop = task.schedule.domain_loop()
        trips = loop.trip_count() if loop is not None else 0
        if trips is None:  # a per-tile bound (get_domain): ask it the way TS's checker does, for this view
            from ..reader.trips import loop_iterations

            ts_task = next(t for t in built.tasks if t.warp_start <= warp < t.warp_end)
            trips = loop_iterations(ts_task)
        return task.schedule, trips or 0

    found = record(None)
    if found is None:
        return None
    tree, trips = found
    if "view_tile" not in view.get("extra", {}):
        return tree, trips
    cache: dict[int | None, int] = {}

    def per_tile(tile: int | None) -> int:
        if tile not in cache:
            again = record(tile) if tile is not None else found
            cache[tile] = again[1] if again is not None else trips
        return cache[tile]

    return tree, per_tile


def compare(scenario: Any, config: Any, plan: Any, timeline: Timeline, cta: int | None = None,
            edits: tuple[Any, ...] = ()) -> Any:
    """Every traced warp (of ``cta``, or all) checked step by step against its CPU-recorded schedule."""
    from ..analysis.timeline import Alignment, check_lane
    from ..model.timeline import WORK_STAGES

    stages = WORK_STAGES if timeline.spec.stages == "work" else None
    lanes = []
    for c, w in timeline.warps(cta):
        found = schedule_for(scenario, config, plan, c, w, edits)
        if found is not None:
            tree, trips = found
            lanes.append(check_lane(timeline.lane(c, w), tree, trips, stages=stages))
    return Alignment(tuple(lanes))


def predicted_order(scenario: Any, config: Any, plan: Any, timeline: Timeline, cta: int = 0,
                    edits: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Each task's expected steps (for the first warp of the task in ``cta``), for the comparison figure."""
    from ..analysis.timeline import expected_steps, measured_tiles
    from ..model.timeline import WORK_STAGES

    stages = WORK_STAGES if timeline.spec.stages == "work" else None
    out: dict[str, Any] = {}
    for c, w in timeline.warps(cta):
        task = timeline.task_of(w)
        if task is None or task in out:
            continue
        found = schedule_for(scenario, config, plan, c, w, edits)
        if found is not None:
            tree, trips = found
            out[task] = expected_steps(tree, trips, tiles=measured_tiles(timeline.lane(c, w), tree) or
                                       [(None, False)], stages=stages)
    return out


__all__ = ["compare", "predicted_order", "schedule_for"]
