"""Advice without a GPU: every offered change is accepted by the scenario's coercion and proven SAFE; a change
that would deadlock or that the scenario refuses is never offered; check=True on a machine without a GPU says
so and returns the predictions only."""

from __future__ import annotations

import doctest
import importlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest

from ring_sim import Ring, simulate
from ts_explore import gpu
from ts_explore.gpu.advise import Advice, advise
from ts_explore.gpu.plan import plans_for
from ts_explore.gpu.result import LaunchResult, SizeRun
from ts_explore.gpu.safety import prove
from ts_explore.gpu.timing import Timing
from ts_explore.model.plan import DeviceLimits
from ts_explore.model.trace_file import load_trace
from ts_explore.scenarios import CATALOG, get
from ts_explore.scenarios.base import Scenario, register
from ts_explore.scenarios.knobs import configure
from ts_explore.scenarios.pipelined import PipelineFault, PipelinedCopy, build, check

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
H200 = DeviceLimits.h200()
SIZES = (1 << 20,)


def _offered_are_coerced_and_safe(advice: Advice, sizes: tuple[Any, ...] = SIZES) -> None:
    sc = get(advice.scenario)
    for s in advice.suggestions:
        assert configure(sc, dict(s.changes), base=advice.config) == s.config
        assert prove(sc, s.config, plans_for(sc, s.config, sizes, H200)).ok
        assert s.predicted >= 1.05 and s.verdict.startswith("proven SAFE")


@pytest.fixture
def deadlocks_at_eight_stages() -> Iterator[Scenario]:
    """The pipelined copy, except that with 8 stages its store task never releases (the verifier says UNSAFE)."""
    def broken(cfg: PipelinedCopy, ctx: Any) -> Any:
        return build(replace(cfg, fault=PipelineFault.NO_RELEASE) if cfg.stages == 8 else cfg, ctx)

    sc = register(Scenario("ring_copy", "copy that deadlocks at 8 stages", PipelinedCopy, broken, check_fn=check,
                           kernel="ts_explore.kernels.pipelined"), replace=True)
    yield sc
    CATALOG.pop("ring_copy", None)


def test_an_unsafe_change_is_never_offered(deadlocks_at_eight_stages: Scenario) -> None:
    timeline = replace(simulate(Ring(stages=1, consumer_warps=4)), scenario="ring_copy")
    advice = advise(timeline, deadlocks_at_eight_stages.config(stages=1, ctas=4), sizes=SIZES)
    assert advice.suggestions, advice.text()
    assert all(s.config.stages != 8 for s in advice.suggestions)
    assert any(change.startswith("stages=8") and why.startswith("not proven SAFE")
               for change, why in advice.passed_over), advice.passed_over
    assert advice.top is not None and dict(advice.top.changes).get("stages", 1) > 1  # latency-bound: more slots
    _offered_are_coerced_and_safe(advice)


def test_a_refused_change_is_never_offered() -> None:
    timeline = load_trace(RESULTS / "hopper_gemm.h200.trace.json")
    config = get("hopper_gemm").config(stages=2)
    advice = advise(timeline, config, sizes=((512, 512, 256),))
    refused = {change for change, why in advice.passed_over if why.startswith("refused")}
    assert {"stages=5", "stages=6", "stages=7", "stages=8"} <= refused
    assert all(s.config.stages <= 4 for s in advice.suggestions)
    assert advice.top is not None and advice.top.changes[0][0] == "stages"
    _offered_are_coerced_and_safe(advice, ((512, 512, 256),))


def test_advice_from_the_h200_copy_trace_ranks_coerced_safe_changes() -> None:
    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    advice = advise(timeline, get("pipelined_copy").config(ctas=132), sizes=SIZES)
    assert advice.profiles and advice.profiles[0].stages == 4
    assert [s.predicted for s in advice.suggestions] == sorted((s.predicted for s in advice.suggestions),
                                                               reverse=True) or len(advice.suggestions) <= 1
    _offered_are_coerced_and_safe(advice)
    assert advice.stalls.bottleneck() in advice.text()
    page = advice._repr_html_()
    assert "Why slow" in page and "<img" in page and "store_warps=" in page


