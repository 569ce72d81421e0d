"""Shared inputs of the repair tests: gallery cases with their repairs, computed once per session."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import ts_explore
from ts_explore import gallery
from ts_explore.reader.tasks import capture_task_set

# the one gallery case whose fix is not a schedule edit (it moves tile_b's shared-memory offset)
LAYOUT_ONLY = "smem_alias_race"
SCHEDULE_CASES = tuple(name for name in gallery.CASES if name != LAYOUT_ONLY)


def capture(build: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = build()
        return capture_task_set(d["tasks"], d["resource_dependency_graph"])


@functools.lru_cache(maxsize=None)
def gallery_repairs(name: str) -> Any:
    """The repairs of a gallery case's broken schedule (a generous bound: tests check what, not how fast)."""
    return ts_explore.repairs(gallery.get(name).broken, seconds=10)
