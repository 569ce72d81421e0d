"""The data of a generated persistent task set (:class:`TileSetSpec`) and how it becomes TS objects.

:mod:`tile_sets` draws the specs; this module holds what a spec is (buffers,
each task's uses per section), the facts a brute force needs (ring periods,
the lead one task can take over another, the tile count to unroll to) and
:meth:`TileSetSpec.build`, which records the ``@schedule`` trees inside a
``work_tile_loop`` over a static WorkQueue and makes fresh ``Task``\\ s.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

from cutlass.experimental.task_scheduling.enums import PipelineGroupMode
from cutlass.experimental.task_scheduling.resources import PipelineGroup
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.gallery import resources as G
from ts_explore.gallery.gemm_family import GemmBuffer
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue

RING, PIPE, PLAIN, GROUP = "ring", "pipe", "plain", "group"
HEAD, LOOP, TAIL = "head", "loop", "tail"
MIN_TILES = 8

_PRODUCE = ("acquire", "write", "commit")
_CONSUME = ("wait", "read", "release")


@dataclass(frozen=True)
class Buffer:
    """One resource: a ring (aliasable, pipelined), a token pipe, a plain tile, or a Merge group of two rings."""

    name: str
    kind: str
    stages: int = 1
    offset: int = 0  # rings and plain tiles: byte offset of the 1024-byte tile
    members: tuple[str, ...] = ()  # a group's member rings


@dataclass(frozen=True)
class Use:
    """``count`` producer or consumer rounds of one buffer in one section of a task."""

    buffer: str
    side: str  # "produce" | "consume" | "own" (one task produces and consumes: each round both)
    section: str  # HEAD | LOOP | TAIL
    count: int  # rounds per domain iteration (LOOP) or per tile (HEAD/TAIL)


@dataclass(frozen=True)
class TaskPlan:
    """One task: its domain iterations per tile and its uses, in program order within each section."""

    name: str
    iterations: int
    uses: tuple[Use, ...]
    skippable_head: bool = False  # with skip_if: HEAD sits inside skippable() too

    def section(self, name: str) -> tuple[Use, ...]:
        """The uses of one section, in order."""
        return tuple(u for u in self.uses if u.section == name)


@dataclass(frozen=True)
class TileSetSpec:
    """A generated persistent task set: plain data; :meth:`build` makes fresh TS objects."""

    seed: int
    buffers: tuple[Buffer, ...]
    tasks: tuple[TaskPlan, ...]
    skip_if: bool = False
    features: tuple[str, ...] = field(default=())

    # -- facts the brute force needs ------------------------------------------------
    def buffer(self, name: str) -> Buffer:
        """The buffer called ``name``."""
        return next(b for b in self.buffers if b.name == name)

    def uses_per_tile(self, name: str, side: str) -> int:
        """How many producer (or consumer) rounds of ``name`` one tile runs, over every task."""
        total = 0
        for t in self.tasks:
            for u in t.uses:
                if u.buffer == name and u.side in (side, "own"):
                    total += u.count * (t.iterations if u.section == LOOP else 1)
        return total

    def period(self, name: str) -> int:
        """Tiles until ring ``name`` is back at slot 0 at a tile's start: ``S / gcd(S, uses per tile)``."""
        b = self.buffer(name)
        uses = self.uses_per_tile(name, "produce") or self.uses_per_tile(name, "consume")
        return b.stages // math.gcd(b.stages, uses) if uses else 1

    def longest_period(self) -> int:
        """The longest period of any pipelined buffer (group members included)."""
        return max((self.period(b.name) for b in self.buffers if b.kind in (RING, PIPE)), default=1)

    def lead(self) -> int:
        """A bound on how many tiles one task can run ahead of another it shares a pipeline with.

        Along one pipeline of ``S`` stages used ``u`` times per tile a producer
        leads its consumer by at most ``ceil(S / u) + 1`` tiles and trails it by
        at most one; the bound is the longest chain of such steps between two
        tasks (tasks with no pipeline between them are independent and need none).
        """
        names = [t.name for t in self.tasks]
        step: dict[tuple[str, str], int] = {}
        for b in self.buffers:
            if b.kind not in (RING, PIPE):
                continue
            uses = max(1, self.uses_per_tile(b.name, "produce"))
            producers = {t.name for t in self.tasks for u in t.uses if u.buffer == b.name and u.side == "produce"}
            consumers = {t.name for t in self.tasks for u in t.uses
                         if u.side == "consume" and u.buffer in (b.name, *self._groups_of(b.name))}
            for p in producers:
                for c in consumers:
                    if p != c:
                        ahead = math.ceil(b.stages / uses) + 1
                        step[(p, c)] = max(step.get((p, c), 0), ahead)
                        step[(c, p)] = max(step.get((c, p), 0), 1)
        best = 0
        for a in names:  # longest simple chain (at most 4 tasks: brute force is fine)
            best = max(best, _longest(a, step, names, frozenset({a})))
        return best

    def _groups_of(self, member: str) -> tuple[str, ...]:
        return tuple(b.name for b in self.buffers if b.kind == GROUP and member in b.members)

    def tiles_needed(self) -> int:
        """The tile count a brute force unrolls to: ``max(8, 2 * longest period + largest lead)``."""
        return max(MIN_TILES, 2 * self.longest_period() + self.lead())

    # -- words and objects ------------------------------------------------------------
    def describe(self) -> str:
        """The set in words: buffers, then one task per line with its sections."""
        lines = [f"tile set {self.seed}: {', '.join(self.features) or '-'}; skip_if={self.skip_if}"]
        for b in self.buffers:
            where = f" @{b.offset}" if b.kind in (RING, PLAIN) else ""
            extra = f" of {'+'.join(b.members)}" if b.members else ""
            period = f", period {self.period(b.name)}" if b.kind in (RING, PIPE) else ""
            lines.append(f"  {b.name}: {b.kind} x{b.stages}{where}{extra}{period}")
        for t in self.tasks:
            parts = []
            for sec in (HEAD, LOOP, TAIL):
                ops = " ".join(f"{u.buffer}.{u.side}x{u.count}" for u in t.section(sec))
                parts.append(f"{sec} {ops or '-'}")
            head = " (head skippable)" if t.skippable_head else ""
            lines.append(f"  {t.name} ({t.iterations} it{head}): " + " ; ".join(parts))
        lines.append(f"  tiles needed: {self.tiles_needed()} (period {self.longest_period()}, lead {self.lead()})")
        return "\n".join(lines)

    def build(self) -> dict[str, Any]:
        """Fresh ``dict(tasks=..., resource_dependency_graph=...)`` (TS mutates what it verifies)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _build(self)


def _longest(at: str, step: dict[tuple[str, str], int], names: list[str], seen: frozenset[str]) -> int:
    best = 0
    for b in names:
        if b not in seen and (at, b) in step:
            best = max(best, step[(at, b)] + _longest(b, step, names, seen | {b}))
    return best


# -- building TS objects -------------------------------------------------------------------


def _objects(spec: TileSetSpec) -> dict[str, Any]:
    objs: dict[str, Any] = {}
    for b in spec.buffers:
        if b.kind == RING:
            objs[b.name] = G.AliasedTile(name=b.name, pipeline_config=R.async_pipeline(b.stages, 32, 32),
                                         smem_offset=b.offset)
        elif b.kind == PIPE:
            objs[b.name] = GemmBuffer(name=b.name, pipeline_config=R.async_pipeline(b.stages, 32, 32))
        elif b.kind == PLAIN:
            objs[b.name] = G.AliasedTile(name=b.name, pipeline_config=None, smem_offset=b.offset)
    for b in spec.buffers:
        if b.kind == GROUP:
            objs[b.name] = PipelineGroup(name=b.name, members=[objs[m] for m in b.members],
                                         mode=PipelineGroupMode.Merge)
    objs["wq"] = R.static_queue(name="wq", cls=OversubscribedQueue)
    return objs


def _calls(use: Use, kind: str) -> tuple[str, ...]:
    if kind == PLAIN:
        return ("write",) if use.side == "produce" else ("read",)
    return {"produce": _PRODUCE, "consume": _CONSUME, "own": _PRODUCE + _CONSUME}[use.side]


def _run(uses: tuple[Use, ...], proxy: dict[str, Any], spec: TileSetSpec) -> None:
    for use in uses:
        kind = spec.buffer(use.buffer).kind
        for _ in range(use.count):
            if kind == GROUP:  # wait and read each member, release the group once
                members = spec.buffer(use.buffer).members
                for m in members:
                    proxy[m].wait()
                for m in members:
                    proxy[m].read_tile()
                proxy[use.buffer].release()
                continue
            for call in _calls(use, kind):
                method = {"write": "write_tile" if kind != PIPE else "fill",
                          "read": "read_tile" if kind != PIPE else "drain"}.get(call, call)
                getattr(proxy[use.buffer], method)()


def _task_resources(plan: TaskPlan, spec: TileSetSpec) -> tuple[list[str], list[str], list[str]]:
    """(schedule arguments, src, dst) resource names of a task."""
    src: list[str] = []
    dst: list[str] = []
    args: list[str] = []
    for use in plan.uses:
        b = spec.buffer(use.buffer)
        names = list(b.members) if b.kind == GROUP else [b.name]
        sides = {"produce": [dst], "consume": [src], "own": [src, dst]}[use.side]
        for n in names:
            for side in sides:
                if n not in side:
                    side.append(n)
            if n not in args:
                args.append(n)
        if b.kind == GROUP and b.name not in args:
            args.append(b.name)
    return args, src + ["wq"], dst


def _build(spec: TileSetSpec) -> dict[str, Any]:
    objs = _objects(spec)
    member_of = {m: b.name for b in spec.buffers if b.kind == GROUP for m in b.members}
    tasks = []
    feeds: dict[str, list[str]] = {}
    used: list[str] = []
    for i, plan in enumerate(spec.tasks):
        args, src, dst = _task_resources(plan, spec)

        def body(*resources: Any, plan: TaskPlan = plan, args: list[str] = args) -> None:
            proxy = dict(zip(args, resources))
            wq = resources[-1]
            skip = OversubscribedQueue.skip_work_tile_if if spec.skip_if else None
            with work_tile_loop(wq, skip_if=skip) as wtl:
                skippable = wtl.skippable if spec.skip_if else contextlib.nullcontext
                with skippable() if plan.skippable_head else contextlib.nullcontext():
                    _run(plan.section(HEAD), proxy, spec)
                    with contextlib.nullcontext() if plan.skippable_head else skippable():
                        with domain_loop(0, plan.iterations, 1):
                            _run(plan.section(LOOP), proxy, spec)
                _run(plan.section(TAIL), proxy, spec)
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

        body.__name__ = body.__qualname__ = f"{plan.name.lower()}_schedule"
        # a group's members are handed to a schedule as ``group.member`` (TS refuses the bare member)
        given = [getattr(objs[member_of[n]], n) if n in member_of else objs[n] for n in args]
        tree = schedule(body)(*given, objs["wq"])
        tasks.append(Task([objs[n] for n in src], [objs[n] for n in dst], i, 1, schedule=tree, name=plan.name))
        used += [n for n in (*src, *dst) if n not in used]
        for d in dst:
            feeds.setdefault(d, [])
            feeds[d] += [s for s in src if s != d and s not in feeds[d]]
    graph = {objs[n]: [objs[s] for s in feeds.get(n, [])] for n in used}
    return {"tasks": tasks, "resource_dependency_graph": graph}


__all__ = ["GROUP", "HEAD", "LOOP", "MIN_TILES", "PIPE", "PLAIN", "RING", "TAIL", "Buffer", "TaskPlan", "TileSetSpec",
           "Use"]
