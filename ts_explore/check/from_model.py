"""Build the checker's input from our schedule model, without TS: how the repair search checks an edited schedule.

A :class:`RunFacts` holds what one checker run of an instance needs beyond
the schedules: TS's own :class:`~ts_explore.check.problem.SearchProblem` of
the unedited instance (credit counters, alias tables, flags), the run's
options (tiles, skipped tile, the ``when_true`` assignment by condition key),
each task's unrolled trip count, and *templates*: the lane entries one
recorded step becomes, per ``(resource, stage)``, learned by aligning the
model's own expansion of each task with TS's lane (so the expansion is
checked against TS on every instance it is used for).
:func:`problem_from_model` then re-expands only the tasks an edit changed
and keeps TS's lanes for the others.

Some entries depend on where they sit (pipeline slots and commit
generations of aliased buffers, physical stages of domain-interleaved
resources): their templates differ between occurrences, and an edited task
using one raises :class:`NotSupported` naming the construct, as do opaque
conditions on plain Python values, changed runtime loop bounds and stages
added to a domain-interleaved resource. The caller then builds the problem
through TS instead.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..model import Block, BlockKind, DomainLoop, Node, ScheduleTree, Stage, Step, TaskSet
from ..model.schedule import children
from .problem import SearchProblem
from .problem import Step as LaneStep


class NotSupported(ValueError):
    """The model path cannot build this problem yet; the message names the construct."""


@dataclass(frozen=True)
class RunFacts:
    """One checker run of an instance, as far as the model does not say it (see the module docstring)."""

    base: SearchProblem
    trees: tuple[ScheduleTree, ...]  # the schedules ``base`` was built from
    trips: tuple[int, ...]  # loop iterations TS unrolls per task
    skip_if: tuple[bool, ...]  # per task: has a skip_if predicate
    non_pipelined: frozenset[str]  # resources without a pipeline config (their work is split or doubled)
    barriers: frozenset[str]
    stages: tuple[tuple[str, int | None], ...]  # pipeline stages per resource name
    num_tiles: int = 1
    skipped_tile: bool = False
    opaque: tuple[tuple[str, bool], ...] = ()  # condition key text -> value in this run
    templates: tuple[tuple[tuple[str, str], tuple[LaneStep, ...]], ...] = ()
    varying: frozenset[tuple[str, str]] = frozenset()  # (resource, stage) whose entries depend on their place


def _fires(block: Block | None, i: int, n: int, opaque: dict[str, bool]) -> bool:
    if block is None:
        return True
    if block.kind is BlockKind.FIRST_ITER:
        return i == 0
    if block.kind is BlockKind.LAST_ITER:
        return n > 0 and i == n - 1
    if block.kind is BlockKind.EVERY:
        start, period = block.start or 0, block.period or 1
        return i >= start and (i - start) % period == 0
    assert block.condition is not None
    if block.condition.key.startswith("python value #"):
        raise NotSupported("a when_true/when_false condition on a plain Python value")
    return opaque.get(block.condition.key, False) != (block.kind is BlockKind.WHEN_FALSE)


def _sections(tree: ScheduleTree) -> tuple[list[tuple[Step, bool]], list[tuple[Step, Block | None]], list[tuple[Step, bool]]]:
    """HEAD steps (with: inside skippable), LOOP steps (with their guard block), TAIL steps, in TS's list order."""
    head: list[tuple[Step, bool]] = []
    loop: list[tuple[Step, Block | None]] = []
    tail: list[tuple[Step, bool]] = []

    seen_loop = False

    def walk(nodes: tuple[Node, ...], skippable: bool, guard: Block | None, in_loop: bool) -> None:
        nonlocal seen_loop
        for node in nodes:  # the section is where the step sits, as TS lowers it
            if isinstance(node, Step):
                if in_loop:
                    loop.append((node, guard))
                else:
                    (tail if seen_loop else head).append((node, skippable))
            elif isinstance(node, DomainLoop):
                seen_loop = True
                walk(node.body, skippable, guard, True)
            elif isinstance(node, Block) and node.kind is BlockKind.SKIPPABLE:
                walk(node.body, True, guard, in_loop)
            elif isinstance(node, Block):
                walk(node.body, skippable, node, in_loop)
            else:
                walk(children(node), skippable, guard, in_loop)

    walk(tree.body, False, None, False)
    return head, loop, tail


def expand(tree: ScheduleTree, trips: int, facts: RunFacts, has_skip_if: bool) -> list[Step]:
    """The recorded steps one tile of a task runs in this run, in order (TS's ``_expand_task_for_check``)."""
    head, loop, tail = _sections(tree)
    if facts.skipped_tile and has_skip_if:
        return [s for s, skip in head if not skip] + [s for s, skip in tail if not skip]
    opaque = dict(facts.opaque)
    body = [s for i in range(trips) for s, guard in loop if _fires(guard, i, trips, opaque)]
    return [s for s, _ in head] + body + [s for s, _ in tail]


