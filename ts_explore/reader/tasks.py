"""Capture TS ``Task`` and ``TaskManager`` objects (and bare task lists) into a :class:`TaskSet`.

A TS ``Task`` keeps only the flat head/loop/tail lists TS lowers the tree to,
so at import time we wrap ``Task.__init__`` to remember the tree each task was
built from. A task built before ts_explore was imported is rebuilt from its
flat lists (no routes or nesting detail) and marked ``from_lists``.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Iterable, Mapping

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import resources as ts_resources
from cutlass.experimental.task_scheduling import schedule_builder as sb
from cutlass.experimental.task_scheduling.task import Task as _TsTask
from cutlass.experimental.task_scheduling.task_manager import TaskManager as _TsTaskManager

from ..model import (
    Block,
    BlockKind,
    DependencyEdge,
    DomainLoop,
    ExpandedStep,
    Node,
    QueueKind,
    ResourceInfo,
    ScheduleTree,
    Section,
    Stage,
    Step,
    TaskInfo,
    TaskSet,
    WorkTileLoop,
)
from .schedule import (
    NameOf,
    bound_of,
    capture_schedule,
    family_of,
    queue_kind,
    resource_namer,
    skip_predicate_of,
)

# id(task) -> (weak reference to the task, its Schedule tree). Tasks are unhashable,
# so a WeakKeyDictionary cannot hold them; the weak reference drops the entry.
_TREES: dict[int, tuple[weakref.ref, Any]] = {}


def _install_tree_memory() -> None:
    """Wrap ``Task.__init__`` once so every new Task remembers its Schedule tree."""
    original = _TsTask.__init__
    if getattr(original, "_ts_explore_wrapped", False):
        return

    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        tree = kwargs.get("schedule")
        if isinstance(tree, sb.Schedule):
            key = id(self)
            try:
                ref = weakref.ref(self, lambda _r, key=key: _TREES.pop(key, None))
            except TypeError:  # not weak-referenceable: keep the lists fallback
                return
            _TREES[key] = (ref, tree)

    init._ts_explore_wrapped = True  # type: ignore[attr-defined]
    _TsTask.__init__ = init  # type: ignore[method-assign]


_install_tree_memory()


def schedule_tree_of(task: Any) -> Any | None:
    """The TS ``Schedule`` tree a task was built from, if it was remembered."""
    entry = _TREES.get(id(task))
    if entry is None or entry[0]() is not task:
        return None
    return entry[1]


def _smem_bytes(resource: Any) -> int:
    try:
        reqs = resource.get_smem_requirements() or []
    except Exception:  # DSL-only hooks may fail outside a kernel
        return 0
    total = 0
    for req in reqs:
        count = getattr(req, "count", 0) or 0
        width = getattr(getattr(req, "dtype", None), "width", 8) or 8
        if isinstance(count, int):
            total += count * width // 8
    return total


def resource_info(resource: Any, name_of: NameOf) -> ResourceInfo:
    """Describe one TS resource."""
    cfg = getattr(resource, "pipeline_config", None)
    variables = tuple(
        v.slot_name for v in ts_resources.get_task_local_variables(resource) if v.slot_name
    )
    return ResourceInfo(
        name=name_of(resource),
        type_name=type(resource).__name__,
        pipeline=getattr(getattr(cfg, "pipeline_type", None), "value", None),
        stages=getattr(cfg, "num_stages", None),
        is_barrier=bool(getattr(resource, "is_barrier", False)),
        queue_kind=queue_kind(resource),
        variables=variables,
        smem_bytes=_smem_bytes(resource),
    )


def _guard_text(guard: Any) -> str:
    if isinstance(guard, ts_enums.LoopGuard):
        return guard.value
    if isinstance(guard, ts_enums.Every):
        return f"Every({guard.period}, {guard.start})"
    if isinstance(guard, ts_enums.OpaqueCondition):
        return "when_false" if guard.negated else "when_true"
    return str(guard)


def expanded_steps(task: Any, name_of: NameOf) -> tuple[ExpandedStep, ...]:
    """The task's head/loop/tail lists as TS lowered them."""
    out: list[ExpandedStep] = []
    for entry in task.head_schedule_list:
        res, stage, call_id, label = entry
        out.append(ExpandedStep(name_of(res), Stage(stage.value), call_id, Section.HEAD, "Always", label))
    for entry in task.loop_schedule_list:
        res, stage, call_id, guard, label = entry
        out.append(
            ExpandedStep(name_of(res), Stage(stage.value), call_id, Section.LOOP, _guard_text(guard), label)
        )
    for entry in task.tail_schedule_list:
        res, stage, call_id, label = entry
        out.append(ExpandedStep(name_of(res), Stage(stage.value), call_id, Section.TAIL, "Always", label))
    return tuple(out)


def _guard_block_kind(guard: Any) -> tuple[BlockKind, dict[str, Any]] | None:
    if guard == ts_enums.LoopGuard.FirstIter:
        return BlockKind.FIRST_ITER, {}
    if guard == ts_enums.LoopGuard.LastIter:
        return BlockKind.LAST_ITER, {}
    if isinstance(guard, ts_enums.Every):
        return BlockKind.EVERY, {"period": guard.period, "start": guard.start}
    if isinstance(guard, ts_enums.OpaqueCondition):
        from ..model import Condition

        kind = BlockKind.WHEN_FALSE if guard.negated else BlockKind.WHEN_TRUE
        return kind, {"condition": Condition(key=repr(guard.key))}
    return None


