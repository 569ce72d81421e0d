"""Helpers shared by the catalog scenarios: viewpoint, skip rules, checks.

A scenario's build runs in two places. On the CPU the config's ``block`` and
``thread`` knobs choose whose view of the schedule is recorded (plain ints);
inside ``@cute.kernel`` the launcher passes runtime indices in the
:class:`BuildContext`. :func:`viewpoint` hides that difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..kernels.skip import SkipRule, skip_tile
from ..model.plan import DeviceLimits
from .base import BuildContext
from .knobs import ConfigError

SMEM_PER_CTA_BYTES = DeviceLimits.h200().smem_per_cta  # what a config may use (Hopper's opt-in limit)


@dataclass(frozen=True)
class Viewpoint:
    """The indices one thread sees: ints on the CPU, DSL values in a kernel."""

    block: Any
    thread: Any
    grid: Any


def viewpoint(cfg: Any, ctx: BuildContext, grid_on_cpu: int) -> Viewpoint:
    """Runtime indices inside a kernel; on the CPU the context's (a plan instance) or the config's view knobs."""
    if ctx.on_gpu:
        return Viewpoint(ctx.block, ctx.thread, ctx.grid)
    view = ctx.instance or {}
    return Viewpoint(int(view.get("block", getattr(cfg, "block", 0))), int(view.get("thread", getattr(cfg, "thread", 0))),
                     int(view.get("grid", grid_on_cpu)))


def runtime(ctx: BuildContext, key: str, cpu_value: Any) -> Any:
    """A runtime value the kernel passes in ``ctx.extra``; on the CPU a plan instance's, else the config's."""
    if ctx.on_gpu:
        return ctx.extra[key]
    return (ctx.instance or {}).get("extra", {}).get(key, cpu_value)


def instance_value(ctx: BuildContext, key: str, default: Any) -> Any:
    """A CPU-only value of the plan instance being recorded (``default`` for the config's own view)."""
    return (ctx.instance or {}).get("extra", {}).get(key, default)


def tensor(ctx: BuildContext, key: str) -> Any:
    """A kernel tensor (None on the CPU, where work bodies never run)."""
    return ctx.tensors.get(key) if ctx.on_gpu else None


def next_work_tile(wq: Any) -> None:
    """A task's turn on its work queue at the end of a work tile: wait for the next tile, take it, release.

    Called inside a ``work_tile_loop``; every persistent task of every scenario ends its tile with it.
    """
    wq.try_wait()
    wq.wait()
    wq.get_and_advance_work_tile()
    wq.release()


def clc_scheduler_task(wq: Any, warp: int) -> Any:
    """CLC dynamic persistence: a one-warp task that fetches the next work tile for every task (sm_100+).

    Its work-tile loop holds an empty domain loop (TS needs one in every task),
    then the CLC fetch and the queue's own consumer steps.
    """
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
    from cutlass.experimental.task_scheduling.task import Task

    @schedule
    def scheduler(wq: Any) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, 0, 1):
                pass
            wq.try_acquire()
            wq.acquire()
            wq.fetch_work_tile()
            wq.commit()
            next_work_tile(wq)

    return Task(name="scheduler", src_resources=[wq], dst_resources=[wq], warp_idx=warp, num_warps=1,
                schedule=scheduler(wq))


def require(condition: bool, cause: str, fix: str, knob: str | None = None) -> None:
    """Raise a ConfigError (a ValueError, ``'<cause>; <fix>'``) when ``condition`` is false.

    ``knob`` names the field a control should move to resolve it (the
    explorer adjusts it when another control's change caused the refusal).
    """
    if not condition:
        raise ConfigError(cause, knob, hint=fix)


def compact(values: Sequence[int], most: int = 6) -> str:
    """Integers in words that stay short however many there are: runs, a stride, or the first few.

    >>> compact([1, 2, 3, 4, 5, 9])
    '1-5, 9'
    >>> compact(list(range(2, 4096, 3)))
    '2, 5, 8, ..., 4094 (every 3rd, 1365 in all)'
    >>> compact([0, 4, 9, 13, 20, 22, 30, 31, 40])
    '0, 4, 9, 13, 20, 22, ... (9 in all)'
    >>> compact([])
    'none'
    """
    values = sorted(values)
    if not values:
        return "none"
    n = len(values)
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    words = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}-{b}" for a, b in runs]
    if len(words) <= most:
        return ", ".join(words)
    step = values[1] - values[0]
    if all(b - a == step for a, b in zip(values, values[1:])):
        return f"{values[0]}, {values[1]}, {values[2]}, ..., {values[-1]} (every {ordinal(step)}, {n} in all)"
    return ", ".join(words[:most]) + f", ... ({n} in all)"


def ordinal(n: int) -> str:
    """``3`` -> ``'3rd'``, ``12`` -> ``'12th'``.

    >>> [ordinal(n) for n in (1, 2, 3, 4, 11, 22)]
    ['1st', '2nd', '3rd', '4th', '11th', '22nd']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def is_power_of_two(n: int) -> bool:
    """``n`` is 1, 2, 4, 8, ...

    >>> [n for n in range(10) if is_power_of_two(n)]
    [1, 2, 4, 8]
    """
    return n > 0 and n & (n - 1) == 0


__all__ = [
    "clc_scheduler_task",
    "SMEM_PER_CTA_BYTES",
    "SkipRule",
    "Viewpoint",
    "compact",
    "ordinal",
    "instance_value",
    "is_power_of_two",
    "require",
    "runtime",
    "skip_tile",
    "tensor",
    "viewpoint",
]
