"""The launch gate: verify every distinct per-CTA instance a launch runs, before anything reaches the GPU.

Each instance of each :class:`~ts_explore.model.plan.LaunchPlan` is recorded
on the CPU exactly as those CTAs run it (``BuildContext.for_instance``) and
verified with :func:`ts_explore.verify`; instances whose captured task sets
are equal are verified once. An instance that does no work is named, not
verified ("no work"); one that is unsafe or only inconclusive refuses the
launch unless the caller forces it.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable

from ..kernels.contract import BuildContext
from ..model import QueueKind
from ..model.plan import DeviceLimits, GateReport, LaunchPlan, ProvenInstance
from ..scenarios.base import Scenario


def prove(scenario: Scenario, config: Any, plans: Iterable[LaunchPlan],
          known: dict[Any, tuple[str, str]] | None = None) -> GateReport:
    """Verify each distinct instance of ``plans``; ``known`` carries results between calls (same config)."""
    from ..reader import capture_task_set
    from ..verification.verify import verify

    plans = tuple(plans)
    known = {} if known is None else known
    proven = []
    for plan in plans:
        for instance in plan.instances:
            if instance.vacuous:
                proven.append(ProvenInstance(instance, "vacuous", "does no work"))
                continue
            try:
                built = scenario.build(config, BuildContext.for_instance(instance.view))
                key = _fingerprint(capture_task_set(built.tasks, built.resource_dependency_graph))
                if key not in known:
                    verdict = verify(**built.verify_kwargs(), instance=instance.describe())
                    known[key] = (verdict.status.value, verdict.summary())
            except Exception as exc:  # noqa: BLE001 - a build that fails is a refusal with its cause
                return GateReport(plans, tuple(proven), problem=f"recording {instance.describe()} failed: "
                                                                f"{type(exc).__name__}: {exc}")
            status, summary = known[key]
            proven.append(ProvenInstance(instance, status, summary))
    return GateReport(plans, tuple(proven))


def _fingerprint(task_set: Any) -> Any:
    try:
        hash(task_set)
        return task_set
    except TypeError:
        return repr(task_set)


def launch_refusal(scenario: Scenario, config: Any, limits: DeviceLimits) -> tuple[str, str] | None:
    """``(reason, message)`` when ``config`` cannot run on this GPU; None when it can.

    The one place for architecture rules: the config's needs (:func:`required_cc`)
    and the kernel module's own ``launch_refusal(cfg, arch)`` when it has one.
    """
    arch = f"sm_{limits.cc[0]}{limits.cc[1]}"
    need = required_cc(config)
    if need is not None and limits.cc < need[:2]:
        return ("needs_sm100" if need[0] == 10 else "needs_newer_gpu", f"{need[2]}; this GPU is {limits.name} ({arch})")
    kernel = getattr(scenario, "kernel", None)
    module = importlib.import_module(kernel) if isinstance(kernel, str) else None
    rule = getattr(module, "launch_refusal", None)
    message = rule(config, arch + "a" if limits.cc >= (9, 0) else arch) if callable(rule) else None
    return ("cannot_run_here", message) if message else None


def required_cc(config: Any) -> tuple[int, int, str] | None:
    """The compute capability a config needs to run, and why (None: any sm_90 GPU)."""
    if getattr(config, "queue", None) is QueueKind.CLC:
        return (10, 0, "CLC dynamic persistence (cluster launch control) needs an sm_100+ GPU; "
                       "the schedule still records and verifies on this machine")
    return None


__all__ = ["launch_refusal", "prove", "required_cc"]