def _entries(step: Step, facts: RunFacts) -> int:
    """Lane entries of one step: non-pipelined work is split (consumer) or doubled (producer)."""
    work = step.stage in (Stage.CONSUMER_WORK, Stage.PRODUCER_WORK)
    return 2 if work and step.resource in facts.non_pipelined and step.resource not in facts.barriers else 1


def _trips(tree: ScheduleTree, old: ScheduleTree, trips: int) -> int:
    new_loop, old_loop = tree.domain_loop(), old.domain_loop()
    if new_loop is None or old_loop is None:
        raise NotSupported("a schedule without a domain loop")
    if (new_loop.start, new_loop.end, new_loop.step) == (old_loop.start, old_loop.end, old_loop.step):
        return trips
    count = new_loop.trip_count()
    if count is None:
        raise NotSupported("changed loop bounds that are not trace-time ints")
    return count


def learn(facts: RunFacts) -> RunFacts:
    """``facts`` with its templates, learned by aligning each task's expansion with TS's lane.

    Raises :class:`NotSupported` when an expansion does not line up with TS's
    lane (a construct this module does not expand the way TS does).
    """
    templates: dict[tuple[str, str], tuple[LaneStep, ...]] = {}
    varying: set[tuple[str, str]] = set()
    for t, tree in enumerate(facts.trees):
        steps = expand(tree, facts.trips[t], facts, facts.skip_if[t]) * facts.num_tiles
        lane = facts.base.lanes[t]
        pos = 0
        for step in steps:
            k = _entries(step, facts)
            chunk = lane[pos:pos + k]
            if len(chunk) != k or any(e.stage != step.stage.value for e in chunk):
                raise NotSupported(f"task {tree.name!r}: the model's expansion differs from TS's lane at entry {pos}")
            key = (step.resource, step.stage.value)
            if key in templates and templates[key] != chunk:
                varying.add(key)
            templates.setdefault(key, chunk)
            pos += k
        if pos != len(lane):
            raise NotSupported(f"task {tree.name!r}: TS's lane has {len(lane)} entries, the model's expansion {pos}")
    return dataclasses.replace(facts, templates=tuple(templates.items()), varying=frozenset(varying))


def problem_from_model(task_set: TaskSet, facts: RunFacts, *, rebuild_all: bool = False) -> SearchProblem:
    """The :class:`SearchProblem` of ``task_set`` (an edit of the instance ``facts`` describe) for this run.

    ``rebuild_all`` re-expands every task, not only those the edit changed
    (the parity tests use it).
    """
    if len(task_set.tasks) != len(facts.trees):
        raise NotSupported("a different number of tasks")
    templates = dict(facts.templates)
    lanes = list(facts.base.lanes)
    for t, (info, old) in enumerate(zip(task_set.tasks, facts.trees)):
        if info.schedule == old and not rebuild_all:
            continue
        trips = _trips(info.schedule, old, facts.trips[t])
        lane: list[LaneStep] = []
        for step in expand(info.schedule, trips, facts, facts.skip_if[t]) * facts.num_tiles:
            key = (step.resource, step.stage.value)
            if key in facts.varying:
                raise NotSupported(f"{step.resource}.{step.method}() in an edited task: its checker entry depends on "
                                   "its place (aliased buffer or domain-interleaved pipeline)")
            if key not in templates:
                raise NotSupported(f"{step.resource}.{step.method}(): no task of the instance has this step")
            lane.extend(templates[key])
        if {e.resource for e in lane} != {e.resource for e in facts.base.lanes[t]}:
            raise NotSupported(f"task {info.name!r}: a resource enters or leaves this run of the task "
                               "(TS's credit counters would change)")
        lanes[t] = tuple(lane)
    counters = list(facts.base.counters)
    old_stages = dict(facts.stages)
    for res in task_set.resources:
        if old_stages.get(res.name) == res.stages:
            continue
        idx = [i for i, name in enumerate(facts.base.resources) if name == res.name]
        if len(idx) != 1 or idx[0] in facts.base.domain_interleaved:
            raise NotSupported(f"more stages for {res.name} (not a plain pipeline of its own name)")
        delta = (res.stages or 0) - (old_stages.get(res.name) or 0)
        counters = [dataclasses.replace(c, initial=c.initial + delta) if c.resource == idx[0] and c.kind == "empty"
                    else c for c in counters]
    lanes, tallies = _renumber_tallies(lanes)
    return dataclasses.replace(facts.base, lanes=tuple(lanes), counters=tuple(counters), tallies=tallies)


def _renumber_tallies(lanes: list[tuple[LaneStep, ...]]) -> tuple[list[tuple[LaneStep, ...]], int]:
    """Tally indices in order of first use over the lanes, as TS's setup numbers them."""
    index: dict[int, int] = {}
    out = []
    for lane in lanes:
        new_lane = []
        for step in lane:
            if any(e.tally >= 0 for e in step.effects):
                effects = tuple(dataclasses.replace(e, tally=index.setdefault(e.tally, len(index))) if e.tally >= 0
                                else e for e in step.effects)
                step = dataclasses.replace(step, effects=effects)
            new_lane.append(step)
        out.append(tuple(new_lane))
    return out, len(index)


__all__ = ["NotSupported", "RunFacts", "expand", "learn", "problem_from_model"]
