"""Which work-tile counts a persistent schedule's verdict covers: the tile-loop search, run per variant.

A CTA of a persistent kernel runs any number of work tiles. For every
key assignment, the normal tiles' loop (and with ``skip_if`` the skipped
tiles' loop) is searched as a cycle by :func:`ts_explore.check.tile_search.search_tile_loop`,
which covers every tile count at once or says why it could not close. A
finding comes back with a tile count that reaches it; the caller re-runs the
ordinary unrolled search there, so the verdict's counterexample is the one
every view of the tool shows.

Sequences that mix skipped and normal tiles are covered when a skipped tile
only runs WorkQueue and auxiliary steps (no credits, no shared memory, never
blocking): deleting the skipped tiles from such a run leaves a run of its
normal tiles, with the same credits, blocked tasks and accesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dataclasses import replace

from ..analysis.shared_pools import shared_pool
from ..check.projection import project
from ..check.tile_loop import TileLoop
from ..check.tile_search import search_tile_loop
from ..model import Family
from ..reader.instance import Instance
from ..reader.tile_loop import TileLoopRead

MIXED_UNPROVEN = ("the skipped-tile runs cover tiles that all skip; sequences that mix skipped and normal tiles are "
                  "not searched")
MIXED_INERT = ("skipped and normal tiles may mix in any order: a skipped tile runs only WorkQueue and auxiliary "
               "steps, which neither block, move credits nor touch shared memory, so a run with skipped tiles "
               "reaches what the run of its normal tiles alone reaches")


@dataclass(frozen=True)
class TileProof:
    """The tile-loop searches of one verification: proven or not, in words, and the counts to re-run unrolled."""

    proven: bool
    sentence: str
    failing: tuple[int, ...] = ()  # tile counts whose unrolled search shows the findings
    mixed: str = ""  # the skipped/normal mixing sentence ("" when the schedule has no skip_if)
    mixed_ok: bool = True
    states: int = 0
    seconds: float = 0.0


def skipped_tiles_inert(instance: Instance) -> bool:
    """Every skipped tile runs only WorkQueue and auxiliary steps (for every key assignment)."""
    return all(step.family in (Family.QUEUE, Family.AUX)
               for _normal, skipped in instance.one_tile_lanes for lane in skipped for step in lane.steps)


def _projections(loop: TileLoop, instance: Instance) -> tuple[list[TileLoop], str]:
    """A pipeline several consumer tasks read in full: the loop of its producer with each consumer alone.

    TS counts such consumers together, so one may run any number of tiles ahead of the other on the other's
    credits; :mod:`ts_explore.analysis.shared_pools` says why a finding of the whole set is one of such a pair.
    """
    if instance.credit_model is None or not instance.one_tile_lanes:
        return [], ""
    pool, _why = shared_pool(instance.one_tile_lanes[0][0], instance.credit_model)
    if pool is None:
        return [], ""
    out = []
    for keep in pool.consumers:
        drop = tuple(c for c in pool.consumers if c != keep)
        try:
            tables = [project(replace(loop.problem, lanes=tuple(t[j] for t in loop.tiles)), pool.resource, keep, drop)
                      for j in range(loop.prefix + loop.period)]
        except ValueError:
            return [], ""
        first = tables[0]
        out.append(TileLoop(first, tuple(tuple(p.lanes[t] for p in tables) for t in range(len(first.tasks))),
                            loop.prefix, loop.period, loop.gen_advance, loop.gen_source))
    return out, " and ".join(f"{pool.producer} + {c}" for c in pool.consumers)


def prove_tiles(instance: Instance, loops: tuple[TileLoopRead, ...], *, options: dict[str, Any]) -> TileProof:
    """Search the tile loop of every variant and key assignment of a persistent instance (``loops``, as the
    reader captured them), up to the first finding.

    Whichever engine runs the unrolled searches (ours or TS's BFS), the claim
    for every tile count rests on this search. ``options``: ``max_states``,
    ``cancel``, ``progress`` for the searches.
    """
    mixed_ok = skipped_tiles_inert(instance) if instance.skip else True
    failing: set[int] = set()
    states, seconds, lead = 0, 0.0, 0
    shared = ""
    why = ""
    found: list[str] = []
    for read in loops:
        loop = read.loop
        if loop is None:
            why = why or read.why
            continue
        parts, pairs = _projections(loop, instance)
        if pairs:
            shared = pairs
        for part in parts or [loop]:
            result = search_tile_loop(part, **{k: v for k, v in options.items() if v is not None})
            states += result.states
            seconds += result.elapsed_s
            lead = max(lead, result.lead)
            if result.findings or result.limit or result.cancelled:
                break
        if result.findings:
            first = min(result.findings, key=lambda f: f.tiles)
            failing.add(max(1, first.tiles))
            found.append(f"a {first.kind} at {first.tiles} work tile{'' if first.tiles == 1 else 's'}")
            break
        if result.cancelled:
            why = why or f"the tile-loop search was cancelled after {result.states} states"
        elif result.limit:
            why = why or result.limit
    mixed = (MIXED_INERT if mixed_ok else MIXED_UNPROVEN) if instance.skip else ""
    if found:
        return TileProof(False, f"the tile-loop search found {found[0]}; the unrolled search at that count shows "
                                "it", tuple(sorted(failing)), mixed, mixed_ok, states, seconds)
    if why:
        return TileProof(False, f"not proven for every number of work tiles: {why}", (), mixed, mixed_ok, states,
                         seconds)
    kinds = "normal and skipped-tile loops" if instance.skip else "work-tile loop"
    if shared:
        kinds += (f" of {shared} on their own (a pipeline they share has several consumer tasks, each reading "
                  "every stage; projection argument, ts_explore.analysis.shared_pools)")
    return TileProof(True, f"every number of work tiles (0, 1, 2, ...): the {kinds} searched as a cycle, "
                           f"{states} states, closed (no new tile-boundary state; tasks at most {lead} tile"
                           f"{'' if lead == 1 else 's'} apart; tile-loop search, ts_explore.check.tile_search)",
                     (), mixed, mixed_ok, states, seconds)


__all__ = ["MIXED_INERT", "MIXED_UNPROVEN", "TileProof", "prove_tiles", "skipped_tiles_inert"]
