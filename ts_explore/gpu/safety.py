"""The launch gate: verify every distinct per-CTA instance a launch runs, before anything reaches the GPU.

Each instance of each :class:`~ts_explore.model.plan.LaunchPlan` is recorded
on the CPU exactly as those CTAs run it (``BuildContext.for_instance``) and
verified with :func:`ts_explore.verify`; instances whose captured task sets
are equal are verified once. An instance that does no work is named, not
verified ("no work"); one that is unsafe or only inconclusive refuses the
launch unless the caller forces it.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..kernels.contract import BuildContext
from ..model import QueueKind
from ..model.plan import GateReport, LaunchPlan, ProvenInstance
from ..scenarios.base import Scenario


def prove(scenario: Scenario, config: Any, plans: Iterable[LaunchPlan],
          known: dict[Any, tuple[str, str]] | None = None) -> GateReport:
    """Verify each distinct instance of ``plans``; ``known`` carries results between calls (same config)."""
    from ..reader import capture_task_set
    from ..reader.verify import verify

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
                    verdict = verify(**built.verify_kwargs())
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


def required_cc(config: Any) -> tuple[int, int, str] | None:
    """The compute capability a config needs to run, and why (None: any sm_90 GPU)."""
    if getattr(config, "queue", None) is QueueKind.CLC:
        return (10, 0, "CLC dynamic persistence (cluster launch control) needs an sm_100+ GPU; "
                       "the schedule still records and verifies on this machine")
    return None


__all__ = ["prove", "required_cc"]
