"""One projection of a search problem: a shared pipeline's producer with one of its consumer tasks.

:mod:`ts_explore.analysis.shared_pools` says why searching each projection
covers a pipeline that several consumer tasks read in full. Here a
:class:`~.problem.SearchProblem` loses the other consumers' lanes, and the
kept consumer's waits and releases of the pipeline count alone (no tally of
a round of consumers): the pipeline then has one consumer, as in the hardware
each consumer waits for every commit itself.
"""

from __future__ import annotations

from dataclasses import replace

from .problem import CreditEffect, SearchProblem


def project(problem: SearchProblem, resource: str, keep: str, drop: tuple[str, ...]) -> SearchProblem:
    """``problem`` without the tasks in ``drop``; ``keep``'s waits and releases of ``resource`` count alone.

    ValueError when a dropped consumer touches a resource that aliases one
    another consumer touches: a race between the two would then be left out.
    """
    names = list(problem.tasks)
    missing = [t for t in (keep, *drop) if t not in names]
    if missing or resource not in problem.resources:
        raise ValueError(f"cannot project onto {keep!r}: no task {missing} or resource {resource!r} in the problem")
    shared = problem.resources.index(resource)
    touched = {t: {s.resource for s in problem.lanes[names.index(t)]} - {shared} for t in (keep, *drop)}
    for t in drop:
        for other in (keep, *drop):
            if other != t and any(problem.alias[r] & touched[other] for r in touched[t] if r < len(problem.alias)):
                raise ValueError(f"{t} and {other} touch aliasing resources: searching them apart would miss a race "
                                 "between them")

    def alone(e: CreditEffect) -> CreditEffect:
        return CreditEffect(e.counter, e.delta) if problem.counters[e.counter].resource == shared else e

    lanes = []
    for t, lane in zip(names, problem.lanes):
        if t in drop:
            continue
        if t == keep:
            lane = tuple(replace(step, effects=tuple(alone(e) for e in step.effects)) for step in lane)
        lanes.append(lane)
    return replace(problem, tasks=tuple(t for t in names if t not in drop), lanes=tuple(lanes))


__all__ = ["project"]
