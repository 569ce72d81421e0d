"""The Stepper widget, driven headless: set widget values, call button handlers, read the panes."""

from __future__ import annotations

import pytest

from ts_explore import Stepper
from ts_explore.analysis import unroll


@pytest.fixture
def stepper(gallery_verdicts):
    return Stepper(gallery_verdicts["missing_release"][0])


def test_starts_at_the_initial_state(stepper):
    assert stepper.slider.max == stepper.moves == 11
    assert stepper.slider.value == 0
    assert stepper.sentence.value.startswith("Start:")
    assert stepper.first_button.disabled and stepper.prev_button.disabled
    assert not stepper.next_button.disabled
    assert "data-changed='1'" not in stepper.credits.value


def test_slider_moves_cursors_and_highlights_changed_credit(stepper):
    stepper.slider.value = 3  # Load's acquire of smem
    assert "takes a free slot of smem" in stepper.sentence.value
    assert "smem free slots 1 \u2192 0" in stepper.sentence.value
    assert stepper.text.startswith("Step 3: Load takes a free slot of smem")
    assert "data-changed='1'" in stepper.credits.value and "1 &#8594; 0" in stepper.credits.value
    assert stepper.states["Load"].startswith("done,done,done,next")
    assert "blocked" not in stepper.lanes.value.split("data-state='")[1]


def test_buttons(stepper):
    stepper.next_button.click()
    stepper.next_button.click()
    assert stepper.slider.value == 2
    stepper.prev_button.click()
    assert stepper.slider.value == 1
    stepper.last_button.click()
    assert stepper.slider.value == 11
    assert stepper.next_button.disabled and stepper.last_button.disabled
    assert "Stuck:" in stepper.sentence.value
    assert stepper.lanes.value.count("data-state='blocked'") == 2
    stepper.first_button.click()
    assert stepper.slider.value == 0
    stepper.go(99)
    assert stepper.slider.value == 11


def test_final_sentence_names_who_waits_for_whom(gallery_verdicts):
    s = Stepper(gallery_verdicts["cross_wait"][0])
    assert s.moves == 0  # stuck before any move
    assert "Ping waits for a commit on right; only Pong commits right, after its own wait on left" in s.sentence.value


def test_race_stepper(gallery_verdicts):
    s = Stepper(gallery_verdicts["smem_alias_race"][0])
    s.last_button.click()
    assert "SMEM aliasing race" in s.sentence.value
    assert "data-state='offending'" in s.lanes.value


def test_ok_verdict_says_there_is_nothing_to_step(gallery_verdicts):
    s = Stepper(gallery_verdicts["cross_wait"][1])
    assert "No counterexample" in s.title.value and "safe" in s.title.value
    assert s.slider.disabled and s.next_button.disabled
    assert "Ping" in s.lanes.value  # the checked schedules are still shown


@pytest.mark.parametrize("which", [1, 0])  # safe, and a failure without a counterexample
def test_go_without_a_counterexample_shows_a_sentence(gallery_verdicts, which):
    name = "cross_wait" if which else "dma_release_early"
    s = Stepper(gallery_verdicts[name][which])
    for k in (0, 3, -1):
        s.go(k)
        assert "could not draw" not in s.sentence.value and "AssertionError" not in s.sentence.value
        assert s.sentence.value.startswith(("safe", "DMA"))
    s.last_button.click()
    assert "could not draw" not in s.sentence.value


def test_failure_without_counterexample(gallery_verdicts):
    s = Stepper(gallery_verdicts["dma_release_early"][0])
    assert "No counterexample" in s.title.value
    assert "DMA" in s.sentence.value


def test_errors_show_in_the_panel(stepper, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("lanes exploded")

    monkeypatch.setattr("ts_explore.app.stepper.lane_views", broken)
    stepper.slider.value = 4
    assert "could not draw step 4" in stepper.sentence.value and "lanes exploded" in stepper.sentence.value


def test_displays_as_its_widget(stepper):
    bundle = stepper._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert stepper.widget.children


def test_rejects_non_verdicts():
    with pytest.raises(TypeError, match="Verdict"):
        Stepper({"tasks": []})


def test_lane_states_follow_the_counterexample(gallery_verdicts):
    v = gallery_verdicts["missing_release"][0]
    deadlock = v.deadlocks[0]
    run = v.run_of(deadlock)
    start = unroll.lane_views(run, deadlock, 0)
    assert {c.state for view in start for c in view.cells if c.step} <= {unroll.NEXT, unroll.PENDING}
    end = unroll.lane_views(run, deadlock)  # the bad state: blocked steps marked, the moves made are done
    states = [c.state for view in end for c in view.cells if c.step]
    assert states.count(unroll.BLOCKED) == len(deadlock.blocked)
    assert states.count(unroll.DONE) == len(deadlock.interleaving) == sum(view.cursor for view in end)
