"""Launching a proven repair: the gate proves the repaired instances, the edits reach the worker, refusals say why."""

from __future__ import annotations

import importlib
import pickle

import pytest

import ts_explore
import ts_explore.gpu as gpu
from ts_explore.app.explorer import Explorer
from ts_explore.app.launch_panel import launch_blockers
from ts_explore.gpu import LaunchError, LaunchResult, launch
from ts_explore.gpu.device import DeviceInfo
from ts_explore.gpu.plan import plans_for
from ts_explore.gpu.probe import Probe
from ts_explore.gpu.safety import prove
from ts_explore.gpu.trace_compare import schedule_for
from ts_explore.kernels.common import apply_repair, repaired_build
from ts_explore.model.plan import DeviceLimits
from ts_explore.reader import capture_task_set
from ts_explore.repair import AddStage, InsertStep
from ts_explore.scenarios import BuildContext, get
from ts_explore.scenarios.pipelined import PipelineFault

H200 = DeviceLimits.h200()
SC = get("pipelined_copy")
SIZE = 3 * 4096 * 4 + 1000  # partial last tile: the CTAs do different numbers of tiles


def _top_repair(fault: PipelineFault):
    cfg = SC.config(fault=fault)
    build = lambda: SC.build(cfg).verify_kwargs()  # noqa: E731
    return cfg, ts_explore.repairs(ts_explore.verify(**build()), build)[0]


def test_the_gate_proves_every_repaired_instance() -> None:
    cfg, top = _top_repair(PipelineFault.NO_RELEASE)
    plans = plans_for(SC, cfg, (SIZE,), H200)
    assert not prove(SC, cfg, plans).ok  # the broken schedule is refused
    known: dict = {}
    report = prove(SC, cfg, plans, known, top.edits)
    working = [p for p in report.proven if p.status != "vacuous"]
    assert report.ok and working and all(p.status == "safe" for p in working)
    assert len(known) == len({p.describe() for p in working}) >= 2, "each distinct repaired instance is verified"
    for task_set in known:  # what was proven has the inserted release in every instance
        assert any(s.method == "release" for s in task_set.task("store").schedule.steps())


def test_an_edit_that_does_not_fit_an_instance_refuses_the_launch() -> None:
    cfg, top = _top_repair(PipelineFault.NO_RELEASE)
    wrong = (InsertStep(task="store", resource="smem", stage=top.edits[0].stage, target=999, after=True, level=0),)
    report = prove(SC, cfg, plans_for(SC, cfg, (SIZE,), H200), {}, wrong)
    assert not report.ok and report.problem.startswith("writing the repair onto")


def test_edits_reach_the_worker_intact_and_write_the_repair_onto_the_kernels_build(monkeypatch) -> None:
    cfg, top = _top_repair(PipelineFault.NO_RELEASE)
    seen: dict = {}

    class Worker:  # the pipe pickles each request; the worker writes the edits onto its own build
        def request(self, message, timeout, on_timeout=""):
            message = pickle.loads(pickle.dumps(message))
            seen["edits"] = message["edits"]
            with repaired_build(message["edits"]):
                built = get(message["scenario"]).build(message["config"], BuildContext())
                apply_repair(built)  # the step run_built takes inside @cute.kernel
            seen["task_set"] = capture_task_set(built.tasks, built.resource_dependency_graph)
            return {"ok": False, "reason": "launch_failed", "message": "stopped after the build"}

    monkeypatch.setattr(gpu, "_WORKER", Worker())
    monkeypatch.setattr(gpu, "cuda_unavailable_reason", lambda: None)
    with pytest.raises(LaunchError, match="stopped after the build"):
        launch(SC, cfg, sizes=[SIZE], repair=top)
    assert seen["edits"] == top.edits and type(seen["edits"][0]) is type(top.edits[0])
    assert seen["task_set"] == top.after
    with repaired_build(()):  # outside a repair the build is the scenario's own
        plain = SC.build(cfg, BuildContext())
        apply_repair(plain)
    assert capture_task_set(plain.tasks, plain.resource_dependency_graph) == top.before


def _steps(task_set) -> list:
    return [[(s.resource, s.method, s.section) for s in t.schedule.steps()] for t in task_set.tasks]


