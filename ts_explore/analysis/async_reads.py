"""The analysis behind the async-read rule: stages released while an asynchronous read still runs.

TS treats a consumer's read of a stage as finished when the work step that
issued it returns. WGMMA does not work that way: the step only *issues* the
tensor-core reads of shared memory; they complete at a later
``wgmma.wait_group``. If the schedule releases the stage before that, the
producer may refill it under the running WGMMA and TS still says SAFE.

:func:`check_async_reads` replays a task's recorded schedule (our model, no TS
objects) for a few work tiles and k-iterations, tracks which stage each issue
step read and how many read groups may still be in flight, and reports every
release of a stage whose reads may not have completed. The verification
rule that runs it is :class:`ts_explore.verification.rules.async_reads.AsyncReadRule`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterator

from ..model import Block, BlockKind, DomainLoop, Node, Stage, Step, TaskInfo, TaskSet, WorkTileLoop

SCOPE_NOTE = (
    "TS does not model WGMMA's asynchronous shared-memory reads: it counts a stage as read when the step "
    "that issued the WGMMA returns, so releasing a stage before its WGMMA has completed still verifies as "
    "safe; ts-explore's async-read rule checks those releases against the WGMMA waits separately."
)


@dataclass(frozen=True)
class AsyncReads:
    """Which steps read a pipelined resource asynchronously, and how their completion is awaited.

    ``issue`` labels the consumer work that starts reads of the stage the task
    waited for last (one read group per call); when it returns, at most
    ``in_flight`` of the newest groups may still be running. Steps labelled in
    ``drains`` wait for every group, those in ``drains_but_newest`` for every
    group but the newest one (``wgmma.wait_group(1)``). ``other_groups`` names
    the ``(resource, label)`` steps that commit asynchronous groups of their own
    into the same queue (WGMMAs on another ring): groups complete in the order
    they were committed, so such a wait completes this resource's reads only
    where a newer group of the other kind was issued after them.
    """

    resource: str
    issue: str
    in_flight: int
    drains: tuple[str, ...] = ()
    drains_but_newest: tuple[str, ...] = ()
    other_groups: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class EarlyRelease:
    """A release that frees a stage some asynchronous read may still be reading."""

    task: str
    step: int  # uid of the release step in the task's schedule
    tile: int  # work tile (0-based) of the replay
    iteration: int | None  # k-iteration of the release; None outside the domain loop
    read_tile: int
    read_iteration: int | None  # where the read of the released stage was issued
    message: str


@dataclass(frozen=True)
class AsyncReadReport:
    """The rule's answer: every early release found in the replayed instance."""

    spec: AsyncReads
    findings: tuple[EarlyRelease, ...]
    tiles: int
    iterations: dict[str, int] = field(default_factory=dict)  # task -> k-iterations replayed

    @property
    def safe(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        where = ", ".join(f"{t}: {n} k-iterations" for t, n in self.iterations.items()) or "no reading task"
        if self.safe:
            return (f"async reads of {self.spec.resource}: every release waits for its reads "
                    f"({self.tiles} tile(s); {where})")
        first = self.findings[0]
        return f"async reads of {self.spec.resource}: {len(self.findings)} early release(s); first: {first.message}"


@dataclass(frozen=True)
class _At:
    step: Step
    tile: int
    iteration: int | None


def check_async_reads(task_set: TaskSet, spec: AsyncReads, *, tiles: int = 2,
                      iterations: int = 4) -> AsyncReadReport:
    """Replay each task that issues ``spec.issue`` on ``spec.resource`` and report early releases.

    Persistent schedules are replayed for ``tiles`` work tiles; a domain loop
    whose bounds are not trace-time ints runs ``iterations`` times. Opaque
    (``when_true``/``when_false``) and skippable blocks are replayed both ways.
    """
    findings: list[EarlyRelease] = []
    replayed: dict[str, int] = {}
    for task in task_set.tasks:
        steps = task.schedule.steps()
        if not any(s.resource == spec.resource and s.label == spec.issue for s in steps):
            continue
        loop = task.schedule.domain_loop()
        trips = (loop.trip_count() if loop is not None else None)
        trips = iterations if trips is None else trips
        replayed[task.name] = trips
        keys = sorted({_key(b) for b in task.schedule.blocks() if _key(b) is not None})
        seen: set[tuple[int, int, int | None]] = set()
        for values in itertools.product((True, False), repeat=len(keys)):
            choice = dict(zip(keys, values))
            for f in _replay(task, spec, _unroll(task.schedule.body, choice, tiles, trips, 0, None)):
                if (f.step, f.tile, f.iteration) not in seen:
                    seen.add((f.step, f.tile, f.iteration))
                    findings.append(f)
    return AsyncReadReport(spec, tuple(findings), tiles if _persistent(task_set) else 1, replayed)


def _persistent(task_set: TaskSet) -> bool:
    return any(t.schedule.work_tile_loop() is not None for t in task_set.tasks)


def _key(block: Block) -> str | None:
    if block.kind is BlockKind.SKIPPABLE:
        return "skippable"
    if block.kind in (BlockKind.WHEN_TRUE, BlockKind.WHEN_FALSE) and block.condition is not None:
        return block.condition.key
    return None


def _fires(block: Block, choice: dict[str, bool], i: int | None, trips: int) -> bool:
    kind = block.kind
    if kind is BlockKind.SKIPPABLE:
        return choice["skippable"]
    if kind in (BlockKind.WHEN_TRUE, BlockKind.WHEN_FALSE):
        value = choice[block.condition.key] if block.condition is not None else True
        return value if kind is BlockKind.WHEN_TRUE else not value
    if i is None:  # iteration guards only exist inside the domain loop
        return True
    if kind is BlockKind.FIRST_ITER:
        return i == 0
    if kind is BlockKind.LAST_ITER:
        return i == trips - 1
    start, period = block.start or 0, block.period or 1
    return i >= start and (i - start) % period == 0


def _unroll(nodes: tuple[Node, ...], choice: dict[str, bool], tiles: int, trips: int, tile: int,
            i: int | None) -> Iterator[_At]:
    for node in nodes:
        if isinstance(node, Step):
            yield _At(node, tile, i)
        elif isinstance(node, WorkTileLoop):
            for t in range(tiles):
                yield from _unroll(node.body, choice, tiles, trips, t, None)
        elif isinstance(node, DomainLoop):
            for k in range(trips):
                yield from _unroll(node.body, choice, tiles, trips, tile, k)
        elif _fires(node, choice, i, trips):
            yield from _unroll(node.body, choice, tiles, trips, tile, i)


def _replay(task: TaskInfo, spec: AsyncReads, run: Iterator[_At]) -> Iterator[EarlyRelease]:
    waits: list[_At] = []  # the n-th wait acquired stage slot n (releases free them in order)
    read_group: dict[int, int] = {}  # wait index -> read group that reads it
    groups = done = released = 0
    for at in run:
        s = at.step
        if s.resource != spec.resource:
            if (s.resource, s.label) in spec.other_groups:
                groups += 1  # another ring's group, committed after ours (a newer one)
            continue
        if s.stage is Stage.CONSUMER_WAIT:
            waits.append(at)
        elif s.label == spec.issue and waits:
            read_group[len(waits) - 1] = groups
            groups += 1
            done = max(done, groups - spec.in_flight)
        elif s.label in spec.drains:
            done = groups
        elif s.label in spec.drains_but_newest:
            done = max(done, groups - 1)
        elif s.stage is Stage.CONSUMER_RELEASE:
            slot, released = released, released + 1
            group = read_group.get(slot)
            if group is not None and group >= done:
                read = waits[slot]
                yield EarlyRelease(task.name, s.uid, at.tile, at.iteration, read.tile, read.iteration, _message(
                    task.name, spec, at, read, groups - done))


def _where(tile: int, i: int | None) -> str:
    return f"tile {tile}" + ("" if i is None else f", k-iteration {i}")


def _message(task: str, spec: AsyncReads, at: _At, read: _At, outstanding: int) -> str:
    return (f"task {task!r} releases a stage of {spec.resource} at {_where(at.tile, at.iteration)} while "
            f"the {spec.issue} issued at {_where(read.tile, read.iteration)} may still be reading it "
            f"({outstanding} read group(s) outstanding after '{spec.issue}' waits down to {spec.in_flight}); "
            f"release it one k-iteration later, or wait for its reads "
            f"({', '.join(spec.drains + spec.drains_but_newest) or 'a drain'}) before releasing")


__all__ = ["SCOPE_NOTE", "AsyncReadReport", "AsyncReads", "EarlyRelease", "check_async_reads"]
