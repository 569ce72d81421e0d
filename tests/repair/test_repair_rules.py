"""Repairs of a verdict that is UNSAFE only because a verification rule failed (the GEMM's async-read rule).

TS sees no deadlock or race in the GEMM that releases each A/B stage right
after issuing its WGMMA; the async-read rule does. The Deadlock tab names the
failed rule and offers the repair search, whose repairs are proven by
``verify`` with the rule applied, like every other repair.
"""

from __future__ import annotations

import functools

import ts_explore
from ts_explore.analysis.async_reads import check_async_reads
from ts_explore.app.explorer import Explorer
from ts_explore.kernels.gemm_geometry import Release
from ts_explore.scenarios import get
from ts_explore.scenarios.gemm import async_reads

GEMM = get("hopper_gemm")
PREMATURE = GEMM.config(release=Release.PREMATURE)


@functools.lru_cache(maxsize=None)
def _found() -> ts_explore.repair.Repairs:
    verdict = ts_explore.verify(**GEMM.build(PREMATURE).verify_kwargs())
    return ts_explore.repairs(verdict, lambda: GEMM.build(PREMATURE).verify_kwargs(), seconds=10)


def test_the_premature_release_fails_only_the_async_read_rule() -> None:
    verdict = ts_explore.verify(**GEMM.build(PREMATURE).verify_kwargs())
    assert verdict.status.value == "unsafe" and not verdict.findings
    assert [c.name for c in verdict.failed_checks] == ["async_read_rule"]


def test_a_proven_repair_waits_for_the_reads_before_each_release() -> None:
    found = _found()
    assert found, found.tried
    best = found[0]
    assert best.proof.ok and best.proof.status.value == "safe"
    rule = [c for c in best.proof.checks if c.name == "async_read_rule"]
    assert rule and rule[0].passed, "proven with the rule applied"
    assert check_async_reads(best.proof.task_set, async_reads(PREMATURE)).safe
    assert "mma" in best.sentence and "smem_ab" in best.sentence
    again = ts_explore.verify(**best.task_set())
    assert again.ok, again.summary()


def test_the_deadlock_tab_names_the_rule_and_offers_its_repairs() -> None:
    ex = Explorer(GEMM, debounce_s=0, release=Release.PREMATURE)
    assert ex.verdict is not None and ex.verdict.status.value == "unsafe" and not ex.verdict.findings
    ex.tabs.selected_index = ex.tab_names.index("deadlock")
    ex.render("deadlock")
    text = " ".join(getattr(w, "value", "") for w in ex.deadlock_box.children)
    assert "found no deadlock or race" not in text
    assert "async" in text and "Find repairs" in text
    panel = ex.repair_panel
    assert panel is not None and panel.widget in ex.deadlock_box.children
    panel.seconds = 10
    panel.search(block=True)
    assert panel.found, panel.status.value
    ex.apply_repair(panel.found[0])
    assert ex.verdict is not None and ex.verdict.ok
    assert [c.passed for c in ex.verdict.checks if c.name == "async_read_rule"] == [True]
