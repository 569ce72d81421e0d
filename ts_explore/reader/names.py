"""Every resource of one capture read once: display names, queue kinds and colour families.

A capture (a task set, a recorded schedule, a verification) builds one
:class:`ResourceNames` table from all its resources; the readers that walk
steps and nodes then look each resource up in it, so naming stays one rule
in one place and no walk calls back here per step.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling import resources as ts_resources

from ..model import Family, QueueKind, Stage

_ACQUIRE = {Stage.PRODUCER_TRY_ACQUIRE, Stage.PRODUCER_ACQUIRE}
_WAIT = {Stage.CONSUMER_TRY_WAIT, Stage.CONSUMER_WAIT}
_AUX = {Stage.PRODUCER_AUX_WORK, Stage.CONSUMER_AUX_WORK}


class ResourceNames(dict[int, str]):
    """Every resource of one capture read once, keyed by ``id``: its display name, queue kind and fixed family.

    Names are ``name``, else the class name, with ``#2`` on clashes, in the
    order the resources are given. Readers look facts up per step
    (``names[id(res)]``, ``names.queue_kinds[id(res)]``, :meth:`family`'s
    rule inlined as ``names.fixed_family.get(id(res)) or STAGE_FAMILY[stage]``)
    instead of calling back into this module for every step. Calling the
    table names a resource it has not seen yet, as a namer would.
    """

    def __init__(self, resources: list[Any]) -> None:
        super().__init__()
        self._used: set[str] = set()
        self._held: list[Any] = []  # keeps every keyed resource alive, so no id is reused
        self.queue_kinds: dict[int, QueueKind | None] = {}
        self.fixed_family: dict[int, Family] = {}
        for res in resources:
            self(res)

    def __call__(self, res: Any) -> str:
        key = id(res)
        if key in self:
            return self[key]
        base = getattr(res, "name", "") or type(res).__name__
        name, n = base, 2
        while name in self._used:
            name, n = f"{base}#{n}", n + 1
        self._used.add(name)
        self._held.append(res)
        self[key] = name
        self.queue_kinds[key] = queue_kind(res)
        if isinstance(res, ts_resources.WorkQueue):
            self.fixed_family[key] = Family.QUEUE
        elif getattr(res, "is_barrier", False):
            self.fixed_family[key] = Family.BARRIER
        return name

    def family(self, res: Any, stage: Stage) -> Family:
        """The colour family a reader sees for one step on ``res``."""
        return self.fixed_family.get(id(res)) or STAGE_FAMILY[stage]


def resource_namer(resources: list[Any]) -> ResourceNames:
    """Map TS resources to unique display names (``name``, else class name; ``#2`` on clashes)."""
    return ResourceNames(resources)


def queue_kind(resource: Any) -> QueueKind | None:
    """The scheduling shape of a WorkQueue resource, or None for other resources."""
    if not isinstance(resource, ts_resources.WorkQueue):
        return None
    cfg = getattr(resource, "tile_scheduler_config", None)
    kind = getattr(getattr(cfg, "tile_scheduler_type", None), "name", "")
    pipe = getattr(getattr(resource, "pipeline_config", None), "pipeline_type", None)
    if "Clc" in kind or getattr(pipe, "name", "") == "ClcFetchAsync":
        return QueueKind.CLC
    return QueueKind.STATIC


def _stage_family(stage: Stage) -> Family:
    if stage in _AUX:
        return Family.AUX
    if stage in _ACQUIRE:
        return Family.ACQUIRE
    if stage is Stage.PRODUCER_COMMIT:
        return Family.COMMIT
    if stage in _WAIT:
        return Family.WAIT
    if stage is Stage.CONSUMER_RELEASE:
        return Family.RELEASE
    if stage is Stage.PRODUCER_WORK:
        return Family.PRODUCER_WORK
    return Family.CONSUMER_WORK


STAGE_FAMILY: dict[Stage, Family] = {stage: _stage_family(stage) for stage in Stage}
"""The colour family of a step on a resource that is neither a WorkQueue nor a barrier, by stage."""


def family_of(resource: Any, stage: Stage) -> Family:
    """The colour family a reader sees for one step."""
    if isinstance(resource, ts_resources.WorkQueue):
        return Family.QUEUE
    if getattr(resource, "is_barrier", False):
        return Family.BARRIER
    return STAGE_FAMILY[stage]


NameOf = ResourceNames

__all__ = ["STAGE_FAMILY", "NameOf", "ResourceNames", "family_of", "queue_kind", "resource_namer"]
