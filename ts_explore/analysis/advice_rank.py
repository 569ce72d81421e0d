"""The pure parts of ranking advice: how many CTAs run at once, and which candidates to offer first.

No scenario, no verifier, no GPU: launch plans and predicted gains in, an order out.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ..model.plan import LaunchPlan

MIN_GAIN = 1.05  # a change predicted to gain less is not worth a launch
TIE = 1.02  # predicted gains within 2 % of each other are not told apart (the model is not that precise)

Ranked = tuple[float, str, tuple[tuple[str, Any], ...], Any]  # (predicted gain, why, (control, value)s, config)


def _concurrency(plan: LaunchPlan) -> int:
    """CTAs that run at once: the grid, or what fits on the device."""
    per_sm = plan.device.ctas_per_sm(plan.threads, plan.smem_bytes, plan.registers)
    return max(1, min(plan.ctas, plan.device.sms * per_sm))


def occupancy_factor(now: LaunchPlan, new: LaunchPlan) -> float:
    """Speedup from how many CTAs run at once: kernel time ~ waves x period / CTAs (same per-CTA period).

    >>> from types import SimpleNamespace as P
    >>> from ts_explore.model.plan import DeviceLimits
    >>> dev = DeviceLimits.h200()
    >>> a = P(ctas=264, threads=160, smem_bytes=16 * 1024, registers=None, device=dev)
    >>> occupancy_factor(a, P(ctas=132, threads=160, smem_bytes=128 * 1024, registers=None, device=dev))
    0.5
    >>> occupancy_factor(a, a)
    1.0
    """
    def cost(p: LaunchPlan) -> float:
        return math.ceil(p.ctas / _concurrency(p)) / p.ctas

    return cost(now) / cost(new)


def _distance(config: Any, name: str, value: Any) -> float:
    now = getattr(config, name)
    return abs(float(value - now)) if isinstance(value, (int, float)) and isinstance(now, (int, float)) else 0.0


def _adds_nothing(names: set[str], gain: float, picked: set[str], picked_gain: float, tie: float) -> bool:
    """Whether a candidate moving ``names`` for ``gain`` adds nothing to one accepted (``picked``, ``picked_gain``).

    >>> _adds_nothing({"stages"}, 1.36, {"stages"}, 1.55, 1.02), _adds_nothing({"stages"}, 1.54, {"stages"}, 1.55, 1.02)
    (False, True)
    >>> _adds_nothing({"stages", "warps"}, 1.08, {"warps"}, 1.28, 1.02)
    True
    """
    if names == picked:
        return picked_gain / tie <= gain <= picked_gain * tie
    return names > picked and gain <= picked_gain * tie


def simplest_first(config: Any, ranked: list[Ranked], min_gain: float = MIN_GAIN, tie: float = TIE, *,
                   accept: Callable[[Ranked], bool] = lambda row: True, top: int | None = None) -> list[Ranked]:
    """The candidates ``accept`` takes, in the order to offer them, at most ``top``.

    The best gain first, but among gains within ``tie`` of the best the one
    that moves the fewest controls the least. Once a candidate is accepted,
    those that add nothing to it are dropped: other values of the same
    controls for a gain within ``tie`` of its own (a value with a clearly
    smaller gain stays, as a cheaper alternative), and moves of more
    controls that are not clearly better. A candidate ``accept`` refuses
    (not proven SAFE) drops nothing else.

    >>> from types import SimpleNamespace as C
    >>> rows = [(1.37, "", (("stages", 5), ("warps", 16)), 0), (1.36, "", (("warps", 16),), 0),
    ...         (1.355, "", (("warps", 8),), 0), (1.2, "", (("stages", 8),), 0), (1.01, "", (("stages", 5),), 0)]
    >>> [r[2] for r in simplest_first(C(stages=4, warps=4), rows)]
    [(('warps', 8),), (('stages', 8),)]
    >>> [r[2] for r in simplest_first(C(stages=4, warps=4), rows, accept=lambda r: r[2] != (("warps", 8),))]
    [(('warps', 16),), (('stages', 8),)]
    """
    left = sorted((r for r in ranked if r[0] >= min_gain), key=lambda r: -r[0])
    out: list[Ranked] = []
    while left and (top is None or len(out) < top):
        pool = [r for r in left if r[0] * tie >= left[0][0]]
        pick = min(pool, key=lambda r: (len(r[2]), sum(_distance(config, n, v) for n, v in r[2]), -r[0]))
        left = [r for r in left if r is not pick]
        if not accept(pick):
            continue
        out.append(pick)
        names = {n for n, _ in pick[2]}
        left = [r for r in left if not _adds_nothing({n for n, _ in r[2]}, r[0], names, pick[0], tie)]
    return out


__all__ = ["MIN_GAIN", "Ranked", "TIE", "occupancy_factor", "simplest_first"]
