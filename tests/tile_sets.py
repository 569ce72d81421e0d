"""Seeded persistent task sets whose aliased rings drift in phase from one work tile to the next.

Every set is built from real TS objects: ``@schedule`` trees inside a
``work_tile_loop`` over a static WorkQueue (with ``skip_if`` and
``skippable()`` on some seeds), ``Task``\\ s, and resources that share
shared-memory bytes. What a set can hold:

* **rings**: AsyncAsync-pipelined tiles of 1-4 stages at a byte offset
  (1024 bytes long; equal offsets alias fully, 256/512 apart partly), each
  with one producer task and one consumer task, used 1-3 times per tile:
  inside the domain loop (``uses / iterations`` times per iteration) or in
  HEAD or TAIL (outside the domain loop, inside the work-tile loop);
* **token pipes** (a 1- or 2-stage buffer that orders two tasks without
  sharing bytes) and **gates** (the same, committed in one task's HEAD and
  waited in another's HEAD or TAIL);
* a **PipelineGroup** (Merge): two producer tasks fill one member each, one
  consumer task waits both members and releases the group once;
* a **plain tile** without a pipeline, written or read by one task.

A ring of ``S`` stages used ``u`` times per tile starts tile ``t`` at slot
``(t * u) mod S``: its *period* is ``S / gcd(S, u)`` tiles, and two aliased
rings with different periods meet on the same slot at different tiles.
:meth:`TileSetSpec.tiles_needed` is the tile count a brute-force search must
unroll to see every phase: at least 8 and at least twice the longest period
plus the largest lead one task can take over another (from the pipes'
credits).

The data and the TS objects of a set are :mod:`tile_spec`'s. Usage::

    from tile_sets import tile_set
    spec = tile_set(17)          # the same seed gives the same spec
    print(spec.describe())       # the set as a description, one task per line
    verify(**spec.build())       # fresh TS objects on every call (TS mutates what it checks)
"""

from __future__ import annotations

import random
from typing import Any

from tile_spec import GROUP, HEAD, LOOP, MIN_TILES, PIPE, PLAIN, RING, TAIL, Buffer, TaskPlan, TileSetSpec, Use


def _placements(uses: int, iterations: int, rng: random.Random) -> tuple[str, int]:
    """Where one side of a buffer runs its ``uses`` rounds per tile: (section, rounds there)."""
    if uses % iterations == 0 and rng.random() < 0.6:
        return LOOP, uses // iterations
    return rng.choice((HEAD, TAIL)), uses


class _Draft:
    """A spec under construction: buffers and, per task, units of uses (a unit stays together)."""

    def __init__(self, n: int, rng: random.Random) -> None:
        self.rng = rng
        self.iterations = [rng.randint(1, 2) for _ in range(n)]
        self.units: list[list[tuple[Use, ...]]] = [[] for _ in range(n)]
        self.ranks: dict[tuple[int, int], int] = {}  # (task, unit index) -> place in program order (default 1)
        self.buffers: list[Buffer] = []
        self.features: list[str] = []

    def name(self, prefix: str) -> str:
        return f"{prefix}{len(self.buffers)}"

    def pair(self, buf: str, uses: int, producer: int, consumer: int, head_only: bool = False) -> None:
        """One buffer's producer and consumer uses (in one unit when one task plays both sides)."""
        if producer == consumer:
            sec, k = _placements(uses, self.iterations[producer], self.rng)
            self.units[producer].append((Use(buf, "own", sec, k),))
            return
        for task, side in ((producer, "produce"), (consumer, "consume")):
            sec, k = (HEAD, uses) if head_only and side == "produce" else _placements(uses, self.iterations[task],
                                                                                    self.rng)
            self.units[task].append((Use(buf, side, sec, k),))


def _ordered(n: int, rng: random.Random) -> tuple[int, int]:
    """A producer and a consumer task, mostly along the task order (fewer wait cycles), now and then against it."""
    p, c = sorted(rng.sample(range(n), 2))
    return (c, p) if rng.random() < 0.1 else (p, c)


