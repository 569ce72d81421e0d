"""Three searches must agree: reduced (``checker="auto"``), unreduced, and the independent second engine.

On the corner generator's TS-built sets (:mod:`corner_sets`) and on
random problems written directly (:mod:`random_problems`): the finding
kinds of the reduced search, of the unreduced search and of the second
engine (:mod:`ts_explore.check.oracle`) must be the same sets, and the
unreduced search and the second engine must count the same reachable
states (both know a state by the exact identity, so the state spaces are
the same whatever their visiting orders). Instances whose reachable
states pass the cap are skipped; each chunk must still compare most of
its sets (80%).

Tiers: the default runs 300 corner sets (cap 6,000 states; 274 of them
compared; 60 of them PipelineGroup / interleaved sets, 85 with the DMA
readers and completion pair) and 150 random problems; ``TS_EXPLORE_SOAK=1`` runs 5,400 corner
sets (cap 20,000; 5,136 compared; 1,364 group / interleaved, 1,193 DMA
readers; about 10 minutes on one core) and 5,000 random problems.
"""

from __future__ import annotations

import warnings

import pytest
from corner_sets import corner_set, corner_variants
from random_problems import random_problem
from tiers import scaled, soak

from ts_explore.check import search
from ts_explore.check.oracle import explore
from ts_explore.reader.search_input import search_problem

CORNER_SETS = scaled(300, 5400)
CORNER_CHUNK = scaled(30, 270)
CORNER_FIRST = 100_000 if soak() else 0
CAP = scaled(6_000, 20_000)
RANDOM_PROBLEMS = scaled(150, 5000)
RANDOM_CHUNK = scaled(75, 500)


def _kinds(result) -> frozenset[str]:
    return frozenset(f.kind for f in result.findings)


def _disagreement(problem) -> str | None:
    """None when the three agree (or the instance is over the cap), else what differs."""
    second = explore(problem, max_states=CAP)  # the cheapest of the three: it decides what is over the cap
    if not second.complete:
        return None
    full = search(problem, reduce=False, early_exit=False, max_states=CAP + 1)
    reduced = search(problem, reduce=True, early_exit=False, max_states=CAP + 1)
    if _kinds(full) == _kinds(reduced) == second.kinds and second.states == full.states_explored:
        return ""
    return (f"unreduced {sorted(_kinds(full))} ({full.states_explored} states), reduced {sorted(_kinds(reduced))}, "
            f"second engine {sorted(second.kinds)} ({second.states} states)")


@pytest.mark.parametrize("first", range(CORNER_FIRST, CORNER_FIRST + CORNER_SETS, CORNER_CHUNK))
def test_corner_sets_get_one_answer_from_all_three_searches(first):
    compared, problems = 0, []
    for seed in range(first, first + CORNER_CHUNK):
        spec = corner_set(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tasks = spec.build()["tasks"]
            instances = [(v, search_problem(tasks, **v)) for v in corner_variants(tasks)]
        seen = False
        for variant, problem in instances:
            found = _disagreement(problem)
            if found is None:
                continue
            seen = True
            if found:
                problems.append(f"{spec.describe()}\n  {variant}: {found}")
        compared += seen
    assert compared >= CORNER_CHUNK * 8 // 10, f"only {compared} of {CORNER_CHUNK} sets under the cap"
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("first", range(0, RANDOM_PROBLEMS, RANDOM_CHUNK))
def test_random_problems_get_one_answer_from_all_three_searches(first):
    compared, problems = 0, []
    for seed in range(first, first + RANDOM_CHUNK):
        found = _disagreement(random_problem(seed))
        if found is None:
            continue
        compared += 1
        if found:
            problems.append(f"random problem {seed}: {found}")
    assert compared >= RANDOM_CHUNK * 3 // 4
    assert not problems, "\n\n".join(problems)


def test_the_corner_generator_meets_every_verdict_and_feature():
    kinds: set[str] = set()
    safe = 0
    features = {f.split(" @")[0].split(" on ")[0] for seed in range(120) for f in corner_set(seed).features}
    for seed in range(60):
        spec = corner_set(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tasks = spec.build()["tasks"]
            problem = search_problem(tasks, **corner_variants(tasks)[0])
        result = search(problem, early_exit=False, max_states=CAP)
        kinds |= _kinds(result)
        safe += result.proven_safe
    assert kinds == {"deadlock", "race", "pdl-order"} and safe >= 10
    assert {"2 producer(s), 1 consumer(s)", "1 producer(s), 2 consumer(s)", "signal before release", "gate",
            "last-iteration guard", "pdl across tasks", "persistent+skip_if", "dma with 2 readers + completion pair",
            "dma with 2 readers + completion pair (ordered write)", "merge", "fused-merge", "fork",
            "interleaved", "gate (opaque)", "consumer receives the signal"} <= features
