"""Capture TS ``Task`` and ``TaskManager`` objects (and bare task lists) into a :class:`TaskSet`.

A TS ``Task`` keeps the flat head/loop/tail lists TS lowers the tree to, plus
routes, literals and the skippable region; :mod:`.task_tree` rebuilds the
tree from those, so a task captures the same whether it was built before or
after ts_explore was imported.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import resources as ts_resources
from cutlass.experimental.task_scheduling.task import Task as _TsTask
from cutlass.experimental.task_scheduling.task_manager import TaskManager as _TsTaskManager

from ..model import DependencyEdge, ExpandedStep, ResourceInfo, ScheduleTree, Section, Stage, TaskInfo, TaskSet
from .capture import quiet_warnings
from .schedule import NameOf, resource_namer
from .task_tree import tree_of_task, trees_of_tasks


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
        name=name_of[id(resource)],
        type_name=type(resource).__name__,
        pipeline=getattr(getattr(cfg, "pipeline_type", None), "value", None),
        stages=getattr(cfg, "num_stages", None),
        is_barrier=bool(getattr(resource, "is_barrier", False)),
        queue_kind=name_of.queue_kinds[id(resource)],
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
        out.append(ExpandedStep(name_of[id(res)], Stage(stage.value), call_id, Section.HEAD, "Always", label))
    for entry in task.loop_schedule_list:
        res, stage, call_id, guard, label = entry
        out.append(
            ExpandedStep(name_of[id(res)], Stage(stage.value), call_id, Section.LOOP, _guard_text(guard), label)
        )
    for entry in task.tail_schedule_list:
        res, stage, call_id, label = entry
        out.append(ExpandedStep(name_of[id(res)], Stage(stage.value), call_id, Section.TAIL, "Always", label))
    return tuple(out)


def task_info(task: Any, name_of: NameOf, schedule: ScheduleTree | None = None) -> TaskInfo:
    """Describe one TS Task, with its schedule tree (rebuilt here unless given)."""
    if schedule is None:
        schedule = tree_of_task(task, name_of)
    return TaskInfo(
        name=task.name or f"task@{task.warp_start}",
        warp_start=int(task.warp_start),
        warp_end=int(task.warp_end),
        src=tuple(name_of[id(r)] for r in task.src_resources),
        dst=tuple(name_of[id(r)] for r in task.dst_resources),
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
        for entry in [*task.head_schedule_list, *task.loop_schedule_list, *task.tail_schedule_list]:
            seen.setdefault(id(entry[0]), entry[0])
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
            upstream=name_of[id(e.upstream)],
            downstream=name_of[id(e.downstream)],
            tasks=tuple(f"{t.name}[{t.warp_start}:{t.warp_end})" for t in e.backing_tasks),
            kind=e.edge_kind,
        )
        for e in shell._dependency_graph_edges()
    )


def capture_task_set(tasks: Iterable[Any], graph: Mapping[Any, Iterable[Any]] | None = None,
                     names: NameOf | None = None) -> TaskSet:
    """Capture tasks and a resource dependency graph (no TaskManager needed).

    ``names``: the resource table already built for exactly these tasks and
    graph (``resource_namer(_all_resources(tasks, graph))``), so a caller
    that has one does not name every resource again.
    """
    tasks = list(tasks)
    graph = dict(graph or {})
    resources = _all_resources(tasks, graph)
    name_of = names if names is not None else resource_namer(resources)
    trees = trees_of_tasks(tasks, name_of)
    return TaskSet(
        tasks=tuple(task_info(t, name_of, tree) for t, tree in zip(tasks, trees)),
        resources=tuple(resource_info(r, name_of) for r in resources),
        edges=_edges(tasks, graph, name_of),
    )


def read_set(tasks: list[Any], graph: Mapping[Any, Iterable[Any]], task_set: TaskSet | None = None
             ) -> tuple[list[Any], NameOf, TaskSet | None, str]:
    """Every resource of ``tasks`` and ``graph``, their names, and the captured :class:`TaskSet` (``task_set`` when
    the caller already captured these tasks), or None and why the capture failed (drawings lose their tree;
    verification still runs on the TS objects' other facts)."""
    resources = _all_resources(tasks, graph)
    name_of = resource_namer(resources)
    if task_set is not None:
        return resources, name_of, task_set, ""
    try:
        with quiet_warnings():  # TS's warnings on these tasks are kept when TaskManager's checks run
            return resources, name_of, capture_task_set(tasks, graph, name_of), ""
    except Exception as exc:  # noqa: BLE001 - the verdict says the capture failed and why
        return resources, name_of, None, f"{type(exc).__name__}: {exc}"


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
    "read_set",
    "resource_info",
    "task_info",
]

