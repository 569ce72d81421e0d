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


def test_callables_are_parsed_from_text_and_stay_the_same_object() -> None:
    sc = get("persistent_copy")
    a = configure(sc, {"skip": "user callable", "skip_fn": "lambda t: t % 3 == 0"})
    b = configure(sc, {"skip": "user callable", "skip_fn": "lambda t: t % 3 == 0"})
    assert a.skip_fn is b.skip_fn and a.skip_fn(3) and not a.skip_fn(4)
    with pytest.raises(ConfigError, match="is not valid Python"):
        configure(sc, {"skip_fn": "lambda t: t %"})


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
