"""The smallest domain length at which a schedule already fails the same way: the shortest counterexample."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..model.verdict import Status, Verdict


@dataclass(frozen=True)
class TripCountSearch:
    """The smallest domain length at which a schedule already fails the same way, and that verdict."""

    asked: int
    smallest: int | None  # None: the asked length passes
    verdict: Verdict | None  # the verdict at ``smallest`` (its counterexample is the shortest)
    asked_verdict: Verdict


def failure_signature(verdict: Verdict) -> frozenset[str]:
    """What kind of failure a verdict shows: its finding kinds, else its failed check names."""
    kinds = {f.kind for f in verdict.findings}
    return frozenset(kinds) if kinds else frozenset(c.name for c in verdict.failed_checks)


def smallest_failing_trip_count(build: Callable[[int], dict[str, Any]], asked: int) -> TripCountSearch:
    """The smallest n <= ``asked`` at which ``build(n)`` fails the way ``build(asked)`` does.

    ``build(n)`` must return fresh ``dict(tasks=..., resource_dependency_graph=...)``
    with an n-iteration domain (gallery cases: ``case.builder()``). The search
    is linear from 1 because failures are not monotonic in n (with two stages a
    missing release only stalls from the third iteration on, while the
    imbalance shows at once); "the same way" means a deadlock stays a deadlock,
    a race a race, else the same failed checks. The smallest n gives the
    shortest counterexample to read.
    """
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ValueError(f"asked must be a positive int trip count, got {asked!r}")
    from .verify import verify

    target = verify(**build(asked))
    if target.status is not Status.UNSAFE:
        return TripCountSearch(asked, None, None, target)
    wanted = failure_signature(target)
    for n in range(1, asked):
        verdict = verify(**build(n))
        if verdict.status is Status.UNSAFE and failure_signature(verdict) & wanted:
            return TripCountSearch(asked, n, verdict, target)
    return TripCountSearch(asked, asked, target, target)


__all__ = ["TripCountSearch", "failure_signature", "smallest_failing_trip_count"]
