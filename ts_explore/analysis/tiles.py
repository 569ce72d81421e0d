"""How many work tiles a search of a persistent schedule must cover, and why that is enough.

TS searches a persistent schedule (one with a WorkQueue) over two work tiles:
each task's checker list (HEAD + loop + TAIL) repeated twice. A CTA of a real
launch runs any number of tiles. This module decides, from one tile of each
task's checker lane, which tile counts cover every count, or says that no
argument here covers them.

The argument (the *tile shift*). Call a pool a credit-tracked pipeline
resource. Suppose

1. every pool has exactly one producer task and one consumer task, each
   counted once per round (no PipelineGroup, no per-stage interleaving), and
2. per tile, the producer's acquires equal the consumer's releases and its
   commits equal the consumer's waits (the tile is *balanced*).

Then the credits of a state depend only on each task's position within its
tile and not on which tile it is in, so shifting every task back by one tile
keeps every move enabled. Take any state of a run of T tiles whose tasks have
all finished their first tile and drop each task's first-tile moves from the
path to it: a consumer's dropped waits matched the producer's dropped commits
and a producer's dropped acquires the consumer's dropped releases, so the
shorter path is still a run, and it reaches the state shifted back a tile.
Repeating this, every state is a shifted copy of a state in which some task is
still in its first tile. Credits bound how far tasks drift apart: a consumer
cannot finish more tiles than its producer plus one (it waits for the
commits), and a producer cannot get more than ``stages // acquires_per_tile
+ 1`` tiles ahead of its consumer (it needs free slots). Summed along the
pipelines connecting two tasks this bounds the lead ``D`` of any task over any
other. A state where some task is in its first tile therefore lies within
``D + 1`` tiles, and searching 1, 2, ..., ``D + 1`` tiles (1 and the short
counts cover CTAs that run few tiles and end early) covers every tile count.
Tasks that share no pool are independent: each starts every tile from the
initial credits, so 1 and 2 tiles cover them, and skipped and normal tiles
may mix in any order.

>>> from ts_explore.model import Stage
>>> from ts_explore.model.interleaving import CheckerStep, CreditModel, CreditPool, Lane
>>> def lane(task, *stages):
...     return Lane(task, tuple(CheckerStep(task, i, "smem", s, 0, None, "", None) for i, s in enumerate(stages)))
>>> p = lane("P", Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_COMMIT)
>>> c = lane("C", Stage.CONSUMER_WAIT, Stage.CONSUMER_RELEASE)
>>> cov = tile_coverage((p, c), CreditModel((CreditPool("smem", 0, 2),)))
>>> cov.sufficient, cov.lead, cov.tiles
(True, 3, (1, 2, 3, 4))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..model import Family, Stage
from ..model.interleaving import CreditModel, Lane
from .shared_pools import SharedPool, projection, shared_pool

MAX_TILES = 6  # beyond this the extra searches cost more than they are worth: say so instead

_INF = float("inf")


@dataclass(frozen=True)
class TileCoverage:
    """Which tile counts to search, whether that covers every count, and the argument in words."""

    tiles: tuple[int, ...]  # tile counts to search (TS itself runs 2)
    sufficient: bool
    sentence: str
    lead: int | None = None  # the bound D on how many tiles one task can lead another (None: unbounded)
    independent: bool = False  # no pool is shared between two tasks
    shared: SharedPool | None = None  # searched as projections, one per consumer of this pool (shared_pools)


@dataclass
class _Pool:
    producers: set[str]
    consumers: set[str]
    counts: dict[tuple[str, Stage], int]
    stages: int


def _pools(lanes: Sequence[Lane], model: CreditModel) -> tuple[dict[str, _Pool], str]:
    """Per tracked resource: who produces/consumes it and how often per tile; or why the argument does not apply."""
    initial = {}
    for pool in model.pools:
        if pool.resource in initial or pool.slot:
            return {}, f"{pool.resource} keeps one credit pool per pipeline stage"
        initial[pool.resource] = pool.initial_empty
    if model.approximate:
        return {}, "a PipelineGroup shares credits between resources"
    pools: dict[str, _Pool] = {}
    for lane in lanes:
        for step in lane.steps:
            if not step.tracked or step.resource not in initial:
                continue
            pool = pools.setdefault(step.resource, _Pool(set(), set(), {}, initial[step.resource]))
            if step.stage in (Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_COMMIT):
                pool.producers.add(lane.task)
            elif step.stage in (Stage.CONSUMER_WAIT, Stage.CONSUMER_RELEASE):
                pool.consumers.add(lane.task)
            key = (lane.task, step.stage)
            pool.counts[key] = pool.counts.get(key, 0) + 1
    for name, pool in pools.items():
        if len(pool.producers) > 1 or len(pool.consumers) > 1 or model.producer_count(name) > 1 \
                or model.consumer_count(name) > 1:
            return {}, f"{name} {_SEVERAL}"
    return pools, ""


def _balanced(pools: dict[str, _Pool]) -> str:
    """'' when every pool gives back per tile what it takes, else the first pool that does not."""
    for name, pool in pools.items():
        c = pool.counts
        p = next(iter(pool.producers), None)
        q = next(iter(pool.consumers), None)
        acquires, commits = c.get((p, Stage.PRODUCER_ACQUIRE), 0), c.get((p, Stage.PRODUCER_COMMIT), 0)
        waits, releases = c.get((q, Stage.CONSUMER_WAIT), 0), c.get((q, Stage.CONSUMER_RELEASE), 0)
        if acquires != releases or commits != waits:
            return (f"{name} is not balanced per tile ({acquires} acquire, {commits} commit, {waits} wait, "
                    f"{releases} release)")
    return ""


def _lead_bound(tasks: list[str], pools: dict[str, _Pool]) -> tuple[float, bool]:
    """The largest number of tiles any task can lead any other in its component; and whether tasks are independent."""
    index = {t: i for i, t in enumerate(tasks)}
    n = len(tasks)
    dist = [[0.0 if i == j else _INF for j in range(n)] for i in range(n)]
    linked = [[i == j for j in range(n)] for i in range(n)]
    independent = True
    for pool in pools.values():
        if not pool.producers or not pool.consumers:
            continue
        p, q = next(iter(pool.producers)), next(iter(pool.consumers))
        if p == q:
            continue
        independent = False
        i, j = index[p], index[q]
        linked[i][j] = linked[j][i] = True
        acquires = pool.counts.get((p, Stage.PRODUCER_ACQUIRE), 0)
        waits = pool.counts.get((q, Stage.CONSUMER_WAIT), 0)
        ahead = pool.stages // acquires + 1 if acquires else _INF  # producer over consumer
        behind = 1 if waits else _INF  # consumer over producer
        dist[i][j] = min(dist[i][j], ahead)
        dist[j][i] = min(dist[j][i], behind)
    for k in range(n):
        for i in range(n):
            for j in range(n):
                dist[i][j] = min(dist[i][j], dist[i][k] + dist[k][j])
                linked[i][j] = linked[i][j] or (linked[i][k] and linked[k][j])
    lead = max((dist[i][j] for i in range(n) for j in range(n) if linked[i][j]), default=0.0)
    return lead, independent


def tile_coverage(lanes: Sequence[Lane], model: CreditModel, *, max_tiles: int = MAX_TILES,
                  projections: bool = False) -> TileCoverage:
    """The tile counts to search for one tile's ``lanes`` (one per task), and whether they cover every count.

    ``projections``: a pipeline several consumer tasks read may be covered by
    searching each consumer alone with its producer (:mod:`.shared_pools`);
    the caller must then run those searches (ts-explore's checker can, TS's
    BFS cannot).
    """
    pools, why = _pools(lanes, model)
    if why.endswith(_SEVERAL) and projections:
        pool, reason = shared_pool(lanes, model)
        if pool is not None:
            return _projected(lanes, model, pool, max_tiles)
        why = f"{why} ({reason})"
    why = why or _balanced(pools)
    if why:
        return TileCoverage((2,), False, f"TS searched 2 work tiles; a CTA may run more, and the tile-shift argument "
                                         f"does not apply because {why}")
    lead, independent = _lead_bound([lane.task for lane in lanes], pools)
    if independent:
        return TileCoverage((1, 2), True, "TS searched 2 work tiles and ts-explore 1; that covers any number of tiles: "
                                          "the tasks share no pipeline, so every tile starts from the initial "
                                          "credits", 0, True)
    if lead == _INF:
        return TileCoverage((2,), False, "TS searched 2 work tiles; a CTA may run more, and a task can run "
                                         "arbitrarily many tiles ahead of another (a pipeline with no acquire or no "
                                         "wait per tile)")
    d = int(lead)
    tiles = tuple(range(1, max(2, d + 1) + 1))
    if tiles[-1] > max_tiles:
        return TileCoverage((2,), False, f"TS searched 2 work tiles; a CTA may run more, and tasks can drift {d} "
                                         f"tiles apart, which would need searches of up to {d + 1} tiles "
                                         f"(more than {max_tiles})", d)
    return TileCoverage(tiles, True, f"searched {_span(tiles)} work tiles; that covers any number of tiles: every "
                                     f"pipeline is balanced per tile with one producer and one consumer, so no task "
                                     f"leads another by more than {d} tile{'' if d == 1 else 's'} (tile-shift "
                                     "argument, ts_explore.analysis.tiles)", d)


def _projected(lanes: Sequence[Lane], model: CreditModel, pool: SharedPool, max_tiles: int) -> TileCoverage:
    """Coverage of a shared pool: each projection's own tile counts (all of them searched for every projection)."""
    parts = [tile_coverage(*projection(lanes, model, pool, keep), max_tiles=max_tiles) for keep in pool.consumers]
    bad = next((c for c in parts if not c.sufficient), None)
    alone = " and ".join(f"{pool.producer} + {c}" for c in pool.consumers)
    if bad is not None:
        return TileCoverage((2,), False, f"{bad.sentence} (searching {alone} on their own, as {pool.resource} has "
                                         "several consumer tasks)")
    tiles = tuple(sorted({t for c in parts for t in c.tiles}))
    lead = max((c.lead or 0) for c in parts)
    return TileCoverage(tiles, True, f"searched {_span(tiles)} work tiles of {alone} on their own: {pool.resource} "
                                     f"has {len(pool.consumers)} consumer tasks, each reading every stage; a "
                                     "deadlock or race of the whole set is one of such a pair (projection argument, "
                                     "ts_explore.analysis.shared_pools), and in each pair every pipeline has one "
                                     f"producer and one consumer, so no task leads another by more than {lead} "
                                     f"tile{'' if lead == 1 else 's'} (tile-shift argument)", lead, shared=pool)


