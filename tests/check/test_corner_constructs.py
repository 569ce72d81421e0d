"""The corner generator's TS objects reach the checker as the constructs they are drawn as.

A merge group's single release frees both members, a fused merge has a
group wait and a release that frees both, a fork's group commit credits both members, the
interleaved pipe is a domain-interleaved resource, and the DMA-readers set
has two DMA-read resources whose reads the MMA's commit tags and the
epilogue's wait clears. If TS or the reader changed how these are
expressed, the differential tests would quietly stop covering them; these
assertions would fail instead.
"""

from __future__ import annotations

import warnings

import pytest
from corner_sets import corner_set, corner_variants
from group_sets import group_set

from ts_explore.reader.search_input import search_problem


def _problem(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = spec.build()["tasks"]
        return search_problem(tasks, **corner_variants(tasks)[0])


def _steps(problem):
    return [step for lane in problem.lanes for step in lane]


def _first(shape: str):
    return next(group_set(seed) for seed in range(200) if group_set(seed).shape == shape)


@pytest.mark.parametrize("shape", ["merge", "fused-merge", "fork", "interleaved"])
def test_group_and_interleaved_sets_reach_the_checker_as_drawn(shape):
    problem = _problem(_first(shape))
    held = [s.held for s in _steps(problem) if s.held is not None]
    commits = [s for s in _steps(problem) if s.stage == "ProducerCommit"]
    if shape == "merge":
        assert any(len(h.merge_release) == 2 for h in held) and not any(h.fused_wait for h in held)
    elif shape == "fused-merge":
        assert any(h.fused_wait for h in held) and any(len(h.merge_release) == 2 for h in held)
    elif shape == "fork":
        assert any(len(c.effects) == 2 for c in commits)
    else:
        assert len(problem.domain_interleaved) == 1


def test_dma_reader_sets_tag_and_clear_two_dma_reads():
    spec = next(s for s in map(corner_set, range(100)) if any(f.startswith("dma") for f in s.features))
    problem = _problem(spec)
    held = [s.held for s in _steps(problem) if s.held is not None]
    assert len(problem.dma_consumers) == 2
    assert any(set(h.tag_commit) == problem.dma_consumers for h in held)
    assert any(set(h.clear_wait) == problem.dma_consumers for h in held)
