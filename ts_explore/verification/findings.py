"""Our checker's findings as the model's findings: ``(task, step)`` moves straight into lane steps.

:func:`exhaustive_run` turns one :class:`~ts_explore.check.engine.SearchResult`
over a :class:`~ts_explore.reader.instance.SearchInput` into an
:class:`~ts_explore.model.verdict.ExhaustiveRun`: each blocked task is the
lane step at its cursor, each counterexample's move ``(task, step)`` is
``lanes[task].steps[step]`` (the problem's lanes and ours come from the
same expansion, step for step), replayed for the credit table. No text is
written or parsed on the way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..analysis.cycles import wait_for
from ..analysis.narrate import blocked_sentence
from ..analysis.paths import replay
from ..check.engine import DeadlockFound, SearchResult
from ..check.problem import SearchProblem
from ..model import Stage
from ..model.verdict import (
    COMMIT_CREDIT,
    EMPTY_CREDIT,
    BlockedStep,
    CheckerStep,
    CreditModel,
    Deadlock,
    ExhaustiveRun,
    Lane,
    PdlViolation,
    Race,
)


def _interleaving(found: Any, lanes: tuple[Lane, ...], model: CreditModel) -> Any:
    moves: list[CheckerStep] = []
    for move in found.path:
        steps = lanes[move.task].steps
        if move.step >= len(steps):
            return None  # a lane that does not match the problem's: no path rather than a wrong one
        moves.append(steps[move.step])
    return replay(moves, lanes, model)


def blocked_reason(problem: SearchProblem, found: DeadlockFound, task: int) -> str:
    """Why task ``task`` cannot move in the deadlock ``found``, in the reference engine's format.

    The same line as TS's search gives for the same state (the parity tests
    compare them): the credit it waits for, and the credits left on its resource.
    """
    step = problem.lanes[task][found.cursors[task]]
    counter = problem.counters[step.needs]
    kind = "producer commit credit" if counter.kind == "commit" else "empty-slot credit"
    text = f"{problem.tasks[task]} blocked on {problem.resources[step.resource]}.{step.stage} waiting for {kind}"
    interleaved = step.resource in problem.domain_interleaved
    if interleaved:
        text += f" at physical stage {counter.physical_stage}"
    left = [(c.physical_stage, found.counters[i]) for i, c in enumerate(problem.counters)
            if c.kind == counter.kind and c.resource == step.resource and found.counters[i] > 0]
    if not left:
        return text + "; no matching credit is available for this resource"
    stages = ", ".join(f"physical stage {s} ({n} credit{'' if n == 1 else 's'})" for s, n in left)
    return text + ("; available credits are on " if interleaved else "; available credits: ") + stages


def _deadlock(problem: SearchProblem, found: DeadlockFound, lanes: tuple[Lane, ...], model: CreditModel,
              variant: str) -> Deadlock:
    blocked = []
    for k in found.blocked:
        if found.cursors[k] >= len(lanes[k].steps):
            continue
        step = lanes[k].steps[found.cursors[k]]
        blocked.append(BlockedStep(
            task=step.task, resource=step.resource, stage=step.stage, reason=blocked_reason(problem, found, k),
            credit=COMMIT_CREDIT if step.stage is Stage.CONSUMER_WAIT else EMPTY_CREDIT,
            call_index=step.call_index, step_uid=step.step_uid, position=found.cursors[k],
            section=step.section, iteration=step.iteration,
        ))
    graph = wait_for(blocked, lanes, found.cursors)
    blocked = [replace(e.blocked, freed_by=tuple(p.task for p in e.providers)) for e in graph.edges]
    explanation = "; ".join(blocked_sentence(e) for e in graph.edges)
    return Deadlock(variant, found.cursors, tuple(blocked), _interleaving(found, lanes, model), graph.cycle,
                    explanation)


def exhaustive_run(result: SearchResult, problem: SearchProblem, lanes: tuple[Lane, ...], model: CreditModel,
                   *, variant: str, opaque: tuple[tuple[str, bool], ...], num_tiles: int, persistent: bool,
                   engine: str, display: dict[str, str]) -> ExhaustiveRun:
    """One search of ours as an :class:`ExhaustiveRun` (blocked steps, wait-for cycles, counterexamples)."""
    tasks = tuple(lane.task for lane in lanes)
    shown = {r: display.get(r, r) for r in problem.resources}
    races = tuple(
        Race(variant, r.cursors, tasks[r.writer_task], shown[problem.resources[r.writer_resource]],
             tasks[r.victim_task], shown[problem.resources[r.victim_resource]], r.victim_access,
             problem.overlap(r.writer_resource, r.victim_resource), _interleaving(r, lanes, model))
        for r in result.races
    )
    pdl = tuple(
        PdlViolation(variant, p.cursors, tasks[p.task], shown[problem.resources[p.resource]],
                     _interleaving(p, lanes, model))
        for p in result.pdl_violations
    )
    return ExhaustiveRun(
        variant=variant, opaque=opaque, num_tiles=num_tiles, states_explored=result.states_explored,
        complete_count=result.complete_count, hit_state_limit=result.hit_cap or result.cancelled,
        deadlocks=tuple(_deadlock(problem, d, lanes, model, variant) for d in result.deadlocks), races=races,
        pdl_violations=pdl, lanes=lanes, credit_model=model, run_by="ts-explore", persistent=persistent,
        seconds=result.elapsed_s, engine=engine, cancelled=result.cancelled,
    )


__all__ = ["blocked_reason", "exhaustive_run"]
