"""The tile-loop search against unrolled searches on drawn persistent sets: the same answer at every tile count.

Two or three tasks, two aliased rings of 1-4 stages used 1-3 times a tile, with or without a one-slot token
pipe between two tasks. A SAFE tile loop must have no finding at any unrolled count up to ``UPTO``; a finding at ``N`` tiles must be one the unrolled search at ``N`` finds.
The unrolled searches are the reduced engine's (exact, SEMANTICS.md); one that hits its cap
gives no answer. A few examples in the default tier, many in the soak tier (``TS_EXPLORE_SOAK=1``).
"""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import scaled
from tile_loop_sets import persistent_set

from ts_explore.check.engine import search
from ts_explore.check.tile_search import search_tile_loop
from ts_explore.reader.search_input import search_problem
from ts_explore.reader.tile_loop import tile_loop

UPTO = 12  # twice the longest ring period (4 stages) plus a lead of four tiles


@st.composite
def tile_sets(draw: st.DrawFn) -> tuple[dict, dict, int]:
    n = draw(st.integers(2, 3))
    tasks = [f"T{i}" for i in range(n)]
    rings = {name: (draw(st.integers(1, 4)), draw(st.sampled_from((0, 0, 512, 2048)))) for name in ("ra", "rb")}
    plans: dict[str, list] = {t: [] for t in tasks}
    for name, (stages, _offset) in rings.items():
        uses = draw(st.integers(1, 3))
        if draw(st.booleans()):  # one task fills and drains it
            plans[draw(st.sampled_from(tasks))].append((name, "own", uses))
        else:
            p, c = draw(st.permutations(tasks))[:2]
            uses = min(uses, stages)
            plans[p].append((name, "produce", uses))
            plans[c].append((name, "consume", uses))
    if draw(st.booleans()):
        rings["pipe"] = (1, 0)
        p, c = draw(st.permutations(tasks))[:2]
        plans[p].append(("pipe", "produce", 1))
        plans[c].append(("pipe", "consume", 1))
    for t in tasks:
        if not plans[t]:
            rings[f"own{t}"] = (1, 8192 + 1024 * len(rings))
            plans[t].append((f"own{t}", "own", 1))
        plans[t] = draw(st.permutations(plans[t]))
    return rings, plans, UPTO


def _unrolled(build, n: int) -> bool | None:
    """Whether the unrolled search of ``n`` tiles finds something (None: it hit its cap, no answer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = search_problem(build()["tasks"], num_tiles=n)
    result = search(problem, max_states=400_000)
    return bool(result.findings) if result.findings or result.complete else None


@settings(max_examples=scaled(6, 300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tile_sets())
def test_the_tile_loop_answers_as_the_unrolled_searches_do(drawn: tuple[dict, dict, int]) -> None:
    rings, plans, upto = drawn

    def build() -> dict:
        return persistent_set(rings, plans)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop, why = tile_loop(build()["tasks"])
    assert loop is not None, why
    result = search_tile_loop(loop, max_states=400_000)
    if result.findings:
        assert _unrolled(build, result.findings[0].tiles) is not False
    elif result.proven:
        assert not any(_unrolled(build, n) for n in range(1, upto + 1))  # True would be a wrong SAFE
