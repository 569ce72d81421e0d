"""Golden DOT of the schedule-diff drawing (what the explorer's Changes tab shows)."""

from __future__ import annotations

from typing import Callable

from explorer_support import COPY

from ts_explore.analysis.diff import diff_task_sets
from ts_explore.reader import capture_task_set
from ts_explore.model import QueueKind, TaskSet
from ts_explore.render.diff import diff_graph


def _task_set(**overrides: object) -> TaskSet:
    built = COPY.build(COPY.config(**overrides))
    return capture_task_set(built.tasks, built.resource_dependency_graph)


def test_static_to_clc_with_a_forgotten_commit(golden: Callable[[str, str], None]) -> None:
    old, new = _task_set(queue=QueueKind.STATIC), _task_set(queue=QueueKind.CLC, forget_commit=True)
    source = diff_graph(new, diff_task_sets(old, new)).source
    assert "removed since the last safe configuration" in source and "<s>smem.commit</s>" in source
    assert "(new task)" in source
    golden("diff/static_to_clc.dot", source)


def test_clc_to_none_removes_the_scheduler_task(golden: Callable[[str, str], None]) -> None:
    old, new = _task_set(queue=QueueKind.CLC), _task_set(queue=QueueKind.NONE)
    source = diff_graph(new, diff_task_sets(old, new)).source
    assert "Task scheduler (removed)" in source
    golden("diff/clc_to_none.dot", source)
