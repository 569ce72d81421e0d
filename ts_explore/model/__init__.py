"""ts-explore's own data model: frozen dataclasses, no cutlass objects inside."""

from __future__ import annotations

from .problem import Problem
from .schedule import (
    Block,
    BlockKind,
    Bound,
    BoundKind,
    Condition,
    DomainLoop,
    Family,
    Literal,
    Node,
    QueueKind,
    Route,
    ScheduleTree,
    Section,
    SkipKind,
    SkipPredicate,
    Stage,
    Step,
    WorkTileLoop,
    children,
    walk_nodes,
)
from .tasks import DependencyEdge, ExpandedStep, ResourceInfo, TaskInfo, TaskSet

__all__ = [
    "Block",
    "BlockKind",
    "Bound",
    "BoundKind",
    "Condition",
    "DependencyEdge",
    "DomainLoop",
    "ExpandedStep",
    "Family",
    "Literal",
    "Node",
    "Problem",
    "QueueKind",
    "ResourceInfo",
    "Route",
    "ScheduleTree",
    "Section",
    "SkipKind",
    "SkipPredicate",
    "Stage",
    "Step",
    "TaskInfo",
    "TaskSet",
    "WorkTileLoop",
    "children",
    "walk_nodes",
]
