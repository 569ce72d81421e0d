"""``verify(tasks=..., resource_dependency_graph=...)``: run TS's verification quietly, return a Verdict.

How it works (all TS reading happens here and in ``checks``/``ts_search``):

1. capture the task set (before TS touches the tasks);
2. construct TaskManager through :class:`ObservedTaskManager`, which records
   every check's outcome and keeps going after a failure, with stdout/stderr
   redirected and Python warnings recorded;
3. while it runs, ``exhaustive_checker.check_all_interleavings`` is wrapped so
   every ``CheckResult`` is kept with its arguments; variants TaskManager did
   not reach (it stops at the first unsafe one) are run afterwards;
4. each unsafe variant is run once more with TS's verbose reporter replaced by
   a recorder, for the shortest path; credits are replayed along it.

TS mutates tasks and resources while verifying (register defaults, profiling
flags, sometimes a resource's pipeline config), so **build fresh tasks and
resources for every call**; the gallery and scenarios do.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.resources import WorkQueue
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ..model import Family, TaskSet
from ..model.verdict import CheckOutcome, DomainNote, ExhaustiveRun, Note, Status, Verdict
from . import ts_search as ck
from .checks import ANALYSIS, SETUP, ObservedTaskManager, check_hint, check_title
from .problems import problem_from_exception
from .schedule import resource_namer
from .simulation import SIMULATION, simulation_findings
from .tasks import _all_resources, capture_task_set
from .ts_text import parse_printed_notes

_TM_PARAMS = frozenset(inspect.signature(TaskManager.__init__).parameters) - {"self", "tasks", "resource_dependency_graph"}


@dataclass
class _Collected:
    """What one verification collects while TaskManager runs."""

    outcomes: list[tuple[str, BaseException | None]]
    records: list[ck.RunRecord]
    caught: list[warnings.WarningMessage]
    output: str = ""


def _check_arguments(tasks: Any, graph: Any, tm_kwargs: dict[str, Any]) -> list[Any]:
    if not isinstance(tasks, (list, tuple)):
        raise TypeError(f"verify(tasks=...) takes a list of TS Task objects, got {type(tasks).__name__}")
    bad = [type(t).__name__ for t in tasks if not isinstance(t, Task)]
    if bad:
        raise TypeError(f"verify(tasks=...) takes TS Task objects; got {', '.join(sorted(set(bad)))}")
    if not isinstance(graph, Mapping):
        raise TypeError(
            "verify(resource_dependency_graph=...) takes a dict {downstream resource: [upstream resources]}, "
            f"got {type(graph).__name__}"
        )
    bad_values = [type(v).__name__ for v in graph.values() if not isinstance(v, (list, tuple))]
    if bad_values:
        raise TypeError(
            "verify(resource_dependency_graph=...) maps each downstream resource to a LIST of upstream "
            f"resources (use [] for sources); got {', '.join(sorted(set(bad_values)))}"
        )
    unknown = sorted(set(tm_kwargs) - _TM_PARAMS)
    if unknown:
        raise TypeError(
            f"verify() got unknown TaskManager argument(s) {', '.join(unknown)}; "
            f"TaskManager accepts: {', '.join(sorted(_TM_PARAMS))}"
        )
    return list(tasks)


def _run_task_manager(tasks: list[Any], graph: Mapping[Any, Any], tm_kwargs: dict[str, Any]) -> _Collected:
    collected = _Collected(outcomes=[], records=[], caught=[])
    original = ec.check_all_interleavings

    def intercept(*args: Any, **kwargs: Any) -> Any:
        stalled = any(name == SIMULATION and exc is not None for name, exc in collected.outcomes)
        if stalled and not kwargs.get("verbose") and len(args) == 1:
            # the credit simulation already failed: the search will too, so record its
            # paths in this same run instead of searching twice
            result, paths = ck.run_with_paths(args[0], kwargs, original)
            collected.records.append(ck.RunRecord(dict(kwargs), result, paths=paths))
            return result
        result = original(*args, **kwargs)
        collected.records.append(ck.RunRecord(dict(kwargs), result))
        return result

    out = io.StringIO()
    with ck.LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ec.check_all_interleavings = intercept  # type: ignore[assignment]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                ObservedTaskManager(
                    tasks, dict(graph), outcomes=collected.outcomes, **{"verbose": False, **tm_kwargs}
                )
        except Exception as exc:  # noqa: BLE001 - a crash outside the checks is a failed setup check
            collected.outcomes.insert(0, (SETUP, exc))
        finally:
            ec.check_all_interleavings = original  # type: ignore[assignment]
        collected.caught = list(caught)
    collected.output = out.getvalue()
    return collected


def _expected_variants(tasks: list[Any], tm_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The checker calls TaskManager makes when nothing fails (its own loop, restated)."""
    wq = any(isinstance(r, WorkQueue) for t in tasks for r in [*t.src_resources, *t.dst_resources])
    base = {"num_tiles": 2 if wq else 1, "assume_pdl_wait_completed": tm_kwargs.get("assume_pdl_wait_completed", False)}
    skip = any(getattr(t, "skip_if", None) is not None for t in tasks)
    out = []
    for assignment in ts_tm._opaque_assignments(ts_tm._collect_opaque_keys(tasks)):
        out.append({**base, "opaque_assignment": assignment})
        if skip:
            out.append({**base, "skipped_tile": True, "opaque_assignment": assignment})
    return out


