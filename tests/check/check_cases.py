"""Task sets the checker tests run TS's search and ours on (fresh TS objects on every call).

``HAND_MADE`` maps a name to a zero-argument builder returning the tasks of
one set: the gallery (broken and fixed), the verification test builders,
every seed example wrapped into a one-task set, the scenario catalog's
defaults and small members of the GEMM-shaped family.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from cutlass.experimental.task_scheduling import schedule_builder as sb
from cutlass.experimental.task_scheduling.enums import ScheduleStage
from cutlass.experimental.task_scheduling.task import Task

from ts_explore import gallery, scenarios
from ts_explore.gallery.gemm_family import gemm_family
from ts_explore.seed_examples.seed import SEED, VarlenTask

_spec = importlib.util.spec_from_file_location(
    "check_verify_builders", Path(__file__).resolve().parent.parent / "verify" / "verify_builders.py"
)
B = importlib.util.module_from_spec(_spec)  # the verification tests' builders (their folder is not on the path)
_spec.loader.exec_module(B)

_PRODUCER = {
    ScheduleStage.ProducerTryAcquire, ScheduleStage.ProducerAcquire, ScheduleStage.ProducerWork,
    ScheduleStage.ProducerAuxWork, ScheduleStage.ProducerCommit,
}


def seed_task_set(name: str) -> list[Any]:
    """A seed example's schedule as a one-task set (resources split by the stages used on them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = SEED[name]()
        src: list[Any] = []
        dst: list[Any] = []
        for step in sb._iter_steps(rec.schedule):
            side = dst if step.schedule_stage in _PRODUCER else src
            if step.memory_resource not in side:
                side.append(step.memory_resource)
        cls = VarlenTask if name == "dynamic_domain" else Task
        return [cls(src, dst, 0, 1, schedule=rec.schedule, name=name)]


def _tasks(build: Callable[[], dict[str, Any]]) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build()["tasks"]


def _scenario(name: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scenarios.get(name).build().tasks


HAND_MADE: dict[str, Callable[[], list[Any]]] = {}
for _name, _case in gallery.CASES.items():
    HAND_MADE[f"gallery:{_name}:broken"] = partial(_tasks, _case.broken)
    HAND_MADE[f"gallery:{_name}:fixed"] = partial(_tasks, _case.fixed)
for _name, _build in {
    "head_loop_overlap": B.head_loop_overlap,
    "runtime_domain:broken": partial(B.runtime_domain, True),
    "runtime_domain:fixed": partial(B.runtime_domain, False),
    "skipped_tile_deadlock:broken": partial(B.skipped_tile_deadlock, True),
    "skipped_tile_deadlock:fixed": partial(B.skipped_tile_deadlock, False),
    "opaque_epilogue": B.opaque_epilogue,
    "long_names": B.long_names,
}.items():
    HAND_MADE[f"builders:{_name}"] = partial(_tasks, _build)
for _name in SEED:
    HAND_MADE[f"seed:{_name}"] = partial(seed_task_set, _name)
for _name in scenarios.CATALOG:
    HAND_MADE[f"scenario:{_name}"] = partial(_scenario, _name)
for _n, _iters, _dead in ((1, 4, False), (2, 3, False), (1, 6, True), (2, 5, True)):
    HAND_MADE[f"gemm:{_n}x{_iters}{':deadlock' if _dead else ''}"] = partial(
        _tasks, partial(gemm_family, _n, _iters, deadlock=_dead)
    )
