"""Why slow, on the committed H200 traces and on simulated rings: wait sums, the critical path, the bound, the model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import matplotlib.colors as mcolors
import pytest
from hypothesis import given, settings, strategies as st

from ring_sim import Ring, simulate
from ts_explore.analysis.critical_path import SLACK_NS
from ts_explore.analysis.pipeline_model import ring_profiles
from ts_explore.analysis.stalls import pipeline_of, stalls
from ts_explore.analysis.timeline import step_table
from ts_explore.model.timeline import Timeline, TraceSpec
from ts_explore.model.trace_file import load_trace
from ts_explore.render.stalls import pipeline_colours, stalls_figure, stalls_html

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
TRACES = ("hopper_gemm", "pipelined_copy", "persistent_copy")


@pytest.fixture(scope="module", params=TRACES)
def traced(request: pytest.FixtureRequest) -> tuple[str, Timeline]:
    return request.param, load_trace(RESULTS / f"{request.param}.h200.trace.json")


def test_wait_sums_equal_the_blocked_time_of_the_events(traced: tuple[str, Timeline]) -> None:
    _, t = traced
    s = t.stalls()
    blocked = [e for e in t.events if e.blocking]
    assert s.wait_ns == sum(e.duration_ns for e in blocked) == sum(r.blocked_ns for r in step_table(t).rows)
    for p in s.pipelines:
        mine = [e for e in blocked if pipeline_of(e) == p.pipeline and e.task == p.task
                and (e.stage.is_producer == (p.side == "empty"))]
        assert p.wait_ns == sum(e.duration_ns for e in mine) and p.count == len(mine)
        assert p.warps == len({(e.cta, e.warp) for e in mine})
        assert sum(ns for _, ns in p.stages) == p.wait_ns
    for task in s.tasks:
        assert task.wait_ns == sum(e.duration_ns for e in blocked if e.task == task.task)


def test_the_critical_path_ends_at_the_last_event_and_runs_forward_in_time(traced: tuple[str, Timeline]) -> None:
    _, t = traced
    path = t.stalls().path
    last = max(t.events, key=lambda e: (e.end_ns, e.start_ns))
    assert path.steps[-1] is last
    assert all(a.end_ns <= b.end_ns + SLACK_NS for a, b in zip(path.steps, path.steps[1:]))
    assert sum(path.covered()) <= path.length_ns + SLACK_NS * len(path.steps)
    assert set(path.by_task()) <= {task.name for task in t.tasks}


GOLDEN = {
    "hopper_gemm": "the load warps wait 51 % of their time for a free slot of `smem_ab` while the mma task waits 14 % "
                   "for it to fill: too few slots in flight for the latency (latency-bound)",
    "pipelined_copy": "the load warps wait 39 % of their time for a free slot of `smem` while the store task waits "
                      "34 % for it to fill: too few slots in flight for the latency (latency-bound)",
    "persistent_copy": "no task waits 5 % of its time or more: the work steps are the bound; the critical path "
                       "spends most in `copy: dst.store`",
}


def test_the_bound_in_a_sentence_on_the_h200_traces(traced: tuple[str, Timeline]) -> None:
    name, t = traced
    s = t.stalls()
    assert s.bottleneck() == GOLDEN[name]
    assert s.bottleneck() in s.text() and "critical path:" in s.text()


def test_a_loaded_trace_gives_the_same_report_as_the_timeline_it_was_saved_from(traced: tuple[str, Timeline],
                                                                                 tmp_path: Path) -> None:
    _, t = traced
    again = load_trace(t.save(tmp_path / "again.json"))
    assert again.stalls() == t.stalls()


def test_a_trace_without_waits_is_refused_with_the_fix() -> None:
    t = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    with pytest.raises(ValueError, match="trace=True"):
        stalls(replace(t, events=()))
    with pytest.raises(ValueError, match="only work steps"):
        stalls(replace(t, spec=TraceSpec(stages="work")))


def test_the_picture_colours_each_wait_by_its_pipeline_and_bars_its_share() -> None:
    t = load_trace(RESULTS / "hopper_gemm.h200.trace.json")
    s = t.stalls()
    fig = stalls_figure(s, cta=0)
    lanes, bars = fig.axes[0], fig.axes[1]
    colours = {mcolors.to_hex(c) for coll in lanes.collections for c in coll.get_facecolors()}
    assert {mcolors.to_hex(c) for c in pipeline_colours(s).values()} <= colours
    assert [round(b.get_width(), 6) for b in bars.patches] == [round(100 * p.share, 6) for p in s.pipelines]
    assert [b.get_hatch() for b in bars.patches] == ["///" if p.side == "empty" else None for p in s.pipelines]
    assert len(lanes.get_yticklabels()) == len(t.warps(0))
    assert fig._suptitle.get_text() == s.bottleneck()
    assert "Why slow" in stalls_html(s, figure=False)


# -- simulated rings: the sentence names the regime, and the model predicts what the simulator measures ----------
def test_the_sentence_names_the_regime_of_a_simulated_ring() -> None:
    latency = stalls(simulate(Ring(stages=1))).bottleneck()
    consumer = stalls(simulate(Ring(latency_ns=200, work_ns=1600, consumer_warps=1, stages=4))).bottleneck()
    producer = stalls(simulate(Ring(load_ns=900, latency_ns=300, stages=4, work_ns=200))).bottleneck()
    assert "latency-bound" in latency
    assert consumer.startswith("the load warp waits") and "the store task (which releases it) is the bound" in consumer
    assert producer.startswith("the store warps wait") and "the load task (its producer) is the bound" in producer


rings = st.builds(Ring, stages=st.integers(1, 6), items=st.integers(24, 64), load_ns=st.integers(50, 1200),
                  commit_ns=st.integers(5, 40), latency_ns=st.integers(50, 2500), work_ns=st.integers(40, 2400),
                  release_ns=st.integers(5, 40), producer_warps=st.sampled_from([1, 2]),
                  consumer_warps=st.sampled_from([1, 2, 4]))
changes = st.sampled_from([dict(stages=2), dict(stages=1), dict(consumer_warps=2), dict(producer_warps=2)])


@settings(max_examples=40, deadline=None)
@given(ring=rings, change=changes)
def test_the_ring_model_predicts_the_simulated_speedup(ring: Ring, change: dict[str, int]) -> None:
    scaled = {k: getattr(ring, k) * v if k != "stages" else ring.stages + v for k, v in change.items()}
    t = simulate(ring)
    assert stalls(t).wait_ns == sum(e.duration_ns for e in t.events if e.blocking)
    profile = ring_profiles(t, {"smem": ring.stages})[0]
    measured = t.span_ns / simulate(replace(ring, **scaled)).span_ns
    predicted = profile.speedup(**scaled)
    assert predicted == pytest.approx(measured, rel=0.12), profile.explain()


def test_the_launch_tab_shows_why_slow_when_the_launch_was_traced() -> None:
    from types import SimpleNamespace

    from ts_explore.app.launch_panel import LaunchPanel
    from ts_explore.gpu.probe import Probe
    from ts_explore.model import TaskSet
    from ts_explore.model.plan import DeviceLimits

    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    launched = SimpleNamespace(timeline=timeline, _repr_html_=lambda: "<p>ran</p>")
    probe = Probe(None, "NVIDIA H200", DeviceLimits(name="NVIDIA H200", cc=(9, 0), sms=132))
    panel = LaunchPanel(launch=lambda s, c, **k: launched, probe=lambda: probe)
    panel.update("s", "c", TaskSet(tasks=(), resources=(), edges=()))
    panel.button.click()
    assert "Why slow" in panel.result.value and timeline.stalls().bottleneck().split("`")[0] in panel.result.value
    launched.timeline = None
    panel.button.click()
    assert "Why slow" not in panel.result.value and "<p>ran</p>" in panel.result.value


def test_the_critical_path_follows_the_data_to_the_producer_only_when_the_consumer_waited_for_it() -> None:
    from ts_explore.model import Stage

    latency = stalls(simulate(Ring(stages=1))).path
    assert latency.crossings() > 0 and latency.by_task()["load"] > 0
    for before, after, link in zip(latency.steps, latency.steps[1:], latency.links[1:]):
        if link.endswith("full"):  # the k-th wait is let through by the k-th commit
            assert before.stage is Stage.PRODUCER_COMMIT and after.stage is Stage.CONSUMER_WAIT
            assert before.iteration == after.iteration and before.end_ns <= after.end_ns
    consumer = stalls(simulate(Ring(latency_ns=200, work_ns=1600, consumer_warps=1, stages=4))).path
    shares = consumer.by_task()
    assert shares["store"] >= 0.9 * sum(shares.values())


def test_the_per_warp_rows_add_up_to_the_pipeline_sums(traced: tuple[str, Timeline]) -> None:
    _, t = traced
    s = t.stalls()
    df = s.frame()
    assert len(df) == len(s.warps) and df["wait_ns"].sum() == s.wait_ns
    for p in s.pipelines:
        mine = df[(df["pipeline"] == p.pipeline) & (df["waits for"] == p.side) & (df["task"] == p.task)]
        assert mine["wait_ns"].sum() == p.wait_ns and mine["count"].sum() == p.count


def _scanned_release(index, e, name):  # the search the index replaced: every release of the pipeline, scanned
    from ts_explore.analysis.critical_path import SLACK_NS

    released = [r for r in index.releases.get((e.cta, name), ())
                if r.warp != e.warp and e.start_ns <= r.end_ns <= e.end_ns + SLACK_NS]
    return max(released, key=lambda s: s.end_ns, default=None)


def _path_both_ways(t: Timeline, monkeypatch: pytest.MonkeyPatch):
    from ts_explore.analysis import critical_path as cp

    fast = cp.critical_path(t)
    with monkeypatch.context() as m:
        m.setattr(cp._Index, "_release_during", _scanned_release)
        scanned = cp.critical_path(t)
    return fast, scanned


@settings(max_examples=40, deadline=None)
@given(stages=st.integers(1, 6), items=st.integers(1, 40), producers=st.integers(1, 3), consumers=st.integers(1, 4),
       work=st.integers(0, 2000), latency=st.integers(0, 3000), release=st.integers(0, 64))
def test_the_indexed_release_search_finds_the_same_path_as_a_full_scan(stages, items, producers, consumers, work,
                                                                       latency, release) -> None:
    ring = Ring(stages=stages, items=items, producer_warps=producers, consumer_warps=consumers, work_ns=work,
                latency_ns=latency, release_ns=release)
    with pytest.MonkeyPatch.context() as mp:
        fast, scanned = _path_both_ways(simulate(ring), mp)
    assert fast == scanned


def test_the_indexed_release_search_matches_on_the_h200_traces(traced: tuple[str, Timeline],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fast, scanned = _path_both_ways(traced[1], monkeypatch)
    assert fast == scanned and fast.steps
