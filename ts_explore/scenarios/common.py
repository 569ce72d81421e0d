"""Helpers shared by the catalog scenarios: viewpoint, skip rules, checks.

A scenario's build runs in two places. On the CPU the config's ``block`` and
``thread`` knobs choose whose view of the schedule is recorded (plain ints);
inside ``@cute.kernel`` the launcher passes runtime indices in the
:class:`BuildContext`. :func:`viewpoint` hides that difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..kernels.skip import SkipRule, skip_tile
from ..model.plan import DeviceLimits
from .base import BuildContext

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


def require(condition: bool, cause: str, fix: str) -> None:
    """Raise ValueError('<cause>; <fix>') when ``condition`` is false."""
    if not condition:
        raise ValueError(f"{cause}; {fix}")


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


__all__ = [
    "SMEM_PER_CTA_BYTES",
    "SkipRule",
    "Viewpoint",
    "instance_value",
    "is_power_of_two",
    "require",
    "runtime",
    "skip_tile",
    "tensor",
    "viewpoint",
]
