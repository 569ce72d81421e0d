"""Seeded corner task sets over PipelineGroups and domain-interleaved pipes, built with real TS objects.

:mod:`corner_sets` hands some of its seeds here. Each set is one of

* **merge**: two producer tasks fill ``g.m0`` / ``g.m1`` of a Merge group,
  one consumer waits each member and releases the group once;
* **fused-merge**: the same producers, the consumer waits and releases
  the FusedMerge group once (one shared full barrier);
* **fork**: one producer acquires both members and commits the Fork group
  once, two consumer tasks each wait and release their own member;
* **interleaved**: two producer tasks own the even and the odd domain
  lanes of a pipe whose producer stride is 2 (``domain_loop(lane, n, 2)``),
  one consumer reads every iteration;

and, drawn on top: a plain tile aliasing a member (fully or partly),
written behind the consumers' signal (**signal before release**) or
unordered; the consumers **gated** by a channel committed in another
task's HEAD or by an **opaque condition**. Members are 1024-byte tiles at
``4096 + offset`` so they overlap each other only when drawn so.

Usage::

    from group_sets import group_set
    spec = group_set(7)       # .build()["tasks"], .describe(), .features, like a TaskSetSpec
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import warnings
from dataclasses import dataclass
from typing import Any

from cutlass.experimental.task_scheduling import when_true
from cutlass.experimental.task_scheduling.enums import PipelineGroupMode
from cutlass.experimental.task_scheduling.resources import PipelineGroup
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.gallery import resources as G
from ts_explore.gallery.gemm_family import GemmBuffer
from ts_explore.seed_examples import resources as R

SHAPES = ("merge", "fused-merge", "fork", "interleaved")
BASE = 4096  # members live apart from the other corner tiles


@dataclass(frozen=True)
class GroupSetSpec:
    """A drawn group/interleave set: plain data; :meth:`build` makes fresh TS objects."""

    seed: int
    shape: str
    stages: int
    iterations: int
    offsets: tuple[int, int]  # the two members' (or the interleaved pipe's and its twin's) byte offsets
    alias: int | None  # the aliasing plain tile's offset, or None
    signal: bool  # consumers commit a signal between read and release; the aliasing write waits it
    gate: str  # "", "channel" or "opaque"
    features: tuple[str, ...]

    def describe(self) -> str:
        """The set in words."""
        return (f"group set {self.seed}: {self.shape}, {self.stages} stage(s), {self.iterations} iteration(s), "
                f"members @{self.offsets}, alias @{self.alias}, signal={self.signal}, gate={self.gate or '-'}")

    def build(self) -> dict[str, Any]:
        """Fresh ``dict(tasks=...)``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {"tasks": _build(self)}


def group_set(seed: int) -> GroupSetSpec:
    """The group/interleave set of ``seed`` (deterministic)."""
    rng = random.Random(seed)
    shape = rng.choice(SHAPES)
    stages = 2 if shape == "interleaved" else rng.randint(1, 2)
    iterations = rng.choice((2, 4)) if shape == "interleaved" else rng.randint(1, 2)
    offsets = (BASE + rng.choice((0, 0, 512)), BASE + 1024 * rng.choice((1, 1, 0)) + rng.choice((0, 256)))
    alias = BASE + rng.choice((0, 256, 768, 1024)) if rng.random() < 0.7 else None
    signal = rng.random() < 0.6
    gate = rng.choice(("", "", "channel", "opaque"))
    features = [shape]
    if offsets[0] < offsets[1] + 1024 and offsets[1] < offsets[0] + 1024 and shape != "interleaved":
        features.append("aliasing members")
    if alias is not None:
        features.append("aliasing plain tile")
    if signal:
        features.append("signal before release")
    if gate:
        features.append(f"gate ({gate})")
    return GroupSetSpec(seed, shape, stages, iterations, offsets, alias, signal, gate, tuple(features))


def _tile(name: str, stages: int, offset: int, stride: Any = 1) -> Any:
    cfg = R.async_pipeline(stages, 32, 32)
    if stride != 1:
        cfg = dataclasses.replace(cfg, interleave_stride=stride)
    return G.AliasedTile(name=name, pipeline_config=cfg, smem_offset=offset)


def _task(fn: Any, name: str, args: list[Any], src: list[Any], dst: list[Any], index: int) -> Task:
    fn.__name__ = fn.__qualname__ = f"{name.lower()}_schedule"
    return Task(src, dst, index, 1, schedule=schedule(fn)(*args), name=name)