def tile_set(seed: int, *, max_tasks: int = 3) -> TileSetSpec:
    """The persistent task set of ``seed`` (deterministic): 2-``max_tasks`` tasks (3 with a PipelineGroup)."""
    rng = random.Random(seed)
    n = rng.randint(2, max_tasks)
    group = rng.random() < 0.15
    if group:
        n = max(n, 3)
    d = _Draft(n, rng)
    phase = not group and rng.random() < 0.6
    if phase:
        _phase_rings(d, n, rng)
    else:
        _mixed_rings(d, n, rng)
    for _ in range(rng.choice((0, 0, 1) if phase else (0, 1, 1, 2))):  # token pipes between two tasks
        name = d.name("pipe")
        d.buffers.append(Buffer(name, PIPE, rng.choice((1, 1, 2))))
        p, c = _ordered(n, rng)
        d.pair(name, rng.randint(1, d.buffers[-1].stages), p, c)
        d.features.append("token pipe")
    if rng.random() < 0.2:  # a gate: committed in one task's HEAD
        name = d.name("gate")
        d.buffers.append(Buffer(name, PIPE, 1))
        p, c = _ordered(n, rng)
        d.pair(name, 1, p, c, head_only=True)
        d.features.append("gate")
    if group:
        _merge_group(d, n, rng)
    if rng.random() < 0.05:  # a plain tile, no pipeline: whoever touches its bytes unordered races
        name = d.name("raw")
        d.buffers.append(Buffer(name, PLAIN, 1, rng.choice((0, 1024, 2048))))
        d.units[rng.randrange(n)].append((Use(name, "produce", LOOP, 1),))
        d.features.append("plain tile")
    for i in range(n):  # every task does something: a one-slot ring of its own, far from the others
        if not d.units[i]:
            name = d.name("own")
            d.buffers.append(Buffer(name, RING, 1, 8192 + 1024 * i))
            d.pair(name, 1, i, i)
    skip_if = rng.random() < 0.3
    if skip_if:
        d.features.append("skip_if")
    tasks = []
    for i in range(n):
        units = list(enumerate(d.units[i]))
        rng.shuffle(units)
        units.sort(key=lambda u: d.ranks.get((i, u[0]), 1))
        uses = tuple(u for _, unit in units for u in unit)
        tasks.append(TaskPlan(f"T{i}", d.iterations[i], uses, skippable_head=skip_if and rng.random() < 0.5))
    if any(t.skippable_head and t.section(HEAD) for t in tasks):
        d.features.append("skippable head")
    if any(t.section(HEAD) or t.section(TAIL) for t in tasks):
        d.features.append("head/tail work")
    return TileSetSpec(seed, tuple(d.buffers), tuple(tasks), skip_if, tuple(dict.fromkeys(d.features)))


def _mixed_rings(d: _Draft, n: int, rng: random.Random) -> None:
    """Two or three aliased rings, each inside one task or between two."""
    offsets = (0, 0, 0, 256, 512, 1024, 2048)
    for i in range(3 if rng.random() < 0.2 else 2):
        name = d.name("ring")
        d.buffers.append(Buffer(name, RING, rng.randint(1, 4), 0 if i == 0 else rng.choice(offsets)))
        if rng.random() < 0.5:  # the ring stays inside one task
            p = c = rng.randrange(n)
            d.pair(name, rng.randint(1, 3), p, c)
            continue
        p, c = _ordered(n, rng)  # between two tasks: a tile's rounds fit the ring (fewer deadlocks)
        d.pair(name, rng.randint(1, min(3, d.buffers[-1].stages)), p, c)
    d.features.append("aliased rings")


