"""Run TS's checker and ours on the same instance and reduce both results to comparable facts."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.resources import PdlLaunchBarrier, PdlWaitBarrier, WorkQueue

from ts_explore.check import search
from ts_explore.check.engine import DEFAULT_MAX_STATES
from ts_explore.reader.search_input import search_problem


def variants(tasks: list[Any]) -> list[dict[str, Any]]:
    """The checker calls TaskManager makes: per opaque assignment, normal and (with skip_if) skipped tile.

    With PDL barriers, each also with ``assume_pdl_wait_completed=True`` (TaskManager's keyword).
    """
    used = [r for t in tasks for r in [*t.src_resources, *t.dst_resources]]
    wq = any(isinstance(r, WorkQueue) for r in used)
    pdl = any(isinstance(r, (PdlWaitBarrier, PdlLaunchBarrier)) for r in used)
    skip = any(getattr(t, "skip_if", None) is not None for t in tasks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assignments = ts_tm._opaque_assignments(ts_tm._collect_opaque_keys(tasks))
    out = []
    for a in assignments:
        for assume in (False, True) if pdl else (False,):
            base = {"num_tiles": 2 if wq else 1, "opaque_assignment": a, "assume_pdl_wait_completed": assume}
            out.append(base)
            if skip:
                out.append({**base, "skipped_tile": True})
    return out


@dataclass(frozen=True)
class Facts:
    """What the checkers must agree on: verdict, finding kinds, blocked steps, race pairs, launches."""

    safe: bool
    kinds: frozenset[str]
    blocked: frozenset[frozenset[tuple[str, str, str]]]  # per deadlock state: its blocked (task, resource, stage)
    races: frozenset[tuple[str, str, str, str, str]]
    launches: frozenset[tuple[str, str]]
    states: int
    capped: bool


def facts(result: Any) -> Facts:
    kinds = {k for k, found in (("deadlock", result.deadlock_states), ("race", result.race_states),
                                 ("pdl-order", result.pdl_order_states)) if found}
    return Facts(
        safe=not kinds,
        kinds=frozenset(kinds),
        blocked=frozenset(frozenset(d.blocked_tasks) for d in result.deadlock_states),
        races=frozenset((r.writer_task, r.writer_resource, r.victim_task, r.victim_resource, r.victim_access)
                        for r in result.race_states),
        launches=frozenset((p.launch_task, p.launch_resource) for p in result.pdl_order_states),
        states=result.states_explored,
        capped=bool(result.hit_state_limit),
    )


def run_ts(tasks: list[Any], **kwargs: Any) -> Facts:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return facts(ec.check_all_interleavings(tasks, **kwargs))


def ours_facts(problem: Any, result: Any) -> Facts:
    """Our engine's :class:`~ts_explore.check.engine.SearchResult` on ``problem`` in the words TS's result uses:
    task and resource names, each deadlock's blocked (task, resource, stage), each race's two accesses."""
    names, res = problem.tasks, problem.resources
    blocked = set()
    for d in result.deadlocks:
        steps = [(k, problem.lanes[k][d.cursors[k]]) for k in d.blocked]
        blocked.add(frozenset((names[k], res[step.resource], step.stage) for k, step in steps))
    kinds = {k for k, found in (("deadlock", result.deadlocks), ("race", result.races),
                                 ("pdl-order", result.pdl_violations)) if found}
    return Facts(
        safe=not kinds,
        kinds=frozenset(kinds),
        blocked=frozenset(blocked),
        races=frozenset((names[r.writer_task], res[r.writer_resource], names[r.victim_task], res[r.victim_resource],
                         r.victim_access) for r in result.races),
        launches=frozenset((names[p.task], res[p.resource]) for p in result.pdl_violations),
        states=result.states_explored,
        capped=bool(result.hit_cap or result.cancelled),
    )


def run_ours(tasks: list[Any], reduce: bool, *, max_states: int = DEFAULT_MAX_STATES, early_exit: bool = True,
             **kwargs: Any) -> Facts:
    """Our engine on the instance TS's ``check_all_interleavings(tasks, **kwargs)`` explores: unreduced in
    TS-parity mode (TS's state identity), reduced with the default exact identity."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = search_problem(tasks, **kwargs)
    result = search(problem, reduce=reduce, ts_parity=not reduce, max_states=max_states, early_exit=early_exit)
    return ours_facts(problem, result)


def compare(tasks: list[Any], variant: dict[str, Any], cap: int) -> list[str]:
    """Differences between TS and ours (unreduced and reduced) on one variant; None when TS hits ``cap``.

    Unreduced must equal TS exactly (same states, same findings, early exit or
    not); reduced must give TS's verdict, finding kinds and deadlocks (the
    reduction keeps every deadlock state, but only some race/PDL states).
    """
    full = run_ours(tasks, False, early_exit=False, max_states=cap, **variant)
    if full.capped:  # visits TS's states in TS's order: TS would hit the cap too (not run, to save time)
        return None  # type: ignore[return-value]
    ts = run_ts(tasks, early_exit=False, max_states=cap, **variant)
    problems = []
    if full != ts:
        problems.append(f"unreduced (no early exit) {full} != TS {ts}")
    first_ts = run_ts(tasks, max_states=cap, **variant)
    first = run_ours(tasks, False, max_states=cap, **variant)
    if first != first_ts:
        problems.append(f"unreduced (early exit) {first} != TS {first_ts}")
    red = run_ours(tasks, True, early_exit=False, max_states=cap, **variant)
    if (red.safe, red.kinds, red.blocked) != (ts.safe, ts.kinds, ts.blocked):
        problems.append(f"reduced (no early exit) {red} vs TS {ts}")
    red_first = run_ours(tasks, True, max_states=cap, **variant)
    if red_first.safe != first_ts.safe:
        problems.append(f"reduced (early exit) safe={red_first.safe} vs TS safe={first_ts.safe}")
    return problems
