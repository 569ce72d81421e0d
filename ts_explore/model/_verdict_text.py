"""Words below the Verdict: the names of the two checks its summary describes specially, and an imbalance in words.

:meth:`Verdict.summary <ts_explore.model.verdict.Verdict.summary>` and the
verdict's HTML both use them; this module imports only the findings, so the
verdict sits above it.
"""

from __future__ import annotations

from .findings import Imbalance

SIMULATION = "_print_task_schedules"
EXHAUSTIVE = "_exhaustive_aliasing_races"

_IMBALANCE_WORDS = {
    "unconsumed-commit": "commit(s) on {r} that no wait consumes (the producer loop runs longer than the consumer's)",
    "acquire-without-release": "acquire(s) of {r} never matched by a release (a slot is never given back)",
    "release-without-acquire": "release(s) of {r} without a matching acquire",
}


def imbalance_text(imb: Imbalance) -> str:
    """An imbalance in words."""
    words = _IMBALANCE_WORDS.get(imb.kind, "{r}: " + imb.message)
    return f"{imb.count} " + words.format(r=imb.resource)


__all__ = ["EXHAUSTIVE", "SIMULATION", "imbalance_text"]
