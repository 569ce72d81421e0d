"""Frozen description of resources, tasks and the resource dependency graph."""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import QueueKind, ScheduleTree, Section, Stage


@dataclass(frozen=True)
class ResourceInfo:
    """A TS ``MemoryResource`` as the diagrams show it."""

    name: str
    type_name: str  # the resource's Python class name
    pipeline: str | None = None  # PipelineType name (``AsyncAsync`` ...) or None
    stages: int | None = None  # pipeline stages (initial empty-slot credits)
    is_barrier: bool = False
    queue_kind: QueueKind | None = None  # set for WorkQueue resources
    variables: tuple[str, ...] = ()  # task-local variable slot names
    smem_bytes: int = 0  # SMEM declared by get_smem_requirements()

    @property
    def is_work_queue(self) -> bool:
        return self.queue_kind is not None

    @property
    def subtitle(self) -> str:
        parts = [self.type_name]
        if self.pipeline:
            parts.append(f"{self.pipeline}, stages={self.stages}")
        if self.queue_kind is not None:
            parts.append(f"{self.queue_kind.value} work queue")
        if self.is_barrier:
            parts.append("barrier")
        return " | ".join(parts)


@dataclass(frozen=True)
class ExpandedStep:
    """One entry of a task's flat head/loop/tail list, as TS lowers it."""

    resource: str
    stage: Stage
    call_index: int
    section: Section
    guard: str  # ``Always``, ``FirstIter``, ``LastIter``, ``Every(2, 0)``, ``when_true(k)``
    label: str | None


@dataclass(frozen=True)
class TaskInfo:
    """A TS ``Task``: a schedule bound to a warp range."""

    name: str
    warp_start: int
    warp_end: int  # exclusive
    src: tuple[str, ...]
    dst: tuple[str, ...]
    schedule: ScheduleTree
    persistent: bool = False
    dynamic_domain: bool = False
    num_registers: int | None = None
    expanded: tuple[ExpandedStep, ...] = ()

    @property
    def num_warps(self) -> int:
        return self.warp_end - self.warp_start

    @property
    def warp_text(self) -> str:
        return f"warps [{self.warp_start}, {self.warp_end})"


@dataclass(frozen=True)
class DependencyEdge:
    """``downstream`` depends on ``upstream``; ``tasks`` are the tasks that realize it."""

    upstream: str
    downstream: str
    tasks: tuple[str, ...]
    kind: str  # data | ordering | ping-pong | work-queue


@dataclass(frozen=True)
class TaskSet:
    """Tasks plus the resource dependency graph: what a TaskManager verifies."""

    tasks: tuple[TaskInfo, ...]
    resources: tuple[ResourceInfo, ...]
    edges: tuple[DependencyEdge, ...]

    def resource(self, name: str) -> ResourceInfo:
        for r in self.resources:
            if r.name == name:
                return r
        raise KeyError(f"no resource named {name!r}")

    def task(self, name: str) -> TaskInfo:
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(f"no task named {name!r}")

    @property
    def queue_kind(self) -> QueueKind:
        kinds = [r.queue_kind for r in self.resources if r.queue_kind is not None]
        return kinds[0] if kinds else QueueKind.NONE


__all__ = ["DependencyEdge", "ExpandedStep", "ResourceInfo", "TaskInfo", "TaskSet"]
