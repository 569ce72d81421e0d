"""Every value a control offers is accepted in every configuration the controls can reach, and the Defaults
button leads back from any of them.

A seeded random walk moves one control at a time to a value it offers (other
controls adjusting as they do in the panel) and, at each configuration it
reaches, asks the scenario about every value each other control offers: every
dropdown option and a sample of each slider's positions (its step included,
K in 16s for fp8). The default tier walks a few short seeded paths; the soak
tier walks long ones over many more slider positions.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import ipywidgets as widgets
import pytest

import control_walk
from control_walk import WALKED
from tiers import scaled
from ts_explore.app.explorer import Explorer
from ts_explore.kernels.gemm_geometry import DType
from ts_explore.scenarios import get
from ts_explore.scenarios.choices import choices, pick


@pytest.mark.parametrize("name", WALKED)
def test_every_offer_along_a_walk_is_accepted(name: str) -> None:
    sc = get(name)
    for seed in range(scaled(4, 8)):
        rng = random.Random(seed)
        for config in control_walk.walk(sc, scaled(15, 80), rng):
            refused = control_walk.refused_offers(sc, config, rng, sample=scaled(4, 128))
            assert not refused, f"{name} (seed {seed}) at {config}: {refused[:3]}"


def _offer_of(control: widgets.Widget) -> Any:
    if isinstance(control, widgets.IntSlider):
        return (control.min, control.max, control.step)
    if isinstance(control, widgets.Dropdown):
        return tuple(v for _, v in control.options)
    return None


def _offer_wanted(choice: Any, control: widgets.Widget) -> Any:
    if isinstance(control, widgets.IntSlider) and choice.low is not None:
        return (choice.low, choice.high, choice.step)
    if isinstance(control, widgets.Dropdown) and choice.options is not None:
        return tuple(choice.options)
    return _offer_of(control)


@pytest.mark.parametrize("name", ["hopper_gemm", "hopper_attention", "pipelined_copy"])
def test_the_widgets_offer_what_the_walk_checked(name: str) -> None:
    """The panel's sliders and dropdowns carry the range, step and options :func:`choices` computed."""
    sc = get(name)
    ex = Explorer(sc, debounce_s=0)
    for config in list(control_walk.walk(sc, scaled(4, 30), random.Random(7)))[1:]:
        ex.set(**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)})
        assert ex.config == config and ex.error is None, ex.error
        offer = choices(sc, config)
        for field, control in ex.controls.items():
            if control.disabled:
                continue
            assert _offer_of(control) == _offer_wanted(offer[field], control), (
                f"{name}: {control.description} at {config}")


def test_fp8_k_slider_steps_in_16_bytes_and_offers_nothing_tma_refuses() -> None:
    ex = Explorer("hopper_gemm", debounce_s=0)
    k = ex.controls["k"]
    assert (k.min, k.step) == (8, 8)
    ex.controls["dtype"].value = DType.FP8
    assert ex.error is None and ex.config.dtype is DType.FP8
    assert k.step == 16 and k.min == 16 and k.value % 16 == 0
    positions = range(k.min, k.max + 1, k.step)
    assert 16392 not in positions and 16400 in positions
    sample = [*positions[:3], *positions[-3:], *random.Random(0).sample(positions, 20)]
    refused = [v for v in sample if pick(ex.scenario, ex.config, "k", v)[1] is not None]
    assert not refused, f"K offers {refused[:3]} with fp8"
    assert "between steps of 16" in k.tooltip and "not a multiple of 16 bytes" in k.tooltip
    ex.controls["dtype"].value = DType.BF16
    assert (k.min, k.step) == (8, 8), "bf16 rows need only 8-element multiples again"


def test_one_consumer_warpgroup_never_offers_the_q_tile_its_registers_refuse() -> None:
    ex = Explorer("hopper_attention", debounce_s=0)
    ex.controls["consumer_wgs"].value = 1
    assert ex.error is None and ex.config.consumer_wgs == 1
    offered = control_walk.offered(ex.controls["tile_q"], list)
    assert 128 not in offered
    assert all(pick(ex.scenario, ex.config, "tile_q", v)[1] is None for v in offered)


