"""Launch behaviour that needs no GPU: refusals, host references, comparison, the worker protocol, plots."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import importlib
import sys
import types

import numpy as np
import pytest

import ts_explore
from ts_explore.gpu import LaunchError, LaunchResult, SizeRun, cuda_unavailable_reason, launch
from ts_explore.gpu.cache import CompileCache
from ts_explore.gpu.device import DeviceInfo
from ts_explore.gpu.reference import FILL, compare, pattern
from ts_explore.gpu.plan import launch_plan, plans_for
from ts_explore.model.plan import DeviceLimits, Instance, LaunchPlan
from ts_explore.gpu.result import MEMCPY, TORCH
from ts_explore.gpu.safety import prove
from ts_explore.gpu.timing import Timing
from ts_explore.gpu.worker import PortableFunction, WorkerHandle, portable_config
from ts_explore.model import QueueKind
from ts_explore.scenarios import CATALOG, BuildContext, Built, Scenario, SkipRule, get, knob, register


def test_public_names() -> None:
    assert ts_explore.launch is launch
    assert ts_explore.LaunchResult is LaunchResult


def test_a_bad_config_is_refused_before_any_device_work() -> None:
    with pytest.raises(LaunchError) as err:
        launch("grid_stride_copy", vector=3)
    assert err.value.reason == "bad_config" and "is not one of 1, 2, 4" in str(err.value)


H200 = DeviceLimits.h200()


def gate(sc: Scenario, cfg, size: int):
    return prove(sc, cfg, plans_for(sc, cfg, (size,), H200))


@dataclass(frozen=True)
class Stuck:
    stages: int = knob(1, min=1, max=2, label="stages")


def _deadlocked(cfg: Stuck, ctx: BuildContext) -> Built:
    """A consumer that waits on a stage nobody commits: the verifier must reject it."""
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
    from cutlass.experimental.task_scheduling.task import Task

    from ts_explore.seed_examples.resources import GmemSink, SmemBuffer, async_pipeline

    smem, out = SmemBuffer(name="smem", pipeline_config=async_pipeline(cfg.stages)), GmemSink(name="out")

    @schedule
    def starve(smem: SmemBuffer, out: GmemSink) -> None:
        with domain_loop(0, 4, 1):
            smem.wait()
            val = smem.read()
            smem.release()
            out.set_item(val)

    task = Task(name="starved", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=1,
                schedule=starve(smem, out))
    return Built(tasks=[task], resource_dependency_graph={out: [smem]})


def _stuck_kernel() -> types.ModuleType:
    """A user kernel module: one CTA, one instance (compiling it is never reached)."""
    module = types.ModuleType("stuck_kernel")

    def plan(cfg, size, limits, registers=None):
        return LaunchPlan(kernel="stuck_kernel", size=size, grid=(1, 1, 1), threads=32, smem_bytes=0,
                          device=limits, instances=(Instance((range(1),), {}, "4 iterations", 4),))

    module.plan = plan
    module.host_problem = module.compile = lambda *a, **k: None
    return module


@pytest.fixture()
def stuck_scenario(monkeypatch):
    monkeypatch.setitem(sys.modules, "stuck_kernel", _stuck_kernel())
    sc = register(Scenario(name="stuck_test", title="Stuck", config_type=Stuck, build_fn=_deadlocked,
                           kernel="stuck_kernel"), replace=True)
    yield sc
    CATALOG.pop("stuck_test", None)


def test_an_unverified_config_is_refused_with_the_verifiers_words(stuck_scenario: Scenario) -> None:
    report = gate(stuck_scenario, stuck_scenario.default_config(), 1 << 12)
    assert not report.ok and report.refused_by and report.refused_by[0].status == "unsafe"
    with pytest.raises(LaunchError) as err:
        launch("stuck_test")
    assert err.value.reason == "unverified"
    assert "force=True" in str(err.value) and report.refused_by[0].describe() in str(err.value)


def test_record_only_scenarios_are_refused() -> None:
    sc = register(Scenario(name="record_only_test", title="R", config_type=Stuck, build_fn=_deadlocked),
                  replace=True)
    try:
        with pytest.raises(LaunchError, match="no GPU kernel") as err:
            launch(sc)
        assert err.value.reason == "no_kernel"
    finally:
        CATALOG.pop("record_only_test", None)


@pytest.mark.skipif(cuda_unavailable_reason() is None, reason="a CUDA device is present")
def test_without_a_device_the_refusal_says_what_still_works() -> None:
    with pytest.raises(LaunchError) as err:
        launch("grid_stride_copy")
    assert err.value.reason in ("no_device", "no_driver", "no_cuda_python")
    assert "verify" in str(err.value)


def test_default_catalog_configs_pass_the_gate() -> None:
    for name in ("grid_stride_copy", "pipelined_copy", "persistent_copy", "varlen_copy", "guards_demo"):
        sc = get(name)
        report = gate(sc, sc.default_config(), 1 << 20)
        assert report.ok, (name, report.summary())


def test_compare_counts_and_locates_mismatches() -> None:
    expected = pattern(4096).copy()
    got = expected.copy()
    got[[5, 4000]] = 7
    m = compare("dst", expected, got, shape=(64, 64))
    assert m.count == 2 and [i for i, _, _ in m.first] == [5, 4000]
    assert m.heatmap is not None and m.heatmap.sum() == 2 and m.heatmap[0, 5] == 1
    assert "2 of 4096 elements differ" in m.text
    assert compare("dst", expected, expected).count == 0


def test_pattern_neighbours_differ() -> None:
    p = pattern(10_000)
    assert np.all(p[1:] != p[:-1]) and not p.flags.writeable


def test_persistent_reference_keeps_skipped_tiles_untouched() -> None:
    cfg = get("persistent_copy").config(skip=SkipRule.EVERY_KTH, every_k=3, tile=1024, warps=1, overlaunch=2)
    problem = host_problem(cfg, 8 * 1024)
    dst = problem.expected["dst"].reshape(8, 1024)
    assert all((dst[t] == FILL).all() == (t % 3 == 2) for t in range(8))
    assert problem.args[3:5] == (8, 10)  # logical tiles, tiles handed out
    assert problem.bytes_moved == 8 * 1024 * (8 - 2)


def test_varlen_reference_pads_rows() -> None:
    cfg = get("varlen_copy").config(lengths=(2, 0, 3))
    problem = host_problem(cfg, 10)
    rows = problem.expected["padded"].reshape(-1, 3)
    packed = problem.inputs["packed"]
    assert rows.shape[0] == 6 and list(rows[0][:2]) == list(packed[:2]) and rows[0][2] == FILL
    assert (rows[1] == FILL).all() and list(rows[2]) == list(packed[2:5])


def test_guards_reference_flags_match_the_guard_semantics() -> None:
    cfg = get("guards_demo").config(start=1, end=10, step=2, every_period=2, every_start=1, when=False)
    flags = host_problem(cfg, 10).expected["flags"].reshape(-1, 10)[0]
    # offsets 1,3,5,7,9 = iterations 0..4: first at 1, last at 9, every(2, start=1) at iterations 1, 3
    assert list(flags) == [0, 1, 0, 4, 0, 0, 0, 4, 0, 2]


def host_problem(cfg, size: int):
    sc = next(s for s in CATALOG.values() if isinstance(cfg, s.config_type))
    module = importlib.import_module(sc.kernel)
    return module.host_problem(cfg, module.plan(cfg, size, H200))


def test_the_cpu_view_and_the_launch_use_one_grid() -> None:
    """pipelined_copy with ctas=0: the picture's grid is the launch plan's (shared memory bounds occupancy)."""
    sc = get("pipelined_copy")
    cfg = sc.config(ctas=0, elements=1 << 24, tile=4096, stages=4)
    plan = launch_plan(sc, 1 << 24, device=H200, ctas=0, tile=4096, stages=4)
    assert cfg.grid() == plan.ctas == 132 * 3  # 3 CTAs of 64 KiB fit in 228 KiB
    assert "CTA 0 of 396 copies 11 of the 4096 tiles: 0, 396, 792" in " ".join(sc.build(cfg).notes)


def test_a_plan_names_each_distinct_instance_and_says_it_is_an_estimate() -> None:
    plan = launch_plan("pipelined_copy", 83 * 396 * 4096 - 4096, device=H200, ctas=396)
    assert [i.describe() for i in plan.instances] == ["CTAs 0-394: 83 tiles", "CTA 395: 82 tiles"]
    assert plan.estimate and "(estimate)" in plan.summary() and "H200 (assumed)" in plan.summary()
    grid_stride = launch_plan("grid_stride_copy", 1000, device=H200)
    assert [i.iterations for i in grid_stride.instances] == [1, 0]
    assert grid_stride.instances[1].vacuous and "no work" in grid_stride.instances[1].describe()


def test_the_gate_proves_every_distinct_instance_once_and_names_empty_ones() -> None:
    sc = get("grid_stride_copy")
    report = gate(sc, sc.default_config(), 1000)
    assert report.ok and [p.status for p in report.proven] == ["safe", "vacuous"]
    assert report.summary().splitlines() == ["threads 0-249 (CTAs 0-1): 1 iteration - proven",
                                             "threads 250-1023 (CTAs 1-7): no work (0 iterations) - no work"]
    known: dict = {}
    sc = get("persistent_copy")
    cfg = sc.config(ctas=4, tile=1024, warps=1, overlaunch=2)
    report = prove(sc, cfg, plans_for(sc, cfg, (12 * 1024,), H200), known)
    assert [p.describe() for p in report.proven] == ["CTAs 0-1: 4 tiles, 8 row(s) each - proven",
                                                     "CTAs 2-3: 3 tiles, 8 row(s) each - proven"]
    assert len(known) == 1, "a persistent CTA's schedule does not depend on its tile count: verified once"


def test_compile_cache_compiles_once_per_key() -> None:
    calls = []
    cache = CompileCache()
    first, spent1, hit1 = cache.get(("a", 1), lambda: calls.append(1) or "fn")
    again, spent2, hit2 = cache.get(("a", 1), lambda: calls.append(1) or "other")
    assert (hit1, hit2) == (False, True) and again is first and calls == [1] and again.fn == "fn"


def test_user_lambdas_travel_to_the_worker_by_code() -> None:
    cfg = get("persistent_copy").config(skip=SkipRule.CUSTOM, skip_fn=lambda t: t % 3 == 0)
    sent = portable_config(cfg)
    assert isinstance(sent.skip_fn, PortableFunction)
    assert [sent.skip_fn(t) for t in range(4)] == [True, False, False, True]
    assert portable_config(cfg) == sent and hash(portable_config(cfg)) == hash(sent)


def test_unsendable_functions_are_refused_with_a_fix() -> None:
    k = 3
    with pytest.raises(LaunchError, match="closure") as err:
        portable_config(get("persistent_copy").config(skip=SkipRule.CUSTOM, skip_fn=lambda t: t % k == 0))
    assert err.value.reason == "unpicklable"
    with pytest.raises(LaunchError, match="global names"):
        portable_config(get("persistent_copy").config(skip=SkipRule.CUSTOM, skip_fn=lambda t: np.mod(t, 3) == 0))


def test_worker_round_trip_reports_refusals() -> None:
    worker = WorkerHandle()
    try:
        reply = worker.request({"op": "device"}, timeout=120)
    finally:
        worker.stop()
    if cuda_unavailable_reason() is None:
        assert reply["ok"] and reply["device"].sms > 0
    else:
        assert not reply["ok"] and reply["reason"] in ("no_device", "no_cuda_python")


# --- plots, on a result assembled from known timings -------------------------------------------------------

DEVICE = DeviceInfo(name="Test GPU", cc=(9, 0), sms=132, peak_gbps=4800.0, total_bytes=1 << 37)


def fake_result(wrong: bool = False, config=None) -> LaunchResult:
    runs = []
    for elements in (1 << 20, 1 << 24):
        nbytes = 8 * elements
        k = Timing("kernel", (0.010, 0.011, 0.012) if elements < 1 << 24 else (0.05, 0.051, 0.06), nbytes)
        refs = (Timing(MEMCPY, tuple(t * 0.95 for t in k.times_ms), nbytes),
                Timing(TORCH, tuple(t * 0.97 for t in k.times_ms), nbytes))
        expected = pattern(4096)
        got = expected.copy()
        if wrong:
            got[100:200] = 0
        runs.append(SizeRun(elements, nbytes, 264, k, refs, (compare("dst", expected, got, (64, 64)),)))
    cfg = config or get("grid_stride_copy").default_config()
    return LaunchResult("grid_stride_copy", cfg, DEVICE, tuple(runs), 0.0001, 0.4, True, "ok")


def test_launch_result_summary_and_ratio() -> None:
    r = fake_result()
    assert r.ok and r.best.elements == 1 << 24
    assert r.runs[0].ratio(MEMCPY) == pytest.approx(0.95, rel=1e-6)
    text = r.summary()
    assert "correct" in text and "cache hit" in text and "4800 GB/s" in text
    assert "WRONG" in fake_result(wrong=True).summary()


def test_bandwidth_plot_has_reference_lines_and_peak() -> None:
    from ts_explore.render.launch_plots import bandwidth_vs_size

    ax = bandwidth_vs_size(fake_result()).axes[0]
    labels = [h.get_label() for h in ax.get_legend().legend_handles]
    assert MEMCPY in labels and TORCH in labels and any("peak" in lab for lab in labels)


def test_panel_adds_a_heatmap_only_when_wrong() -> None:
    from ts_explore.render.launch_plots import launch_panel_figures, mismatch_heatmap, to_png

    assert len(launch_panel_figures(fake_result())) == 2 and mismatch_heatmap(fake_result()) is None
    figs = launch_panel_figures(fake_result(wrong=True))
    assert len(figs) == 3 and "100 of 4,096 wrong" in figs[2].axes[0].get_title()
    assert to_png(figs[0])[:8] == b"\x89PNG\r\n\x1a\n"


def test_shapes_plot_marks_refused_shapes() -> None:
    from ts_explore.render.launch_plots import shapes_side_by_side

    sc = get("persistent_copy")
    results = {
        "none": fake_result(config=sc.config(queue=QueueKind.NONE, overlaunch=0)),
        "static": fake_result(config=sc.config(queue=QueueKind.STATIC, ctas=5)),
        "clc": LaunchError("needs_sm100", "CLC needs sm_100"),
    }
    configs = {"none": results["none"].config, "static": results["static"].config, "clc": sc.config(queue=QueueKind.CLC)}
    plans = {label: plans_for(sc, cfg, (12 * cfg.tile,), DeviceLimits.h200())[0] for label, cfg in configs.items()}
    fig = shapes_side_by_side(results, plans, tiles=12)
    texts = [t.get_text() for t in fig.axes[0].texts] + [t.get_text() for t in fig.axes[1].texts]
    assert any("needs_sm100" in t for t in texts) and any("run time" in t for t in texts)
    owners = fig.axes[1].images[0].get_array()
    assert list(owners[0][:7]) == [0, 1, 2, 3, 4, 5, 6]  # no queue: one tile per CTA
    assert list(owners[1][:7]) == [0, 1, 2, 3, 4, 0, 1]  # static: tile t -> CTA t % 5
    assert dataclasses.is_dataclass(results["static"].config)


def test_result_html_embeds_the_panel_figures() -> None:
    page = fake_result(wrong=True)._repr_html_()
    assert page.count("<img") == 3 and "WRONG" in page and "data:image/png;base64," in page


def test_architecture_rules_live_in_the_launch_gate() -> None:
    from ts_explore.gpu.safety import launch_refusal
    from ts_explore.model import QueueKind
    from ts_explore.model.plan import DeviceLimits
    from ts_explore.scenarios import get as scenario

    copy = scenario("persistent_copy")
    a100, h200 = DeviceLimits(name="A100", cc=(8, 0), sms=108), DeviceLimits.h200()
    assert launch_refusal(copy, copy.config(), a100)[0] == "needs_newer_gpu"
    assert launch_refusal(None, None, a100)[0] == "needs_newer_gpu"  # the minimum holds without a scenario
    reason, message = launch_refusal(copy, copy.config(queue=QueueKind.CLC), h200)
    assert reason == "needs_sm100" and "CLC" in message and "H200" in message
    assert launch_refusal(copy, copy.config(), h200) is None


def test_the_gate_keeps_its_verdicts_and_the_hang_report_reads_them(stuck_scenario: Scenario, monkeypatch) -> None:
    from ts_explore.gpu import trace_run
    from ts_explore.verification import verify as verification

    cfg = stuck_scenario.default_config()
    report = gate(stuck_scenario, cfg, 1 << 12)
    (verdict,) = report.verdicts
    assert report.refused_by[0].verdict is verdict and verdict.deadlocks

    def no_second_proof(*args, **kwargs):
        raise AssertionError("the hang report verified again")

    monkeypatch.setattr(verification, "verify", no_second_proof)
    hang = trace_run.hang_report(stuck_scenario, cfg, report.plans, (), 5.0, report)
    assert hang.predicted and {p.task for p in hang.predicted} <= {t.name for t in verdict.task_set.tasks}
