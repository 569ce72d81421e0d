"""The reduction against the same engine without it, on generated sets (no TS involved).

The reduced search must reach the same verdict, the same kinds of finding
and every deadlock state the full search reaches (partial-order reduction
keeps all deadlock states; it keeps some, not all, race and PDL states).
Sets are larger than the TS-parity tier's (up to 5 tasks, 6 iterations),
since only our engine runs. ``TS_EXPLORE_SOAK=1`` runs 5,000 of them, up
to 8 iterations (about half an hour on 2 cores).
"""

from __future__ import annotations

import os
import warnings

import pytest
from check_parity import variants
from task_set_generator import generate

from ts_explore.check import search
from ts_explore.reader.search_input import search_problem

SOAK = os.environ.get("TS_EXPLORE_SOAK") == "1"
SETS, CHUNK, FIRST = (5000, 50, 100_000) if SOAK else (160, 20, 10_000)
LIMITS = {"max_tasks": 5, "max_iterations": 8 if SOAK else 6}
CAP = 300_000 if SOAK else 12_000


def _summary(result):
    return (
        result.proven_safe,
        {f.kind for f in result.findings},
        {(d.cursors, d.blocked) for d in result.deadlocks},
    )


@pytest.mark.parametrize("first", range(FIRST, FIRST + SETS, CHUNK))
def test_reduced_search_finds_what_the_full_search_finds(first):
    problems, compared = [], 0
    for seed in range(first, first + CHUNK):
        spec = generate(seed, **LIMITS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tasks = spec.build()["tasks"]
            instances = [search_problem(tasks, **v) for v in variants(tasks)]
        for problem in instances:
            full = search(problem, reduce=False, early_exit=False, max_states=CAP)
            if full.hit_cap:
                continue
            compared += 1
            reduced = search(problem, reduce=True, early_exit=False, max_states=CAP)
            assert reduced.states_explored <= full.states_explored
            if _summary(reduced) != _summary(full):
                problems.append(f"{spec.describe()}\n  full {_summary(full)}\n  reduced {_summary(reduced)}")
            first_found = search(problem, reduce=True)
            if first_found.proven_safe != full.proven_safe:
                problems.append(f"{spec.describe()}\n  early-exit reduced search disagrees on safety")
    assert compared >= CHUNK // 2
    assert not problems, "\n\n".join(problems)
