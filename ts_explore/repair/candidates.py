"""Which edits to try, guided by what went wrong: the stuck steps, the cycle, the racing accesses, the PDL pair.

:func:`guidance` reads a :class:`~ts_explore.model.verdict.Verdict` into
:class:`Suspects` (tasks, resources and steps the counterexample names);
:func:`candidates` lists the single edits worth trying on a model, most
likely first. Nothing here runs a check; the search screens and proves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from ..model import Block, BlockKind, DomainLoop, Family, Node, ScheduleTree, Stage, Step, TaskSet
from ..model.schedule import children
from ..model.verdict import Verdict
from .edits import Edit, InsertStep, MoveOutOfSkippable, MoveSteps, RemoveStep
from .structure_edits import AddStage, ChangeGuard, MatchLoopBounds, SwapPdl
from .tree_ops import enclosing, path_of

_OPEN = {Family.WAIT: Family.RELEASE, Family.ACQUIRE: Family.COMMIT}
_CLOSE = {v: k for k, v in _OPEN.items()}
_CLOSING_STAGE = {Family.WAIT: Stage.CONSUMER_RELEASE, Family.ACQUIRE: Stage.PRODUCER_COMMIT}
_OPENING_STAGE = {Family.RELEASE: Stage.CONSUMER_WAIT, Family.COMMIT: Stage.PRODUCER_ACQUIRE}


@dataclass(frozen=True)
class Suspects:
    """What a failure points at: resource names, task names and ``(task, uid)`` steps (most suspect first)."""

    resources: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    steps: tuple[tuple[str, int], ...] = ()
    pdl: bool = False
    kinds: tuple[str, ...] = field(default=())

    def merged(self, other: "Suspects") -> "Suspects":
        return Suspects(
            tuple(dict.fromkeys(self.resources + other.resources)), tuple(dict.fromkeys(self.tasks + other.tasks)),
            tuple(dict.fromkeys(self.steps + other.steps)), self.pdl or other.pdl,
            tuple(dict.fromkeys(self.kinds + other.kinds)),
        )


def guidance(verdict: Verdict, task_set: TaskSet) -> Suspects:
    """The tasks, resources and steps a verdict's findings and failed checks name."""
    resources: list[str] = []
    tasks: list[str] = []
    steps: list[tuple[str, int]] = []
    kinds: list[str] = []

    def stuck(found: Any) -> None:  # a blocked step of a deadlock or of the credit simulation
        tasks.append(found.task)
        resources.append(found.resource)
        if found.step_uid is not None:
            steps.append((found.task, found.step_uid))

    for d in verdict.deadlocks:
        kinds.append("deadlock")
        tasks.extend(d.cycle)
        for b in d.blocked:
            stuck(b)
    for b in verdict.simulation_blocked:
        kinds.append("stall")
        stuck(b)
    for r in verdict.races:
        kinds.append("race")
        tasks += [r.writer_task, r.victim_task]
        resources += [r.writer_resource, r.victim_resource]
    for p in verdict.pdl_violations:
        kinds.append("pdl")
        tasks.append(p.launch_task)
        resources.append(p.launch_resource)
    for im in verdict.imbalances:
        kinds.append("imbalance")
        resources.append(im.resource)
    names = [r.name for r in task_set.resources]
    for check in verdict.failed_checks:
        kinds.append("check")
        text = f"{check.message} {check.hint}"
        resources += [n for n in names if n in text]
        tasks += [t.name for t in task_set.tasks if t.name and t.name in text]
    pdl = "pdl" in kinds or any(r.is_barrier for r in task_set.resources if r.name in resources)
    return Suspects(tuple(dict.fromkeys(resources)), tuple(dict.fromkeys(tasks)), tuple(dict.fromkeys(steps)),
                    pdl, tuple(dict.fromkeys(kinds)))


# -- walking a tree -----------------------------------------------------------------------

def containers(nodes: tuple[Node, ...]) -> Iterator[tuple[Node, ...]]:
    """Every step list of a tree: the top level and each block's or loop's body."""
    yield nodes
    for node in nodes:
        if not isinstance(node, Step):
            yield from containers(children(node))


