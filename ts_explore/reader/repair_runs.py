"""The checker problems of a candidate repair built through TS: the repair search's fallback path.

When :mod:`ts_explore.check.from_model` cannot build a candidate's problem
(it names the construct), the candidate is lowered onto TS tasks and each
run the instance needs (:func:`~ts_explore.reader.materialise.search_runs`)
is built with :func:`~ts_explore.reader.search_input.search_problem`.
"""

from __future__ import annotations

from typing import Any, Iterator

from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ..check import SearchProblem
from .materialise import search_runs
from .search_input import search_problem


def run_problems(tasks: list[Any]) -> Iterator[SearchProblem]:
    """One problem per run the instance needs, built lazily (a screen stops at the first finding)."""
    for kwargs in search_runs(tasks):
        yield search_problem(tasks, **kwargs)




# TaskManager's structure checks a schedule edit can break, cheap enough to run before a proof
STRUCTURE_CHECKS = (
    "_verify_work_group_bracketing", "_verify_work_queue_schedule", "_verify_dma_ordering",
    "_verify_pdl_wait_ordering", "_verify_resource_stage_roles",
)


def structure_refusal(tasks: list[Any], graph: dict[Any, Any], **task_manager_kwargs: Any) -> str | None:
    """The first of TS's own structure checks (:data:`STRUCTURE_CHECKS`) these tasks fail, in TS's words; else None.

    The checks run on a bare ``TaskManager`` holding only the tasks and the
    graph (nothing is verified or changed); a check that needs more of the
    manager than that is skipped: the proof runs them all anyway.
    """
    shell = object.__new__(TaskManager)
    shell.tasks = list(tasks)
    shell.resource_dependency_graph = {k: list(v) for k, v in graph.items()}
    labels = task_manager_kwargs.get("dma_consumer_release_labels") or {}
    shell._dma_consumer_release_labels = {(id(up), id(down)): set(v) for (up, down), v in labels.items()}
    shell._assume_pdl_wait_completed = bool(task_manager_kwargs.get("assume_pdl_wait_completed", False))
    for name in STRUCTURE_CHECKS:
        try:
            getattr(shell, name)()
        except (ValueError, AssertionError) as exc:
            return f"{name}: {exc}"
        except Exception:  # noqa: BLE001 - needs state a bare manager lacks: the proof decides
            continue
    return None


__all__ = ["STRUCTURE_CHECKS", "run_problems", "structure_refusal"]
