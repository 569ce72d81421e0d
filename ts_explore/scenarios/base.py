"""What a scenario is: a frozen config dataclass plus one build function.

The same ``build`` records the schedule the explorer draws (on the CPU, with
Python ints for one chosen CTA/thread) and the schedule the GPU runs (inside
``@cute.kernel``, with runtime indices and tensors), so what a user sees is
what runs. Config fields carry widget hints in ``dataclasses.field(metadata=...)``:
``min``/``max``/``step`` for ints, ``label``, ``help``; Enum fields become
dropdowns and bools checkboxes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..kernels.contract import BuildContext, Built
from .knobs import knob


@dataclass(frozen=True)
class Scenario:
    """A named, configurable family of schedules."""

    name: str
    title: str
    config_type: type
    build_fn: Callable[[Any, BuildContext], Built]
    description: str = ""
    check_fn: Callable[[Any], None] | None = None  # raise ValueError for bad combinations
    kernel: str | None = None  # module of the GPU kernel family (``ts_explore.kernels.*``); None: record only
    inactive_fn: Callable[[Any], Mapping[str, str]] | None = None  # knobs that change nothing now -> why

    def default_config(self) -> Any:
        return self.config_type()

    def config(self, **overrides: Any) -> Any:
        """The default config with ``overrides`` converted and bounded by their knobs.

        Raises :class:`~ts_explore.scenarios.knobs.ConfigError` (a ValueError)
        naming the knob by its label; combinations are judged by :meth:`check`
        (``knobs.configure`` does both).
        """
        from .knobs import configure

        return configure(self, overrides, check=False)

    def check(self, config: Any) -> None:
        """Raise ValueError naming the cause and the fix for an impossible config.

        The catalog raises :class:`~ts_explore.scenarios.knobs.ConfigError`
        with the cause, the fix (``hint``) and the knob to move (``knob``).
        """
        if not isinstance(config, self.config_type):
            raise TypeError(f"scenario {self.name!r} takes a {self.config_type.__name__}, got {type(config).__name__}")
        if self.check_fn is not None:
            self.check_fn(config)

    def build(self, config: Any | None = None, ctx: BuildContext | None = None) -> Built:
        """Record resources, schedules and tasks for ``config`` (default config when None)."""
        config = self.default_config() if config is None else config
        self.check(config)
        return self.build_fn(config, ctx or BuildContext())


CATALOG: dict[str, Scenario] = {}


def register(scenario: Scenario, *, replace: bool = False) -> Scenario:
    """Add a scenario to :data:`CATALOG` (users register their own the same way)."""
    if scenario.name in CATALOG and not replace:
        raise ValueError(f"a scenario named {scenario.name!r} is already registered; pass replace=True")
    CATALOG[scenario.name] = scenario
    return scenario


def get(name_or_scenario: str | Scenario) -> Scenario:
    """Look up a scenario by name (or pass a Scenario through)."""
    if isinstance(name_or_scenario, Scenario):
        return name_or_scenario
    try:
        return CATALOG[name_or_scenario]
    except KeyError:
        raise KeyError(
            f"no scenario named {name_or_scenario!r}; the catalog has: {', '.join(sorted(CATALOG))}"
        ) from None


__all__ = ["CATALOG", "BuildContext", "Built", "Scenario", "get", "knob", "register"]

