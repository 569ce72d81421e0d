"""The explorer's controls offer only what the scenario accepts, adjust what another change made
invalid, disable what changes nothing, and the explorer's state can be observed."""

from __future__ import annotations

import dataclasses
from typing import Any

import ipywidgets as widgets
import pytest

import control_walk
from control_walk import BUILT_IN
from tiers import soak
from ts_explore.app.explorer import Explorer
from ts_explore.model import QueueKind
from ts_explore.scenarios import CATALOG, Loader, SkipRule, get
from ts_explore.scenarios.choices import choices, pick



def offered(control: widgets.Widget, every: bool = True) -> list[Any]:
    """The values a control lets a user pick (a slider's every position, or its ends and a few between)."""

    def positions(values: list[int]) -> list[int]:
        if every or len(values) <= 9:
            return values
        return sorted({*values[:3], *values[-3:], *values[:: max(1, len(values) // 3)]})

    return control_walk.offered(control, positions)


@pytest.mark.parametrize("name", BUILT_IN)
def test_no_value_a_control_offers_is_refused_from_the_defaults(name: str) -> None:
    sc = get(name)
    ex = Explorer(sc, debounce_s=0)
    base = ex.config
    assert ex.error is None
    for field, control in ex.controls.items():
        values = offered(control)
        refused = [(v, str(err)) for v in values if (err := pick(sc, base, field, v)[1]) is not None]
        assert not refused, f"{name}: control {control.description!r} offers refused values {refused[:3]}"


@pytest.mark.soak
@pytest.mark.parametrize("name", BUILT_IN)
def test_choosing_each_offered_value_verifies_or_explains_without_a_refusal(name: str) -> None:
    """Through the widgets: every dropdown and checkbox value, and each slider's ends, build and verify.

    The default tier walks the same values (and sets them from code too) in
    ``test_explorer_combinations.py``; this one stays as the soak tier's copy.
    """
    assert soak()
    ex = Explorer(get(name), debounce_s=0)
    start = ex.config
    for field, control in ex.controls.items():
        _reset(ex, start)
        for value in offered(control, every=False)[:12]:
            _reset(ex, start)
            control.value = value
            if field == "fault" and ex.problem is not None:
                continue  # a deliberate mistake TS refuses to record: the problem box is the report
            assert ex.error is None, f"{name}: {control.description} = {value!r}: {ex.error}"
            assert ex.problem is None and ex.verdict is not None and ex.state == "idle"


def _reset(ex: Explorer, config: Any) -> None:
    ex.set(**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)})


def _pairs(name: str, every: bool) -> None:
    sc = get(name)
    ex = Explorer(sc, debounce_s=0)
    start = ex.config
    for first, control in ex.controls.items():
        _reset(ex, start)
        for value in offered(control, every=False):
            _reset(ex, start)
            control.value = value  # as a user would: other controls adjust and narrow
            if first == "fault" and ex.problem is not None:
                continue  # a deliberate mistake TS refuses to record: the problem box is the report
            if ex.error is not None:
                pytest.fail(f"{name}: {control.description} = {value!r} refused: {ex.error}")
            base = ex.config
            for second, other in ex.controls.items():
                if second == first:
                    continue
                for v in offered(other, every=every):
                    err = pick(sc, base, second, v)[1]
                    assert err is None, (f"{name}: with {control.description} = {value!r}, "
                                         f"{other.description} offers {v!r}, refused: {err}")


@pytest.mark.parametrize("name", BUILT_IN)
def test_dependent_pairs_offer_nothing_refused(name: str) -> None:
    _pairs(name, every=False)


@pytest.mark.soak
@pytest.mark.parametrize("name", BUILT_IN)
def test_every_pair_of_offered_values_is_accepted(name: str) -> None:
    assert soak()
    _pairs(name, every=True)


def test_ranges_follow_each_other() -> None:
    guards = Explorer("guards_demo", debounce_s=0)
    guards.controls["end"].value = 7
    assert guards.controls["start"].max == 6 and guards.controls["end"].min == guards.config.start + 1
    grid = Explorer("grid_stride_copy", debounce_s=0)
    assert grid.controls["block"].max == grid.config.grid() - 1 == 7
    grid.controls["warps"].value = 2
    assert grid.controls["thread"].max == 63
    assert "view as thread 64: a CTA of 2 warps has 64 threads" in grid.controls["thread"].tooltip


def test_a_change_that_strands_another_control_moves_it_and_says_so() -> None:
    ex = Explorer("grid_stride_copy", debounce_s=0, block=7)
    ex.controls["ctas"].value = 3
    assert ex.config.block == 2 and ex.controls["block"].value == 2 and ex.error is None
    assert ex.adjusted == ("view as CTA set to 2: view as CTA 7: only 3 CTAs are launched",)
    assert "view as CTA set to 2" in ex.message.value
    persistent = Explorer("persistent_copy", debounce_s=0)
    persistent.controls["queue"].value = QueueKind.NONE  # over-launch and skipping need a queue
    assert persistent.error is None and persistent.config.overlaunch == 0
    assert persistent.controls["overlaunch"].disabled and persistent.controls["skip"].disabled
    assert "needs a work queue" in persistent.controls["skip"].tooltip
    assert persistent.controls["ctas"].disabled and "its own CTA" in persistent.controls["ctas"].tooltip
    pipelined = Explorer("pipelined_copy", debounce_s=0, loader=Loader.THREADS, load_warps=2)
    pipelined.controls["loader"].value = Loader.TMA
    assert pipelined.config.load_warps == 1 and pipelined.controls["load_warps"].disabled


def test_dropdowns_list_only_accepted_values_and_say_why_others_are_missing() -> None:
    ex = Explorer("pipelined_copy", debounce_s=0)  # 4 store warps x vector 4: a tile of 256 does not split
    tiles = [v for _, v in ex.controls["tile"].options]
    assert 256 not in tiles and 512 in tiles
    assert "256: a tile of 256 elements does not split evenly" in ex.controls["tile"].tooltip
    ex.controls["tile"].value = 16384  # 4 stages of 64 KiB exceed shared memory: fewer stages
    assert ex.error is None and ex.config.stages == 3 and ex.adjusted[0].startswith("SMEM stages set to 3")
    persistent = Explorer("persistent_copy", debounce_s=0)
    assert [v for _, v in persistent.controls["vector"].options] == [1, 2, 4]
    assert 1536 not in [v for _, v in persistent.controls["tile"].options]


def test_guards_demo_has_no_control_without_an_effect() -> None:
    ex = Explorer("guards_demo", debounce_s=0)
    assert "block" not in ex.controls
    ex.controls["every"].value = False
    assert ex.controls["every_period"].disabled and "every() block is off" in ex.controls["every_period"].tooltip


def test_every_control_changes_what_its_tab_shows() -> None:
    """Each enabled control, moved from the defaults, changes the drawing, the notes or the dependencies."""
    for name in BUILT_IN:
        ex = Explorer(name, debounce_s=0)
        start = ex.config
        for field, control in ex.controls.items():
            _reset(ex, start)
            values = [v for v in offered(control, every=False) if v != getattr(start, field)]
            if control.disabled or not values or isinstance(control, widgets.Text):
                continue
            before = _shown(ex)
            control.value = values[-1]
            assert _shown(ex) != before, f"{name}: {control.description} = {values[-1]!r} changes nothing shown"


def _shown(ex: Explorer) -> tuple[Any, ...]:
    from ts_explore.render.deps import dependency_graph

    deps = dependency_graph(ex.task_set).source if ex.task_set is not None else None
    return ex.dot, ex.message.value, deps


def test_state_config_and_verdict_are_observable() -> None:
    ex = Explorer("persistent_copy", debounce_s=0)
    seen: list[tuple[str, Any]] = []
    ex.observe(lambda change: seen.append((change["name"], change["new"])), names=["state", "verdict", "config"])
    ex.controls["queue"].value = QueueKind.CLC
    states = [v for n, v in seen if n == "state"]
    verdicts = [v for n, v in seen if n == "verdict"]
    assert states[0] == "verifying" and states[-1] == "idle"
    assert verdicts[0] is None and verdicts[-1] is ex.verdict and ex.verdict.ok, "None while the proof runs"
    assert ("config", ex.config) in seen and ex.config.queue is QueueKind.CLC
    ex.set(skip=SkipRule.CUSTOM, skip_fn=None)
    assert ex.state == "error" and ex.verdict is None


def test_catalog_has_the_built_in_scenarios() -> None:
    assert set(BUILT_IN) <= set(CATALOG)
    for name in BUILT_IN:
        assert choices(get(name), get(name).default_config())
