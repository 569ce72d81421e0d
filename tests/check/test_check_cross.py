"""Cross-checking: ``check.cross_check``, ``verify(..., cross_check=True)`` and ``--cross-check``.

The gallery (broken and fixed) and the scenario catalog's defaults are
cross-checked in every variant TaskManager runs; a disagreement, whether
the first engine misses a finding (a reduction clause switched off) or the
second reports one the first does not, is named with both answers and makes
the verdict INCONCLUSIVE.
"""

from __future__ import annotations

import json
import warnings

import pytest
from check_cases import HAND_MADE
from check_parity import variants
from clause_cases import CASES

from ts_explore import gallery, verify
from ts_explore.check import cross, cross_check, reduction
from ts_explore.check.oracle import OracleResult
from ts_explore.cli import main
from ts_explore.model.verdict import Status
from ts_explore.reader.search_input import search_problem

CATALOG = sorted(n for n in HAND_MADE if n.startswith(("gallery:", "scenario:")))


@pytest.mark.parametrize("name", CATALOG)
def test_gallery_and_catalog_are_cross_checked(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = HAND_MADE[name]()
        problems = [search_problem(tasks, **v) for v in variants(tasks)]
    for problem in problems:
        both = cross_check(problem)
        assert both.agree, both.reason
        assert both.first == both.second or both.first in both.second.split("+")


@pytest.mark.parametrize("clause", sorted(reduction.CLAUSES))
def test_a_missed_finding_is_a_disagreement_naming_both_answers(clause, monkeypatch):
    monkeypatch.setattr(reduction, "DISABLED", frozenset({clause}))
    both = cross_check(CASES[clause](), early_exit=False)
    assert not both.agree
    assert f"says {both.first}" in both.reason and f"says {both.second}" in both.reason
    assert both.first != both.second


def test_with_early_exit_the_second_engine_confirms_the_first_finding():
    both = cross_check(CASES["pdl"]())  # deadlock and PDL order both reachable; the first search stops at one
    assert both.agree and both.first in ("deadlock", "pdl-order") and both.first in both.second


def _fake_second_engine(monkeypatch, kinds):
    monkeypatch.setattr(cross, "explore", lambda problem, **_: OracleResult(frozenset(kinds), (), 7, True))


def test_verify_cross_check_records_it_in_the_scope():
    v = verify(**gallery.get("cross_wait").fixed(), cross_check=True)
    assert v.status is Status.SAFE and v.scope.cross_checked
    assert all(r.cross_checked for r in v.scope.runs)
    assert "Cross-checked: an independent explicit-state search agreed" in v.scope.sentence()
    plain = verify(**gallery.get("cross_wait").fixed())
    assert not plain.scope.cross_checked and "Not cross-checked" in plain.scope.sentence()


def test_verify_disagreement_is_inconclusive_naming_both_answers(monkeypatch):
    _fake_second_engine(monkeypatch, {"race"})
    v = verify(**gallery.get("cross_wait").fixed(), cross_check=True)
    assert v.status is Status.INCONCLUSIVE
    (reason,) = v.reasons
    assert "disagree" in reason and "says safe" in reason and "says race" in reason
    assert "disagreed on normal" in v.scope.sentence()


def test_verify_unsafe_answer_the_second_engine_cannot_reach_is_inconclusive(monkeypatch):
    _fake_second_engine(monkeypatch, set())
    v = verify(**gallery.get("smem_alias_race").broken(), cross_check=True)  # only the search rejects it
    assert v.status is Status.INCONCLUSIVE and not v.findings
    assert "says race" in v.reasons[0] and "says safe" in v.reasons[0]


def test_cross_check_with_ts_search_is_refused():
    with pytest.raises(ValueError, match="cross_check=True"):
        verify(**gallery.get("cross_wait").fixed(), checker="ts", cross_check=True)


def test_cli_cross_check(capsys):
    assert main(["verify", "ts_explore.scenarios.pipelined:SCENARIO", "--cross-check", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "safe"
    assert data["scope"]["runs"] and all(r["cross_checked"] for r in data["scope"]["runs"])
    assert main(["verify", "ts_explore.scenarios.pipelined:SCENARIO", "--cross-check", "--checker", "ts"]) == 2
    assert "--cross-check" in capsys.readouterr().err


def test_a_capped_run_is_not_cross_checked_and_stays_a_cap():
    v = verify(**gallery.get("cross_wait").fixed(), cross_check=True, max_states=3)
    assert v.status is Status.INCONCLUSIVE and not v.scope.runs[0].cross_checked
    assert "state cap" in v.reasons[0]
