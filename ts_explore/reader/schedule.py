"""Turn a recorded TS ``Schedule`` tree into our frozen :class:`ScheduleTree`.

This module (with its siblings in ``reader/``) is the only place that reads
TS objects. It mirrors the section and call-index rules of TS's lowering
(``schedule_legacy_adapter``) so step labels match what TS prints and checks.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import resources as ts_resources
from cutlass.experimental.task_scheduling import schedule_builder as sb

from ..model import (
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
)


_ACQUIRE = {Stage.PRODUCER_TRY_ACQUIRE, Stage.PRODUCER_ACQUIRE}
_WAIT = {Stage.CONSUMER_TRY_WAIT, Stage.CONSUMER_WAIT}
_AUX = {Stage.PRODUCER_AUX_WORK, Stage.CONSUMER_AUX_WORK}


class ResourceNames(dict):
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


NameOf = ResourceNames


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


def _callable_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return name.replace("<locals>.", "")


def bound_of(value: Any) -> Bound:
    """Describe one ``domain_loop`` bound: trace-time int, per-tile method, or runtime value."""
    if isinstance(value, bool):
        return Bound.of_int(int(value))
    if isinstance(value, int):
        return Bound.of_int(value)
    if callable(value):
        return Bound(BoundKind.DYNAMIC, f"{_callable_name(value)}(tile)")
    inner = getattr(value, "value", None)
    type_name = type(value).__name__
    if isinstance(inner, int) and not isinstance(inner, bool):
        return Bound(BoundKind.RUNTIME, f"{type_name}({inner})", inner)
    return Bound(BoundKind.RUNTIME, f"<runtime {type_name}>")


def bounds_of(*values: Any) -> tuple[Bound, ...]:
    """:func:`bound_of` for each of a ``domain_loop``'s bounds (start, end, step) at once."""
    return tuple(bound_of(v) for v in values)


def skip_predicate_of(skip_if: Any, work_queue: Any) -> SkipPredicate | None:
    """Describe a ``skip_if`` predicate: a queue method, a function or a lambda."""
    if skip_if is None:
        return None
    qualname = getattr(skip_if, "__qualname__", "") or ""
    name = _callable_name(skip_if)
    if qualname.endswith("<lambda>"):
        return SkipPredicate(SkipKind.LAMBDA, "lambda", _lambda_source(skip_if))
    fn_name = getattr(skip_if, "__name__", "")
    if any(getattr(cls, fn_name, None) is skip_if for cls in type(work_queue).__mro__):
        return SkipPredicate(SkipKind.QUEUE_METHOD, name)
    return SkipPredicate(SkipKind.FUNCTION, name)


def _lambda_source(fn: Any) -> str | None:
    try:
        text = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        return None
    start = text.find("lambda")
    if start < 0:
        return None
    snippet = text[start:]
    colon = snippet.find(":")
    if colon < 0:
        return None
    depth = 0
    for i in range(colon + 1, len(snippet)):  # the body ends at an unbalanced ')' or a top-level ','
        ch = snippet[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return snippet[:i].strip()
            depth -= 1
        elif ch in ",\n" and depth == 0:
            return snippet[:i].strip()
    return snippet.strip()


def literal_text(value: Any) -> str:
    """A Constexpr literal as the drawing shows it (``repr`` for Python values)."""
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    inner = getattr(value, "value", None)
    if isinstance(inner, (bool, int, float)):
        return f"{type(value).__name__}({inner!r})"
    return repr(value)


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


def condition_of(cond: Any, name_of: NameOf, producer: Callable[[Any, Any, Any], int | None]) -> Condition | None:
    """The model of a ``when_true``/``when_false`` condition; None for a plain Python value (numbered by the caller).

    ``producer(resource, method label, result name)`` finds the uid of the
    step that produced the value. TS's own keys embed ``id(resource)``; they
    are shown as ``resource.method.result`` instead. A key the user passed
    (``key="shared"``) is kept and marked explicit.
    """
    resource, key = cond.resource, cond.key
    if resource is not None:
        auto_key = isinstance(key, tuple) and len(key) == 3 and key[0] == id(resource)
        res_name = name_of(resource)
        return Condition(
            key=f"{res_name}.{cond.method_label}.{cond.result_name}" if auto_key else _key_text(key),
            resource=res_name,
            method=cond.method_label,
            variable=cond.result_name,
            step=producer(resource, cond.method_label, cond.result_name),
            explicit_key=not auto_key,
        )
    if isinstance(key, tuple) and key and key[0] == "__opaque__":
        return None
    return Condition(key=_key_text(key), explicit_key=True)


def _key_text(key: Any) -> str:
    """A user's condition key as text: strings as they are, anything else by ``repr``."""
    return key if isinstance(key, str) else repr(key)


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
