"""Turn a recorded TS ``Schedule`` tree into our frozen :class:`ScheduleTree`.

This module (with its siblings in ``reader/``) is the only place that reads
TS objects. Resource names live in :mod:`.names`, the values a node holds
(bounds, conditions, literals, skip predicates) in :mod:`.task_tree`; they
are re-exported here for the readers that import them from this module. It mirrors the section and call-index rules of TS's lowering
(``schedule_legacy_adapter``) so step labels match what TS prints and checks.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import schedule_builder as sb

from ..model import (
    Block,
    BlockKind,
    Condition,
    DomainLoop,
    Literal,
    Node,
    QueueKind,
    Route,
    ScheduleTree,
    Section,
    Stage,
    Step,
    WorkTileLoop,
)
from .names import STAGE_FAMILY, NameOf, ResourceNames, family_of, queue_kind, resource_namer
from .task_tree import bound_of, bounds_of, condition_of, literal_text, skip_predicate_of


class _TreeCapture:
    """One pre-order walk producing the model, with TS's section/call-index rules."""

    def __init__(self, schedule: Any, name_of: NameOf) -> None:
        self.schedule = schedule
        self.name_of = name_of
        self.counts: dict[tuple[Section, int, Stage], int] = {}
        self.seen_domain_loop = False
        self.python_conditions = 0
        self.recent_steps: list[Any] = []  # TS steps in walk order

    def run(self) -> ScheduleTree:
        body = self.nodes(self.schedule.body, in_loop=False)
        routes = tuple(
            Route(
                source=step.unique_id,
                variable=route.source.slot_name or route.source.field_name or "?",
                destination=route.destination.unique_id,
                argument=route.destination_argument,
            )
            for step in sb._iter_steps(self.schedule)
            for route in step.routes
        )
        return ScheduleTree(
            name=self.schedule.name,
            resources=tuple(self.name_of(r) for r in self.schedule.resources),
            body=body,
            routes=routes,
        )

    def nodes(self, nodes: list[Any], *, in_loop: bool) -> tuple[Node, ...]:
        return tuple(self.node(n, in_loop=in_loop) for n in nodes)

    def node(self, node: Any, *, in_loop: bool) -> Node:
        if isinstance(node, sb.Step):
            return self.step(node, in_loop)
        if isinstance(node, sb.DomainLoop):
            self.seen_domain_loop = True
            return DomainLoop(
                start=bound_of(node.start),
                end=bound_of(node.end),
                step=bound_of(node.step),
                unroll=node.unroll,
                body=self.nodes(node.body, in_loop=True),
            )
        if isinstance(node, sb.WorkTileLoop):
            wq = node.work_queue
            return WorkTileLoop(
                queue=self.name_of(wq),
                queue_kind=queue_kind(wq) or QueueKind.STATIC,
                skip_if=skip_predicate_of(node.skip_if, wq),
                body=self.nodes(node.body, in_loop=in_loop),
            )
        if isinstance(node, sb.ConditionalBlock):
            return self.block(node, in_loop)
        raise TypeError(f"unknown schedule node {type(node).__name__}")

    def step(self, step: Any, in_loop: bool) -> Step:
        stage = Stage(step.schedule_stage.value)
        if in_loop:
            section = Section.LOOP
        elif self.seen_domain_loop:
            section = Section.TAIL
        else:
            section = Section.HEAD
        key = (section, id(step.memory_resource), stage)
        call_index = self.counts.get(key, 0)
        self.counts[key] = call_index + 1
        self.recent_steps.append(step)
        return Step(
            uid=step.unique_id,
            resource=self.name_of(step.memory_resource),
            stage=stage,
            label=step.label,
            call_index=call_index,
            section=section,
            family=family_of(step.memory_resource, stage),
            literals=tuple(
                Literal(k, literal_text(v)) for k, v in step.constexpr_kwargs.items()
            ),
            returns=tuple(v.slot_name or "?" for v in step.returned_variables),
        )

    def block(self, node: Any, in_loop: bool) -> Block:
        cond = node.condition
        body_kwargs: dict[str, Any] = {}
        if cond is ts_enums.SKIPPABLE:
            kind = BlockKind.SKIPPABLE
        elif cond is ts_enums.FIRST_ITER:
            kind = BlockKind.FIRST_ITER
        elif cond is ts_enums.LAST_ITER:
            kind = BlockKind.LAST_ITER
        elif isinstance(cond, ts_enums.Every):
            kind = BlockKind.EVERY
            body_kwargs = {"period": cond.period, "start": cond.start}
        elif isinstance(cond, ts_enums.OpaqueCondition):
            kind = BlockKind.WHEN_FALSE if cond.negated else BlockKind.WHEN_TRUE
            body_kwargs = {"condition": self.condition(cond, empty=not node.body)}
        else:  # an IterationPredicate subclass TS may add later
            kind = BlockKind.EVERY
            body_kwargs = {"period": None, "start": None}
        body = self.nodes(node.body, in_loop=in_loop)
        return Block(kind=kind, body=body, **body_kwargs)

    def condition(self, cond: Any, *, empty: bool = False) -> Condition:
        found = condition_of(cond, self.name_of, self._producer_of)
        if found is None:
            if empty:  # guards nothing: a Task keeps no trace of it, so it takes no number
                return Condition(key="python value")
            self.python_conditions += 1
            return Condition(key=f"python value #{self.python_conditions}")
        return found

    def _producer_of(self, resource: Any, label: str | None, result: str | None) -> int | None:
        for step in reversed(self.recent_steps):
            if step.memory_resource is not resource:
                continue
            if (step.label or step.schedule_stage.value) != label:
                continue
            if any(v.slot_name == result for v in step.returned_variables):
                return step.unique_id
        return None


def capture_schedule(schedule: Any, name_of: NameOf | None = None) -> ScheduleTree:
    """Capture a TS ``Schedule`` (the value a ``@schedule`` function returns)."""
    if not isinstance(schedule, sb.Schedule):
        raise TypeError(
            f"expected a TS Schedule (what a @schedule function returns), got "
            f"{type(schedule).__name__}"
        )
    namer = name_of or resource_namer(list(schedule.resources))
    return _TreeCapture(schedule, namer).run()


__all__ = [
    "STAGE_FAMILY",
    "ResourceNames",
    "bound_of",
    "bounds_of",
    "capture_schedule",
    "condition_of",
    "literal_text",
    "family_of",
    "queue_kind",
    "resource_namer",
    "skip_predicate_of",
]
