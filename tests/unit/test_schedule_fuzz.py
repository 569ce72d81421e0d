"""Seeded schedule fuzzer: record -> capture -> draw -> display never crashes, whatever the bounds.

Fast tier: 1,000 plans in the default suite (every 50th also rendered with
Graphviz). Soak tier: ``TS_EXPLORE_SOAK=1`` runs ``TS_EXPLORE_SOAK_SCHEDULES``
plans (20,000 by default), all rendered. A failure names its seed:
``schedule_fuzz.check(schedule_fuzz.plan(seed), render=True)`` replays it.
"""

from __future__ import annotations

import collections
import os

import pytest
import schedule_fuzz as fuzz

CHUNK = 100
SOAK = os.environ.get("TS_EXPLORE_SOAK") == "1"


def _run(seeds: range, render_every: int) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for seed in seeds:
        try:
            counts[fuzz.check(fuzz.plan(seed), render=seed % render_every == 0)] += 1
        except Exception as exc:
            raise AssertionError(f"seed {seed} failed: plan {fuzz.plan(seed)!r}") from exc
    return counts


@pytest.mark.parametrize("start", range(0, fuzz.SEEDS, CHUNK))
def test_fast_tier(start: int) -> None:
    counts = _run(range(start, start + CHUNK), render_every=50)
    assert counts["accepted"] >= CHUNK // 2, counts  # most plans get all the way to a Task
    assert sum(counts.values()) == CHUNK


@pytest.mark.skipif(not SOAK, reason="soak tier: set TS_EXPLORE_SOAK=1")
@pytest.mark.parametrize("start", range(fuzz.SEEDS, fuzz.SEEDS + fuzz.SOAK_SEEDS, 1000))
def test_soak_tier(start: int) -> None:
    counts = _run(range(start, min(start + 1000, fuzz.SEEDS + fuzz.SOAK_SEEDS)), render_every=1)
    assert counts["accepted"], counts


def test_plans_are_reproducible_and_reach_every_outcome() -> None:
    assert fuzz.plan(7) == fuzz.plan(7) and fuzz.plan(7) != fuzz.plan(8)
    kinds = {k.split(":")[0] for k in _run(range(0, 200), render_every=10**9)}
    assert kinds == {"accepted", "refused", "task rejects"}
