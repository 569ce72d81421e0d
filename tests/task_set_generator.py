"""A seeded generator of multi-task TS task sets, safe and broken, for differential tests.

How to use it::

    from task_set_generator import generate          # tests/ is on pytest's pythonpath

    spec = generate(1234)                            # the same seed gives the same spec
    print(spec.describe())                           # what was generated, in words
    case = spec.build()                              # fresh dict(tasks=..., resource_dependency_graph=...)
    verdict = ts_explore.verify(**case)              # build again for every verification:
    TaskManager(**spec.build(), verbose=False)       # TS mutates the objects it checks

    for spec in generate_many(200, first_seed=0, max_tasks=4, max_iterations=4): ...

A :class:`TaskSetSpec` is plain frozen data (resources, tasks, blocks of
operations); :meth:`TaskSetSpec.build` turns it into TS resources, recorded
``@schedule`` trees and ``Task`` objects. What it covers:

* 2-5 tasks joined by pipelined channels (AsyncAsync or TmaAsync, 1-4
  stages; some with two consumer tasks), one producer task each;
* shapes that are safe and mutations that break them: a missing release, an
  extra wait, a cross wait (two tasks each waiting for the other first), a
  consumer loop longer than the producer's, a guard on one side only;
* shared-memory aliasing: tiles placed by a small allocator that lets some
  overlap (AsyncAsync, DMA-read TmaUmma with a UmmaAsync accumulator, or no
  pipeline at all), which races unless something orders the writers;
* PDL ``wait_griddep`` / ``launch_griddep`` in both orders, in one task or two;
* ``first_iter`` / ``last_iter`` / ``every(k, start)`` guards and opaque
  ``when_true`` / ``when_false`` conditions (the same key on both sides of a
  channel, or on one side only);
* persistent schedules over a static WorkQueue, optionally with ``skip_if``
  and ``skippable()`` (some head steps inside it, some outside);
* static domains of 1-8 iterations, plus steps in HEAD and TAIL.

The generator does not promise a verdict: ``spec.intent`` names the
mutation applied, and whether a set is safe is what the checkers decide.
"""

from __future__ import annotations

import contextlib
import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling import when_false, when_true
from cutlass.experimental.task_scheduling.resources import PdlLaunchBarrier, PdlWaitBarrier, PipelineConfig
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.gallery import resources as G
from ts_explore.gallery.gemm_family import GemmBuffer
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue

# resource kinds
ASYNC, TMA, TILE, DMA_TILE, UMMA, PLAIN_TILE = "async", "tma", "tile", "dma_tile", "umma", "plain_tile"
FLAGS, PDL_WAIT, PDL_LAUNCH, QUEUE = "flags", "pdl_wait", "pdl_launch", "queue"
_PIPELINED = (ASYNC, TMA, TILE, DMA_TILE, UMMA)
_CTA = (1, 1, 1, 1)

# operations: acquire fill commit wait drain release try_acquire try_wait flag launch pdl_wait
_METHOD = {
    "acquire": "acquire", "commit": "commit", "wait": "wait", "release": "release",
    "try_acquire": "try_acquire", "try_wait": "try_wait", "flag": "needs_epilogue",
    "launch": "launch_griddep", "pdl_wait": "wait_griddep",
}
MUTATIONS = ("none", "missing_release", "extra_wait", "cross_wait", "consumer_longer", "one_sided_guard",
             "skipped_commit")


@dataclass(frozen=True)
class ResourceSpec:
    """One resource: its kind, pipeline stages, consumer task count, and SMEM placement for tiles."""

    name: str
    kind: str
    stages: int = 1
    consumers: int = 1
    offset: int = 0  # byte offset of an aliasable tile (1024 bytes long)


@dataclass(frozen=True)
class Op:
    """One recorded call: ``resource.method()``; ``fill``/``drain`` name the resource's work method."""

    resource: str
    method: str


@dataclass(frozen=True)
class Block:
    """Operations under one guard: "" (none), first, last, every:<period>:<start>, opaque:<key>, not:<key>."""

    ops: tuple[Op, ...]
    guard: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """One task: HEAD blocks, a domain loop of ``iterations`` over ``body``, TAIL blocks."""

    name: str
    iterations: int
    head: tuple[Block, ...] = ()
    body: tuple[Block, ...] = ()
    tail: tuple[Block, ...] = ()
    skippable_head: bool = False  # with skip_if: HEAD steps sit inside skippable() too


