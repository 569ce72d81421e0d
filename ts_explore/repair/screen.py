"""A quick look at a candidate: our search over each run's problem, stopping at the first finding.

The answer is plain data: whether every run finished clean, and what the
first finding names (tasks and resources that guide a second edit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..check import SearchProblem, search

SCREEN_MAX_STATES = 200_000  # a screen that needs more leaves the candidate to the proof's own bound


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


def screen(problems: Iterable[SearchProblem], *, cancel: Any = None, max_states: int = SCREEN_MAX_STATES) -> Screen:
    """Search each run's problem in turn; stop at the first finding and say what it names."""
    states = passed = 0
    for problem in problems:
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
            tasks = tuple(names[t] for t in f.blocked)
            stuck = tuple(res[problem.lanes[t][f.cursors[t]].resource] for t in f.blocked
                          if f.cursors[t] < len(problem.lanes[t]))
        elif f.kind == "race":
            tasks = (names[f.writer_task], names[f.victim_task])
            stuck = (res[f.writer_resource], res[f.victim_resource])
        else:
            tasks, stuck = (names[f.task],), (res[f.resource],)
        return Screen(False, f.kind, tasks, stuck, len(f.order), passed, states)
    return Screen(True, runs_passed=passed, states=states)


__all__ = ["SCREEN_MAX_STATES", "Screen", "screen"]
