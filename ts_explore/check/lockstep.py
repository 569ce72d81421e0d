"""Replay a search problem in lock step, to the end, and say whether every credit came back.

TS's credit simulation (TaskManager's ``_print_task_schedules``) moves the
tasks in rounds: each round, every task whose next step can run takes one
step, and it stops after the longest schedule's length + 100 rounds. A
schedule whose tasks wait on each other for long stretches (a turn handed
between two consumers runs their loops one after the other) needs more rounds than that;
TS then compares its credit totals mid-run and reports credits "not
consumed" that the rest of the run would consume.

:func:`lockstep` runs the same rounds over a :class:`SearchProblem` with no
round limit, so verification can tell such a cut-off apart from a real
imbalance: a run that finishes with every counter at its initial value and
every tally at a whole round is balanced, whatever TS's cut-off reported.
It is one interleaving, not a proof of safety; the exhaustive search is.
"""

from __future__ import annotations

from dataclasses import dataclass

from .problem import SearchProblem

TS_EXTRA_ROUNDS = 100  # TS simulates the longest schedule's length plus this many rounds


@dataclass(frozen=True)
class LockstepRun:
    """How the lock-step replay ended.

    ``rounds``: rounds taken (to the end, or to the round nothing could move);
    ``finished``: every task ran its whole lane; ``unbalanced``: resources
    with a counter off its initial value or a tally mid-round at the end.
    """

    rounds: int
    finished: bool
    unbalanced: tuple[str, ...]
    ts_limit: int  # the rounds TS's own simulation allows this problem

    @property
    def balanced(self) -> bool:
        """Every task finished and every credit came back."""
        return self.finished and not self.unbalanced

    @property
    def beyond_ts_limit(self) -> bool:
        """The run needs more rounds than TS's simulation takes: TS stops before the end."""
        return self.rounds > self.ts_limit


def lockstep(problem: SearchProblem) -> LockstepRun:
    """Run ``problem`` in TS's rounds until every task finished or none can move.

    >>> from ts_explore.check.problem import Counter, CreditEffect, SearchProblem, Step
    >>> full, empty = Counter(0, 0, "commit"), Counter(0, 0, "empty", initial=1)
    >>> produce = (Step(0, "ProducerAcquire", needs=1, effects=(CreditEffect(1, -1),)),
    ...            Step(0, "ProducerCommit", effects=(CreditEffect(0, 1),)))
    >>> consume = (Step(0, "ConsumerWait", needs=0, effects=(CreditEffect(0, -1),)),
    ...            Step(0, "ConsumerRelease", effects=(CreditEffect(1, 1),)))
    >>> run = lockstep(SearchProblem(("p", "c"), (produce * 3, consume * 3), ("ring",), (full, empty)))
    >>> run.balanced, run.rounds
    (True, 12)
    >>> lockstep(SearchProblem(("p", "c"), (produce * 3, consume * 2), ("ring",), (full, empty))).unbalanced
    ('ring',)
    """
    counters = [c.initial for c in problem.counters]
    tallies = [0] * problem.tallies
    periods = [1] * problem.tallies
    cursors = [0] * len(problem.lanes)
    rounds = 0
    while True:
        movable = [t for t, lane in enumerate(problem.lanes)
                   if cursors[t] < len(lane) and (lane[cursors[t]].needs < 0 or counters[lane[cursors[t]].needs] > 0)]
        if not movable:
            break
        rounds += 1
        for t in movable:  # in task order, each with the credits the tasks before it left (as TS's rounds do)
            step = problem.lanes[t][cursors[t]]
            if step.needs >= 0 and counters[step.needs] <= 0:
                continue  # a task earlier in this round took the credit
            cursors[t] += 1
            for e in step.effects:
                if e.tally >= 0:
                    tallies[e.tally] += 1
                    periods[e.tally] = e.every
                    if tallies[e.tally] % e.every:
                        continue
                counters[e.counter] += e.delta
    finished = all(c == len(lane) for c, lane in zip(cursors, problem.lanes))
    off = {problem.counters[i].resource for i, v in enumerate(counters) if v != problem.counters[i].initial}
    off |= {_tally_resource(problem, i) for i, n in enumerate(tallies) if n % periods[i]}
    off.discard(-1)
    limit = max((len(lane) for lane in problem.lanes), default=0) + TS_EXTRA_ROUNDS
    return LockstepRun(rounds, finished, tuple(problem.resources[r] for r in sorted(off)), limit)


def _tally_resource(problem: SearchProblem, tally: int) -> int:
    """The resource whose counter a tally feeds (-1: none found)."""
    for lane in problem.lanes:
        for step in lane:
            for e in step.effects:
                if e.tally == tally:
                    return problem.counters[e.counter].resource
    return -1


__all__ = ["LockstepRun", "TS_EXTRA_ROUNDS", "lockstep"]
