"""Which instrumented build a launch keeps when it has two (uncapped, and capped at the plain kernel's registers).

The timing runs on a GPU; here the rounds are replaced by fixed times, so
what is checked is the pairing, the rotation of the order and the rule.
"""

from __future__ import annotations

import pytest

from ts_explore.gpu import runner as runner_module
from ts_explore.gpu.runner import Runner, kept_build
from ts_explore.gpu.timing import Timing


def fake_rounds(cost: dict[str, float], slower_in_place: dict[int, float], calls: list[tuple[str, ...]]):
    """``time_alternating`` stand-in: each launcher costs ``cost[name]`` ms, times ``slower_in_place`` by its place."""

    def time_alternating(runs, stream, reps, warmup, labels, bytes_moved, flops=0):
        names = tuple(run() for run in runs)
        calls.append(names)
        return tuple(Timing(label, tuple(cost[name] * slower_in_place.get(place, 1.0) for _ in range(reps)),
                            bytes_moved) for place, (label, name) in enumerate(zip(labels, names)))

    return time_alternating


def choose(monkeypatch, cost: dict[str, float], slower_in_place: dict[int, float] | None = None) -> tuple[str, list]:
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(runner_module, "time_alternating", fake_rounds(cost, slower_in_place or {}, calls))
    launchers = [("uncapped spec", None, lambda: "uncapped"), ("capped spec", None, lambda: "capped")]
    spec, _, _ = Runner().faster(lambda: "plain", launchers, 0)
    return spec, calls


def test_a_cap_that_is_clearly_faster_is_kept_and_one_that_is_slower_is_not(monkeypatch) -> None:
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.045, "capped": 1.0})[0] == "capped spec"
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.0, "capped": 1.07})[0] == "uncapped spec"
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.01, "capped": 1.0})[0] == "uncapped spec"  # noise


def test_both_orders_are_timed_so_a_place_in_the_round_favours_no_build(monkeypatch) -> None:
    # Whatever runs right after the plain kernel is 5% slower: equal builds must come out equal (keep the first).
    spec, calls = choose(monkeypatch, {"plain": 1.0, "uncapped": 1.0, "capped": 1.0}, {1: 1.05})
    assert spec == "uncapped spec"
    assert calls == [("plain", "uncapped", "capped"), ("plain", "capped", "uncapped")]


@pytest.mark.parametrize("ratios,kept", [([1.0], 0), ([1.04, 1.0], 1), ([1.0, 0.99], 0), ([1.2, 1.1, 1.0], 2)])
def test_the_rule(ratios: list[float], kept: int) -> None:
    assert kept_build(ratios) == kept


def test_a_capped_build_the_compiler_refuses_leaves_the_uncapped_one(monkeypatch) -> None:
    from types import SimpleNamespace

    from ts_explore.gpu.cache import Compiled
    from ts_explore.gpu.errors import LaunchError
    from ts_explore.model.timeline import TraceSpec

    def compiled(self, m, info, trace=None):
        if trace is not None and trace.registers is not None:
            raise LaunchError("compile_failed", "ptxas: too few registers")
        return Compiled(fn=SimpleNamespace(), compile_s=1.0), 1.0, False

    monkeypatch.setattr(Runner, "compiled", compiled)
    monkeypatch.setattr("ts_explore.kernels.build.resources",
                        lambda fn: SimpleNamespace(registers=64, static_smem_bytes=0, frame_bytes=0))
    plan = SimpleNamespace(registers=40, ctas=4, instances=(), device=None, threads=128, smem_bytes=0)
    m = {"trace": TraceSpec(stages="work", start=0)}
    builds, spent = Runner().instrumented(m, None, plan)
    assert [spec.registers for spec, _ in builds] == [None] and spent == 1.0