@dataclass(frozen=True)
class TaskSetSpec:
    """A generated task set; :meth:`build` makes fresh TS objects every call."""

    seed: int
    resources: tuple[ResourceSpec, ...]
    tasks: tuple[TaskSpec, ...]
    persistent: bool = False
    skip_if: bool = False
    intent: str = "none"  # the mutation applied (see MUTATIONS)
    features: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """The spec in words, one task per line."""

        def blocks(bs: tuple[Block, ...]) -> str:
            return " | ".join(
                (f"[{b.guard}] " if b.guard else "") + " ".join(f"{o.resource}.{o.method}" for o in b.ops) for b in bs
            )

        lines = [f"seed {self.seed}: {self.intent}; features: {', '.join(self.features) or '-'}"]
        lines += [f"  {r.name}: {r.kind} x{r.stages}" + (f" @{r.offset}" if r.kind in (TILE, DMA_TILE, PLAIN_TILE)
                                                            else "") for r in self.resources]
        for t in self.tasks:
            lines.append(f"  {t.name} ({t.iterations} it): head {blocks(t.head) or '-'} ; loop {blocks(t.body)} ; "
                         f"tail {blocks(t.tail) or '-'}")
        return "\n".join(lines)

    def build(self) -> dict[str, Any]:
        """Fresh ``dict(tasks=..., resource_dependency_graph=...)`` (TS mutates what it verifies)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unrouted outputs of the flag calls
            return _build(self)


# -- building TS objects -------------------------------------------------------------------


def _group(threads: int) -> Any:
    return pipeline.CooperativeGroup(pipeline.Agent.Thread, threads)


def _resource(spec: ResourceSpec) -> Any:
    consumers = 32 * spec.consumers
    if spec.kind == ASYNC:
        return GemmBuffer(name=spec.name, pipeline_config=R.async_pipeline(spec.stages, 32, consumers))
    if spec.kind == TMA:
        cfg = PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=spec.stages, num_bytes=1024, producer_group=_group(1), consumer_group=_group(consumers),
            cta_layout_vmnk=_CTA,
        )
        return GemmBuffer(name=spec.name, pipeline_config=cfg)
    if spec.kind == UMMA:
        return GemmBuffer(name=spec.name, pipeline_config=G.umma_async_pipeline(spec.stages))
    if spec.kind in (TILE, DMA_TILE, PLAIN_TILE):
        cfg = {TILE: lambda: R.async_pipeline(spec.stages, 32, consumers),
               DMA_TILE: lambda: G.tma_umma_pipeline(spec.stages), PLAIN_TILE: lambda: None}[spec.kind]()
        return G.AliasedTile(name=spec.name, pipeline_config=cfg, smem_offset=spec.offset)
    if spec.kind == FLAGS:
        return R.EpilogueSmem(name=spec.name)
    if spec.kind == PDL_WAIT:
        return PdlWaitBarrier(name=spec.name)
    if spec.kind == PDL_LAUNCH:
        return PdlLaunchBarrier(name=spec.name)
    if spec.kind == QUEUE:
        return R.static_queue(name=spec.name, cls=OversubscribedQueue)
    raise ValueError(f"unknown resource kind {spec.kind!r}")


def _work_method(kind: str, method: str) -> str:
    if method == "fill":
        return "write_tile" if kind in (TILE, DMA_TILE, PLAIN_TILE) else "fill"
    if method == "drain":
        return "read_tile" if kind in (TILE, DMA_TILE, PLAIN_TILE) else "drain"
    return _METHOD[method]


_PRODUCER_OPS = frozenset({"acquire", "fill", "commit", "try_acquire", "launch"})


def _roles(task: TaskSpec, kinds: dict[str, str]) -> tuple[list[str], list[str]]:
    """(src, dst) resource names of a task, in first-use order."""
    src: list[str] = []
    dst: list[str] = []
    for block in (*task.head, *task.body, *task.tail):
        for op in block.ops:
            side = dst if op.method in _PRODUCER_OPS else src
            if op.resource not in side:
                side.append(op.resource)
    return src, dst


def _run_blocks(blocks: tuple[Block, ...], proxies: dict[str, Any], kinds: dict[str, str], loop: Any) -> None:
    flag = None
    for block in blocks:
        if block.guard == "":
            ctx: Any = contextlib.nullcontext()
        elif block.guard == "first":
            ctx = loop.first_iter()
        elif block.guard == "last":
            ctx = loop.last_iter()
        elif block.guard.startswith("every:"):
            _, period, start = block.guard.split(":")
            ctx = loop.every(int(period), start=int(start))
        else:
            negated, key = block.guard.split(":")
            ctx = (when_false if negated == "not" else when_true)(flag, key=key)
        with ctx:
            for op in block.ops:
                out = getattr(proxies[op.resource], _work_method(kinds[op.resource], op.method))()
                if op.method == "flag":
                    flag = out


def _schedule_for(task: TaskSpec, spec: TaskSetSpec, names: list[str], kinds: dict[str, str]) -> Any:
    queue = next((r.name for r in spec.resources if r.kind == QUEUE), None)

    def body(*resources: Any) -> None:
        proxies = dict(zip(names, resources))

        def loop_part() -> None:
            with domain_loop(0, task.iterations, 1) as d:
                _run_blocks(task.body, proxies, kinds, d)

        if not spec.persistent:
            _run_blocks(task.head, proxies, kinds, None)
            loop_part()
            _run_blocks(task.tail, proxies, kinds, None)
            return
        wq = proxies[queue]
        skip = OversubscribedQueue.skip_work_tile_if if spec.skip_if else None
        with work_tile_loop(wq, skip_if=skip) as wtl:
            if spec.skip_if and task.skippable_head:
                with wtl.skippable():
                    _run_blocks(task.head, proxies, kinds, None)
                    loop_part()
            else:
                _run_blocks(task.head, proxies, kinds, None)
                with wtl.skippable() if spec.skip_if else contextlib.nullcontext():
                    loop_part()
            _run_blocks(task.tail, proxies, kinds, None)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    body.__name__ = body.__qualname__ = f"{task.name.lower()}_schedule"
    return schedule(body)


def _build(spec: TaskSetSpec) -> dict[str, Any]:
    objs = {r.name: _resource(r) for r in spec.resources}
    kinds = {r.name: r.kind for r in spec.resources}
    queue = next((r.name for r in spec.resources if r.kind == QUEUE), None)
    tasks = []
    produced_from: dict[str, list[str]] = {}
    for i, t in enumerate(spec.tasks):
        src, dst = _roles(t, kinds)
        if queue is not None:
            src.append(queue)
        names = [*dst, *[s for s in src if s not in dst]]
        sched = _schedule_for(t, spec, names, kinds)(*(objs[n] for n in names))
        tasks.append(Task([objs[n] for n in src], [objs[n] for n in dst], i, 1, schedule=sched, name=t.name))
        for d in dst:
            produced_from.setdefault(d, [])
            produced_from[d] += [s for s in src if s not in produced_from[d] and s != d]
    graph = {objs[n]: [objs[s] for s in produced_from.get(n, [])] for n in objs}
    return {"tasks": tasks, "resource_dependency_graph": graph}


# -- generating specs ------------------------------------------------------------------------


def _produce(name: str, rng: random.Random, plain: bool = False) -> tuple[Op, ...]:
    if plain:
        return (Op(name, "fill"),)
    pre = (Op(name, "try_acquire"),) if rng.random() < 0.2 else ()
    return (*pre, Op(name, "acquire"), Op(name, "fill"), Op(name, "commit"))


def _consume(name: str, rng: random.Random, plain: bool = False) -> tuple[Op, ...]:
    if plain:
        return (Op(name, "drain"),)
    pre = (Op(name, "try_wait"),) if rng.random() < 0.2 else ()
    return (*pre, Op(name, "wait"), Op(name, "drain"), Op(name, "release"))


class _Draft:
    """A spec under construction: per task, lists of head/body/tail blocks."""

    def __init__(self, n: int, iterations: int, max_stages: int) -> None:
        self.max_stages = max_stages
        self.resources: list[ResourceSpec] = []
        self.head: list[list[Block]] = [[] for _ in range(n)]
        self.body: list[list[Block]] = [[] for _ in range(n)]
        self.tail: list[list[Block]] = [[] for _ in range(n)]
        self.iterations = [iterations] * n
        self.features: list[str] = []

    def add(self, kind: str, stages: int = 1, consumers: int = 1, offset: int = 0) -> str:
        prefix = {ASYNC: "buf", TMA: "tma", TILE: "tile", DMA_TILE: "dma", UMMA: "acc", PLAIN_TILE: "raw",
                  FLAGS: "flags", PDL_WAIT: "pdl_wait", PDL_LAUNCH: "pdl_launch", QUEUE: "wq"}[kind]
        name = f"{prefix}{len(self.resources)}"
        self.resources.append(ResourceSpec(name, kind, stages, consumers, offset))
        return name


def _few(d: _Draft, rng: random.Random) -> int:
    """1 or 2 stages (within the limit)."""
    return rng.randint(1, min(2, d.max_stages))


def _guard(rng: random.Random, iterations: int) -> str:
    choice = rng.choice(("first", "last", "every"))
    if choice == "every":
        period = rng.randint(2, 3)
        return f"every:{period}:{rng.randint(0, period - 1)}"
    return choice


def _channel(d: _Draft, rng: random.Random, producer: int, consumers: list[int], kind: str, stages: int,
             offset: int = 0, guard: str = "", opaque: str = "") -> str:
    name = d.add(kind, stages, len(consumers), offset)
    plain = kind == PLAIN_TILE
    blocks_p = [Block(_produce(name, rng, plain), guard)]
    blocks_c = {c: [Block(_consume(name, rng, plain), guard)] for c in consumers}
    if opaque:
        key, neg = opaque, rng.random() < 0.3
        g = f"{'not' if neg else 'opaque'}:{key}"
        blocks_p = [Block((Op(_flags(d, producer), "flag"),)), Block(blocks_p[0].ops, g)]
        blocks_c = {c: [Block((Op(_flags(d, c), "flag"),)), Block(b[0].ops, g)] for c, b in blocks_c.items()}
    d.body[producer].append(tuple(blocks_p))  # type: ignore[arg-type]
    for c, bs in blocks_c.items():
        d.body[c].append(tuple(bs))  # type: ignore[arg-type]
    return name


def _flags(d: _Draft, task: int) -> str:
    name = f"flags_t{task}"
    if all(r.name != name for r in d.resources):
        d.resources.append(ResourceSpec(name, FLAGS))
    return name


def generate(seed: int, *, min_tasks: int = 2, max_tasks: int = 5, max_iterations: int = 8,
             max_stages: int = 4) -> TaskSetSpec:
    """The task set of ``seed`` (deterministic): 2-5 tasks, 1-8 iterations, 1-4 stages by default."""
    rng = random.Random(seed)
    n = rng.randint(min_tasks, max_tasks)
    d = _Draft(n, rng.randint(1, max_iterations), max_stages)
    persistent = rng.random() < 0.2
    skip_if = persistent and rng.random() < 0.5
    if persistent:
        d.features.append("persistent+skip_if" if skip_if else "persistent")

    # the channels: a connected producer -> consumer graph, sometimes a two-consumer broadcast
    order = list(range(n))
    rng.shuffle(order)
    pairs = [(order[i - 1], order[i]) for i in range(1, n)]
    for _ in range(rng.randint(0, 2)):
        a, b = rng.sample(range(n), 2)
        pairs.append((a, b))
    offsets = [0, 512, 1024, 2048, 3072]
    for producer, consumer in pairs:
        consumers = [consumer]
        if n >= 3 and rng.random() < 0.1:
            consumers.append(rng.choice([t for t in range(n) if t not in (producer, consumer)]))
            d.features.append("two consumers")
        roll = rng.random()
        kind = ASYNC if roll < 0.55 else TMA if roll < 0.75 else TILE if roll < 0.9 else PLAIN_TILE
        if kind == PLAIN_TILE and len(consumers) > 1:
            kind = TILE
        offset = rng.choice(offsets) if kind in (TILE, PLAIN_TILE) else 0
        if kind in (TILE, PLAIN_TILE):
            d.features.append("aliasing")
        guard = opaque = ""
        roll = rng.random()
        if roll < 0.15:
            guard = _guard(rng, d.iterations[producer])
            d.features.append("guard")
        elif roll < 0.25:
            opaque = f"k{rng.randint(0, 1)}"
            d.features.append("opaque")
        _channel(d, rng, producer, consumers, kind, rng.randint(1, max_stages), offset, guard, opaque)

    if rng.random() < 0.12:  # a TMA -> MMA -> epilogue chain with DMA reads of an aliased tile
        a, b, c = (rng.sample(range(n), 3) if n >= 3 else (0, 1, 0))
        _channel(d, rng, a, [b], DMA_TILE, _few(d, rng), rng.choice(offsets))
        _channel(d, rng, b, [c] if c != b else [a], UMMA, 1)
        d.features.append("dma")

    if rng.random() < 0.15:  # a channel in HEAD/TAIL only
        p, c = rng.sample(range(n), 2)
        name = d.add(ASYNC, _few(d, rng))
        d.head[p].append(Block(_produce(name, rng)))
        (d.tail if rng.random() < 0.5 else d.head)[c].append(Block(_consume(name, rng)))
        d.features.append("head/tail")

    if rng.random() < 0.2:  # PDL: wait then launch, or launch first; in one task or two
        w, l = rng.choice(range(n)), rng.choice(range(n))
        wait, launch = d.add(PDL_WAIT), d.add(PDL_LAUNCH)
        d.head[w].insert(0, Block((Op(wait, "pdl_wait"),)))
        if rng.random() < 0.5:
            d.tail[l].append(Block((Op(launch, "launch"),)))
            d.features.append("pdl wait->launch" + ("" if w == l else " (two tasks)"))
        else:
            d.head[l].insert(0, Block((Op(launch, "launch"),)))
            d.features.append("pdl launch first")

    intent = "none"
    if rng.random() < 0.5:
        intent = rng.choice(MUTATIONS[1:])
        intent = _mutate(d, rng, intent, n, persistent and skip_if)

    # each task's loop body: its channel segments in a random order
    tasks = []
    if persistent:
        d.add(QUEUE)
    for i in range(n):
        segments = list(d.body[i])
        rng.shuffle(segments)
        body = tuple(b for seg in segments for b in seg)
        if not body:
            body = (Block((Op(_flags(d, i), "flag"),)),)
        tasks.append(TaskSpec(f"T{i}", d.iterations[i], tuple(d.head[i]), body, tuple(d.tail[i]),
                              skippable_head=skip_if and rng.random() < 0.5))
    return TaskSetSpec(seed, tuple(d.resources), tuple(tasks), persistent, skip_if, intent,
                       tuple(dict.fromkeys(d.features)))


def _mutate(d: _Draft, rng: random.Random, intent: str, n: int, skippable: bool) -> str:
    """Apply one mutation; returns what was applied ("none" when it did not fit)."""
    consumer_segments = [(t, j) for t in range(n) for j, seg in enumerate(d.body[t])
                         if any(op.method == "release" for b in seg for op in b.ops)]
    if intent == "missing_release" and consumer_segments:
        t, j = rng.choice(consumer_segments)
        d.body[t][j] = tuple(Block(tuple(o for o in b.ops if o.method != "release"), b.guard) for b in d.body[t][j])
        return intent
    if intent == "extra_wait" and consumer_segments:
        t, j = rng.choice(consumer_segments)
        seg = d.body[t][j]
        d.body[t][j] = seg + tuple(replace(b, ops=tuple(o for o in b.ops if o.method != "flag"))
                                   for b in seg if any(o.method == "wait" for o in b.ops))
        return intent
    if intent == "cross_wait":
        a, b = rng.sample(range(n), 2)
        x, y = d.add(ASYNC, _few(d, rng)), d.add(ASYNC, _few(d, rng))
        d.body[a].append((Block(_consume(y, rng) + _produce(x, rng)),))
        d.body[b].append((Block(_consume(x, rng) + _produce(y, rng)),))
        return intent
    if intent == "consumer_longer" and consumer_segments:
        t, _ = rng.choice(consumer_segments)
        d.iterations[t] += 1
        return intent
    if intent == "one_sided_guard":
        guarded = [(t, j) for t in range(n) for j, seg in enumerate(d.body[t]) if len(seg) == 1 and not seg[0].guard]
        if guarded:
            t, j = rng.choice(guarded)
            d.body[t][j] = (replace(d.body[t][j][0], guard=_guard(rng, d.iterations[t])),)
            return intent
    if intent == "skipped_commit" and skippable:
        p, c = rng.sample(range(n), 2)
        name = d.add(ASYNC, 1)
        d.head[p].append(Block(_produce(name, rng)))
        d.tail[c].append(Block(_consume(name, rng)))
        return intent
    return "none"


def generate_many(count: int, first_seed: int = 0, **limits: Any) -> Iterator[TaskSetSpec]:
    """``count`` specs from consecutive seeds (``limits`` as in :func:`generate`)."""
    for seed in range(first_seed, first_seed + count):
        yield generate(seed, **limits)


__all__ = ["MUTATIONS", "Block", "Op", "ResourceSpec", "TaskSetSpec", "TaskSpec", "generate", "generate_many"]
