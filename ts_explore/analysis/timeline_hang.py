"""What the verifier predicts a hung kernel blocks in, and whether the measured warps agree.

Pure functions over the model: a :class:`~ts_explore.model.verdict.Verdict`
in, :class:`~ts_explore.model.timeline.PredictedBlock` rows out; and a
:class:`~ts_explore.model.timeline.HangReport` checked against them.
"""

from __future__ import annotations

from ..model.hang import HangReport, PredictedBlock
from ..model.verdict import BlockedStep, Verdict


def _block(b: BlockedStep) -> PredictedBlock:
    return PredictedBlock(b.task, f"{b.resource}.{b.stage.method}", b.step_uid, b.iteration, b.sentence)


def predicted_blocks(verdict: Verdict) -> tuple[PredictedBlock, ...]:
    """One blocked step per task from the first deadlock (else TS's credit simulation), in task order."""
    deadlocks = sorted(verdict.deadlocks, key=lambda d: d.variant != "normal")
    blocked = deadlocks[0].blocked if deadlocks else verdict.simulation_blocked
    out: dict[str, PredictedBlock] = {}
    for b in blocked:
        out.setdefault(b.task, _block(b))
    return tuple(out.values())


def agrees(report: HangReport) -> tuple[PredictedBlock, ...]:
    """The predicted blocks that some measured warp is stuck in (same task, step and iteration)."""
    hits = []
    for p in report.predicted:
        if any(w.task == p.task and w.step == p.step and (p.iteration is None or w.iteration == p.iteration)
               for w in report.stuck):
            hits.append(p)
    return tuple(hits)


__all__ = ["agrees", "predicted_blocks"]