def transaction(container: tuple[Node, ...], index: int) -> tuple[int, ...] | None:
    """The uids of the open..close run (wait..release, acquire..commit) on a step's resource around ``index``."""
    step = container[index]
    if not isinstance(step, Step) or step.family in (Family.QUEUE, Family.BARRIER, Family.AUX):
        return None
    res = step.resource
    start = index
    while start >= 0:
        node = container[start]
        if not isinstance(node, Step):
            return None
        if node.resource == res and node.family in _OPEN:
            break
        start -= 1
    else:
        return None
    if start > 0 and isinstance(container[start - 1], Step) and container[start - 1].resource == res \
            and container[start - 1].stage.value.endswith(("TryWait", "TryAcquire")):
        start -= 1
    end = max(index, start)
    while end < len(container):
        node = container[end]
        if not isinstance(node, Step):
            return None
        if node.resource == res and node.family in _CLOSE and end >= index:
            break
        end += 1
    else:
        return None
    return tuple(n.uid for n in container[start:end + 1] if isinstance(n, Step))


def _moves(task: str, tree: ScheduleTree, uids: tuple[int, ...]) -> list[Edit]:
    """A slice moved next to every other step of its task, nearest places first, then out of its blocks."""
    order = [s.uid for s in tree.steps()]
    first = order.index(uids[0])
    places = []
    for pos, uid in enumerate(order):
        if uid in uids:
            continue
        places.append((abs(pos - first), uid))
    out: list[Edit] = []
    for _dist, uid in sorted(places):
        out.append(MoveSteps(task, uids, uid, True))
        out.append(MoveSteps(task, uids, uid, False))
    path = path_of(tree.body, uids[0])
    outer = enclosing(tree.body, path) if path else []
    for level, node in enumerate(reversed(outer), start=1):
        if not isinstance(node, (Block, DomainLoop)):
            break
        kind = MoveOutOfSkippable if isinstance(node, Block) and node.kind is BlockKind.SKIPPABLE else MoveSteps
        out.append(kind(task, uids, uids[0], True, level))
        out.append(kind(task, uids, uids[-1], False, level))
    return out


def _queue_moves(task: str, tree: ScheduleTree) -> list[Edit]:
    """Queue bookkeeping inside the domain loop or ``skippable()``: move the whole group out."""
    out: list[Edit] = []
    for container in containers(tree.body):
        run = [n.uid for n in container if isinstance(n, Step) and n.family is Family.QUEUE]
        if not run:
            continue
        path = path_of(tree.body, run[0])
        outer = enclosing(tree.body, path) if path else []
        if any(isinstance(n, DomainLoop) or (isinstance(n, Block) and n.kind is BlockKind.SKIPPABLE) for n in outer):
            out.extend(e for e in _moves(task, tree, tuple(run)) if getattr(e, "level", 0) > 0)
    return out


def _balance(task: str, tree: ScheduleTree, resources: tuple[str, ...], ts: TaskSet) -> list[Edit]:
    """Missing or extra pipeline ops: per step list, opens (wait/acquire) and closes (release/commit) that do not pair."""
    out: list[Edit] = []
    lists = [[n for n in c if isinstance(n, Step)] for c in containers(tree.body)]
    for steps in lists:
        for res in resources:
            mine = [s for s in steps if s.resource == res]
            for open_family, close_family in _OPEN.items():
                opens = [s for s in mine if s.family is open_family and not s.stage.value.endswith(("TryWait",
                                                                                                  "TryAcquire"))]
                closes = [s for s in mine if s.family is close_family]
                if len(opens) > len(closes):
                    last = [s.uid for s in steps[steps.index(opens[-1]):]]
                    for stray in _strays(lists, steps, res, close_family, open_family):  # a close placed elsewhere
                        out.extend(MoveSteps(task, (stray,), uid, True) for uid in reversed(last))
                    for uid in reversed(last):  # the end of the list first
                        out.append(InsertStep(task, res, _CLOSING_STAGE[open_family], uid, True))
                    out.extend(RemoveStep(task, s.uid) for s in reversed(opens))
                elif len(closes) > len(opens):
                    first = [s.uid for s in steps[: steps.index(closes[0]) + 1]]
                    for stray in _strays(lists, steps, res, open_family, close_family):
                        out.extend(MoveSteps(task, (stray,), uid, False) for uid in first)
                    for uid in first:
                        out.append(InsertStep(task, res, _OPENING_STAGE[close_family], uid, False))
                    out.extend(RemoveStep(task, s.uid) for s in closes)
    return out


def _strays(lists: list[list[Step]], here: list[Step], res: str, family: Family, partner: Family) -> list[int]:
    """Ops of ``family`` on ``res`` in another step list of the task where they outnumber their ``partner`` ops."""
    out = []
    for steps in lists:
        if steps is here:
            continue
        mine = [s for s in steps if s.resource == res and not s.stage.value.endswith(("TryWait", "TryAcquire"))]
        extra = [s for s in mine if s.family is family]
        if len(extra) > sum(1 for s in mine if s.family is partner):
            out.extend(s.uid for s in extra)
    return out


