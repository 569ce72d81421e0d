"""The checker problems of a candidate repair built through TS: the repair search's fallback path.

When :mod:`ts_explore.check.from_model` cannot build a candidate's problem
(it names the construct), the candidate is lowered onto TS tasks and each
run the instance needs (:func:`~ts_explore.reader.materialise.search_runs`)
is built with :func:`~ts_explore.reader.search_input.search_problem`.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..check import SearchProblem
from .materialise import search_runs
from .search_input import search_problem


def run_problems(tasks: list[Any]) -> Iterator[SearchProblem]:
    """One problem per run the instance needs, built lazily (a screen stops at the first finding)."""
    for kwargs in search_runs(tasks):
        yield search_problem(tasks, **kwargs)


__all__ = ["run_problems"]
