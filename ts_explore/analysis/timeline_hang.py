"""What the verifier predicts a hung kernel blocks in, and whether the measured warps agree.

Pure functions over the model: a :class:`~ts_explore.model.verdict.Verdict`
in, :class:`~ts_explore.model.timeline.PredictedBlock` rows out; and a
:class:`~ts_explore.model.timeline.HangReport` checked against them.
"""

from __future__ import annotations

from typing import Any

from ..model.hang import HangReport, PredictedBlock
from ..model.plan import GateReport, Instance
from ..model.verdict import BlockedStep, Verdict


def _block(b: BlockedStep, ctas: tuple[range, ...], instance: str) -> PredictedBlock:
    return PredictedBlock(b.task, f"{b.resource}.{b.stage.method}", b.step_uid, b.iteration, b.sentence,
                          ctas, instance)


def predicted_blocks(verdict: Verdict, ctas: tuple[range, ...] = (), instance: str = "") -> tuple[PredictedBlock, ...]:
    """One blocked step per task from the first deadlock (else TS's credit simulation), in task order.

    ``ctas`` and ``instance`` name the launch instance ``verdict`` was
    verified for (:meth:`~ts_explore.model.plan.Instance.describe`), so a
    report can put each prediction beside the CTAs that run it.
    """
    deadlocks = sorted(verdict.deadlocks, key=lambda d: d.variant != "normal")
    blocked = deadlocks[0].blocked if deadlocks else verdict.simulation_blocked
    out: dict[str, PredictedBlock] = {}
    for b in blocked:
        out.setdefault(b.task, _block(b, tuple(ctas), instance))
    return tuple(out.values())


def agrees(report: HangReport) -> tuple[PredictedBlock, ...]:
    """The predicted blocks that some measured warp of their instance's CTAs is stuck in (task, step, iteration)."""
    hits = []
    for p in report.predicted:
        if any(w.task == p.task and w.step == p.step and (p.iteration is None or w.iteration == p.iteration)
               and p.covers(w.cta) for w in report.stuck):
            hits.append(p)
    return tuple(hits)


def refused_instances(gate: GateReport | Any) -> tuple[Instance, ...]:
    """The distinct instances the gate did not prove, of the first plan that has any (a launch hangs in one size).

    Each is verified and predicted on its own: CTAs with 9 tiles block at
    another iteration than CTAs with 8.
    """
    refused = [p.instance for p in getattr(gate, "proven", ()) if p.status not in ("safe", "vacuous")]
    for plan in getattr(gate, "plans", ()):
        mine = tuple(i for i in refused if any(i is j for j in plan.instances))
        if mine:
            return mine
    return tuple(refused)


__all__ = ["agrees", "predicted_blocks", "refused_instances"]