def tree_from_lists(task: Any, name_of: NameOf) -> ScheduleTree:
    """Rebuild a (flatter) tree from a Task's lowered lists when the tree was not remembered."""
    uid = 0

    def mk(res: Any, stage: Any, call_id: int, section: Section, label: Any) -> Step:
        nonlocal uid
        st = Stage(stage.value)
        step = Step(uid, name_of(res), st, label, call_id, section, family_of(res, st))
        uid += 1
        return step

    head = [mk(r, s, c, Section.HEAD, lab) for r, s, c, lab in task.head_schedule_list]
    loop_body: list[Node] = []
    pending: tuple[Any, list[Node]] | None = None
    for res, stage, call_id, guard, label in task.loop_schedule_list:
        step = mk(res, stage, call_id, Section.LOOP, label)
        kind = _guard_block_kind(guard)
        if kind is None:
            if pending is not None:
                loop_body.append(_close(pending))
                pending = None
            loop_body.append(step)
        elif pending is not None and pending[0] == (kind[0], tuple(sorted(kind[1].items(), key=str))):
            pending[1].append(step)
        else:
            if pending is not None:
                loop_body.append(_close(pending))
            pending = ((kind[0], tuple(sorted(kind[1].items(), key=str))), [step])
    if pending is not None:
        loop_body.append(_close(pending))
    tail = [mk(r, s, c, Section.TAIL, lab) for r, s, c, lab in task.tail_schedule_list]
    end = bound_of(task.domain_getter) if task.domain_getter is not None else bound_of(task.domain)
    loop = DomainLoop(bound_of(task.domain_start), end, bound_of(task.step), task.unroll, tuple(loop_body))
    body: tuple[Node, ...] = (*head, loop, *tail)
    wq = getattr(task, "work_queue", None)
    if wq is not None:
        body = (
            WorkTileLoop(
                name_of(wq),
                queue_kind(wq) or QueueKind.STATIC,
                skip_predicate_of(task.skip_if, wq),
                body,
            ),
        )
    return ScheduleTree(name=task.name or "task", resources=(), body=body, from_lists=True)


def _close(pending: tuple[Any, list[Node]]) -> Block:
    (kind, items), body = pending
    return Block(kind=kind, body=tuple(body), **dict(items))


def task_info(task: Any, name_of: NameOf) -> TaskInfo:
    """Describe one TS Task, with its schedule tree."""
    tree = schedule_tree_of(task)
    schedule = capture_schedule(tree, name_of) if tree is not None else tree_from_lists(task, name_of)
    return TaskInfo(
        name=task.name or f"task@{task.warp_start}",
        warp_start=int(task.warp_start),
        warp_end=int(task.warp_end),
        src=tuple(name_of(r) for r in task.src_resources),
        dst=tuple(name_of(r) for r in task.dst_resources),
        schedule=schedule,
        persistent=bool(task.is_persistent),
        dynamic_domain=task.domain_getter is not None,
        num_registers=task.num_registers,
        expanded=expanded_steps(task, name_of),
    )


def _all_resources(tasks: Iterable[Any], graph: Mapping[Any, Iterable[Any]]) -> list[Any]:
    seen: dict[int, Any] = {}
    for task in tasks:
        for res in [*task.src_resources, *task.dst_resources]:
            seen.setdefault(id(res), res)
        tree = schedule_tree_of(task)
        for res in getattr(tree, "resources", []) or []:
            seen.setdefault(id(res), res)
    for down, ups in graph.items():
        seen.setdefault(id(down), down)
        for up in ups:
            seen.setdefault(id(up), up)
    return list(seen.values())


def _edges(tasks: list[Any], graph: Mapping[Any, Iterable[Any]], name_of: NameOf) -> tuple[DependencyEdge, ...]:
    """Dependency edges with TS's own backing-task and edge-kind rules."""
    shell = object.__new__(_TsTaskManager)
    shell.tasks = list(tasks)
    shell.resource_dependency_graph = {k: list(v) for k, v in graph.items()}
    return tuple(
        DependencyEdge(
            upstream=name_of(e.upstream),
            downstream=name_of(e.downstream),
            tasks=tuple(f"{t.name}[{t.warp_start}:{t.warp_end})" for t in e.backing_tasks),
            kind=e.edge_kind,
        )
        for e in shell._dependency_graph_edges()
    )


def capture_task_set(tasks: Iterable[Any], graph: Mapping[Any, Iterable[Any]] | None = None) -> TaskSet:
    """Capture tasks and a resource dependency graph (no TaskManager needed)."""
    tasks = list(tasks)
    graph = dict(graph or {})
    resources = _all_resources(tasks, graph)
    name_of = resource_namer(resources)
    return TaskSet(
        tasks=tuple(task_info(t, name_of) for t in tasks),
        resources=tuple(resource_info(r, name_of) for r in resources),
        edges=_edges(tasks, graph, name_of),
    )


def capture_task(task: Any) -> TaskInfo:
    """Capture one TS Task."""
    name_of = resource_namer(_all_resources([task], {}))
    return task_info(task, name_of)


def capture_task_manager(tm: Any) -> TaskSet:
    """Capture a verified TS TaskManager."""
    return capture_task_set(tm.tasks, tm.resource_dependency_graph)


def is_task(obj: Any) -> bool:
    return isinstance(obj, _TsTask)


def is_task_manager(obj: Any) -> bool:
    return isinstance(obj, _TsTaskManager)


__all__ = [
    "capture_task",
    "capture_task_manager",
    "capture_task_set",
    "expanded_steps",
    "is_task",
    "is_task_manager",
    "resource_info",
    "schedule_tree_of",
    "task_info",
    "tree_from_lists",
]