_SEVERAL = "has several producer or consumer tasks"
INERT, INDEPENDENT = "inert", "independent"
MIXED_SENTENCES = {
    INERT: ("skipped and normal tiles may mix in any order: a skipped tile runs only WorkQueue and auxiliary steps, "
            "which neither block, move credits nor touch shared memory, so a run with skipped tiles reaches what "
            "the run of its normal tiles alone reaches, and those were searched"),
    INDEPENDENT: ("skipped and normal tiles may mix in any order: the tasks share no pipeline and every tile kind "
                  "returns the credits it takes"),
    "": ("the skipped-tile run covers tiles that all skip; sequences that mix skipped and normal tiles are not "
         "searched"),
}


def mixed_tiles(coverage: TileCoverage, skipped: Sequence[Lane], model: CreditModel) -> str:
    """Which argument lets skipped and normal tiles mix: ``INERT``, ``INDEPENDENT`` or ``""`` (none).

    ``INERT``: a skipped tile runs only WorkQueue and auxiliary steps (no
    credits, no shared-memory access, never blocking); deleting the skipped
    tiles from a run leaves a run of its normal tiles alone, with the same
    credits, the same blocked tasks and the same accesses. It covers mixed
    sequences when every count of normal tiles is covered too (the caller
    checks what was searched). ``INDEPENDENT``: the tasks share no pipeline
    and both tile kinds give back the credits they take, so every tile starts
    from the initial credits whatever came before.
    """
    if coverage.independent:
        pools, why = _pools(skipped, model)
        if not (why or _balanced(pools)):
            return INDEPENDENT
    if all(step.family in (Family.QUEUE, Family.AUX) for lane in skipped for step in lane.steps):
        return INERT
    return ""


def _span(tiles: tuple[int, ...]) -> str:
    return str(tiles[0]) if len(tiles) == 1 else f"{tiles[0]}-{tiles[-1]}"


__all__ = ["INDEPENDENT", "INERT", "MAX_TILES", "MIXED_SENTENCES", "TileCoverage", "mixed_tiles", "tile_coverage"]
