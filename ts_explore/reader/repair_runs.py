"""A quick look at a candidate repair: our search over the runs an instance needs, on materialised TS tasks.

The repair search screens each candidate with this before it asks
``verify`` for a proof: the runs of :func:`~ts_explore.reader.materialise.search_runs`
(every ``when_true`` assignment, skipped tiles, TS's tile count), each built
with :func:`~ts_explore.reader.search_input.search_problem` and explored by
:func:`ts_explore.check.search`. The answer is plain data: whether every run
finished clean, and what the first finding names (for the next edit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..check import search
from .materialise import search_runs
from .search_input import search_problem


@dataclass(frozen=True)
class Screen:
    """What the search found on one candidate (``clean``: every run finished without a finding)."""

    clean: bool
    finding: str = ""  # deadlock | race | pdl-order | capped | cancelled
    tasks: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    depth: int = 0  # moves of the counterexample: deeper means the edit got further
    runs_passed: int = 0
    states: int = 0


def screen(tasks: list[Any], *, max_states: int = 200_000, cancel: Any = None) -> Screen:
    """Search every run the instance needs (stopping at the first finding) and say what was found."""
    states = 0
    passed = 0
    for kwargs in search_runs(tasks):
        problem = search_problem(tasks, **kwargs)
        result = search(problem, max_states=max_states, cancel=cancel)
        states += result.states_explored
        if result.cancelled or result.hit_cap:
            return Screen(False, "cancelled" if result.cancelled else "capped", runs_passed=passed, states=states)
        found = (*result.deadlocks, *result.races, *result.pdl_violations)
        if not found:
            passed += 1
            continue
        f = found[0]
        names, res = problem.tasks, problem.resources
        if f.kind == "deadlock":
            blocked = tuple(names[t] for t in f.blocked)
            stuck = tuple(res[problem.lanes[t][f.cursors[t]].resource] for t in f.blocked
                          if f.cursors[t] < len(problem.lanes[t]))
        elif f.kind == "race":
            blocked = (names[f.writer_task], names[f.victim_task])
            stuck = (res[f.writer_resource], res[f.victim_resource])
        else:
            blocked, stuck = (names[f.task],), (res[f.resource],)
        return Screen(False, f.kind, blocked, stuck, len(f.order), passed, states)
    return Screen(True, runs_passed=passed, states=states)


__all__ = ["Screen", "screen"]
