"""Human sentences for a Verdict: one line per failing check, plus the caveats."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .verdict import Imbalance, Verdict

SIMULATION = "_print_task_schedules"
EXHAUSTIVE = "_exhaustive_aliasing_races"

_IMBALANCE_WORDS = {
    "unconsumed-commit": "commit(s) on {r} that no wait consumes (the producer loop runs longer than the consumer's)",
    "acquire-without-release": "acquire(s) of {r} never matched by a release (a slot is never given back)",
    "release-without-acquire": "release(s) of {r} without a matching acquire",
}


def imbalance_text(imb: "Imbalance") -> str:
    """An imbalance in words."""
    words = _IMBALANCE_WORDS.get(imb.kind, "{r}: " + imb.message)
    return f"{imb.count} " + words.format(r=imb.resource)


def summary_lines(v: "Verdict") -> list[str]:
    """The lines :meth:`Verdict.summary` joins."""
    lines: list[str] = []
    for check in v.failed_checks:
        if check.name == SIMULATION and (v.simulation_blocked or v.imbalances):
            if v.simulation_blocked:
                lines.append(
                    "credit simulation blocked: " + "; ".join(b.sentence for b in v.simulation_blocked)
                )
            for imb in v.imbalances:
                lines.append("credit simulation unbalanced: " + imbalance_text(imb))
        elif check.name == EXHAUSTIVE and v.findings:
            continue  # described finding by finding below
        else:
            first = check.message.strip().splitlines()[0] if check.message.strip() else "failed"
            lines.append(f"{check.title}: {first}")
    for run in v.runs:
        for finding in (*run.deadlocks, *run.races, *run.pdl_violations):
            steps = f", {len(finding.interleaving)} steps to reach it" if finding.interleaving else ""
            lines.append(f"{finding.describe()} [{run.label}{steps}]")
    if v.rejected:
        for note in v.domain_notes:
            lines.append(
                f"possible false positive: task {note.task} has {note.bounds}, not Python ints; TS checked "
                f"{note.checked_iterations} iteration(s). Re-verify with int bounds."
            )
        return lines
    lines.extend(f"not proven: {reason}" for reason in v.reasons)
    if not lines:
        scope = v.scope
        assert scope is not None
        who = f" for {scope.instance}" if scope.instance else ""
        lines.append(
            f"safe{who}: all {len(v.checks)} checks passed; {scope.engine} explored {scope.states} states "
            f"in {len(scope.runs)} run(s) ({scope.runs_text()})"
        )
    return lines


__all__ = ["EXHAUSTIVE", "SIMULATION", "imbalance_text", "summary_lines"]
