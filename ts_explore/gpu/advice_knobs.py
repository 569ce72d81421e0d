"""Which of a scenario's controls change what the ring model can predict: a pipeline's slots, a task's warps.

A scenario's knobs do not say what they size, so each integer control is
moved one notch (through the scenario's own coercion) and the schedule is
recorded again on the CPU: a control whose move changes a pipeline's stage
count in the recorded task set sizes that pipeline's ring; one that changes
a task's warp count sizes that task. Nothing is verified or launched here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenarios.knobs import ConfigError, Knob, configure, knobs

MAX_VALUES = 16  # values of one control considered (a slider's range is walked around the current value)


@dataclass(frozen=True)
class Shape:
    """What the ring model reads from a recorded schedule: slots per pipeline, warps per task."""

    stages: tuple[tuple[str, int], ...]
    warps: tuple[tuple[str, int], ...]

    def stage_map(self) -> dict[str, int]:
        return dict(self.stages)

    def warp_map(self) -> dict[str, int]:
        return dict(self.warps)


@dataclass(frozen=True)
class Role:
    """A control and what it sizes: ``("stages", pipeline)`` or ``("warps", task)``."""

    knob: str
    label: str
    kind: str
    target: str


def shape_of(scenario: Any, config: Any) -> Shape:
    """Record ``config`` on the CPU and read its pipelines' slots and its tasks' warps."""
    from ..reader import capture_task_set

    built = scenario.build(config)
    task_set = capture_task_set(built.tasks, built.resource_dependency_graph)
    return Shape(tuple((r.name, int(r.stages)) for r in task_set.resources if r.stages),
                 tuple((t.name, t.num_warps) for t in task_set.tasks))


def values(k: Knob, current: Any) -> tuple[Any, ...]:
    """The values of an integer control worth trying, current excluded (options, or the range near it).

    >>> values(Knob("stages", "stages", "int", int, 4, min=1, max=8), 4)
    (1, 2, 3, 5, 6, 7, 8)
    >>> values(Knob("w", "w", "choice", int, 4, options=(1, 2, 4, 8)), 4)
    (1, 2, 8)
    """
    if k.options is not None:
        pool = [v for v in k.options if isinstance(v, int) and not isinstance(v, bool)]
    elif k.kind == "int":
        lo = k.min if k.min is not None else max(0, current - MAX_VALUES // 2)
        hi = k.max if k.max is not None else current + MAX_VALUES // 2
        pool = list(range(max(lo, current - MAX_VALUES // 2), min(hi, current + MAX_VALUES // 2) + 1))
    else:
        return ()
    return tuple(v for v in pool if v != current)[: MAX_VALUES]


def _neighbour(scenario: Any, config: Any, k: Knob) -> Any | None:
    current = getattr(config, k.name)
    near = sorted(values(k, current), key=lambda v: (abs(v - current), v))
    for v in near[:4]:
        try:
            return configure(scenario, {k.name: v}, base=config)
        except ConfigError:
            continue
    return None


def roles(scenario: Any, config: Any, now: Shape | None = None) -> tuple[Role, ...]:
    """The controls that size a pipeline's ring or a task's warps, found by moving each one notch."""
    now = now or shape_of(scenario, config)
    out = []
    for k in knobs(type(config)):
        current = getattr(config, k.name)
        if isinstance(current, bool) or not isinstance(current, int) or k.kind not in ("int", "choice"):
            continue
        moved = _neighbour(scenario, config, k)
        if moved is None:
            continue
        try:
            then = shape_of(scenario, moved)
        except Exception:  # noqa: BLE001 - a neighbour TS will not record tells nothing about the control
            continue
        for name, n in then.stages:
            if now.stage_map().get(name) not in (None, n):
                out.append(Role(k.name, k.label, "stages", name))
        for name, n in then.warps:
            if now.warp_map().get(name) not in (None, n):
                out.append(Role(k.name, k.label, "warps", name))
    return tuple(out)


__all__ = ["MAX_VALUES", "Role", "Shape", "roles", "shape_of", "values"]
