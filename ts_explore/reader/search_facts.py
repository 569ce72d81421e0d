"""Capture, once per instance, what the model-built checker input needs beyond the schedules (:mod:`ts_explore.check.from_model`).

For each checker run the instance needs: TS's own search problem of the
unedited tasks, each task's unrolled trip count (TS's rule: exact for int
bounds or an int ``get_domain`` probe, else its stand-in), which tasks have
``skip_if``, which resources are unpipelined or barriers, and the run's
``when_true`` assignment keyed by the condition text our model uses.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling import task_manager as ts_tm

from ..check.from_model import NotSupported, RunFacts, learn
from ..model import TaskSet
from .materialise import search_runs
from .schedule import resource_namer
from .search_input import search_problem
from .tasks import _all_resources


def trips(task: Any) -> int:
    """Loop iterations TS's checker unrolls for one task (``task_manager.expand_loop``'s rule, fallback 1)."""
    start, end, step = task.domain_start, task.domain, task.step
    static_start_step = isinstance(start, int) and isinstance(step, int)
    if task.domain_getter is None and isinstance(end, int) and static_start_step:
        return len(range(start, end, step))
    probe = ts_tm._try_probe_domain(task) if task.domain_getter is not None and static_start_step else None
    if probe is not None:
        return len(range(start, probe, step))
    step_value = step if isinstance(step, int) else 1
    stop = 1 if step_value > 0 else -1
    return max(0, len(range(start if isinstance(start, int) else 0, stop, step_value)))


def _opaque(assignment: dict | None, name_of: Any, resources: list[Any]) -> tuple[tuple[str, bool], ...]:
    """The run's ``when_true`` assignment keyed as our model's conditions are (``res.method.result``)."""
    out = []
    for key, value in (assignment or {}).items():
        if isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], int):
            res = next((r for r in resources if id(r) == key[0]), None)
            if res is None:
                raise NotSupported("a when_true key naming an unknown resource")
            out.append((f"{name_of(res)}.{key[1]}.{key[2]}", bool(value)))
        elif isinstance(key, tuple) and key and key[0] == "__opaque__":
            continue  # a plain Python value: the model path refuses blocks on it
        else:
            out.append((key if isinstance(key, str) else repr(key), bool(value)))
    return tuple(out)


def capture_run_facts(tasks: list[Any], graph: dict[Any, Any], task_set: TaskSet) -> list[tuple[dict[str, Any], RunFacts]]:
    """Per run the instance needs (TS's tile count): its keywords and its learned :class:`RunFacts`.

    Raises :class:`~ts_explore.check.from_model.NotSupported` when the model's
    expansion does not line up with TS's lanes for some run.
    """
    resources = _all_resources(tasks, graph)
    name_of = resource_namer(resources)
    non_pipelined = frozenset(name_of(r) for r in resources if getattr(r, "pipeline_config", None) is None)
    barriers = frozenset(name_of(r) for r in resources if getattr(r, "is_barrier", False))
    stages = tuple((r.name, r.stages) for r in task_set.resources)
    out = []
    for kwargs in search_runs(tasks):
        facts = RunFacts(
            base=search_problem(tasks, **kwargs),
            trees=tuple(t.schedule for t in task_set.tasks),
            trips=tuple(trips(t) for t in tasks),
            skip_if=tuple(getattr(t, "skip_if", None) is not None for t in tasks),
            non_pipelined=non_pipelined,
            barriers=barriers,
            stages=stages,
            num_tiles=int(kwargs.get("num_tiles", 1)),
            skipped_tile=bool(kwargs.get("skipped_tile")),
            opaque=_opaque(kwargs.get("opaque_assignment"), name_of, resources),
        )
        out.append((kwargs, learn(facts)))
    return out


__all__ = ["capture_run_facts", "trips"]