def _build(spec: GroupSetSpec) -> list[Task]:
    mode = {"merge": PipelineGroupMode.Merge, "fused-merge": PipelineGroupMode.FusedMerge,
            "fork": PipelineGroupMode.Fork}.get(spec.shape)
    lanes = spec.shape == "interleaved"
    m0 = _tile("m0", spec.stages, spec.offsets[0], (2, 2, 1, 1) if lanes else 1)
    m1 = None if lanes else _tile("m1", spec.stages, spec.offsets[1])
    g = None if lanes else PipelineGroup(name="g", members=[m0, m1], mode=mode)
    sig = GemmBuffer(name="sig", pipeline_config=R.async_pipeline(1, 32, 32)) if spec.signal else None
    gate = GemmBuffer(name="gate", pipeline_config=R.async_pipeline(1, 32, 32)) if spec.gate == "channel" else None
    raw = G.AliasedTile(name="raw", pipeline_config=None, smem_offset=spec.alias) if spec.alias is not None else None
    flags = [R.EpilogueSmem(name=f"flags{i}") for i in range(2)] if spec.gate == "opaque" else []
    n = spec.iterations

    def ref(member: Any) -> Any:
        return getattr(g, member.name) if g is not None else member

    def consumer_work(read: list[Any], release: Any, flag: Any, c_sig: Any, c_gate: Any) -> None:
        """Waits, reads, maybe signals, releases; under the opaque gate when drawn."""
        if c_gate is not None:
            c_gate.wait()
        with domain_loop(0, n, 1):
            token = flag.needs_epilogue() if flag is not None else None
            with when_true(token, key="k0") if flag is not None else contextlib.nullcontext():
                for w in read[0]:
                    w.wait()
                for r in read[1]:
                    r.read_tile()
                if c_sig is not None:
                    c_sig.acquire()
                    c_sig.fill()
                    c_sig.commit()
                for rel in release:
                    rel.release()
        if c_gate is not None:
            c_gate.release()

    tasks: list[Task] = []
    # producers
    if spec.shape in ("merge", "fused-merge"):
        for i, m in enumerate((m0, m1)):
            def prod(mp: Any) -> None:
                with domain_loop(0, n, 1):
                    mp.acquire()
                    mp.write_tile()
                    mp.commit()
            tasks.append(_task(prod, f"P{i}", [ref(m)], [], [m], len(tasks)))
    elif spec.shape == "fork":
        def fork_prod(a: Any, b: Any, gp: Any) -> None:
            with domain_loop(0, n, 1):
                a.acquire()
                b.acquire()
                a.write_tile()
                b.write_tile()
                gp.commit()
        tasks.append(_task(fork_prod, "P", [ref(m0), ref(m1), g], [], [m0, m1], len(tasks)))
    else:
        for lane in (0, 1):
            def lane_prod(mp: Any, lane: int = lane) -> None:
                with domain_loop(lane, n, 2):
                    mp.acquire()
                    mp.write_tile()
                    mp.commit()
            tasks.append(_task(lane_prod, f"P{lane}", [m0], [], [m0], len(tasks)))

    # consumers: one (merge, fused-merge, interleaved) or two (fork)
    groups = ([m0], [m1]) if spec.shape == "fork" else ([m0] if lanes else [m0, m1],)
    for ci, members in enumerate(groups):
        args: list[Any] = [*(ref(m) for m in members)]
        extra: list[Any] = []
        if spec.shape in ("merge", "fused-merge"):
            extra.append(g)
        for r in (sig, gate, flags[ci] if flags else None):
            if r is not None:
                extra.append(r)
        k = len(members)

        def cons(*proxies: Any, k: int = k) -> None:
            mp, rest = list(proxies[:k]), list(proxies[k:])
            gp = rest.pop(0) if spec.shape in ("merge", "fused-merge") else None
            c_sig = rest.pop(0) if sig is not None else None
            c_gate = rest.pop(0) if gate is not None else None
            flag = rest.pop(0) if flags else None
            waits = [gp] if spec.shape == "fused-merge" else mp
            release = [gp] if gp is not None else mp
            consumer_work([waits, mp], release, flag, c_sig, c_gate)

        dst = [r for r in (sig, flags[ci] if flags else None) if r is not None]
        src = [*members, *([gate] if gate is not None else [])]
        tasks.append(_task(cons, f"C{ci}", args + extra, src, dst, len(tasks)))

    # the aliasing writer: behind every consumer's signal, or unordered
    if raw is not None or gate is not None or sig is not None:
        def writer(*proxies: Any) -> None:
            it = iter(proxies)
            w_gate = next(it) if gate is not None else None
            w_sig = next(it) if sig is not None else None
            w_raw = next(it) if raw is not None else None
            if w_gate is not None:
                w_gate.acquire()
                w_gate.fill()
                w_gate.commit()
            with domain_loop(0, n, 1):
                if w_sig is not None:  # one wait takes the round of commits of every consumer
                    w_sig.wait()
                if w_raw is not None:
                    w_raw.write_tile()
                if w_sig is not None:
                    w_sig.release()
        args = [r for r in (gate, sig, raw) if r is not None]
        tasks.append(_task(writer, "W", args, [sig] if sig is not None else [],
                           [r for r in (gate, raw) if r is not None], len(tasks)))
    return tasks


__all__ = ["SHAPES", "GroupSetSpec", "group_set"]
