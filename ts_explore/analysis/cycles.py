"""Who waits for whom in a deadlock: the wait-for graph and its cycle.

A task blocked on ``wait`` needs a commit on that resource; only a task with
a ``commit`` on it still ahead of its cursor can provide one (a ``release``
for a blocked ``acquire``). In a deadlock every unfinished task is blocked,
so those providers are blocked too; following "waits for" edges from task to
provider task finds the circle of tasks holding each other up. When nobody
can provide the credit (the producer already finished), there is no cycle:
the schedule simply asks for more than anyone gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..model import Stage
from ..model.verdict import COMMIT_CREDIT, BlockedStep, CheckerStep, Lane


@dataclass(frozen=True)
class Provider:
    """A task that could free the credit, the step that would do it, and where it is stuck."""

    task: str
    step: CheckerStep  # its next step that commits / releases the resource
    stuck_at: CheckerStep | None  # where that task is now (None when it finished)


@dataclass(frozen=True)
class WaitEdge:
    """One blocked task, the credit it needs, and who could provide it."""

    blocked: BlockedStep
    providers: tuple[Provider, ...]


@dataclass(frozen=True)
class WaitFor:
    """The wait-for graph of one deadlock."""

    edges: tuple[WaitEdge, ...]
    cycle: tuple[str, ...]  # closed: ("Ping", "Pong", "Ping"); empty when there is none
    finished: tuple[str, ...]  # tasks that ran to the end

    def cycle_pairs(self) -> set[tuple[str, str]]:
        """(waiting task, providing task) pairs on the cycle."""
        return set(zip(self.cycle, self.cycle[1:]))


def freeing_stage(blocked: BlockedStep) -> Stage:
    """What would unblock a step: a commit for a wait, a release for an acquire."""
    return Stage.PRODUCER_COMMIT if blocked.credit == COMMIT_CREDIT else Stage.CONSUMER_RELEASE


def providers(blocked: BlockedStep, lanes: Sequence[Lane], cursors: Sequence[int]) -> tuple[Provider, ...]:
    """Tasks with a freeing step for ``blocked`` still ahead of their cursor."""
    need = freeing_stage(blocked)
    out: list[Provider] = []
    for lane, cursor in zip(lanes, cursors):
        ahead = lane.steps[cursor:]
        step = next((s for s in ahead if s.resource == blocked.resource and s.stage is need), None)
        if step is not None:
            out.append(Provider(lane.task, step, ahead[0] if ahead else None))
    return tuple(out)


def wait_for(blocked: Sequence[BlockedStep], lanes: Sequence[Lane], cursors: Sequence[int]) -> WaitFor:
    """Build the wait-for graph of a deadlock state and find its cycle."""
    edges = tuple(WaitEdge(b, providers(b, lanes, cursors)) for b in blocked)
    graph: dict[str, list[str]] = {}
    for e in edges:
        graph.setdefault(e.blocked.task, []).extend(p.task for p in e.providers)
    finished = tuple(lane.task for lane, c in zip(lanes, cursors) if c >= len(lane.steps))
    return WaitFor(edges=edges, cycle=find_cycle(graph), finished=finished)


def find_cycle(graph: dict[str, list[str]]) -> tuple[str, ...]:
    """The first cycle found by depth-first search in insertion order (closed), or ()."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> tuple[str, ...]:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                start = stack.index(nxt)
                return (*stack[start:], nxt)
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return ()

    for node in graph:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return ()


__all__ = ["Provider", "WaitEdge", "WaitFor", "find_cycle", "freeing_stage", "providers", "wait_for"]