def test_the_kernels_own_build_runs_the_repair_and_ts_accepts_it_while_tracing() -> None:
    """Traced for sm_90a (no GPU needed): the kernel builds the broken schedule, writes the repair, TS accepts it."""
    cfg, top = _top_repair(PipelineFault.NO_RELEASE)
    kernel = importlib.import_module(SC.kernel)
    seen: list = []
    with repaired_build(top.edits):
        kernel.compile(SC, cfg, arch="sm_90a", on_built=lambda b: seen.append(
            capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert len(seen) == 1 and _steps(seen[0]) == _steps(top.after) != _steps(top.before)
    with pytest.raises(ValueError, match="not matched by ConsumerRelease"):  # without the repair TS refuses it
        kernel.compile(SC, cfg, arch="sm_90a")


def test_repairs_that_cannot_be_launched_are_refused_with_the_reason() -> None:
    cfg, bounds = _top_repair(PipelineFault.CONSUMER_EXTRA)
    assert bounds.edits[0].kind == "bounds"
    with pytest.raises(LaunchError) as err:
        launch(SC, cfg, sizes=[SIZE], repair=bounds)
    assert err.value.reason == "repair_not_launchable"
    assert "'bounds' edit" in str(err.value) and "runtime values" in str(err.value)
    blockers = launch_blockers(bounds.proof.task_set, Probe(None, "", H200, 1), SC, cfg, repair=bounds)
    assert blockers == [str(err.value).split("] ", 1)[1]]  # the Launch tab gives the same reason
    with pytest.raises(LaunchError, match="'stage' edit.*raise the scenario's stages control"):
        launch(SC, cfg, sizes=[SIZE], repair=(AddStage("smem"),))
    with pytest.raises(LaunchError, match="repair= takes a Repair") as err:
        launch(SC, cfg, sizes=[SIZE], repair="insert a release")
    assert err.value.reason == "bad_argument"


def test_the_launch_tab_enables_after_apply_and_launches_the_repair() -> None:
    ex = Explorer(SC, debounce_s=0, fault=PipelineFault.NO_RELEASE)
    assert ex.verdict.status.value == "unsafe"
    launched: list = []
    ex.launch_panel._probe = lambda: Probe(None, "", H200, 1)
    ex.launch_panel._launch = lambda scenario, config, **kw: launched.append(kw) or "ran"
    ex.render("launch")
    assert ex.launch_panel.button.disabled  # the broken schedule does not verify
    ex.tabs.selected_index = ex.tab_names.index("deadlock")
    ex.render("deadlock")
    ex.repair_panel.search(block=True)
    top = ex.repair_panel.found[0]
    ex.apply_repair(top)
    ex.render("launch")
    assert not ex.launch_panel.button.disabled and "repaired schedule" in ex.launch_panel.reasons.value
    ex.launch_panel.button.click()
    assert launched == [{"repair": top}]
    ex.undo_repair()
    ex.render("launch")
    assert ex.launch_panel.button.disabled


def test_a_repaired_launchs_trace_is_compared_with_the_repaired_schedule() -> None:
    cfg, top = _top_repair(PipelineFault.NO_RELEASE)
    plan = plans_for(SC, cfg, (SIZE,), H200)[0]
    store_warp = 0  # the store task's warps come first
    repaired, _ = schedule_for(SC, cfg, plan, 0, store_warp, top.edits)
    broken, _ = schedule_for(SC, cfg, plan, 0, store_warp)
    calls = lambda tree: [(s.resource, s.method, s.section) for s in tree.steps()]  # noqa: E731 - bounds are per CTA
    assert calls(repaired) == calls(top.after.task("store").schedule) != calls(broken)
    result = LaunchResult(SC.name, cfg, DeviceInfo("Test GPU", (9, 0), 132, 4800.0, 1 << 37), (), 0.0, 0.0, False,
                          "CTA 0: proven", edits=top.edits)
    assert "verifier: with the repair's edits written on: CTA 0: proven" in result.summary()
    with pytest.raises(ValueError, match="put the repair into the schedule"):
        result.advise()


def _seeded_cases(count: int, seed: int = 24) -> list[dict]:
    """Broken pipelined copies: every fault, with stages, loaders and store paths drawn from a seeded generator."""
    import random

    from ts_explore.kernels.pipelined import Storer
    from ts_explore.scenarios import Loader

    rng = random.Random(seed)
    faults = [f for f in PipelineFault if f is not PipelineFault.NONE]
    return [dict(fault=faults[i % len(faults)], stages=rng.choice((2, 3, 4)), loader=rng.choice(list(Loader)),
                 storer=rng.choice(list(Storer)), store_warps=1) for i in range(count)]


@pytest.mark.parametrize("overrides", _seeded_cases(4), ids=lambda o: f"{o['fault'].name}-{o['stages']}")
def test_every_fault_is_repaired_in_the_kernels_build_or_refused_with_the_reason(overrides: dict) -> None:
    cfg = SC.config(**overrides)
    build = lambda: SC.build(cfg).verify_kwargs()  # noqa: E731
    found = ts_explore.repairs(ts_explore.verify(**build()), build)
    assert found, found.tried
    launchable = [r for r in found if not any(e.kind in ("bounds", "stage") for e in r.edits)]
    for r in found:
        if r not in launchable:
            with pytest.raises(LaunchError, match="this repair cannot be launched"):
                launch(SC, cfg, sizes=[SIZE], repair=r)
    if not launchable:
        return
    top = launchable[0]
    assert prove(SC, cfg, plans_for(SC, cfg, (SIZE,), H200), {}, top.edits).ok
    seen: list = []
    with repaired_build(top.edits):
        importlib.import_module(SC.kernel).compile(SC, cfg, arch="sm_90a", on_built=lambda b: seen.append(
            capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert _steps(seen[0]) == _steps(top.after)  # the kernel runs the steps the gate proved
