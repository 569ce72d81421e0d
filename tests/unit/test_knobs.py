"""The one config coercion: every way a value arrives is converted, bounded and named by its label."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ts_explore.model import QueueKind
from ts_explore.scenarios import CATALOG, get
from ts_explore.scenarios.knobs import ConfigError, configure, knobs


def test_text_and_objects_give_the_same_config() -> None:
    sc = get("persistent_copy")
    from_text = configure(sc, {"queue": "clc", "tile": "4096", "mask": "1, 4", "skip": "tile mask"})
    from_objects = configure(sc, {"queue": QueueKind.CLC, "tile": 4096, "mask": (1, 4), "skip": from_text.skip})
    assert from_text == from_objects and from_text.mask == (1, 4)


def test_errors_name_the_label_and_the_accepted_values() -> None:
    sc = get("pipelined_copy")
    with pytest.raises(ConfigError, match=r"^SMEM stages: 9 is out of range; must be between 1 and 8$") as err:
        configure(sc, {"stages": 9})
    assert err.value.knob == "stages"
    with pytest.raises(ConfigError, match="loader: 'warp' is not one of"):
        configure(sc, {"loader": "warp"})
    with pytest.raises(ConfigError, match="no setting colour; its settings are: .*stages \\(SMEM stages\\)"):
        configure(sc, {"colour": 1})


def test_the_scenario_check_runs_unless_asked_not_to() -> None:
    sc = get("persistent_copy")
    with pytest.raises(ConfigError, match="over-launched"):
        configure(sc, {"queue": "none"})
    assert configure(sc, {"queue": "none"}, check=False).queue is QueueKind.NONE


PLANTED = "__import__('pathlib').Path({marker!r}).touch() or (lambda t: t % 3 == 0)"


def test_callable_text_picks_a_named_function_and_is_never_run(tmp_path) -> None:
    from ts_explore.scenarios.persistent import SKIP_FUNCTIONS

    sc = get("persistent_copy")
    a = configure(sc, {"skip": "user callable", "skip_fn": "Even Tiles"})
    assert a.skip_fn is SKIP_FUNCTIONS["even tiles"] and a.skip_fn(2) and not a.skip_fn(3)
    marker = tmp_path / "ran"
    with pytest.raises(ConfigError, match="is not one of its named choices .*'even tiles'.*never run as code") as err:
        configure(sc, {"skip": "user callable", "skip_fn": PLANTED.format(marker=str(marker))})
    assert err.value.knob == "skip_fn" and "pass a function from Python" in str(err.value)
    assert not marker.exists(), "text from a file or a control must never run"


def test_a_function_from_python_is_kept_and_a_named_one_round_trips_a_sweep_table(tmp_path) -> None:
    from ts_explore.sweeps import config_of
    from ts_explore.sweeps.grid import cell_value

    sc = get("persistent_copy")
    mine = configure(sc, {"skip": "user callable", "skip_fn": lambda t: t % 5 == 0})
    assert mine.skip_fn(10) and not mine.skip_fn(11)
    named = configure(sc, {"skip": "user callable", "skip_fn": "odd tiles"})
    table = {k.name: k for k in knobs(type(named))}
    row = {"skip": cell_value(table["skip"], named.skip), "skip_fn": cell_value(table["skip_fn"], named.skip_fn)}
    assert row["skip_fn"] == "odd tiles" and config_of(sc, row) == named
    marker = tmp_path / "ran"
    with pytest.raises(ConfigError, match="never run as code"):
        config_of(sc, {**row, "skip_fn": PLANTED.format(marker=str(marker))})  # a shared CSV's cell
    assert not marker.exists()


def test_a_candidates_file_with_code_in_it_runs_nothing(tmp_path, monkeypatch, capsys) -> None:
    import importlib
    import json
    from types import SimpleNamespace

    from ts_explore.cli import main

    probe_module = importlib.import_module("ts_explore.gpu.probe")
    monkeypatch.setattr(probe_module, "probe", lambda: SimpleNamespace(ok=False, message="no GPU here"))
    marker = tmp_path / "ran"
    configs = tmp_path / "c.json"
    configs.write_text(json.dumps([{"skip": "user callable", "skip_fn": PLANTED.format(marker=str(marker))}]))
    code = main(["tune", "persistent_copy", "--shapes", "64x64x64", "--configs", str(configs),
                 "--cache-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and not marker.exists(), err
    assert err.startswith("ts-explore tune: error: candidate 1 (skip_fn=") and "never run as code" in err


def test_the_package_evaluates_no_text() -> None:
    import pathlib

    import ts_explore

    root = pathlib.Path(ts_explore.__file__).parent
    found = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"(?<![\w.])(eval|exec)\(", line)]
    assert found == []


def test_bools_take_the_spellings_a_shell_uses() -> None:
    sc = get("guards_demo")
    assert configure(sc, {"first": "off", "last": "yes"}).first is False
    with pytest.raises(ConfigError, match="is not on or off"):
        configure(sc, {"first": "maybe"})


INT_KNOBS = [(name, k) for name, sc in CATALOG.items() for k in knobs(sc.config_type)
             if k.kind == "int" and k.min is not None and k.max is not None]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(INT_KNOBS), st.integers(min_value=-(2**40), max_value=2**40))
def test_any_int_outside_a_knob_range_is_refused_by_label(case, value) -> None:
    name, k = case
    sc = get(name)
    if k.min <= value <= k.max:
        configure(sc, {k.name: value}, check=False)  # inside: converted as is
    else:
        with pytest.raises(ConfigError, match=f"^{re.escape(k.label)}: {value} is out of range"):
            configure(sc, {k.name: value}, check=False)


def test_tune_from_python_refuses_code_text_before_anything_starts(tmp_path) -> None:
    from ts_explore.tuning.candidates import TuneError
    from ts_explore.tuning.run import tune

    marker = tmp_path / "ran"
    with pytest.raises(TuneError, match=r"candidate 2 \(skip_fn=.*never run as code"):
        tune("persistent_copy", ["64x64x64"], [{"skip": "user callable", "skip_fn": "even tiles"},
                                               {"skip": "user callable", "skip_fn": PLANTED.format(marker=str(marker))}],
             cache_dir=tmp_path, gpu={"gpu": "none", "driver": "0"}, progress=False)
    assert not marker.exists()
