"""ts-explore's own checker behind TS's ``check_all_interleavings`` interface: the parity bridge.

The parity tests (``tests/check/``) compare it with TS's function result by
result. :func:`ts_explore.verify` does not go through it: its engine searches
the :class:`SearchProblem` the reader read and tells the findings in our model
directly (:mod:`ts_explore.verification.engines`).

:func:`check_all_interleavings` takes the same arguments as TS's function
and returns a :class:`CheckRun`: the fields of TS's ``CheckResult``, with
TS's own ``DeadlockInfo`` / ``BlockedTaskInfo`` / ``RaceInfo`` /
``PdlOrderInfo`` objects, plus the shortest path to every finding in the
format of :func:`ts_explore.reader.ts_search.capture_paths`. So a run of
ours becomes an :class:`~ts_explore.model.verdict.ExhaustiveRun` through
the unchanged ``ts_search.convert_run``::

    kwargs = {"num_tiles": 2, "opaque_assignment": {}}
    run = check_all_interleavings(tasks, **kwargs, progress=report, cancel=stop_event)
    record = ts_search.RunRecord(kwargs, run, run_by="ts-explore", paths=run.paths)
    ts_search.convert_run(record, lanes, model, ts_names, display, run.paths, opaque)

Differences from TS, on purpose: ``is_safe`` is False when the search hit
its state cap or was cancelled (TS reports a capped search as safe), and
``hit_state_limit`` is also True after a cancel, so a converted run reads
"not proven" either way (``cancelled`` tells which). ``engine``,
``states_explored`` and ``elapsed_s`` describe what was proven how.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ..check.cross import cross_check as cross_checked
from ..check.engine import DEFAULT_MAX_STATES, CancelFlag, Progress, SearchResult, search
from ..check.problem import SearchProblem
from .search_input import search_problem

Path = list[tuple[str, str]]


@dataclass
class CheckRun:
    """TS's ``CheckResult`` fields, plus paths and how the search ran."""

    deadlock_states: list[Any]
    race_states: list[Any]
    states_explored: int
    complete_count: int
    is_safe: bool
    pdl_order_states: list[Any] = field(default_factory=list)
    hit_state_limit: bool = False  # also True when cancelled: the search did not finish either way
    cancelled: bool = False
    elapsed_s: float = 0.0
    engine: str = "reduced"  # "reduced" | "unreduced"
    cross_checked: bool = False  # the independent second search ran too (``cross_check=True``)
    disagreement: str = ""  # both answers, when the two searches disagree (the run is then not a proof)
    search: SearchResult | None = None
    problem: SearchProblem | None = None
    _paths: list[tuple[str, tuple, Path]] | None = field(default=None, repr=False)

    @property
    def paths(self) -> list[tuple[str, tuple, Path]]:
        """``(kind, cursors, [(task, "Stage(resource)"), ...])`` per finding, as ``capture_paths`` returns."""
        if self._paths is None:
            self._paths = []
            if self.search is not None and self.problem is not None:
                texts: dict[tuple[int, int], tuple[str, str]] = {}
                self._paths = [(f.kind, f.cursors, _path(self.problem, f.path, texts)) for f in self.search.findings]
        return self._paths


def _path(problem: SearchProblem, moves: Any, texts: dict[tuple[int, int], tuple[str, str]]) -> Path:
    out = []
    for m in moves:
        text = texts.get(m)
        if text is None:
            text = texts[m] = (problem.tasks[m.task], problem.step_text(m.task, m.step))
        out.append(text)
    return out