def _guards(task: str, tree: ScheduleTree, resources: tuple[str, ...], partner_guards: set[str]) -> list[Edit]:
    out: list[Edit] = []
    for step in tree.steps():
        if step.resource not in resources or step.family not in (Family.WAIT, Family.ACQUIRE, Family.RELEASE,
                                                                 Family.COMMIT):
            continue
        path = path_of(tree.body, step.uid)
        outer = enclosing(tree.body, path) if path else []
        parent = outer[-1] if outer else None
        guarded = isinstance(parent, Block) and parent.kind in (BlockKind.FIRST_ITER, BlockKind.LAST_ITER,
                                                                  BlockKind.EVERY)
        if guarded:
            out.append(ChangeGuard(task, step.uid, None))
            for g in ("first_iter", "last_iter"):
                out.append(ChangeGuard(task, step.uid, g))
        elif any(isinstance(n, DomainLoop) for n in outer):
            out.extend(ChangeGuard(task, step.uid, g) for g in sorted(partner_guards))
    return out


def _partners(ts: TaskSet, resources: tuple[str, ...]) -> list[tuple[str, str]]:
    """Ordered pairs of tasks that share a suspect resource (one producing, one consuming) with different loops."""
    out = []
    for a in ts.tasks:
        for b in ts.tasks:
            if a.name == b.name:
                continue
            shared = set(a.src + a.dst) & set(b.src + b.dst)
            if resources and not shared & set(resources):
                continue
            la, lb = a.schedule.domain_loop(), b.schedule.domain_loop()
            if la is not None and lb is not None and la.trip_count() != lb.trip_count():
                out.append((a.name, b.name))
    return out


def candidates(ts: TaskSet, suspects: Suspects) -> list[Edit]:
    """Single edits worth trying on ``ts``, most likely first (duplicates are left to the search)."""
    resources = suspects.resources or tuple(r.name for r in ts.resources)
    order = list(dict.fromkeys([*suspects.tasks, *(t.name for t in ts.tasks)]))
    out: list[Edit] = []
    for name in order:  # PDL: the launch after the wait
        tree = ts.task(name).schedule
        steps = tree.steps()
        launches = [s for s in steps if s.method == "launch_griddep"]
        waits = [s for s in steps if s.method == "wait_griddep"]
        for launch in launches:
            wait = next((w for w in waits if steps.index(w) > steps.index(launch)), None)
            if wait is not None or not waits:
                out.append(SwapPdl(name, launch.uid, wait.uid if wait else None))
    for name in order:
        out.extend(_queue_moves(name, ts.task(name).schedule))
    out.extend(MatchLoopBounds(a, b) for a, b in _partners(ts, resources))
    for name in order:
        out.extend(_balance(name, ts.task(name).schedule, resources, ts))
    blocked = [(t, u) for t, u in suspects.steps]
    guard_kinds = {b.kind.value for t in ts.tasks for b in t.schedule.blocks()
                   if b.kind in (BlockKind.FIRST_ITER, BlockKind.LAST_ITER)}
    seen_slices: set[tuple[str, tuple[int, ...]]] = set()
    slices: list[tuple[str, tuple[int, ...]]] = []
    for name in order:
        tree = ts.task(name).schedule
        first = [u for t, u in blocked if t == name]
        rest = [s.uid for s in tree.steps() if s.resource in resources and s.uid not in first]
        for uid in [*first, *rest]:
            path = path_of(tree.body, uid)
            if path is None:
                continue
            container = tree.body if len(path) == 1 else children(_node(tree.body, path[:-1]))
            tx = transaction(container, path[-1])
            for sl in ((tx,) if tx else ()) + ((uid,),):
                if (name, sl) not in seen_slices:
                    seen_slices.add((name, sl))
                    slices.append((name, sl))
    per_slice = [_moves(name, ts.task(name).schedule, sl) for name, sl in slices]
    for rank in range(max((len(m) for m in per_slice), default=0)):  # nearest places of every slice first
        out.extend(m[rank] for m in per_slice if rank < len(m))
    for name in order:
        out.extend(_guards(name, ts.task(name).schedule, resources, guard_kinds))
    out.extend(AddStage(r.name) for r in ts.resources if r.name in resources and r.stages)
    return out


def _node(nodes: tuple[Node, ...], path: tuple[int, ...]) -> Node:
    node = nodes[path[0]]
    return node if len(path) == 1 else _node(children(node), path[1:])


__all__ = ["Suspects", "candidates", "containers", "guidance", "transaction"]
