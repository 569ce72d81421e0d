"""The async-read rule: a stage is released only after the asynchronous (WGMMA) reads of it complete.

TS counts a stage as read when the step that issued the read returns; the
analysis (:func:`ts_explore.analysis.async_reads.check_async_reads`) replays
the captured schedule and finds releases that free a stage still being read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.async_reads import SCOPE_NOTE, AsyncReads, check_async_reads
from ...model import TaskSet
from ...model.findings import CheckOutcome


@dataclass(frozen=True)
class AsyncReadRule:
    """``verify(rules=[AsyncReadRule(spec)])``: fails on any release of a stage an asynchronous read may still read."""

    spec: AsyncReads
    name = "async_read_rule"
    not_modelled = SCOPE_NOTE

    def __call__(self, task_set: TaskSet) -> CheckOutcome:
        report = check_async_reads(task_set, self.spec)
        hint = "" if report.safe else ("release a stage only after the instruction reading it has completed: one "
                                       "k-block later, or after waiting for its reads")
        return CheckOutcome(self.name, f"asynchronous reads of {self.spec.resource} complete before release",
                            report.safe, "" if report.safe else report.summary(), hint=hint)


__all__ = ["AsyncReadRule"]