def _deadlock_info(problem: SearchProblem, found: Any) -> Any:
    blocked, details = [], []
    for k in found.blocked:
        step = problem.lanes[k][found.cursors[k]]
        counter = problem.counters[step.needs]
        resource = problem.resources[step.resource]
        blocked.append((problem.tasks[k], resource, step.stage))
        available = tuple(
            (c.physical_stage, found.counters[i])
            for i, c in enumerate(problem.counters)
            if c.kind == counter.kind and c.resource == step.resource and found.counters[i] > 0
        )
        details.append(
            ec.BlockedTaskInfo(
                task_name=problem.tasks[k],
                resource_name=resource,
                stage_name=step.stage,
                credit_kind="producer commit credit" if counter.kind == "commit" else "empty-slot credit",
                physical_stage=counter.physical_stage,
                available_stage_counts=available,
                domain_interleaved=step.resource in problem.domain_interleaved,
            )
        )
    return ec.DeadlockInfo(cursors=found.cursors, blocked_tasks=blocked, blocked_details=details)


def check_all_interleavings(
    tasks: list[Any],
    *,
    reduce: bool = True,
    progress: Progress | None = None,
    cancel: CancelFlag | None = None,
    ts_parity: bool = False,
    cross_check: bool = False,
    **kwargs: Any,
) -> CheckRun:
    """Our search over the instance TS's ``check_all_interleavings(tasks, **kwargs)`` explores.

    ``max_states`` defaults to ``DEFAULT_MAX_STATES`` (TS's own default is
    1,000,000); ``early_exit`` and ``cursor_only_visited`` as in TS;
    ``verbose`` is accepted and changes nothing. ``reduce=False``
    runs the same engine without the partial-order reduction;
    ``ts_parity=True`` knows states the way TS does (see
    :func:`ts_explore.check.search`), so unreduced it visits TS's states.
    ``cross_check=True`` also runs the independent second search
    (:func:`ts_explore.check.cross_check`); when the two disagree the run
    reports no finding and is not safe, with ``disagreement`` naming both
    answers, so the verdict is INCONCLUSIVE. A run capped or cancelled before
    any finding is not cross-checked (it is INCONCLUSIVE already).
    """
    problem = search_problem(tasks, **kwargs)
    result = search(
        problem,
        reduce=reduce,
        max_states=kwargs.get("max_states", DEFAULT_MAX_STATES),
        early_exit=kwargs.get("early_exit", True),
        progress=progress,
        cancel=cancel,
        cursor_only=kwargs.get("cursor_only_visited", True),
        ts_parity=ts_parity,
    )
    run = check_run(problem, result)
    if cross_check and (result.complete or result.findings):  # a capped or cancelled clean run proves nothing anyway
        both = cross_checked(problem, first=result, early_exit=kwargs.get("early_exit", True))
        run.cross_checked = True
        if not both.agree:
            run.deadlock_states, run.race_states, run.pdl_order_states = [], [], []
            run.is_safe, run.hit_state_limit, run.disagreement = False, True, both.reason
            run.search = None
    return run


def check_run(problem: SearchProblem, result: SearchResult) -> CheckRun:
    """A :class:`SearchResult` in TS's ``CheckResult`` shape, with TS-format paths."""
    names, res = problem.tasks, problem.resources
    deadlocks = [_deadlock_info(problem, d) for d in result.deadlocks]
    races = []
    for r in result.races:
        races.append(
            ec.RaceInfo(
                cursors=r.cursors, writer_task=names[r.writer_task], writer_resource=res[r.writer_resource],
                victim_task=names[r.victim_task], victim_resource=res[r.victim_resource],
                victim_access=r.victim_access, overlap_desc=problem.overlap(r.writer_resource, r.victim_resource),
            )
        )
    pdl = [ec.PdlOrderInfo(cursors=p.cursors, launch_task=names[p.task], launch_resource=res[p.resource])
           for p in result.pdl_violations]
    return CheckRun(
        deadlock_states=deadlocks,
        race_states=races,
        states_explored=result.states_explored,
        complete_count=result.complete_count,
        is_safe=result.proven_safe,
        pdl_order_states=pdl,
        hit_state_limit=result.hit_cap or result.cancelled,
        cancelled=result.cancelled,
        elapsed_s=result.elapsed_s,
        engine="reduced" if result.reduced else "unreduced",
        search=result,
        problem=problem,
    )


__all__ = ["CheckRun", "check_all_interleavings", "check_run"]
