"""A seeded generator of task sets aimed at the checker's corners (built with real TS objects).

Where :mod:`task_set_generator` draws broad random pipelines, this one
builds the shapes a partial-order reduction and a state identity can get
wrong, each a few steps long so thousands of sets search in seconds:

* a pipeline stage with **two producer tasks** (TS keeps one held entry per
  acquirer and a consumer's wait drops only the last one, so the entries'
  order matters) or **two consumer tasks**;
* **aliasing** buffers: plain tiles and pipelined tiles at offsets that
  overlap fully or partly (1024-byte tiles at 0, 256, 512 or 768), written
  by a task that is ordered behind the pipeline by a signal, or not;
* **signal before release**: a consumer commits a signal channel between
  its read and its release, so a task behind the signal runs while the
  consumer still holds the tile;
* **gated** tasks: a task waits a gate channel another task commits in
  its HEAD before it starts;
* guards on the **last iteration only**, opaque conditions over **two or
  three keys**, **PDL** launch/wait across tasks;
* **persistent** schedules over a WorkQueue with ``skip_if`` (skipped
  tiles), checked over three tiles (:func:`corner_variants`).

Usage::

    from corner_sets import corner_set, corner_variants
    spec = corner_set(7)                  # a TaskSetSpec (tests/task_set_generator.py)
    tasks = spec.build()["tasks"]
    for kwargs in corner_variants(tasks): search_problem(tasks, **kwargs)

* **DMA consumers with several readers** and **completion commit/wait
  pairs across resources**: a loader fills two TMA->UMMA tiles (DMA
  consumer resources), an MMA task reads both and commits a UMMA->async
  accumulator (a completion producer: its commit tags both tiles' reads,
  the epilogue's wait on it clears them), and a plain tile aliasing one of
  the DMA tiles is written behind the epilogue (by a signal, or not).

* **PipelineGroup** merge / fused merge / fork and **domain-interleaved**
  pipes (two producer tasks on the even and odd lanes): a quarter of the
  seeds (``GROUP_SHARE``) are drawn by :mod:`group_sets` instead.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

from check_parity import variants
from group_sets import GroupSetSpec, group_set
from task_set_generator import (
    ASYNC,
    DMA_TILE,
    FLAGS,
    PDL_LAUNCH,
    PDL_WAIT,
    PLAIN_TILE,
    QUEUE,
    TILE,
    TMA,
    UMMA,
    Block,
    Op,
    ResourceSpec,
    TaskSetSpec,
    TaskSpec,
)

GROUP_SHARE = 0.25  # seeds drawn by group_sets (PipelineGroups, interleaved lanes)
DMA_SHARE = 0.3  # sets that get the DMA readers + completion construct
OFFSETS = (0, 256, 512, 768)  # 1024-byte tiles: any two of these overlap, most only partly


def _produce(name: str) -> tuple[Op, ...]:
    return (Op(name, "acquire"), Op(name, "fill"), Op(name, "commit"))


class _Draft:
    def __init__(self, n: int) -> None:
        self.resources: list[ResourceSpec] = []
        self.head: list[list[Block]] = [[] for _ in range(n)]
        self.body: list[list[Block]] = [[] for _ in range(n)]
        self.tail: list[list[Block]] = [[] for _ in range(n)]
        self.features: list[str] = []

    def add(self, prefix: str, kind: str, stages: int = 1, consumers: int = 1, offset: int = 0) -> str:
        name = f"{prefix}{len(self.resources)}"
        self.resources.append(ResourceSpec(name, kind, stages, consumers, offset))
        return name

    def flags(self, task: int) -> str:
        name = f"flags_t{task}"
        if all(r.name != name for r in self.resources):
            self.resources.append(ResourceSpec(name, FLAGS))
        return name


def corner_set(seed: int) -> TaskSetSpec | GroupSetSpec:
    """The corner-case task set of ``seed`` (deterministic; 3-4 tasks, 1-2 iterations, small on purpose)."""
    if random.Random(seed * 7919 + 3).random() < GROUP_SHARE:
        return group_set(seed)
    rng = random.Random(seed)
    n = rng.choice((3, 3, 4))
    d = _Draft(n)
    persistent = rng.random() < 0.2
    iterations = 2 if not persistent and rng.random() < 0.25 else 1
    tasks = list(range(n))
    rng.shuffle(tasks)

    # the shared stage: one or two producers, one or two consumers, a pipelined tile (aliasable) or not
    n_prod = rng.choice((1, 2, 2))
    n_cons = 2 if n_prod == 1 or (n >= 4 and rng.random() < 0.3) else 1
    producers, consumers = tasks[:n_prod], tasks[n_prod:n_prod + n_cons]
    others = tasks[n_prod + n_cons:]
    kind = rng.choice((TILE, TILE, ASYNC, TMA))
    stage = d.add("tile" if kind == TILE else "buf", kind, rng.randint(1, 2), n_cons, rng.choice(OFFSETS))
    d.features.append(f"{n_prod} producer(s), {n_cons} consumer(s) on {kind}")
    guard = ""
    roll = rng.random()
    if roll < 0.2:
        guard = "last"
        d.features.append("last-iteration guard")
    elif roll < 0.35:
        key = rng.choice(("k0", "k1", "k2"))
        guard = f"{rng.choice(('opaque', 'not'))}:{key}"
        d.features.append(f"opaque {guard}")
    for p in producers:
        d.body[p].append(Block(_produce(stage), guard if not guard.startswith(("opaque", "not")) else ""))
    if guard.startswith(("opaque", "not")):
        for t in (*producers, *consumers):
            d.body[t].insert(0, Block((Op(d.flags(t), "flag"),)))
        for p in producers:
            d.body[p][-1] = Block(d.body[p][-1].ops, guard)

    # consumers: read, maybe signal before release; the signal's receiver may write an aliasing tile
    signal = rng.random() < 0.6
    sig = d.add("sig", ASYNC, 1) if signal else ""
    receiver = rng.choice(others or producers)
    if signal and n_cons == 2 and rng.random() < 0.4:  # a consumer receives: the order of the two waits matters
        receiver = consumers[0]
        d.features.append("consumer receives the signal")
    for c in consumers:
        ops = [Op(stage, "wait"), Op(stage, "drain")]
        if signal:
            ops += _produce(sig)
        ops.append(Op(stage, "release"))
        if guard.startswith(("opaque", "not")):
            d.body[c].append(Block(tuple(ops), guard))
        else:
            d.body[c].append(Block(tuple(ops), guard))
    if signal:
        d.features.append("signal before release")
        # every consumer commits sig: the receiver waits once per consumer commit round
        d.body[receiver].append(Block((Op(sig, "wait"),)))
    alias_kind = rng.choice((PLAIN_TILE, PLAIN_TILE, TILE)) if kind == TILE else ""
    if alias_kind:
        offset = rng.choice(OFFSETS)
        raw = d.add("raw", alias_kind, 1, 1, offset)
        writer = receiver if signal else rng.choice(tasks)
        if alias_kind == PLAIN_TILE:
            d.body[writer].append(Block((Op(raw, "fill"),)))
        else:
            reader = rng.choice([t for t in tasks if t != writer])
            d.body[writer].append(Block(_produce(raw)))
            d.body[reader].append(Block((Op(raw, "wait"), Op(raw, "drain"), Op(raw, "release"))))
        d.features.append(f"aliasing {alias_kind} @{offset} vs @{d.resources[0].offset}")
    if signal:
        d.body[receiver].append(Block((Op(sig, "release"),)))

    if n >= 3 and random.Random(seed * 7919 + 1).random() < DMA_SHARE:
        _dma_readers(d, random.Random(seed * 7919 + 2), tasks)

    # a gate: one task commits in HEAD what another waits for before its body
    if rng.random() < (0.15 if persistent else 0.35):
        a, b = rng.sample(tasks, 2)
        gate = d.add("gate", ASYNC, 1)
        d.head[a].append(Block(_produce(gate)))
        d.head[b].append(Block((Op(gate, "wait"),)))
        d.tail[b].append(Block((Op(gate, "release"),)))
        d.features.append("gate")

    # PDL across tasks
    if rng.random() < 0.2:
        w, launch = rng.sample(tasks, 2)
        wait_r, launch_r = d.add("pdl_wait", PDL_WAIT), d.add("pdl_launch", PDL_LAUNCH)
        d.head[w].insert(0, Block((Op(wait_r, "pdl_wait"),)))
        d.tail[launch].append(Block((Op(launch_r, "launch"),)))
        d.features.append("pdl across tasks")

    skip_if = persistent and rng.random() < 0.6
    if persistent:
        d.add("wq", QUEUE)
        d.features.append("persistent+skip_if" if skip_if else "persistent")
    specs = []
    for i in range(n):
        body = tuple(d.body[i]) or (Block((Op(d.flags(i), "flag"),)),)
        specs.append(TaskSpec(f"T{i}", iterations, tuple(d.head[i]), body, tuple(d.tail[i]),
                              skippable_head=skip_if and rng.random() < 0.5))
    return TaskSetSpec(seed, tuple(d.resources), tuple(specs), persistent, skip_if, "corner",
                       tuple(dict.fromkeys(d.features)))


def _dma_readers(d: _Draft, rng: random.Random, tasks: list[int]) -> None:
    """Loader -> two DMA tiles -> MMA (completion producer) -> epilogue, and a plain tile aliasing a DMA tile."""
    loader, mma, epilogue = rng.sample(tasks, 3)
    tiles = [d.add("dma", DMA_TILE, 1, 1, base) for base in (4096, 5120)]  # apart from each other and the stage
    acc = d.add("acc", UMMA, 1)
    d.body[loader].append(Block(tuple(op for t in tiles for op in _produce(t))))
    reads = tuple(op for t in tiles for op in (Op(t, "wait"), Op(t, "drain")))
    releases = tuple(Op(t, "release") for t in tiles)
    d.body[mma].append(Block(reads + _produce(acc) + releases))
    tail = [Op(acc, "wait"), Op(acc, "drain"), Op(acc, "release")]
    raw = d.add("raw", PLAIN_TILE, 1, 1, rng.choice((4096, 5120)) + rng.choice(OFFSETS))
    ordered = rng.random() < 0.6
    if ordered:  # the aliasing write waits for the epilogue's completion wait, through a signal
        done = d.add("sig", ASYNC, 1)
        tail += _produce(done)
        writer = rng.choice([t for t in tasks if t != epilogue])
        d.body[writer].append(Block((Op(done, "wait"), Op(raw, "fill"), Op(done, "release"))))
    else:
        writer = rng.choice(tasks)
        d.body[writer].append(Block((Op(raw, "fill"),)))
    d.body[epilogue].append(Block(tuple(tail)))
    d.features.append(f"dma with 2 readers + completion pair{' (ordered write)' if ordered else ''}")


def corner_variants(tasks: list[Any]) -> list[dict[str, Any]]:
    """TaskManager's checker calls (:func:`check_parity.variants`), persistent sets over three tiles."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = variants(tasks)
    return [{**v, "num_tiles": 3} if v["num_tiles"] > 1 else v for v in out]


__all__ = ["OFFSETS", "corner_set", "corner_variants"]
