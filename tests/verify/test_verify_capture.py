"""The reader captures a task set once; verification after the capture reads no TS object.

``capture_set`` takes what ``verify`` is given and returns a frozen
``CapturedSet`` of model values; ``verify_captured`` decides the verdict from
it alone. Here the TS tasks and resources are emptied after the capture (every
attribute gone, so any read raises), and the verdict must be the one a plain
``verify`` of the same instance gives.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any

import pytest
import verify_builders as B

from ts_explore import gallery
from ts_explore.cli_targets import verify_kwargs
from ts_explore.model.verdict import Status
from ts_explore.reader.capture_set import CapturedSet, capture_set
from ts_explore.verification.verify import Ask, verify, verify_captured


def _comparable(verdict: Any) -> Any:
    """The verdict as JSON data, less what a second run may change (seconds)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "second" not in k and k not in ("elapsed_s", "summary")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str):
            return re.sub(r"\d+\.\d+ ?s\b", "#s", value)
        return value

    return strip(verdict.to_dict())


def _ts_objects(kwargs: dict[str, Any]) -> list[Any]:
    """The TS tasks and every resource they or the graph name."""
    out: dict[int, Any] = {}
    for task in kwargs["tasks"]:
        out[id(task)] = task
        for res in [*task.src_resources, *task.dst_resources]:
            out[id(res)] = res
    for down, ups in kwargs["resource_dependency_graph"].items():
        for res in (down, *ups):
            out[id(res)] = res
    return list(out.values())


def _empty(objects: list[Any]) -> None:
    """Make the TS objects unusable: every instance attribute gone, so reading one raises AttributeError."""
    for obj in objects:
        vars(obj).clear()


def _ts_types_inside(value: Any, seen: set[int] | None = None) -> set[str]:
    """The names of TS (cutlass) types reachable from ``value`` through dataclasses and containers."""
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, (str, bytes, int, float, bool, type(None), enum.Enum)):
        return set()
    seen.add(id(value))
    if type(value).__module__.startswith("cutlass"):
        return {type(value).__name__}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, dict):
        parts = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = list(value)
    else:
        return set() if type(value).__module__.startswith(("ts_explore", "builtins")) else {type(value).__name__}
    found: set[str] = set()
    for part in parts:
        found |= _ts_types_inside(part, seen)
    return found


BUILDS = {
    "cross_wait broken": lambda: gallery.get("cross_wait").broken(),
    "cross_wait fixed": lambda: gallery.get("cross_wait").fixed(),
    "smem_alias_race broken": lambda: gallery.get("smem_alias_race").broken(),
    "pdl_launch_before_wait broken": lambda: gallery.get("pdl_launch_before_wait").broken(),
    "pipelined_copy": lambda: verify_kwargs("pipelined_copy"),
    "guards_demo": lambda: verify_kwargs("guards_demo"),  # two when_true key assignments
    "persistent_copy": lambda: verify_kwargs("persistent_copy"),  # persistent, skip_if: the tile-loop proof
    "skipped_tile_deadlock": lambda: B.skipped_tile_deadlock(True),  # persistent and UNSAFE
}


@pytest.mark.parametrize("name", list(BUILDS))
def test_verification_after_the_capture_reads_no_ts_object(name: str) -> None:
    expected = verify(**BUILDS[name]())
    kwargs = BUILDS[name]()
    captured, _kept = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {})
    assert not _ts_types_inside(captured), name
    _empty(_ts_objects(kwargs))
    with pytest.raises(AttributeError):
        kwargs["tasks"][0].name  # noqa: B018 - the tasks really are unusable now
    got = verify_captured(captured, Ask(), {})
    assert got.status is expected.status, got.summary()
    assert _comparable(got) == _comparable(expected)


def test_a_persistent_capture_holds_the_tile_loops_and_the_callers_tile_counts() -> None:
    kwargs = verify_kwargs("persistent_copy")
    captured, _ = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {})
    assert captured.instance is not None and captured.instance.persistent and captured.instance.skip
    assert {(r.skipped, r.loop is not None) for r in captured.tile_loops} == {(False, True), (True, True)}
    assert [i.num_tiles for i in captured.inputs] == [2, 2]  # normal and skipped-tile runs at TS's count
    kwargs = verify_kwargs("persistent_copy")
    three, _ = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {}, tiles=3)
    assert three.tile_loops == () and [i.num_tiles for i in three.inputs] == [2, 2]
    assert sorted({i.num_tiles for i in three.extra}) == [1, 3] and {r["num_tiles"] for r in three.tile_runs} == {3}
    _empty(_ts_objects(kwargs))
    v = verify_captured(three, Ask(tiles=3), {})
    assert v.ok and {r.num_tiles for r in v.runs} == {1, 2, 3}, v.summary()


def test_a_tile_count_the_capture_could_not_know_is_inconclusive_without_the_tasks() -> None:
    from tile_sets import tile_sets

    spec = tile_sets(2)[1]  # the tile-loop search finds a deadlock at 4 tiles: searched again unrolled there
    expected = verify(**spec.build())
    assert expected.status is Status.UNSAFE and 4 in {r.num_tiles for r in expected.runs}
    kwargs = spec.build()
    captured, kept = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {})
    assert _comparable(verify_captured(captured, Ask(), {}, live=kept)) == _comparable(expected)
    _empty(_ts_objects(kwargs))
    alone = verify_captured(captured, Ask(), {})
    assert alone.status is Status.INCONCLUSIVE
    assert any("was not captured (tile counts 4)" in r for r in alone.reasons), alone.reasons


def test_the_capture_runs_taskmanagers_checks_once() -> None:
    from ts_explore.reader import checks

    calls = []
    real = checks.ObservedTaskManager.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        real(self, *args, **kwargs)

    checks.ObservedTaskManager.__init__ = counted  # type: ignore[method-assign]
    try:
        verify(**verify_kwargs("persistent_copy"))
    finally:
        checks.ObservedTaskManager.__init__ = real  # type: ignore[method-assign]
    assert calls == [1]


def test_a_captured_set_is_frozen() -> None:
    kwargs = gallery.get("cross_wait").fixed()
    captured, _ = capture_set(kwargs["tasks"], kwargs["resource_dependency_graph"], {})
    assert isinstance(captured, CapturedSet)
    with pytest.raises(dataclasses.FrozenInstanceError):
        captured.needed = 0  # type: ignore[misc]
