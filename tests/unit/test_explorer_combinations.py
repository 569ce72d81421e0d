"""Every value a control offers, in every combination of the settings the others depend on (faults, work
queues), is accepted: picked in its widget, and set from code with ``Explorer.set``.

The combinations are generated from the scenarios' own knobs. The default tier
walks every value in the default combination (every dropdown and checkbox value,
each slider's ends and middle) and a seeded sample of (control, value) pairs in
each other combination; the soak tier walks every one, every slider position
included (64 spread positions on a slider longer than that).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any, Iterator

import ipywidgets as widgets
import pytest

import control_walk
from control_walk import BUILT_IN
from tiers import soak
from ts_explore.app.explorer import Explorer
from ts_explore.scenarios import get
from ts_explore.scenarios.choices import adjust, option_values, refusal
from ts_explore.scenarios.knobs import knobs

DEPENDENT = ("fault", "queue")  # knobs whose value changes what every other control accepts
SAMPLE = 4  # (control, value) pairs per combination in the default tier
SOAK_POSITIONS = 64  # slider positions per slider in the soak tier


def combinations(name: str) -> Iterator[Any]:
    """Each accepted assignment of the dependent knobs a scenario has, over its default config."""
    sc = get(name)
    table = {k.name: k for k in knobs(sc.config_type)}
    names = [n for n in DEPENDENT if n in table]
    for values in itertools.product(*(option_values(table[n]) for n in names)):
        config = dataclasses.replace(sc.default_config(), **dict(zip(names, values)))
        config, _ = adjust(sc, config, keep=names)  # e.g. no over-launched tiles without a queue
        if refusal(sc, config) is None:
            yield config


def offered(control: widgets.Widget, every: bool) -> list[Any]:
    """What a control lets a user pick now (slider positions: every one in soak, a spread sample by default)."""

    def positions(values: list[int]) -> list[int]:
        if every:  # every position, or 64 spread over a long range (CTAs up to 8192) with both ends
            return values if len(values) <= SOAK_POSITIONS else sorted(
                {values[round(i * (len(values) - 1) / (SOAK_POSITIONS - 1))] for i in range(SOAK_POSITIONS)})
        return values if len(values) <= 5 else sorted({*values[:2], values[len(values) // 2], *values[-2:]})

    return control_walk.offered(control, positions)


def _accepted(ex: Explorer, config: Any, how: str) -> None:
    deliberate = getattr(config, "fault", None) is not None and getattr(config.fault, "name", "NONE") != "NONE"
    if ex.problem is not None:  # a fault TS refuses to record is the one planted mistake allowed to stop it
        assert deliberate and ex.problem.rule != "schedule-error", f"{how}: not recorded: {ex.problem}"
        return
    assert ex.error is None, f"{how}: refused: {ex.error}"
    assert ex.verdict is not None and ex.state == "idle", f"{how}: state {ex.state}"


def walk(name: str, every: bool) -> int:
    """Pick every (or a sample of every) offered value in every combination, both ways; returns how many."""
    sc = get(name)
    rng = random.Random(f"{name}-combinations")
    ex = Explorer(sc, debounce_s=0)
    checked = 0
    default = sc.default_config()
    for combo in combinations(name):
        ex.set(combo)
        where = ", ".join(f"{n}={getattr(combo, n).name}" for n in DEPENDENT if hasattr(combo, n))
        _accepted(ex, combo, f"{name} [{where}]")
        pairs = [(field, v) for field, control in ex.controls.items() for v in offered(control, every)]
        if not every and combo != default:
            pairs = rng.sample(pairs, min(SAMPLE, len(pairs)))
        for field, value in pairs:
            label = ex.controls[field].description
            ex.set(combo)
            ex.controls[field].value = value  # as a user picks it: other controls may move
            _accepted(ex, ex.config, f"{name} [{where}]: picking {label} = {value!r}")
            ex.set(combo)
            ex.set(**{field: value})  # the same from code: the value is kept, the others may move
            _accepted(ex, ex.config, f"{name} [{where}]: ex.set({field}={value!r})")
            assert getattr(ex.config, field) == value, f"ex.set({field}={value!r}) did not keep the value"
            checked += 1
    return checked


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_sample_of_offered_values_is_accepted_in_every_combination(name: str) -> None:
    assert walk(name, every=False) >= 1


@pytest.mark.soak
@pytest.mark.parametrize("name", BUILT_IN)
def test_every_offered_value_is_accepted_in_every_combination(name: str) -> None:
    assert soak()
    walk(name, every=True)


def test_set_keeps_what_it_is_given_and_moves_what_that_strands() -> None:
    """The cases a user met: each is now accepted from code, and ``adjusted`` says what moved."""
    persistent = Explorer("persistent_copy", debounce_s=0)
    persistent.set(queue="none")
    assert persistent.error is None and persistent.config.overlaunch == 0
    assert any(a.startswith("over-launched tiles set to 0") for a in persistent.adjusted)
    persistent.set(queue="static", skip="user callable")
    assert persistent.error is None and callable(persistent.config.skip_fn)
    pipelined = Explorer("pipelined_copy", debounce_s=0)
    pipelined.set(tile=16384)
    assert pipelined.error is None and pipelined.config.tile == 16384 and pipelined.config.stages < 4
    pipelined.set(tile=16384, stages=4)  # both given: nothing may move, so the refusal is shown
    assert pipelined.error is not None and "SMEM stages" in pipelined.error


def test_a_fault_that_needs_a_queue_is_not_offered_without_one() -> None:
    ex = Explorer("persistent_copy", debounce_s=0, fault="queue bookkeeping inside skippable() (TS refuses to record it)")
    assert "none" not in [text for text, _ in ex.controls["queue"].options]
    assert "needs a work queue" in ex.controls["queue"].tooltip
    ex.set(queue="none", fault="none")
    ex.controls["fault"].value = ex.controls["fault"].options[-1][1]  # a fault picked without a queue brings one
    assert ex.config.queue.value == "static" and ex.adjusted[0].startswith("work queue set to static")
    assert ex.problem is not None and ex.problem.rule == "workqueue-in-skippable"  # TS's refusal, as planted
    assert "raise" not in (ex.problem.source or ""), "the box quotes a line of TS's or ours"


def test_a_refusal_while_building_shows_its_own_cause_and_fix() -> None:
    """A scenario's ConfigError raised by its build (not its check) is a refusal, not a TS schedule error."""
    from ts_explore.reader import problem_from_exception
    from ts_explore.scenarios import Scenario
    from ts_explore.scenarios.knobs import ConfigError

    base = get("grid_stride_copy")

    def build(config: Any, ctx: Any) -> Any:
        raise ConfigError("4 CTAs cannot share this buffer", "ctas", hint="pick 1 CTA")

    sc = Scenario("refuses_while_building", "refuses while building", base.config_type, build)
    ex = Explorer(sc, debounce_s=0)
    assert ex.problem is None and ex.error == "4 CTAs cannot share this buffer; pick 1 CTA"
    assert "not verified" in ex.status.value and "schedule-error" not in ex.status.value
    assert "Read TS's message" not in ex.message.value and "raise ConfigError" not in ex.message.value
    try:
        build(None, None)
    except ConfigError as exc:
        problem = problem_from_exception(exc)
    assert (problem.rule, problem.hint, problem.message) == ("config-error", "pick 1 CTA", "4 CTAs cannot share this buffer")