def test_no_pipeline_no_prediction() -> None:
    timeline = load_trace(RESULTS / "persistent_copy.h200.trace.json")
    advice = advise(timeline, get("persistent_copy").config(ctas=132), sizes=SIZES)
    assert advice.suggestions == () and "nothing to predict" in advice.text()


def test_a_loaded_trace_needs_its_config() -> None:
    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    with pytest.raises(ValueError, match="pass the config the trace ran"):
        advise(timeline)
    with pytest.raises(TypeError, match="takes a PipelinedCopy"):
        advise(timeline, get("hopper_gemm").config())


def _traced_result() -> LaunchResult:
    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    config = get("pipelined_copy").config(ctas=132)
    plan = plans_for(get("pipelined_copy"), config, SIZES, H200)[0]
    kernel = Timing("kernel", (0.01, 0.011, 0.012), SIZES[0] * 8)
    run = SizeRun(SIZES[0], SIZES[0] * 8, plan.ctas, kernel, timeline=timeline)
    device = gpu.DeviceInfo("NVIDIA H200", (9, 0), 132, 4800.0, 1 << 37, H200)
    return LaunchResult("pipelined_copy", config, device, (run,), 0.0, 0.0, True, "proven", plans=(plan,))


def test_check_on_a_machine_without_a_gpu_says_so_and_returns_the_predictions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "cuda_unavailable_reason", lambda: ("no_device", "no CUDA device is visible"))
    launched: list[Any] = []
    monkeypatch.setattr(gpu, "launch", lambda *a, **k: launched.append(a))
    result = _traced_result()
    predicted = result.advise()
    checked = result.advise(check=True)
    assert not launched
    assert "no GPU here (no CUDA device is visible)" in checked.note and "predictions only" in checked.text()
    assert [(s.changes, s.predicted) for s in checked.suggestions] == [(s.changes, s.predicted)
                                                                       for s in predicted.suggestions]
    assert all(s.measured is None for s in checked.suggestions)


def test_check_on_this_machine_without_a_gpu() -> None:
    if gpu.cuda_unavailable_reason() is None:
        pytest.skip("a GPU is visible here: tests/gpu launches the suggestions")
    checked = _traced_result().advise(check=True)
    assert checked.note.startswith("no GPU here") and all(s.measured is None for s in checked.suggestions)


def test_a_launch_without_a_timeline_is_told_to_trace() -> None:
    result = replace(_traced_result(), runs=(replace(_traced_result().runs[0], timeline=None),))
    with pytest.raises(ValueError, match="trace=True"):
        result.advise()


@pytest.mark.parametrize("name", ["ts_explore.analysis.advice_rank", "ts_explore.analysis.pipeline_model",
                                  "ts_explore.analysis.stalls", "ts_explore.gpu.advice_knobs"])
def test_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0, result


def test_check_with_a_gpu_launches_each_suggestion_and_reports_measured_speedups(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    launched: list[Any] = []

    def fake_launch(scenario: Any, config: Any, **kwargs: Any) -> Any:  # 1 ms per store warp fewer than 8
        launched.append(config)
        ms = 1.0 + (8 - config.store_warps) / 4
        return SimpleNamespace(runs=(SimpleNamespace(kernel=SimpleNamespace(median_ms=ms)),))

    monkeypatch.setattr(gpu, "cuda_unavailable_reason", lambda: None)
    monkeypatch.setattr(gpu, "launch", fake_launch)
    result = _traced_result()
    checked = result.advise(check=True)
    assert checked.suggestions and launched[0] == result.config and launched[1:] == [s.config for s in
                                                                                      checked.suggestions]
    for s in checked.suggestions:
        assert s.measured == pytest.approx(checked.baseline_ms / (1.0 + (8 - s.config.store_warps) / 4))
        assert "measured" in s.text()
    assert checked.note.startswith("measured: medians of 20 CUDA-event timings")
