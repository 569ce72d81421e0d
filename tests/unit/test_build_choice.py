"""Which instrumented build a launch keeps: uncapped, or capped at the plain kernel's registers or at 255.

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
    names = [name for name in cost if name != "plain"]
    launchers = [(f"{name} spec", None, lambda name=name: name) for name in names]
    spec, _, _ = Runner().faster(lambda: "plain", launchers, 0)
    return spec, calls


def test_a_cap_that_is_clearly_faster_is_kept_and_one_that_is_slower_is_not(monkeypatch) -> None:
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.045, "capped": 1.0})[0] == "capped spec"
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.0, "capped": 1.07})[0] == "uncapped spec"
    assert choose(monkeypatch, {"plain": 1.0, "uncapped": 1.01, "capped": 1.0})[0] == "uncapped spec"  # noise


def test_of_three_builds_the_clearly_fastest_is_kept(monkeypatch) -> None:
    # As measured for a 128-thread grid-stride copy: the cap at the plain count spills, the cap at 255 wins.
    cost = {"plain": 1.0, "uncapped": 1.04, "capped at 40": 1.07, "capped at 255": 0.997}
    spec, calls = choose(monkeypatch, cost)
    assert spec == "capped at 255 spec"
    assert sorted(calls) == sorted([("plain", "uncapped", "capped at 40", "capped at 255"),
                                    ("plain", "capped at 40", "capped at 255", "uncapped"),
                                    ("plain", "capped at 255", "uncapped", "capped at 40")])


def test_both_orders_are_timed_so_a_place_in_the_round_favours_no_build(monkeypatch) -> None:
    # Whatever runs right after the plain kernel is 5% slower: equal builds must come out equal (keep the first).
    spec, calls = choose(monkeypatch, {"plain": 1.0, "uncapped": 1.0, "capped": 1.0}, {1: 1.05})
    assert spec == "uncapped spec"
    assert calls == [("plain", "uncapped", "capped"), ("plain", "capped", "uncapped")]


@pytest.mark.parametrize("ratios,kept", [([1.0], 0), ([1.04, 1.0], 1), ([1.0, 0.99], 0), ([1.2, 1.1, 1.0], 2)])
def test_the_rule(ratios: list[float], kept: int) -> None:
    assert kept_build(ratios) == kept


def offered(monkeypatch, cubins: dict[int | None, bytes | None]) -> tuple[list[int | None], float]:
    """The caps of the builds offered when compiling at cap ``c`` gives ``cubins[c]`` (None: the compiler refuses)."""
    from types import SimpleNamespace

    from ts_explore.gpu.cache import Compiled
    from ts_explore.gpu.errors import LaunchError
    from ts_explore.model.timeline import TraceSpec

    def compiled(self, m, info, trace=None):
        cubin = cubins[trace.registers]
        if cubin is None:
            raise LaunchError("compile_failed", "ptxas: too few registers")
        return Compiled(fn=SimpleNamespace(__cubin__=cubin), compile_s=1.0), 1.0, False

    monkeypatch.setattr(Runner, "compiled", compiled)
    monkeypatch.setattr("ts_explore.kernels.build.resources",
                        lambda fn: SimpleNamespace(registers=64, static_smem_bytes=0, frame_bytes=0))
    plan = SimpleNamespace(registers=40, ctas=4, instances=(), device=None, threads=128, smem_bytes=0)
    builds, spent = Runner().instrumented({"trace": TraceSpec(stages="work", start=0)}, None, plan)
    return [spec.registers for spec, _ in builds], spent


def test_a_cap_the_compiler_refuses_leaves_the_other_builds(monkeypatch) -> None:
    assert offered(monkeypatch, {None: b"a", 40: None, 255: b"b"}) == ([None, 255], 2.0)
    assert offered(monkeypatch, {None: b"a", 40: None, 255: None}) == ([None], 1.0)


def test_a_cap_that_changes_nothing_is_not_timed(monkeypatch) -> None:
    assert offered(monkeypatch, {None: b"a", 40: b"b", 255: b"a"}) == ([None, 40], 3.0)
    assert offered(monkeypatch, {None: b"a", 40: b"b", 255: b"c"}) == ([None, 40, 255], 3.0)
