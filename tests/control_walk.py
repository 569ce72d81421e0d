"""What the explorer's controls offer a user, for the tests that walk every offered value.

The widget walks (``test_explorer_choices``: each value and dependent pairs;
``test_explorer_combinations``: every fault x queue combination) read the
controls the same way and differ only in which slider positions they try.
:func:`walk` moves from the defaults one offered value at a time, as a user
clicking through the panel would, and :func:`refused_offers` lists what a
configuration it reaches offers and the scenario still refuses
(``test_explorer_walk``).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterator

import ipywidgets as widgets

from ts_explore.scenarios.choices import Choice, choices, pick

# the catalog scenarios the walks cover (the GEMM's walk lives in test_gemm_cpu)
BUILT_IN = ["grid_stride_copy", "guards_demo", "hopper_attention", "persistent_copy", "pipelined_copy", "varlen_copy"]
WALKED = [*BUILT_IN, "hopper_gemm"]  # the random walk is cheap (checks only), so it covers the GEMM too


def offered(control: widgets.Widget, positions: Callable[[list[int]], list[int]]) -> list[Any]:
    """What a control lets a user pick now: dropdown options, both checkbox states, the slider ``positions`` chooses.

    >>> offered(widgets.Checkbox(), list)
    [False, True]
    >>> offered(widgets.IntSlider(min=1, max=4), lambda values: values[-1:])
    [4]
    """
    if control.disabled:
        return []
    if isinstance(control, widgets.Dropdown):
        return [v for _, v in control.options]
    if isinstance(control, widgets.Checkbox):
        return [False, True]
    if isinstance(control, widgets.IntSlider):
        return positions(list(range(control.min, control.max + 1, control.step)))
    return []  # text boxes: free text, checked when typed


def choice_values(choice: Choice, rng: random.Random, sample: int | None) -> list[Any]:
    """What a :class:`Choice` offers: every option, every slider position, or the ends and ``sample`` others.

    >>> choice_values(Choice("k", low=16, high=64, step=16), random.Random(0), None)
    [16, 32, 48, 64]
    """
    if not choice.active:
        return []
    if choice.options is not None:
        return list(choice.options)
    values = choice.values()
    if values is None:
        return []
    if sample is None or len(values) <= sample + 2:
        return list(values)
    return sorted({values[0], values[-1], *rng.sample(values, sample)})


def walk(scenario: Any, steps: int, rng: random.Random) -> Iterator[Any]:
    """The defaults, then ``steps`` configurations, each one offered value of one control away from the last.

    Each move is what picking that value in its control does (other controls
    adjusted as the explorer adjusts them); a move the scenario refuses fails
    the walk's caller through the AssertionError it raises.
    """
    config = scenario.default_config()
    yield config
    for _ in range(steps):
        offer = choices(scenario, config)
        moves = [(name, v) for name, c in offer.items() for v in choice_values(c, rng, 4)
                 if v != getattr(config, name)]
        if not moves:
            return
        name, value = rng.choice(moves)
        config, err = pick(scenario, config, name, value)
        assert err is None, f"{scenario.name}: {name} offers {value!r}, refused: {err}"
        yield config


def refused_offers(scenario: Any, config: Any, rng: random.Random, sample: int | None) -> list[str]:
    """Each value a control offers in ``config`` that picking refuses, in words (empty: every offer is accepted)."""
    out = []
    for name, choice in choices(scenario, config).items():
        for value in choice_values(choice, rng, sample):
            err = pick(scenario, config, name, value)[1]
            if err is not None:
                out.append(f"{name} offers {value!r}: {err}")
    return out
