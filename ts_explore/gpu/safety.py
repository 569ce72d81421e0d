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
from typing import Any, Iterable, NamedTuple

from ..kernels.contract import BuildContext, optional
from ..model.plan import DeviceLimits, GateReport, LaunchPlan, ProvenInstance
from ..model.verdict import Verdict
from ..scenarios.base import Scenario


def prove(scenario: Scenario, config: Any, plans: Iterable[LaunchPlan],
          known: dict[Any, Verdict] | None = None, edits: tuple[Any, ...] = ()) -> GateReport:
    """Verify each distinct instance of ``plans``; ``known`` carries the Verdicts between calls (same config).

    Each instance is built and captured once; instances whose captured task
    sets are equal share one verification, and every :class:`ProvenInstance`
    keeps its :class:`~ts_explore.model.verdict.Verdict` (the hang report reads it).
    ``edits`` (a repair's) are written onto each instance's built tasks the
    way the kernel's build writes them (:func:`~ts_explore.reader.materialise.write_edits`),
    so what is proven is the repaired instance the launch will run.
    """
    from ..reader import capture_task_set
    from ..reader.materialise import write_edits
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
                if edits:
                    write_edits(built.tasks, built.resource_dependency_graph, edits)
                task_set = capture_task_set(built.tasks, built.resource_dependency_graph)
                key = _fingerprint(task_set)
                if key not in known:
                    known[key] = verify(**built.verify_kwargs(), instance=instance.describe(), task_set=task_set)
            except Exception as exc:  # noqa: BLE001 - a build that fails is a refusal with its cause
                what = "writing the repair onto" if edits else "recording"
                return GateReport(plans, tuple(proven), problem=f"{what} {instance.describe()} failed: "
                                                                f"{type(exc).__name__}: {exc}")
            verdict = known[key]
            proven.append(ProvenInstance(instance, verdict.status.value, verdict.summary(), verdict))
    return GateReport(plans, tuple(proven))


# edit kinds a launch cannot write onto the kernel's own build -> why (each names what to do instead)
NOT_LAUNCHABLE: dict[str, str] = {
    "bounds": "it rewrites a loop's bounds with the numbers of the CPU view, but in the kernel the bounds are "
              "runtime values that differ per CTA, so one compiled kernel cannot carry them; change the bound in "
              "the scenario's schedule",
    "stage": "it adds a pipeline stage to TS's pipeline config, but the kernel sizes the stage's shared memory "
             "from the scenario's own stage count when it builds the resource, so the extra stage would use "
             "memory never allocated; raise the scenario's stages control instead",
}


def repair_refusal(edits: Iterable[Any]) -> str | None:
    """Why a repair with ``edits`` cannot be launched (None when every edit kind can be written onto the kernel)."""
    kinds = sorted({getattr(e, "kind", type(e).__name__) for e in edits})
    wrong = [k for k in kinds if k in NOT_LAUNCHABLE]
    if not wrong:
        return None
    return ("this repair cannot be launched: " + "; ".join(f"its '{k}' edit: {NOT_LAUNCHABLE[k]}" for k in wrong)
            + ". Repairs made of moves, inserts, removals, guard changes or PDL swaps launch as they are.")


def _fingerprint(task_set: Any) -> Any:
    try:
        hash(task_set)
        return task_set
    except TypeError:
        return repr(task_set)


MIN_CC = (9, 0)  # TS kernels (TMA, mbarrier pipelines, warp specialisation) need Hopper or newer


class Feature(NamedTuple):
    """Which GPUs have one hardware feature a kernel may use."""

    lowest: tuple[int, int]  # the lowest compute capability that has it
    what: str  # the feature in words
    only: int | None = None  # the one major version that has it (``sm_90a``-only instructions); None: newer ones too


# hardware features a kernel module may declare (``features(cfg)``) -> which GPUs have them
FEATURES: dict[str, Feature] = {
    "clc": Feature((10, 0), "CLC dynamic persistence (cluster launch control)"),
    "wgmma": Feature((9, 0), "WGMMA", only=9),
}


def feature_refusal(features: Iterable[str], cc: tuple[int, int], gpu: str) -> tuple[str, str] | None:
    """``(reason, message)`` when a GPU of compute capability ``cc`` (named ``gpu``) lacks a declared feature.

    Features no single GPU has together (one newer than another's only
    architecture) refuse on every GPU; otherwise the first missing feature
    refuses. None when the GPU has them all.
    """
    arch = f"sm_{cc[0]}{cc[1]}"
    declared = [(name, FEATURES[name]) for name in sorted(features)]
    for _name, needs in declared:
        for _other, only in declared:
            if only.only is not None and needs.lowest[0] > only.only:
                return ("cannot_run_here",
                        f"{needs.what} needs sm_{needs.lowest[0]}{needs.lowest[1]}+, and {only.what} exists only "
                        f"on sm_{only.only}0a: this variant records and verifies but launches on no GPU; "
                        f"choose a config without {needs.what}")
    for _name, feature in declared:
        if cc < feature.lowest:
            need = feature.lowest
            reason = "needs_sm100" if need[0] == 10 else "needs_newer_gpu"
            return (reason, f"{feature.what} needs an sm_{need[0]}{need[1]}+ GPU; the schedule still records and "
                            f"verifies on this machine; this GPU is {gpu} ({arch})")
        if feature.only is not None and cc[0] != feature.only:
            return ("cannot_run_here", f"{feature.what} needs an sm_{feature.only}0a GPU (it exists on no other); "
                                       f"this is {arch}a")
    return None


def launch_refusal(scenario: Scenario | None, config: Any, limits: DeviceLimits) -> tuple[str, str] | None:
    """``(reason, message)`` when ``config`` cannot run on this GPU; None when it can.

    The one place for architecture rules: the sm_90 minimum, the features a
    kernel module says a config uses (its ``features(cfg)``, looked up in
    :data:`FEATURES`), and the kernel module's own ``launch_refusal(cfg, arch)``
    when it has one. Without a scenario or a config only the minimum applies.
    """
    arch = f"sm_{limits.cc[0]}{limits.cc[1]}"
    if limits.cc < MIN_CC:
        return ("needs_newer_gpu", f"{limits.name} is {arch}; TS kernels need sm_{MIN_CC[0]}{MIN_CC[1]} or newer")
    kernel = getattr(scenario, "kernel", None)
    if config is None or not isinstance(kernel, str):
        return None
    module = importlib.import_module(kernel)
    missing = feature_refusal(required_features(module, config), limits.cc, limits.name)
    if missing is not None:
        return missing
    rule = optional(module, "launch_refusal")
    message = rule(config, arch + "a" if limits.cc >= MIN_CC else arch) if rule is not None else None
    return ("cannot_run_here", message) if message else None


def required_features(module: Any, config: Any) -> frozenset[str]:
    """The hardware features the kernel module says ``config`` uses (none when it declares no ``features``)."""
    declare = optional(module, "features")
    found = frozenset(declare(config)) if declare is not None else frozenset()
    unknown = found - set(FEATURES)
    if unknown:
        raise ValueError(f"kernel module {module.__name__} names unknown hardware feature(s) {sorted(unknown)}; "
                         f"known: {sorted(FEATURES)} (add a feature to ts_explore.gpu.safety.FEATURES)")
    return found


__all__ = ["FEATURES", "MIN_CC", "NOT_LAUNCHABLE", "Feature", "feature_refusal", "launch_refusal", "prove",
           "repair_refusal", "required_features"]