def test_defaults_lead_back_from_the_attention_dead_end() -> None:
    """Q tile 128 -> 64 leaves both controls one value each and 'Back to last safe' disabled: Defaults goes back."""
    fresh = Explorer("hopper_attention", debounce_s=0)
    ex = Explorer("hopper_attention", debounce_s=0)
    assert ex.defaults_button.disabled, "nothing to go back to at the defaults"
    ex.controls["tile_q"].value = 64
    assert ex.config.consumer_wgs == 1 and ex.verdict is not None and ex.verdict.ok
    stuck = [ex.controls["tile_q"], ex.controls["consumer_wgs"]]
    assert all(control_walk.offered(c, list) in ([], [64], [1]) for c in stuck), "both offer only the new value"
    assert ex.back_button.disabled and not ex.defaults_button.disabled
    ex.defaults_button.click()
    assert ex.config == ex.scenario.default_config() == fresh.config
    assert ex.verdict is not None and ex.verdict.status is fresh.verdict.status
    assert ex.controls["tile_q"].value == 128 and ex.controls["consumer_wgs"].value == 2
    assert [_offer_of(c) for c in ex.controls.values()] == [_offer_of(c) for c in fresh.controls.values()]
    assert ex.defaults_button.disabled


@pytest.mark.parametrize("name", WALKED)
def test_defaults_lead_back_from_where_a_walk_ends(name: str) -> None:
    sc = get(name)
    fresh = Explorer(sc, debounce_s=0)
    ex = Explorer(sc, debounce_s=0)
    for seed in range(scaled(1, 5)):
        end = list(control_walk.walk(sc, scaled(8, 60), random.Random(seed)))[-1]
        ex.set(**{f.name: getattr(end, f.name) for f in dataclasses.fields(end)})
        if end != sc.default_config():
            assert not ex.defaults_button.disabled
        ex.defaults_button.click()
        assert ex.config == sc.default_config(), f"{name} (seed {seed}) from {end}"
        if ex.state == "verifying":  # the defaults' proof went on in the background
            assert ex.wait_for_proof(60)
        assert ex.error is None and ex.state == "idle"
        assert ex.verdict is not None and ex.verdict.status is fresh.verdict.status
        assert [c.value for c in ex.controls.values()] == [c.value for c in fresh.controls.values()]


def test_a_stranded_slider_moves_to_the_nearest_accepted_value_between_refused_ones() -> None:
    """Causal with a planted fault: the viewed Q tile must exist and see a key, so both ends of its range are
    refused; fewer Q rows move it down to the last tile that still exists (a long walk found this)."""
    sc = get("hopper_attention")
    config = sc.config(causal=True, seqlen_q=2024, seqlen_kv=1024, q_tile=10,
                       fault="both consumers wait for the turn before either hands it over (deadlock)")
    moved, err = pick(sc, config, "seqlen_q", 1152)
    assert err is None, err
    assert moved.seqlen_q == 1152 and moved.q_tile == 8
    ex = Explorer(sc, debounce_s=0)
    ex.set(config)
    ex.controls["seqlen_q"].value = 1152
    assert ex.error is None and ex.config.q_tile == 8
    assert ex.adjusted and ex.adjusted[0].startswith("view Q tile set to 8")


def test_gemm_refusals_name_the_control_to_move() -> None:
    """fp8 with K=264 moves K to a multiple of 16, and fewer CTAs move the viewed CTA, instead of refusing."""
    ex = Explorer("hopper_gemm", debounce_s=0, k=264)
    assert DType.FP8 in [v for _, v in ex.controls["dtype"].options]
    ex.controls["dtype"].value = DType.FP8
    assert ex.error is None and ex.config.k == 256
    assert ex.adjusted and ex.adjusted[0].startswith("K (CPU view) set to 256")
    sc = get("hopper_gemm")
    wide = sc.config(m=42424, n=14640, block=40)
    moved, err = pick(sc, wide, "ctas", 5)
    assert err is None and moved.block < moved.ctas_launched()