def _phase_rings(d: _Draft, n: int, rng: random.Random) -> None:
    """Each task has a ring of its own, all aliased, ordered by token pipes along the tasks: task ``i`` waits
    the token of task ``i - 1``, uses its ring, then passes a token on (mostly in that order). The token
    keeps one tile's uses apart, while a task may run its next tile's ring beside its neighbour's current
    one: whether those slots meet depends on how the rings' phases drift."""
    order = (HEAD, LOOP, TAIL)
    placed: list[str] = []
    for i in range(n):
        name = d.name("ring")
        stages = rng.choice((1, 2, 3, 3, 4, 4))  # three or more stages keep neighbouring tiles apart
        d.buffers.append(Buffer(name, RING, stages, 0 if i == 0 else rng.choice((0, 0, 256, 512))))
        sec, k = _placements(1 if rng.random() < 0.6 else rng.randint(2, 3), d.iterations[i], rng)
        d.units[i].append((Use(name, "own", sec, k),))
        d.ranks[(i, len(d.units[i]) - 1)] = 1
        placed.append(sec)
    for i in range(n - 1):  # the tokens: produced after task i's ring, waited before task i + 1's
        name = d.name("pipe")
        d.buffers.append(Buffer(name, PIPE, rng.choice((1, 1, 1, 2))))
        for task, side, rank, allowed in ((i, "produce", 2, order[order.index(placed[i]):]),
                                          (i + 1, "consume", 0, order[:order.index(placed[i + 1]) + 1])):
            if d.iterations[task] > 1:
                allowed = tuple(x for x in allowed if x != LOOP) or (HEAD if side == "consume" else TAIL,)
            d.units[task].append((Use(name, side, rng.choice(allowed), 1),))
            if rng.random() < 0.8:
                d.ranks[(task, len(d.units[task]) - 1)] = rank
    d.features.append("rings drifting in phase")


def _merge_group(d: _Draft, n: int, rng: random.Random) -> None:
    """A Merge group: two producer tasks fill one member each; one consumer waits both, releases the group."""
    stages = rng.randint(1, 2)
    members = []
    for _ in range(2):
        members.append(d.name("m"))
        d.buffers.append(Buffer(members[-1], RING, stages, rng.choice((0, 512, 2048))))
    gname = d.name("g")
    d.buffers.append(Buffer(gname, GROUP, stages, members=tuple(members)))
    p0, p1, c = rng.sample(range(n), 3)
    same = d.iterations[p0] == d.iterations[c] == d.iterations[p1]
    produce, consume = (LOOP, LOOP) if same else (HEAD, TAIL)  # one round per iteration, else one per tile
    for p, m in ((p0, members[0]), (p1, members[1])):
        d.units[p].append((Use(m, "produce", produce, 1),))
    d.units[c].append((Use(gname, "consume", consume, 1),))
    d.features.append("pipeline group")


def drift(s0: int, s1: int, *, token: bool = True, pipe_stages: int = 1) -> TileSetSpec:
    """The issue's shape: T0 and T1 each use an aliased ring of their own (``s0`` and ``s1`` stages, once a
    tile), T0 passes T1 a token after its ring: T0's next tile runs beside T1's current one. With 4 and 3
    stages the slots first meet at 5 tiles; with equal stage counts never."""
    buffers = [Buffer("ring0", RING, s0, 0), Buffer("ring1", RING, s1, 0)]
    t0, t1 = [Use("ring0", "own", LOOP, 1)], [Use("ring1", "own", LOOP, 1)]
    if token:
        buffers.append(Buffer("pipe", PIPE, pipe_stages))
        t0.append(Use("pipe", "produce", LOOP, 1))
        t1.insert(0, Use("pipe", "consume", LOOP, 1))
    return TileSetSpec(0, tuple(buffers), (TaskPlan("T0", 1, tuple(t0)), TaskPlan("T1", 1, tuple(t1))),
                       features=("rings drifting in phase",))


RACE_AT_5 = drift(4, 3)  # ``ts-explore verify tile_sets:RACE_AT_5.build`` from tests/
STEADY = drift(4, 4)


def tile_sets(count: int, first_seed: int = 0, **limits: Any) -> list[TileSetSpec]:
    """``count`` specs from consecutive seeds."""
    return [tile_set(s, **limits) for s in range(first_seed, first_seed + count)]


__all__ = ["GROUP", "HEAD", "LOOP", "MIN_TILES", "PIPE", "PLAIN", "RACE_AT_5", "RING", "STEADY", "TAIL", "Buffer",
           "TaskPlan", "TileSetSpec", "Use", "drift", "tile_set", "tile_sets"]
