"""A task's loop: how many iterations the checker unrolls, whether TS knows them, and the refusal of one too long.

Every check (TS's and ours) unrolls each task's ``domain_loop`` before it
looks at the schedule. :func:`read_trips` is the capture's one call here
(:mod:`.capture_set`, through :func:`.instance.read_instance`), before
anything unrolls: it refuses a loop too long to unroll
(:func:`bound_loops`), then reads each task's trip facts. The lanes
(:mod:`.lanes`) count iterations with :func:`loop_iterations`.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling import task_manager as ts_tm

from ..model import TaskSet
from ..model.schedule import range_length
from ..model.scope import TaskTrips
from .capture import quiet_warnings

# Every iteration of a domain_loop is unrolled into entries before any check (TS's or ours) looks at the
# schedule: 100,000 iterations of a one-step loop take about 12 s and 0.5 GB, so a larger loop is refused up front.
MAX_LOOP_ITERATIONS = 100_000


class LoopTooLong(ValueError):
    """A task's domain_loop has more iterations than verification unrolls (:data:`MAX_LOOP_ITERATIONS`)."""



def task_name(task: Any) -> str:
    """The name ts-explore shows for a task (TaskInfo's rule)."""
    return task.name or f"task@{task.warp_start}"


def probe_domain(task: Any) -> int | None:
    """TS's host-side ``get_domain`` probe: an int loop end, or None when it is a runtime value."""
    return ts_tm._try_probe_domain(task)


def bound_loops(tasks: list[Any], tiles: Any = None) -> None:
    """Refuse, before anything unrolls them, loops of more than MAX_LOOP_ITERATIONS iterations in all.

    ``tiles`` (``verify(tiles=N)``) repeats each task's loop once per work
    tile, so the bound is on iterations x tiles.
    """
    per_tile = tiles if isinstance(tiles, int) and not isinstance(tiles, bool) and tiles > 1 else 1
    for task in tasks:
        with quiet_warnings():  # a probe's warning is TaskManager's to give (its checks repeat it, recorded)
            n = loop_iterations(task)
        if n * per_tile <= MAX_LOOP_ITERATIONS:
            continue
        with quiet_warnings():
            end = probe_domain(task) if task.domain_getter else task.domain
        start, step = task.domain_start, task.step
        if n > MAX_LOOP_ITERATIONS:
            raise LoopTooLong(
                f"task {task_name(task)!r}: its domain_loop({start}, {end}, {step}) runs {n:,} iterations; "
                f"verification unrolls every iteration before checking, so it takes at most "
                f"{MAX_LOOP_ITERATIONS:,} per loop; verify a smaller instance of the same schedule, e.g. a loop "
                f"end of {start + 64 * step} (64 iterations)")
        raise LoopTooLong(
            f"task {task_name(task)!r}: {per_tile:,} work tiles of its domain_loop({start}, {end}, {step}) are "
            f"{n * per_tile:,} iterations; verification unrolls every one before checking, so it takes at most "
            f"{MAX_LOOP_ITERATIONS:,} in all; verify fewer tiles, e.g. tiles={max(1, MAX_LOOP_ITERATIONS // n)}, "
            "or leave tiles out to search the tile counts that cover any number")


def loop_iterations(task: Any) -> int:
    """How many loop iterations the checker unrolls (TS's ``expand_loop`` rule, fallback 1)."""
    start, end, step = task.domain_start, task.domain, task.step
    static = isinstance(start, int) and isinstance(step, int)
    if task.domain_getter is None and isinstance(end, int) and static:
        return range_length(start, end, step)
    if task.domain_getter is not None and static:
        probed = probe_domain(task)
        if probed is not None:
            return range_length(start, probed, step)
    step_i = step if isinstance(step, int) else 1
    stop = 1 if step_i > 0 else -1
    return range_length(start if isinstance(start, int) else 0, stop, step_i)


def static_domain(task: Any) -> bool:
    """True when the checker unrolls the real iteration count (all bounds Python ints)."""
    if not (isinstance(task.domain_start, int) and isinstance(task.step, int)):
        return False
    if task.domain_getter is not None:
        return probe_domain(task) is not None
    return isinstance(task.domain, int)


def task_trips(tasks: list[Any], task_set: TaskSet | None) -> tuple[TaskTrips, ...]:
    """Each task's work-tile trip facts: its domain_loop's bounds in words, trips, whether TS knows them."""
    out = []
    for task in tasks:
        name = task_name(task)
        loop = None
        if task_set is not None:
            loop = next((t.schedule.domain_loop() for t in task_set.tasks if t.name == name), None)
        bounds = loop.title.split(", unroll=")[0] + ")" if loop is not None else "its domain_loop"
        out.append(TaskTrips(name, bounds, loop_iterations(task), static_domain(task),
                             len(task.loop_schedule_list)))
    return tuple(out)


def read_trips(tasks: list[Any], task_set: TaskSet | None, tiles: int | None = None) -> tuple[TaskTrips, ...]:
    """A loop too long to unroll refused (``tiles``: the caller's work tiles per CTA), then each task's trips."""
    bound_loops(tasks, tiles)
    return task_trips(tasks, task_set)


__all__ = ["LoopTooLong", "MAX_LOOP_ITERATIONS", "bound_loops", "loop_iterations", "probe_domain", "read_trips",
           "static_domain", "task_name", "task_trips"]
