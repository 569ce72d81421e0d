"""Timeline drawings, HTML, the explorer's trace and launch-anyway toggles, and fault refusals (CPU only)."""

from __future__ import annotations

from typing import Any

import matplotlib.colors as mcolors
import pytest

from test_timeline_model import synthetic_run
from ts_explore.app.launch_panel import LaunchPanel, launch_blockers
from ts_explore.gpu import LaunchError, launch
from ts_explore.gpu.trace_run import HangError, decode_events, predicted_order
from ts_explore.model import Family, Section, TaskSet
from ts_explore.model.plan import DeviceLimits
from ts_explore.model.hang import HangReport, PredictedBlock, WarpProgress
from ts_explore.model.timeline import TraceSpec
from ts_explore.render.style import FAMILY_FILL
from ts_explore.render.timeline import comparison_figure, timeline_figure
from ts_explore.render.timeline_html import hang_html, timeline_html
from ts_explore.gpu.probe import Probe

SM90 = Probe(None, "NVIDIA H200", DeviceLimits(name="NVIDIA H200", cc=(9, 0), sms=132))


@pytest.fixture(scope="module")
def traced() -> tuple[Any, ...]:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec, seed=7)
    return sc, cfg, plan, decode_events(raw, task_set, scenario=sc.name, spec=spec)


def _bar_colours(ax: Any) -> set[str]:
    return {mcolors.to_hex(c) for coll in ax.collections for c in coll.get_facecolors()}


def test_lanes_per_warp_in_the_diagrams_colours(traced: tuple[Any, ...]) -> None:
    *_, timeline = traced
    fig = timeline_figure(timeline, cta=0)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"CTA 0 · warp {w} ({'load' if w == 4 else 'store'})" for w in range(5)]
    wanted = {FAMILY_FILL[f] for f in (Family.ACQUIRE, Family.COMMIT, Family.WAIT, Family.RELEASE,
                                       Family.PRODUCER_WORK, Family.CONSUMER_WORK)}
    assert wanted <= _bar_colours(ax)
    assert sum(len(c.get_paths()) for c in ax.collections) == len(timeline.only(cta=0).events)


def test_zoom_keeps_only_the_window(traced: tuple[Any, ...]) -> None:
    *_, timeline = traced
    fig = timeline_figure(timeline, cta=0, window_ns=(0, 500))
    drawn = sum(len(c.get_paths()) for c in fig.axes[0].collections)
    assert 0 < drawn < len(timeline.only(cta=0).events)


def test_comparison_puts_the_predicted_order_above_the_measured_lanes(traced: tuple[Any, ...]) -> None:
    sc, cfg, plan, timeline = traced
    predicted = predicted_order(sc, cfg, plan, timeline, cta=0)
    assert set(predicted) == {"store", "load"}
    fig = comparison_figure(timeline, predicted, cta=0, steps=10)
    top, bottom = fig.axes[:2]
    assert [t.get_text() for t in top.get_yticklabels()] == ["store (predicted order)", "load (predicted order)"]
    assert len(bottom.get_yticklabels()) == 5
    edges = {mcolors.to_hex(c) for coll in bottom.collections for c in coll.get_edgecolors()}
    assert "#d62728" not in edges, "a run that follows the schedule has no red outlines"


def test_empty_timeline_says_so() -> None:
    from ts_explore.model.timeline import Timeline

    fig = timeline_figure(Timeline("x", (), ()))
    assert "no step events" in fig.axes[0].get_title()


def test_html_of_a_timeline_and_a_hang(traced: tuple[Any, ...]) -> None:
    *_, timeline = traced
    html = timeline_html(timeline)
    assert "data:image/png;base64" in html and "smem.wait" in html and "Measured timeline" in html
    report = HangReport("pipelined_copy", 10, (WarpProgress(0, 0, "store", "entered", 1, "smem.wait", 8, 0,
                                                        Section.LOOP),),
                        (PredictedBlock("store", "smem.wait", 1, 8),))
    text = hang_html(report)
    assert "predicted: store blocked in smem.wait, iteration 8" in text and "stopped in smem.wait" in text


def test_launch_anyway_lifts_only_the_verifiers_objection() -> None:
    assert "does not verify" in launch_blockers(None, SM90)[0]
    assert launch_blockers(None, SM90, force=True) == []
    none = Probe("no_driver", "no NVIDIA driver on this machine")
    assert launch_blockers(None, none, force=True) == ["no NVIDIA driver on this machine"]


def test_panel_passes_trace_and_force_and_shows_a_hang_diagnosis() -> None:
    calls = []
    report = HangReport("pipelined_copy", 10, (WarpProgress(0, 4, "load", "entered", 2, "smem.acquire", 4, 0,
                                                       Section.LOOP),),
                        (PredictedBlock("load", "smem.acquire", 2, 4),))

    def hangs(scenario: Any, config: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        raise HangError("did not finish in 10 s", report)

    panel = LaunchPanel(launch=hangs, probe=lambda: SM90)
    panel.update("scenario", "config", None)
    assert panel.button.disabled and "launch anyway" in panel.reasons.value
    panel.force.value = True
    assert not panel.button.disabled, "ticking 'launch anyway' re-decides at once"
    panel.trace.value = True
    panel.button.click()
    assert calls == [{"trace": True, "force": True}]
    assert "did not finish" in panel.result.value and "stopped in smem.acquire, iteration 4" in panel.result.value


def test_faults_the_verifier_rejects_are_refused_unless_forced() -> None:
    with pytest.raises(LaunchError) as err:
        launch("pipelined_copy", fault="consumer_extra", sizes=[32 * 4096], ctas=4)
    assert err.value.reason == "unverified" and "force=True" in str(err.value)
    with pytest.raises(LaunchError) as err:
        launch("persistent_copy", fault="queue_in_skippable", sizes=[16 * 8192])
    assert "WorkQueue operations cannot appear inside a skippable() block" in str(err.value)


def test_fault_knob_needs_a_queue_for_the_persistent_copy() -> None:
    from ts_explore.scenarios import get

    sc = get("persistent_copy")
    with pytest.raises(ValueError, match="needs a work queue"):
        sc.build(sc.config(queue="none", overlaunch=0, fault="pdl_launch_before_wait"))
    tasks = sc.build(sc.config(fault="pdl_launch_before_wait")).tasks
    assert {r.name for r in tasks[0].src_resources} >= {"pdl_wait"}


def test_the_panel_task_set_type_is_unchanged() -> None:
    panel = LaunchPanel(launch=lambda s, c: None, probe=lambda: SM90)
    panel.update("s", "c", TaskSet(tasks=(), resources=(), edges=()))
    assert not panel.button.disabled