def _same_call(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a.get("skipped_tile")) == bool(b.get("skipped_tile")) and (a.get("opaque_assignment") or {}) == (
        b.get("opaque_assignment") or {}
    )


def _complete_runs(tasks: list[Any], collected: _Collected, tm_kwargs: dict[str, Any]) -> None:
    """Run the checker variants TaskManager skipped after its first unsafe result."""
    if not any(name == "_exhaustive_aliasing_races" for name, _ in collected.outcomes):
        return
    for kwargs in _expected_variants(tasks, tm_kwargs):
        if not any(_same_call(kwargs, r.kwargs) for r in collected.records):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = ec.check_all_interleavings(tasks, **kwargs)
            collected.caught.extend(caught)
            collected.records.append(ck.RunRecord(kwargs, result, run_by="ts-explore"))


def _opaque_text(assignment: dict | None, id_names: dict[int, str]) -> tuple[tuple[str, bool], ...]:
    items = []
    for key, value in (assignment or {}).items():
        if isinstance(key, tuple) and len(key) == 3 and key[0] in id_names:
            text = f"{id_names[key[0]]}.{key[1]}.{key[2]}"
        else:
            text = str(key)
        items.append((text, bool(value)))
    return tuple(items)


def _checks(collected: _Collected) -> tuple[CheckOutcome, ...]:
    out = []
    for name, exc in collected.outcomes:
        if exc is None:
            out.append(CheckOutcome(name, check_title(name), True))
            continue
        problem = problem_from_exception(exc) if name == SETUP else None
        out.append(
            CheckOutcome(
                name=name, title=check_title(name), passed=False,
                message=str(exc).strip() or type(exc).__name__, error_type=type(exc).__name__,
                hint=problem.hint if problem and problem.rule not in ("schedule-error", "python-error")
                else check_hint(name),
                problem=problem,
            )
        )
    return tuple(out)


def _notes(collected: _Collected, task_set: TaskSet | None) -> tuple[Note, ...]:
    notes = [
        Note(n.kind, f"{n.level}: {n.text}", n.task, n.resource) for n in parse_printed_notes(collected.output)
    ]
    for w in collected.caught:
        notes.append(Note("ts-warning", str(w.message).strip()))
    if task_set is not None:
        notes.extend(_unconsumed_outputs(task_set))
    return tuple(dict.fromkeys(notes))


