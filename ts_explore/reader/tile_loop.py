"""TS ``Task`` objects -> :class:`~ts_explore.check.tile_loop.TileLoop`: a persistent loop's per-tile step tables.

TS numbers slots, credit keys and completion generations over the whole
concatenation of ``num_tiles`` copies of each task's schedule. Here that
concatenation is built once, by :func:`~.search_input.search_problem` (so
every number is TS's own), for ``L + 2`` tiles where ``L`` is the lcm of
the pipelines' stage counts and interleave strides; it is cut into tiles,
and the smallest period ``P`` (a divisor of ``L``) with tile ``k + P``
equal to tile ``k`` for every ``k >= 1`` built is found (generations may only grow by a fixed amount per period
and resource). Tile 0 has no tile before it, so it may differ: it is then a
one-tile prefix. Why every later tile repeats as well: a slot is a per-resource
count modulo the stage count, which grows by the same amount each tile, and
the only look-back (consecutive non-pipelined work) sees the previous tile's
last entry, the same for every tile after the first. Comparing every tile
built with the one a period later guards the reading against a change in
TS's tables. :func:`read_tile_loops` is the capture's one call here: the loop
of every variant and key assignment, or why one could not be built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ..check.problem import Step
from ..check.tile_loop import TileLoop
from .search_input import search_problem

MAX_PERIOD = 12  # lcm of the stage counts beyond which the tables are not built (the answer says so)


def _stage_lcm(tasks: list[Any]) -> int:
    out = 1
    for res in ec._collect_resources(tasks):
        cfg = getattr(res, "pipeline_config", None)
        stages = getattr(cfg, "num_stages", None) if cfg is not None else None
        if isinstance(stages, int) and stages > 0:
            out = math.lcm(out, stages)
            for stride in (getattr(cfg, f"{side}_interleave_stride", 1) for side in (
                    "producer_acquire", "producer_commit", "consumer_wait", "consumer_release")):
                if isinstance(stride, int) and stride > 1:
                    out = math.lcm(out, stride)
    return out


def _same(a: Step, b: Step, advance: dict[int, int], period: int) -> bool:
    """``b`` is ``a`` one period later: equal, but for a completion generation grown by the resource's advance."""
    if a == b:
        return True
    if a.held is None or b.held is None or replace(a, held=None) != replace(b, held=None):
        return False
    if replace(a.held, generation=0) != replace(b.held, generation=0) or a.held.generation < 0:
        return False
    grown = b.held.generation - a.held.generation
    return grown >= 0 and advance.setdefault(a.resource, grown) == grown


def _period(tiles: list[list[tuple[Step, ...]]], limit: int) -> tuple[int, int, dict[int, int]] | None:
    """(prefix, period, generation advance per period and resource), or None when no period up to ``limit`` fits."""
    count = len(tiles[0]) if tiles else 0
    for period in (p for p in range(1, limit + 1) if limit % p == 0):
        advance: dict[int, int] = {}
        ok = all(_same(a, b, advance, period)
                 for task in tiles for k in range(1, count - period)
                 for a, b in zip(task[k], task[k + period]))
        if not ok:
            continue
        first = dict(advance)
        repeats = all(_same(a, b, first, period) for task in tiles for a, b in zip(task[0], task[period]))
        prefix = 0 if repeats and first == advance else 1
        return prefix, period, advance
    return None


def tile_loop(tasks: list[Any], *, skipped_tile: bool = False, opaque_assignment: dict | None = None,
              assume_pdl_wait_completed: bool = False, **_ignored: Any) -> tuple[TileLoop | None, str]:
    """The tile loop of a persistent task set for one variant and key assignment, or None and why not."""
    options = dict(skipped_tile=skipped_tile, opaque_assignment=opaque_assignment,
                   assume_pdl_wait_completed=assume_pdl_wait_completed)
    lcm = _stage_lcm(tasks)
    if lcm > MAX_PERIOD:
        return None, (f"the pipelines' stage counts repeat only every {lcm} work tiles (more than {MAX_PERIOD}), "
                      "so the per-tile step tables were not built")
    count = 2 + lcm
    whole = search_problem(tasks, num_tiles=count, **options)
    tiles: list[list[tuple[Step, ...]]] = []
    for lane in whole.lanes:
        length = len(lane) // count
        if len(lane) != count * length:
            return None, "TS's lanes do not repeat tile by tile (the expansion of one tile changes with the count)"
        tiles.append([lane[k * length:(k + 1) * length] for k in range(count)])
    found = _period(tiles, lcm)
    if found is None:
        return None, f"the per-tile step tables do not repeat within {lcm} work tiles"
    prefix, period, advance = found
    source: dict[int, int] = {}
    for task in tiles:
        for step in (s for tile in task for s in tile):
            if step.held is not None:
                for r in step.held.tag_commit:
                    if source.setdefault(r, step.resource) != step.resource:
                        return None, (f"reads of {whole.resources[r]} are tagged by commits of more than one "
                                      "resource, which the tile-loop search does not follow")
    problem = replace(whole, lanes=tuple(task[0] for task in tiles))
    loop = TileLoop(problem, tuple(tuple(task[:prefix + period]) for task in tiles), prefix, period,
                    tuple(sorted(advance.items())), tuple(sorted(source.items())))
    return loop, ""


@dataclass(frozen=True)
class TileLoopRead:
    """The tile loop of one variant and key assignment, or why it could not be built."""

    assignment: dict
    skipped: bool
    loop: TileLoop | None
    why: str = ""  # why ``loop`` is None


def read_tile_loops(tasks: list[Any], assignments: tuple[dict, ...], skip: bool,
                    assume_pdl_wait_completed: bool) -> tuple[TileLoopRead, ...]:
    """The tile loop of every key assignment, normal tiles and (with ``skip_if``) skipped ones: what the tile-loop
    proof searches (:mod:`ts_explore.verification.tile_proof`); a loop that cannot be read says why."""
    out = []
    for assignment in assignments:
        for skipped in ((False, True) if skip else (False,)):
            try:
                loop, why = tile_loop(tasks, skipped_tile=skipped, opaque_assignment=assignment,
                                      assume_pdl_wait_completed=assume_pdl_wait_completed)
            except Exception as exc:  # noqa: BLE001 - an odd task set leaves the proof open, said why
                loop, why = None, f"its per-tile tables could not be read ({type(exc).__name__}: {exc})"
            out.append(TileLoopRead(assignment, skipped, loop, why))
    return tuple(out)


__all__ = ["MAX_PERIOD", "TileLoopRead", "read_tile_loops", "tile_loop"]
