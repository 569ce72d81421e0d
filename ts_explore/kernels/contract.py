"""The contract between a scenario and its kernel: what a build receives and what it returns.

A scenario's ``build(cfg, ctx)`` runs in two places. On the CPU it records the
schedule one CTA/thread runs, with Python ints; inside ``@cute.kernel`` the
kernel module calls the same function with runtime indices and tensors. The
kernel module receives the scenario object from the launcher, so kernels never
import the scenario catalog.

A kernel module (``Scenario.kernel``) is a :class:`KernelModule`:

``plan(cfg, size, limits, registers=None) -> LaunchPlan``
    grid, block, shared memory and the distinct per-CTA instances of one
    problem size (:mod:`ts_explore.model.plan`); pure, runs anywhere.
``compile(scenario, cfg, *, arch=None, on_built=None)``
    the compiled host function, called with the plan's arguments (a
    ``trace=`` keyword makes it traceable, :class:`TracedKernel`).

and checks its results one of two ways: ``host_problem(cfg, plan) ->
HostProblem`` (:class:`HostChecked`: inputs, the exact expected outputs and
the argument list, :mod:`.host`) or ``device_problem(fn, cfg, plan, stream)``
(:class:`DeviceChecked`: data made and checked on the GPU).

Optionally (:data:`OPTIONAL`): ``features(cfg)`` naming the hardware features
a config uses (:data:`ts_explore.gpu.safety.FEATURES`), ``launch_refusal(cfg,
arch)`` naming why a config cannot run on an architecture, ``tile_view(cfg,
tile)`` for per-tile CPU views, and ``DEFAULT_SIZES`` for ``launch()`` without
sizes. ``tests/unit/test_kernel_contract.py`` holds every catalog kernel to
these Protocols, signatures included.
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Mapping, Protocol, runtime_checkable


@dataclass(frozen=True)
class BuildContext:
    """What differs between recording on the CPU and tracing inside the kernel.

    Inside ``@cute.kernel`` the launcher passes runtime ``block``/``thread``/
    ``grid`` values, the kernel's tensors and runtime scalars in ``extra``. On
    the CPU a build records the config's own view (its ``block``/``thread``
    knobs and picture size) unless ``instance`` holds a launch plan
    instance's view (``Instance.view``: ``block``, ``thread``, ``grid`` and
    ``extra`` runtime values), which records exactly what some CTAs of a
    launch run (:meth:`for_instance`).
    """

    on_gpu: bool = False
    block: Any = 0  # CTA index x (DSL value in a kernel)
    thread: Any = 0  # thread index x within the CTA
    grid: Any = 1  # number of CTAs launched along x
    tensors: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # runtime scalars, scheduler params, pointers...
    instance: Mapping[str, Any] | None = None  # CPU only: the plan instance to record

    @classmethod
    def for_instance(cls, view: Mapping[str, Any]) -> BuildContext:
        """The CPU context that records a plan instance (``Instance.view``)."""
        return cls(on_gpu=False, instance=dict(view))


@dataclass
class Built:
    """Everything ``TaskManager`` (and :func:`ts_explore.verify`) takes, freshly built.

    TS mutates tasks and resources while verifying, so a scenario builds new
    ones on every call.
    """

    tasks: list[Any]
    resource_dependency_graph: dict[Any, list[Any]]
    task_manager_kwargs: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the viewed CTA/thread does (CPU view)
    captions: dict[str, str] = field(default_factory=dict)  # CPU view: frame kind ("skippable", ...) -> a line on it
    not_modelled: tuple[str, ...] = ()  # effects of this kernel TS's model does not see, for the verdict's scope
    rules: tuple[Any, ...] = ()  # checks of ours for them: TaskSet -> CheckOutcome (``verify(rules=...)``)

    def task_manager_args(self) -> dict[str, Any]:
        """``TaskManager(**built.task_manager_args())``: the tasks, the graph and TaskManager's own keywords."""
        return {"tasks": self.tasks, "resource_dependency_graph": self.resource_dependency_graph,
                **self.task_manager_kwargs}

    def verify_kwargs(self) -> dict[str, Any]:
        """``verify(**built.verify_kwargs())``: TaskManager's arguments plus the scope and rules of ours."""
        extra: dict[str, Any] = {}
        if self.not_modelled:
            extra["not_modelled"] = self.not_modelled
        if self.rules:
            extra["rules"] = self.rules
        return {**self.task_manager_args(), **extra}


@runtime_checkable
class KernelModule(Protocol):
    """What the launcher calls on every kernel module."""

    def plan(self, cfg: Any, size: Any, limits: Any, registers: int | None = None) -> Any:
        """Grid, block, shared memory and the distinct per-CTA instances of one problem size."""

    def compile(self, scenario: Any, cfg: Any, *, arch: str | None = None, on_built: Any = None) -> Any:
        """The compiled host function, called with the plan's arguments."""


@runtime_checkable
class TracedKernel(KernelModule, Protocol):
    """A kernel module whose builds can be instrumented (``launch(..., trace=...)``)."""

    def compile(self, scenario: Any, cfg: Any, *, arch: str | None = None, on_built: Any = None,
                trace: Any = None) -> Any:
        """The compiled host function; with ``trace`` an instrumented build."""


@runtime_checkable
class HostChecked(Protocol):
    """Results checked on the host against exact expected outputs."""

    def host_problem(self, cfg: Any, plan: Any) -> Any:
        """Inputs, the exact expected outputs and the argument list."""


@runtime_checkable
class DeviceChecked(Protocol):
    """Results made and checked on the GPU."""

    def device_problem(self, fn: Any, cfg: Any, plan: Any, stream: Any) -> Any:
        """Data made on the GPU and the check of the outputs there."""


# optional members: name -> the parameters they take
OPTIONAL: dict[str, tuple[str, ...]] = {
    "features": ("cfg",),
    "launch_refusal": ("cfg", "arch"),
    "tile_view": ("cfg", "tile"),
}


def missing_members(module: ModuleType) -> list[str]:
    """What ``module`` lacks of the contract, in words (empty: it is a kernel module)."""
    missing = [name for name in ("plan", "compile") if not callable(getattr(module, name, None))]
    if not isinstance(module, (HostChecked, DeviceChecked)):
        missing.append("host_problem (or device_problem)")
    return missing


def traceable(module: ModuleType) -> bool:
    """Whether ``module.compile`` takes ``trace=`` (a :class:`TracedKernel`).

    ``isinstance`` cannot tell: a runtime Protocol checks member names, and
    every kernel module has a ``compile``; the keyword is what differs.
    """
    compile_fn = getattr(module, "compile", None)
    return callable(compile_fn) and "trace" in inspect.signature(compile_fn).parameters


def optional(module: ModuleType, name: str) -> Callable[..., Any] | None:
    """An optional member of a kernel module (:data:`OPTIONAL`), or None when it does not define it."""
    if name not in OPTIONAL:
        raise KeyError(f"{name!r} is not an optional kernel-module member; they are {sorted(OPTIONAL)}")
    found = getattr(module, name, None)
    return found if callable(found) else None


__all__ = ["OPTIONAL", "BuildContext", "Built", "DeviceChecked", "HostChecked", "KernelModule", "TracedKernel",
           "missing_members", "optional", "traceable"]