def _unconsumed_outputs(task_set: TaskSet) -> list[Note]:
    """Work calls whose returned variables feed no route and no condition (TS warns only while recording)."""
    notes = []
    for info in task_set.tasks:
        tree = info.schedule
        used = {r.source for r in tree.routes} | {
            b.condition.step for b in tree.blocks() if b.condition is not None and b.condition.step is not None
        }
        for step in tree.steps():
            # a WorkQueue's work_tile feeds the next tile inside TS, never a route
            if step.returns and step.uid not in used and step.family is not Family.QUEUE:
                notes.append(
                    Note(
                        "unconsumed-output",
                        f"{info.name}: {step.title} returns {', '.join(step.returns)} but no later step uses it",
                        info.name,
                        step.resource,
                    )
                )
    return notes


def _domain_notes(tasks: list[Any], task_set: TaskSet | None) -> tuple[DomainNote, ...]:
    notes = []
    for task in tasks:
        if ck.static_domain(task):
            continue
        name = ck.task_name(task)
        loop = None
        if task_set is not None:
            loop = next((t.schedule.domain_loop() for t in task_set.tasks if t.name == name), None)
        bounds = loop.title if loop is not None else "a domain_loop"
        notes.append(DomainNote(name, bounds, ck.loop_iterations(task)))
    return tuple(notes)


def verify(tasks: Any = None, resource_dependency_graph: Any = None, **task_manager_kwargs: Any) -> Verdict:
    """Verify tasks the way ``TaskManager`` does, without printing, and return a :class:`Verdict`.

    Never raises for a failing schedule; raises ``TypeError`` only when called
    wrongly (tasks not a list of TS Tasks, graph not a dict, unknown keyword).
    TS mutates what it verifies: build fresh tasks/resources for each call.

    >>> from ts_explore import gallery
    >>> v = verify(**gallery.get("cross_wait").broken())
    >>> v.ok, v.deadlocks[0].blocked[0].sentence
    (False, 'Ping waits for a commit on right; only Pong commits right')
    """
    start = time.perf_counter()
    task_list = _check_arguments(tasks, resource_dependency_graph, task_manager_kwargs)
    graph = dict(resource_dependency_graph)
    resources = _all_resources(task_list, graph)
    name_of = resource_namer(resources)
    try:
        task_set: TaskSet | None = capture_task_set(task_list, graph)
    except Exception:  # noqa: BLE001 - drawings lose their tree; verification still runs
        task_set = None
    with ck.cached_domain_probes():
        return _verify(task_list, graph, task_manager_kwargs, resources, name_of, task_set, start)


def _verify(
    task_list: list[Any],
    graph: dict[Any, Any],
    task_manager_kwargs: dict[str, Any],
    resources: list[Any],
    name_of: Callable[[Any], str],
    task_set: TaskSet | None,
    start: float,
) -> Verdict:
    infos = {id(t): info for t, info in zip(task_list, task_set.tasks)} if task_set else {}
    collected = _run_task_manager(task_list, graph, task_manager_kwargs)
    notes: list[Note] = []
    try:
        with warnings.catch_warnings(record=True):  # repeats of TaskManager's own warnings
            warnings.simplefilter("always")
            runs, blocked, imbalances = _analyse(
                task_list, collected, task_manager_kwargs, resources, name_of, infos, notes
            )
            domain_notes = _domain_notes(task_list, task_set)
    except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
        runs, blocked, imbalances, domain_notes = [], (), (), ()
        collected.outcomes.append((ANALYSIS, exc))
    checks = _checks(collected)
    return Verdict(
        checks=checks,
        warnings=_notes(collected, task_set) + tuple(notes),
        simulation_blocked=blocked,
        imbalances=imbalances,
        runs=tuple(runs),
        domain_notes=domain_notes,
        raw_output=_raw_output(collected, checks),
        task_set=task_set,
        elapsed_s=time.perf_counter() - start,
    )


