"""Helpers shared by the catalog scenarios: viewpoint, skip rules, checks.

A scenario's build runs in two places. On the CPU the config's ``block`` and
``thread`` knobs choose whose view of the schedule is recorded (plain ints);
inside ``@cute.kernel`` the launcher passes runtime indices in the
:class:`BuildContext`. :func:`viewpoint` hides that difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

from .base import BuildContext

# What the CPU view assumes when a config says "fill the GPU" (ctas=0): an H200.
ASSUMED_SMS = 132
MAX_THREADS_PER_SM = 2048
SMEM_PER_CTA_BYTES = 227 * 1024  # Hopper's opt-in shared-memory limit per CTA


@dataclass(frozen=True)
class Viewpoint:
    """The indices one thread sees: ints on the CPU, DSL values in a kernel."""

    block: Any
    thread: Any
    grid: Any


def auto_ctas(threads_per_cta: int, sms: int = ASSUMED_SMS) -> int:
    """CTAs that fill ``sms`` multiprocessors at full thread occupancy."""
    per_sm = max(1, min(32, MAX_THREADS_PER_SM // max(1, threads_per_cta)))
    return sms * per_sm


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


def tensor(ctx: BuildContext, key: str) -> Any:
    """A kernel tensor (None on the CPU, where work bodies never run)."""
    return ctx.tensors.get(key) if ctx.on_gpu else None


class SkipRule(str, Enum):
    """Which work tiles a persistent copy skips (over-launched tiles are always skipped)."""

    NONE = "none"
    EVERY_KTH = "every k-th tile"
    MASK = "tile mask"
    CUSTOM = "user callable"


def skip_tile(rule: SkipRule, tile: Any, *, k: int = 2, mask: tuple[int, ...] = (),
              fn: Callable[[Any], Any] | None = None, logical_tiles: Any = None) -> Any:
    """Whether ``tile`` is skipped. Works on Python ints (host reference) and DSL Int32 (kernel).

    Only ``|``, ``==``, ``%`` and ``>=`` are used so the same expression traces
    inside ``@cute.kernel`` and evaluates on the host.
    """
    skip = tile < 0  # False of the right kind (bool on the host, Boolean in a kernel)
    if logical_tiles is not None:
        skip = skip | (tile >= logical_tiles)
    if rule is SkipRule.EVERY_KTH:
        skip = skip | (tile % k == k - 1)
    elif rule is SkipRule.MASK:
        for m in mask:
            skip = skip | (tile == m)
    elif rule is SkipRule.CUSTOM:
        if fn is None:
            raise ValueError("skip rule 'user callable' needs skip_fn=<callable(tile) -> bool>")
        skip = skip | fn(tile)
    return skip


def require(condition: bool, cause: str, fix: str) -> None:
    """Raise ValueError('<cause>; <fix>') when ``condition`` is false."""
    if not condition:
        raise ValueError(f"{cause}; {fix}")


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


__all__ = [
    "ASSUMED_SMS",
    "SMEM_PER_CTA_BYTES",
    "SkipRule",
    "Viewpoint",
    "auto_ctas",
    "is_power_of_two",
    "require",
    "runtime",
    "skip_tile",
    "tensor",
    "viewpoint",
]
