"""Write an edited task-set model back onto fresh TS tasks (the repair search's way to TS and back).

The task set's builder is run again for fresh resources and tasks; every
task whose schedule the edit changed is given a TS ``Schedule`` tree made
from the edited :class:`~ts_explore.model.ScheduleTree` and re-initialised
with it (``Task.__init__`` lowers the tree exactly as for a recorded
``@schedule``), and a resource given more stages gets a pipeline config with
them. What TS objects the model only names (resources, bounds given as
runtime values or ``get_domain``, ``skip_if`` predicates, ``when_true``
conditions, Constexpr literal values, task-local variables) are taken from
the fresh tasks by name or by the base step they came from. Capturing the
result gives the edited model in normal form (a round-trip test checks it).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import resources as ts_resources
from cutlass.experimental.task_scheduling import schedule_builder as sb
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import ScheduleStage, ScheduleStageType
from cutlass.experimental.task_scheduling.task import Task

from ..model import Block, BlockKind, DomainLoop, Node, ScheduleTree, Section, Step, TaskInfo, TaskSet, WorkTileLoop
from .capture import quiet_warnings
from .schedule import resource_namer
from .tasks import _all_resources, capture_task_set

Build = Callable[[], dict[str, Any]]

_STAGE_TYPE = {Section.HEAD: ScheduleStageType.Head, Section.LOOP: ScheduleStageType.Loop,
               Section.TAIL: ScheduleStageType.Tail}
_ITER_GUARDS = {BlockKind.FIRST_ITER: ts_enums.FIRST_ITER, BlockKind.LAST_ITER: ts_enums.LAST_ITER}


class NotMaterialisable(ValueError):
    """The edited model names something the fresh TS tasks do not have (the candidate is skipped)."""


class _Writer:
    """One task: the edited model tree -> a TS ``Schedule`` tree, borrowing TS objects from the fresh task."""

    def __init__(self, task: Any, base: TaskInfo, by_name: dict[str, Any]) -> None:
        self.task = task
        self.base = base
        self.by_name = by_name
        loop_steps = [s for s in base.schedule.steps() if s.section is Section.LOOP]
        self.guard_of = {s.uid: e[3] for s, e in zip(loop_steps, task.loop_schedule_list)}
        self.conditions: dict[Any, Any] = {}
        for block in base.schedule.blocks():
            if block.condition is not None:
                uid = next((s.uid for s in _steps(block.body)), None)
                if uid is not None and uid in self.guard_of:
                    self.conditions[(block.kind, block.condition)] = self.guard_of[uid]
        self.base_steps = {s.uid: s for s in base.schedule.steps()}
        self.ts_steps: dict[int, Any] = {}

    def resource(self, name: str) -> Any:
        try:
            return self.by_name[name]
        except KeyError:
            raise NotMaterialisable(f"no resource named {name!r} in the fresh tasks") from None

    def literals(self, step: Step) -> dict:
        base = self.base_steps.get(step.uid)
        if base is None or base != step and (base.resource, base.stage, base.label) != (step.resource, step.stage,
                                                                                         step.label):
            return {}
        key = (id(self.resource(base.resource)), ScheduleStage(base.stage.value), _STAGE_TYPE[base.section],
               base.call_index)
        return dict((self.task.constexpr_work_kwargs or {}).get(key) or {})

    def step(self, step: Step) -> Any:
        node = sb.Step(memory_resource=self.resource(step.resource), schedule_stage=ScheduleStage(step.stage.value),
                       constexpr_kwargs=self.literals(step), label=step.label, unique_id=len(self.ts_steps))
        self.ts_steps[step.uid] = node
        return node

    def condition(self, block: Block) -> Any:
        if block.kind in _ITER_GUARDS:
            return _ITER_GUARDS[block.kind]
        if block.kind is BlockKind.EVERY:
            return ts_enums.Every(block.period or 1, start=block.start or 0)
        if block.kind is BlockKind.SKIPPABLE:
            return ts_enums.SKIPPABLE
        found = self.conditions.get((block.kind, block.condition))
        if found is None:
            raise NotMaterialisable(f"no TS condition for {block.title}")
        return found

    def loop(self, loop: DomainLoop) -> Any:
        old = self.base.schedule.domain_loop()
        t = self.task
        if old is not None and (old.start, old.end, old.step) == (loop.start, loop.end, loop.step):
            start, end, step = t.domain_start, t.domain_getter or t.domain, t.step
        elif loop.trip_count() is not None:
            start, end, step = loop.start.value, loop.end.value, loop.step.value
        else:
            raise NotMaterialisable("a changed domain loop needs int bounds")
        return sb.DomainLoop(start=start, end=end, step=step, unroll=loop.unroll, body=self.nodes(loop.body))

    def nodes(self, nodes: tuple[Node, ...]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            if isinstance(node, Step):
                out.append(self.step(node))
            elif isinstance(node, DomainLoop):
                out.append(self.loop(node))
            elif isinstance(node, WorkTileLoop):
                out.append(sb.WorkTileLoop(body=self.nodes(node.body), work_queue=self.task.work_queue,
                                           skip_if=self.task.skip_if))
            else:
                out.append(sb.ConditionalBlock(body=self.nodes(node.body), condition=self.condition(node)))
        return out

    def grammar(self, tree: ScheduleTree) -> None:
        """What recording a ``@schedule`` would refuse, and lowering alone does not check (TS's words in brief)."""
        has_wtl = any(isinstance(n, WorkTileLoop) for n in tree.body)
        for node in tree.body:
            if has_wtl and isinstance(node, Step) and not (node.stage.value.endswith("AuxWork")
                                                           or node.family.value == "barrier"):
                raise NotMaterialisable(f"{node.title} outside work_tile_loop(): only aux and barrier steps may be")
        for block in tree.blocks():
            if block.kind is BlockKind.SKIPPABLE and any(s.family.value == "queue" for s in _steps(block.body)):
                raise NotMaterialisable("WorkQueue operations cannot appear inside a skippable() block")
            if block.kind is not BlockKind.SKIPPABLE and any(isinstance(n, Block) and n.kind is not BlockKind.SKIPPABLE
                                                             for n in block.body):
                raise NotMaterialisable("guards cannot be nested")

    def schedule(self, tree: ScheduleTree) -> Any:
        self.grammar(tree)
        body = self.nodes(tree.body)
        for route in tree.routes:
            src, dst = self.ts_steps.get(route.source), self.ts_steps.get(route.destination)
            if src is None or dst is None:
                continue
            variable = next((v for v in ts_resources.get_task_local_variables(src.memory_resource)
                             if v.slot_name == route.variable), None)
            if variable is None:
                raise NotMaterialisable(f"no task-local variable {route.variable!r}")
            src.routes.append(sb.Route(source=variable, destination=dst, destination_argument=route.argument))
        resources = [self.resource(name) for name in tree.resources]
        return sb.Schedule(name=tree.name, body=body, resources=resources)


def _steps(nodes: tuple[Node, ...]) -> list[Step]:
    out: list[Step] = []
    for node in nodes:
        if isinstance(node, Step):
            out.append(node)
        else:
            out.extend(_steps(node.body))
    return out


def _reinit(task: Any, schedule: Any) -> None:
    """Lower ``schedule`` onto ``task`` with the arguments it was built with (subclass state stays)."""
    Task.__init__(
        task, task.src_resources, task.dst_resources, task.warp_idx, task.num_warps, schedule=schedule,
        num_registers=task.num_registers, name=task.name, debug_print=task.debug_print,
        iket_enable_profiling=task.iket_enable_profiling, iket_profiling_stages=task.iket_profiling_stages,
        iket_profiling_resources=task.iket_profiling_resources, run_only_on_cta_id=task.run_only_on_cta_id,
    )


def materialise(base: TaskSet, edited: TaskSet, build: Build) -> dict[str, Any]:
    """Fresh ``dict(tasks=..., resource_dependency_graph=...)`` from ``build()`` with ``edited``'s changes to ``base``.

    Raises :class:`NotMaterialisable` (or TS's own ``ScheduleError``/``ValueError``)
    when the edited schedule cannot be lowered; the caller treats that as a
    refused candidate.
    """
    fresh = dict(build())
    tasks = list(fresh["tasks"])
    graph = fresh.get("resource_dependency_graph") or {}
    name_of = resource_namer(_all_resources(tasks, graph))
    by_name = {name_of(r): r for r in _all_resources(tasks, graph)}
    if len(tasks) != len(base.tasks) or len(edited.tasks) != len(base.tasks):
        raise NotMaterialisable("the builder made a different number of tasks than the model has")
    for res in edited.resources:
        old = next((r for r in base.resources if r.name == res.name), None)
        if old is not None and old.stages != res.stages:
            ts_res = by_name[res.name]
            ts_res.pipeline_config = dataclasses.replace(ts_res.pipeline_config, num_stages=res.stages)
    for task, old, new in zip(tasks, base.tasks, edited.tasks):
        if old.schedule == new.schedule:
            continue
        _reinit(task, _Writer(task, old, by_name).schedule(new.schedule))
    return fresh


def write_edits(tasks: list[Any], graph: dict[Any, Any], edits: tuple[Any, ...]) -> TaskSet:
    """Apply ``edits`` to the model of ``tasks`` and write the result onto those same tasks, in place.

    What a repaired launch does to the tasks a kernel's own build made (and
    what the launch gate does to each instance it proves): the tasks are
    captured, each edit's ``apply`` (model -> model) runs on the capture, and
    the changed schedules and stage counts are lowered onto ``tasks``. Returns
    the edited model. An edit that does not fit raises its own error (the
    repair's ``EditError``); one that cannot be lowered, :class:`NotMaterialisable`.
    """
    base = capture_task_set(tasks, graph)
    edited = base
    for edit in edits:
        edited = edit.apply(edited)
    materialise(base, edited, lambda: {"tasks": tasks, "resource_dependency_graph": graph})
    return edited


class Workbench:
    """One fresh build kept for screening: candidates are lowered onto it in place and undone afterwards.

    Screening only reads the tasks (TS's check setup and our search do not
    change them), so one build serves every candidate; a proof still gets a
    fresh build (``verify`` runs ``TaskManager``, which changes what it checks).
    """

    def __init__(self, base: TaskSet, build: Build) -> None:
        self.base = base
        self.fresh = dict(build())
        self.tasks = list(self.fresh["tasks"])
        self.graph = graph = self.fresh.get("resource_dependency_graph") or {}
        resources = _all_resources(self.tasks, graph)
        name_of = resource_namer(resources)
        self.by_name = {name_of(r): r for r in resources}
        self.saved = [dict(t.__dict__) for t in self.tasks]
        self.configs = {name: getattr(r, "pipeline_config", None) for name, r in self.by_name.items()}

    def lower(self, edited: TaskSet) -> list[Any]:
        """The tasks with ``edited``'s changes lowered onto them (call :meth:`undo` before the next candidate)."""
        for res in edited.resources:
            old = next((r for r in self.base.resources if r.name == res.name), None)
            if old is not None and old.stages != res.stages:
                ts_res = self.by_name[res.name]
                ts_res.pipeline_config = dataclasses.replace(ts_res.pipeline_config, num_stages=res.stages)
        for task, old, new in zip(self.tasks, self.base.tasks, edited.tasks):
            if old.schedule != new.schedule:
                _reinit(task, _Writer(task, old, self.by_name).schedule(new.schedule))
        return self.tasks

    def undo(self) -> None:
        for task, saved in zip(self.tasks, self.saved):
            task.__dict__.clear()
            task.__dict__.update(saved)
        for name, cfg in self.configs.items():
            if cfg is not None and self.by_name[name].pipeline_config is not cfg:
                self.by_name[name].pipeline_config = cfg


def search_runs(tasks: list[Any], assume_pdl_wait_completed: bool = False) -> list[dict[str, Any]]:
    """The ``check_all_interleavings`` keywords of the runs an instance needs at TS's tile count.

    One run per ``when_true``/``when_false`` assignment, plus a skipped-tile
    run per assignment when a task has ``skip_if``; two tiles for persistent
    schedules. The repair search screens candidates with these; the proof of
    a repair is ``verify`` (which adds the tile counts it needs).
    """
    persistent = any(isinstance(r, ts_resources.WorkQueue) for t in tasks for r in [*t.src_resources,
                                                                                   *t.dst_resources])
    base = {"num_tiles": 2 if persistent else 1, "assume_pdl_wait_completed": assume_pdl_wait_completed}
    skip = any(getattr(t, "skip_if", None) is not None for t in tasks)
    with quiet_warnings():  # this thread's only
        assignments = ts_tm._opaque_assignments(ts_tm._collect_opaque_keys(tasks))
    out = []
    for assignment in assignments:
        out.append({**base, "opaque_assignment": assignment})
        if skip:
            out.append({**base, "opaque_assignment": assignment, "skipped_tile": True})
    return out


__all__ = ["Build", "NotMaterialisable", "Workbench", "materialise", "search_runs", "write_edits"]
