"""Which work tiles a persistent copy skips: one rule, evaluated on the host and traced in the kernel."""

from __future__ import annotations

from enum import Enum
from typing import Any, Callable


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


__all__ = ["SkipRule", "skip_tile"]
