"""Sentences for a counterexample: what each move did and why the end state is stuck.

Example: "Ping waits for a commit on right; only Pong commits right, after
its own wait on left".
"""

from __future__ import annotations

from ..model import Stage
from ..model.verdict import (
    COMMIT_CREDIT,
    CheckerStep,
    Deadlock,
    ExhaustiveRun,
    Finding,
    Interleaving,
)
from .cycles import WaitEdge, wait_for
from .paths import cell

_NEED = {COMMIT_CREDIT: ("waits for a commit on", "commits", "commit")}
_EMPTY = ("waits for a free slot of", "releases", "release")


def step_phrase(step: CheckerStep) -> str:
    """``wait on left``, ``acquire of smem``, ``smem.fill``."""
    if step.stage in (Stage.CONSUMER_WAIT, Stage.CONSUMER_TRY_WAIT):
        return f"{step.stage.method} on {step.resource}"
    if step.stage in (Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_TRY_ACQUIRE):
        return f"{step.stage.method} of {step.resource}"
    if step.stage in (Stage.PRODUCER_COMMIT, Stage.CONSUMER_RELEASE):
        return f"{step.stage.method} of {step.resource}"
    return step.title


def blocked_sentence(edge: WaitEdge) -> str:
    """Why one task is stuck and who could unstick it."""
    b = edge.blocked
    need, verb, _ = _NEED.get(b.credit, _EMPTY)
    text = f"{b.task} {need} {b.resource}"
    if not edge.providers:
        return f"{text}, but no task {verb} {b.resource} again"
    parts = []
    for p in edge.providers:
        if p.task == b.task:
            parts.append(f"only {p.task} itself {verb} {b.resource}, later than this step")
        elif p.stuck_at is not None and p.stuck_at.index < p.step.index:
            parts.append(f"only {p.task} {verb} {b.resource}, after its own {step_phrase(p.stuck_at)}")
        else:
            parts.append(f"{p.task} {verb} {b.resource} next")
    return f"{text}; " + " / ".join(parts)


def deadlock_explanation(deadlock: Deadlock, run: ExhaustiveRun) -> str:
    """All blocked tasks in one line."""
    graph = wait_for(deadlock.blocked, run.lanes, deadlock.cursors)
    return "; ".join(blocked_sentence(e) for e in graph.edges)


def move_sentence(inter: Interleaving, k: int) -> str:
    """What move ``k`` (1-based) did, with the credit change it caused."""
    move = inter.moves[k - 1]
    where = move.where + (f", {move.part}" if move.part else "")
    change = ""
    for resource, slot, kind in inter.changed[k]:
        before, after = cell(inter.credits[k - 1], resource, slot), cell(inter.credits[k], resource, slot)
        if before and after:
            label = "free slots" if kind == "empty" else "commits"
            b, a = (before.empty, after.empty) if kind == "empty" else (before.full, after.full)
            change = f" ({resource} {label} {b} \u2192 {a})"
    verb = {
        Stage.PRODUCER_ACQUIRE: f"takes a free slot of {move.resource}",
        Stage.PRODUCER_COMMIT: f"commits {move.resource}",
        Stage.CONSUMER_WAIT: f"takes a commit on {move.resource}",
        Stage.CONSUMER_RELEASE: f"releases its slot of {move.resource}",
        Stage.PRODUCER_TRY_ACQUIRE: f"probes {move.resource} for a free slot",
        Stage.CONSUMER_TRY_WAIT: f"probes {move.resource} for a commit",
    }.get(move.stage, f"runs {move.title}")
    return f"Step {k}: {move.task} {verb}{change} [{where}]."


def final_sentence(finding: Finding, run: ExhaustiveRun) -> str:
    """The bad state in words."""
    if isinstance(finding, Deadlock):
        return "Stuck: " + deadlock_explanation(finding, run) + "."
    return finding.describe() + "."


def state_sentence(finding: Finding, run: ExhaustiveRun, k: int) -> str:
    """The sentence the stepper shows after ``k`` moves."""
    inter = finding.interleaving
    n = len(inter) if inter is not None else 0
    if k == 0:
        text = "Start: every pipeline has all its slots free and nothing committed."
    else:
        assert inter is not None
        text = move_sentence(inter, k)
    if k >= n:
        text += " " + final_sentence(finding, run)
    return text


__all__ = [
    "blocked_sentence",
    "deadlock_explanation",
    "final_sentence",
    "move_sentence",
    "state_sentence",
    "step_phrase",
]
