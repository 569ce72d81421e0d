"""Every clause of the reduction is needed: without it, the reduced search misses a finding.

Clauses are switched off through ``reduction.DISABLED`` (tests only). Each
case is first checked with every clause on (reduced finds what the full
search finds), then with its clause off (something is missed). The
hand-written problems are in :mod:`clause_cases`; ``take`` and
``proviso`` also fail on TS-built corner sets.
"""

from __future__ import annotations

import warnings

import pytest
from clause_cases import CASES
from corner_sets import corner_set, corner_variants

from ts_explore.check import reduction, search
from ts_explore.reader.search_input import search_problem


def _kinds(problem, **kwargs) -> frozenset[str]:
    result = search(problem, early_exit=False, **kwargs)
    assert result.complete
    return frozenset(f.kind for f in result.findings)


def _corner(seed: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = corner_set(seed).build()["tasks"]
        return search_problem(tasks, **corner_variants(tasks)[0])


def test_every_clause_has_a_case():
    assert set(CASES) == reduction.CLAUSES


@pytest.mark.parametrize("clause", sorted(reduction.CLAUSES))
def test_without_the_clause_the_reduced_search_misses_a_finding(clause, monkeypatch):
    problem = CASES[clause]()
    full = _kinds(problem, reduce=False)
    assert full and _kinds(problem, reduce=True) == full
    monkeypatch.setattr(reduction, "DISABLED", frozenset({clause}))
    assert _kinds(problem, reduce=True) < full


@pytest.mark.parametrize(("clause", "seed", "missed"), [("take", 136, "deadlock"), ("proviso", 34, "pdl-order")])
def test_ts_built_corner_sets_need_the_clause_too(clause, seed, missed, monkeypatch):
    problem = _corner(seed)
    full = _kinds(problem, reduce=False)
    assert missed in full and _kinds(problem, reduce=True) == full
    monkeypatch.setattr(reduction, "DISABLED", frozenset({clause}))
    assert missed not in _kinds(problem, reduce=True)
