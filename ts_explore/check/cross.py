"""Both checkers on one problem: :func:`cross_check` says what each answered and whether they agree.

The first engine (:func:`ts_explore.check.search`, reduced by default)
gives the verdict; the second (:mod:`ts_explore.check.oracle`, written
separately from the semantics document) confirms it. They agree when

* the first says SAFE: both searches finished and the second found nothing;
* the first found findings of some kinds: the second reaches a state with
  each of those kinds (with ``early_exit`` the first stops at its first
  finding, so only that kind is asked for; without it, the kinds must be
  the same sets).

Anything else (a capped or cancelled search on either side included) is a
disagreement, which ``verify(..., cross_check=True)`` turns into an
INCONCLUSIVE verdict naming both answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .engine import DEFAULT_MAX_STATES, SearchResult, search
from .oracle import DEFAULT_ORACLE_STATES, OracleResult, explore
from .problem import SearchProblem


def answer_of(kinds: frozenset[str], complete: bool) -> str:
    """``safe``, ``not proven``, or the finding kinds joined by ``+`` (``deadlock+race``)."""
    if kinds:
        return "+".join(sorted(kinds))
    return "safe" if complete else "not proven"


@dataclass(frozen=True)
class CrossCheck:
    """The first engine's answer, the second's, and whether they agree."""

    engine: str  # "reduced" | "unreduced": how the first engine searched
    first: str  # answer_of the first engine
    second: str  # answer_of the second engine
    first_states: int
    second_states: int
    agree: bool

    @property
    def reason(self) -> str:
        """One sentence naming both answers."""
        verb = "agree" if self.agree else "disagree"
        return (
            f"the two checkers {verb}: ts-explore's {self.engine} search says {self.first} "
            f"({self.first_states:,} states), the independent explicit-state search says {self.second} "
            f"({self.second_states:,} states)"
        )


def compare(first: SearchResult, second: OracleResult, early_exit: bool) -> bool:
    """The agreement rule of this module's docstring."""
    kinds = frozenset(f.kind for f in first.findings)
    if not kinds:
        return first.proven_safe and second.safe
    if not kinds <= second.kinds:
        return False
    return early_exit or (second.complete and first.complete and kinds == second.kinds)


def cross_check(
    problem: SearchProblem,
    *,
    reduce: bool = True,
    early_exit: bool = True,
    max_states: int = DEFAULT_MAX_STATES,
    oracle_states: int = DEFAULT_ORACLE_STATES,
    first: SearchResult | None = None,
) -> CrossCheck:
    """Run both checkers on ``problem`` (or reuse ``first``, the first engine's result) and compare."""
    if first is None:
        first = search(problem, reduce=reduce, early_exit=early_exit, max_states=max_states)
    kinds = frozenset(f.kind for f in first.findings)
    second = explore(problem, max_states=oracle_states, stop_when=kinds if early_exit else frozenset())
    return CrossCheck(
        engine="reduced" if first.reduced else "unreduced",
        first=answer_of(kinds, first.complete),
        second=answer_of(second.kinds, second.complete),
        first_states=first.states_explored,
        second_states=second.states,
        agree=compare(first, second, early_exit),
    )


__all__ = ["CrossCheck", "answer_of", "compare", "cross_check"]
