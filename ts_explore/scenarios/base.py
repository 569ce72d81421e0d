"""What a scenario is: a frozen config dataclass plus one build function.

The same ``build`` records the schedule the explorer draws (on the CPU, with
Python ints for one chosen CTA/thread) and the schedule the GPU runs (inside
``@cute.kernel``, with runtime indices and tensors), so what a user sees is
what runs. Config fields carry widget hints in ``dataclasses.field(metadata=...)``:
``min``/``max``/``step`` for ints, ``label``, ``help``; Enum fields become
dropdowns and bools checkboxes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class BuildContext:
    """What differs between recording on the CPU and tracing inside the kernel.

    On the CPU every index is a Python int ("the schedule as thread ``thread``
    of CTA ``block`` sees it") and ``tensors`` is empty. Inside ``@cute.kernel``
    the launcher passes runtime ``block_idx``/``thread_idx``/``grid_dim`` values
    and the kernel's tensors and scheduler parameters.
    """

    on_gpu: bool = False
    block: Any = 0  # CTA index x (int on CPU, DSL value in a kernel)
    thread: Any = 0  # thread index x within the CTA
    grid: Any = 1  # number of CTAs launched along x
    tensors: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # scheduler params, pointers...


@dataclass
class Built:
    """Everything ``TaskManager`` (and :func:`ts_explore.verify`) takes, freshly built.

    TS mutates tasks and resources while verifying, so a scenario builds new
    ones on every call.
    """

    tasks: list[Any]
    resource_dependency_graph: dict[Any, list[Any]]
    task_manager_kwargs: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the reader should know (e.g. "CLC needs sm_100")

    def verify_kwargs(self) -> dict[str, Any]:
        """``verify(**built.verify_kwargs())``."""
        return {
            "tasks": self.tasks,
            "resource_dependency_graph": self.resource_dependency_graph,
            **self.task_manager_kwargs,
        }


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

    def default_config(self) -> Any:
        return self.config_type()

    def config(self, **overrides: Any) -> Any:
        """The default config with ``overrides`` applied; unknown names are a clear error."""
        names = {f.name for f in dataclasses.fields(self.config_type)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise ValueError(
                f"scenario {self.name!r} has no setting {', '.join(unknown)}; "
                f"its settings are: {', '.join(sorted(names))}"
            )
        return dataclasses.replace(self.default_config(), **overrides)

    def check(self, config: Any) -> None:
        """Raise ValueError naming the cause and the fix for an impossible config."""
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


def knob(default: Any, *, min: int | None = None, max: int | None = None, step: int | None = None,
         label: str | None = None, help: str = "") -> Any:
    """A config field with widget hints: ``stages: int = knob(2, min=1, max=8)``."""
    hints = {"min": min, "max": max, "step": step, "label": label, "help": help}
    meta = {k: v for k, v in hints.items() if v is not None and v != ""}  # keep min=0
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple for sequence defaults so configs stay frozen and hashable")
    return field(default=default, metadata=meta)


__all__ = ["BuildContext", "Built", "CATALOG", "Scenario", "get", "knob", "register"]

