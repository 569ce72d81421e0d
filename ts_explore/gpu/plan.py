"""``ts_explore.launch_plan``: how a scenario launches for a size, from its kernel module's one ``plan``.

>>> p = launch_plan("pipelined_copy", 1 << 20, device=DeviceLimits.h200(), ctas=0)
>>> p.ctas, p.estimate
(256, True)
>>> print(p.instances[0].describe())
CTAs 0-255: 1 tile
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..kernels.contract import missing_members
from ..kernels.host import SizeError
from ..model.plan import DeviceLimits, LaunchPlan
from ..model.timeline import MAX_REGISTERS
from ..scenarios import Scenario, get
from ..scenarios.knobs import configure
from .errors import LaunchError
from .probe import probe


def kernel_module(scenario: Scenario) -> ModuleType:
    """The scenario's kernel module; LaunchError when it has none or it lacks the plan functions."""
    if scenario.kernel is None:
        raise LaunchError("no_kernel", f"scenario {scenario.name!r} has no GPU kernel: the kernel for this scenario "
                          "is not built yet (Scenario.kernel is None). Recording, drawing and verifying it work on "
                          f"the CPU (Explorer({scenario.name!r}), verify(**build.verify_kwargs())); launch it once "
                          "a kernel module is registered for it")
    module = importlib.import_module(scenario.kernel)
    missing = missing_members(module)
    if missing:
        raise LaunchError("no_kernel", f"kernel module {scenario.kernel} defines no {', '.join(missing)}; a kernel "
                          "module provides plan(cfg, size, limits, registers=None), host_problem(cfg, plan) and "
                          "compile(scenario, cfg, *, arch=None, on_built=None) (see ts_explore.kernels.contract)")
    return module


def device_limits(device: DeviceLimits | None = None) -> DeviceLimits:
    """``device``, else this machine's GPU (from the one probe), else an assumed H200."""
    if device is not None:
        return device
    found = probe()
    return found.limits if found.limits is not None else DeviceLimits.h200()


def plans_for(scenario: Scenario, cfg: Any, sizes: tuple[Any, ...], limits: DeviceLimits,
              registers: int | None = None) -> tuple[LaunchPlan, ...]:
    """One plan per size; LaunchError ``bad_size`` naming the fix for a size the kernel cannot take.

    ``registers`` (per thread, as ptxas reports them) must be None or 1 to 255,
    what an NVIDIA GPU can give a thread: a TypeError or ValueError otherwise.
    """
    if registers is not None and (isinstance(registers, bool) or not isinstance(registers, int)):
        raise TypeError(f"registers={registers!r}: give the registers per thread as a whole number (what ptxas "
                        "reports, e.g. registers=128), or None to leave them out of the occupancy")
    if registers is not None and not 1 <= registers <= MAX_REGISTERS:
        raise ValueError(f"registers={registers}: a thread has between 1 and {MAX_REGISTERS} registers; "
                         "give what ptxas reports for the kernel (e.g. registers=128), or None")
    module = kernel_module(scenario)
    try:
        return tuple(module.plan(cfg, size, limits, registers) for size in sizes)
    except SizeError as exc:
        raise LaunchError("bad_size", str(exc)) from None


def launch_plan(scenario: str | Scenario, size: Any, *, device: DeviceLimits | None = None,
                registers: int | None = None, **config: Any) -> LaunchPlan:
    """The grid, block, resources and distinct per-CTA instances of launching ``scenario`` at ``size``.

    ``config`` goes through the scenario's coercion (labels in errors). With
    no ``device`` the plan uses this machine's GPU, or an assumed H200 when
    there is none; without ``registers`` (read from the compiled kernel at
    launch) occupancy ignores registers. Either makes it an estimate, which
    :attr:`LaunchPlan.estimate` and its summary say.
    """
    sc = get(scenario)
    cfg = configure(sc, config)
    return plans_for(sc, cfg, (size,), device_limits(device), registers)[0]


__all__ = ["DeviceLimits", "device_limits", "kernel_module", "launch_plan", "plans_for"]