def _analyse(
    task_list: list[Any],
    collected: _Collected,
    task_manager_kwargs: dict[str, Any],
    resources: list[Any],
    name_of: Callable[[Any], str],
    infos: dict[int, Any],
    notes: list[Note],
) -> tuple[list[ExhaustiveRun], tuple[Any, ...], tuple[Any, ...]]:
    """Turn the recorded checker runs and the simulation's failure into model data."""
    _complete_runs(task_list, collected, task_manager_kwargs)
    ts_names = [t.name for t in task_list]
    display: dict[str, str] = {}
    for r in resources:
        display.setdefault(getattr(r, "name", ""), name_of(r))
    id_names = {id(r): name_of(r) for r in resources}
    model = ck.credit_model(task_list, name_of)
    runs = []
    for record in collected.records:
        kw = record.kwargs
        lanes = ck.lanes_for(
            task_list, infos, name_of, skipped_tile=bool(kw.get("skipped_tile")),
            opaque_assignment=kw.get("opaque_assignment"), num_tiles=int(kw.get("num_tiles", 1)),
        )
        paths: list[Any] = record.paths or []
        if not record.result.is_safe and record.paths is None:
            try:
                paths = ck.capture_paths(task_list, kw, ec.check_all_interleavings)
            except Exception as exc:  # noqa: BLE001 - the verdict stands without a path
                notes.append(Note("counterexample-unavailable", f"{type(exc).__name__}: {exc}"))
        opaque = _opaque_text(kw.get("opaque_assignment"), id_names)
        runs.append(ck.convert_run(record, lanes, model, ts_names, display, paths, opaque))
    blocked, imbalances = simulation_findings(collected.outcomes, task_list, infos, name_of, runs)
    return runs, blocked, imbalances


def _raw_output(collected: _Collected, checks: tuple[CheckOutcome, ...]) -> str:
    parts = [collected.output.rstrip()]
    failed = [c for c in checks if not c.passed]
    if failed:
        parts.append("\n".join(f"--- {c.name} ({c.error_type}) ---\n{c.message}" for c in failed))
    if collected.caught:
        parts.append("--- warnings ---\n" + "\n".join(str(w.message) for w in collected.caught))
    return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class TripCountSearch:
    """The smallest domain length at which a schedule already fails the same way, and that verdict."""

    asked: int
    smallest: int | None  # None: the asked length passes
    verdict: Verdict | None  # the verdict at ``smallest`` (its counterexample is the shortest)
    asked_verdict: Verdict


def failure_signature(verdict: Verdict) -> frozenset[str]:
    """What kind of failure a verdict shows: its finding kinds, else its failed check names."""
    kinds = {f.kind for f in verdict.findings}
    return frozenset(kinds) if kinds else frozenset(c.name for c in verdict.failed_checks)


def smallest_failing_trip_count(build: Callable[[int], dict[str, Any]], asked: int) -> TripCountSearch:
    """The smallest n <= ``asked`` at which ``build(n)`` fails the way ``build(asked)`` does.

    ``build(n)`` must return fresh ``dict(tasks=..., resource_dependency_graph=...)``
    with an n-iteration domain (gallery cases: ``case.builder()``). The search
    is linear from 1 because failures are not monotonic in n (with two stages a
    missing release only stalls from the third iteration on, while the
    imbalance shows at once); "the same way" means a deadlock stays a deadlock,
    a race a race, else the same failed checks. The smallest n gives the
    shortest counterexample to read.
    """
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ValueError(f"asked must be a positive int trip count, got {asked!r}")
    target = verify(**build(asked))
    if target.status is not Status.UNSAFE:
        return TripCountSearch(asked, None, None, target)
    wanted = failure_signature(target)
    for n in range(1, asked):
        verdict = verify(**build(n))
        if verdict.status is Status.UNSAFE and failure_signature(verdict) & wanted:
            return TripCountSearch(asked, n, verdict, target)
    return TripCountSearch(asked, asked, target, target)


__all__ = ["TripCountSearch", "failure_signature", "smallest_failing_trip_count", "verify"]
