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
from cutlass.experimental.task_scheduling.resources import MemoryResource
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ..model import Family, TaskSet
from ..model.verdict import CheckOutcome, ExhaustiveRun, Note, Verdict
from . import scope as sc
from . import ts_search as ck
from .checks import ANALYSIS, SETUP, ObservedTaskManager, check_hint, check_title
from .engines import Engine, engine_for
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
    named = [x for k, v in graph.items() for x in (k, *v) if not isinstance(x, MemoryResource)]
    if named:
        example = named[0]
        raise TypeError(
            "verify(resource_dependency_graph=...) takes the resource objects the tasks use, not names or other "
            f"values: got {example!r} ({type(example).__name__}); write {{smem: [src]}}, not {{'smem': ['src']}}"
        )
    unknown = sorted(set(tm_kwargs) - _TM_PARAMS)
    if unknown:
        raise TypeError(
            f"verify() got unknown TaskManager argument(s) {', '.join(unknown)}; "
            f"TaskManager accepts: {', '.join(sorted(_TM_PARAMS))}"
        )
    return list(tasks)


def _run_task_manager(tasks: list[Any], graph: Mapping[Any, Any], tm_kwargs: dict[str, Any],
                      engine: Engine) -> _Collected:
    collected = _Collected(outcomes=[], records=[], caught=[])
    original = ec.check_all_interleavings

    def intercept(*args: Any, **kwargs: Any) -> Any:
        if engine.own:  # our search: its paths come with the result
            start = time.perf_counter()
            result = engine.run(*args, **kwargs)
            collected.records.append(ck.RunRecord(dict(kwargs), result, paths=result.paths,
                                                  seconds=time.perf_counter() - start, engine=engine.name))
            return result
        stalled = any(name == SIMULATION and exc is not None for name, exc in collected.outcomes)
        if stalled and not kwargs.get("verbose") and len(args) == 1:
            # the credit simulation already failed: the search will too, so record its
            # paths in this same run instead of searching twice
            start = time.perf_counter()
            result, paths = ck.run_with_paths(args[0], kwargs, original)
            collected.records.append(
                ck.RunRecord(dict(kwargs), result, paths=paths, seconds=time.perf_counter() - start)
            )
            return result
        start = time.perf_counter()
        result = original(*args, **kwargs)
        collected.records.append(ck.RunRecord(dict(kwargs), result, seconds=time.perf_counter() - start))
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


def _complete_runs(tasks: list[Any], collected: _Collected, tm_kwargs: dict[str, Any], engine: Engine) -> None:
    """Run the checker variants TaskManager skipped after its first unsafe result."""
    if not any(name == "_exhaustive_aliasing_races" for name, _ in collected.outcomes):
        return
    for kwargs in sc.needed_runs(tasks, tm_kwargs):
        if not any(sc.same_call(kwargs, r.kwargs) for r in collected.records):
            collected.records.append(sc.timed_run(tasks, kwargs, engine.run, engine.name))


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


@dataclass(frozen=True)
class _Ask:
    """What the caller says about the instance beyond the tasks (``verify``'s keyword-only arguments)."""

    tiles: int | None = None
    instance: str | None = None
    not_modelled: tuple[str, ...] = ()
    rules: tuple[Callable[[TaskSet], CheckOutcome], ...] = ()
    engine: Engine = engine_for("ts")


def verify(
    tasks: Any = None,
    resource_dependency_graph: Any = None,
    *,
    tiles: int | None = None,
    instance: str | None = None,
    not_modelled: tuple[str, ...] | list[str] = (),
    rules: tuple[Callable[[TaskSet], CheckOutcome], ...] | list[Callable[[TaskSet], CheckOutcome]] = (),
    checker: str = "auto",
    progress: Callable[[int, float, float], None] | None = None,
    cancel: Any = None,
    max_states: int | None = None,
    cross_check: bool = False,
    **task_manager_kwargs: Any,
) -> Verdict:
    """Verify tasks the way ``TaskManager`` does, without printing, and return a :class:`Verdict`.

    Never raises for a failing schedule; raises ``TypeError`` only when called
    wrongly (tasks not a list of TS Tasks, graph not a dict, unknown keyword).
    TS mutates what it verifies: build fresh tasks/resources for each call.

    Keywords that change what the verdict means:

    - ``tiles``: the work tiles one CTA of this instance runs (persistent
      schedules). The search then covers exactly that many; without it,
      ts-explore searches the tile counts that cover any number, or says why
      it cannot (the verdict is then INCONCLUSIVE).
    - ``instance``: the instance in words (``"CTA 100"``), used in the scope
      and in the reasons (``"CTA 100 does no work (0 iterations)"``).
    - ``not_modelled``: effects outside TS's model the caller knows of (e.g.
      ``"asynchronous shared-memory reads by tensor-core instructions"``),
      listed in the scope.
    - ``rules``: checks of ours for what TS does not model, each a function of
      the captured :class:`~ts_explore.model.TaskSet` returning a
      :class:`~ts_explore.model.verdict.CheckOutcome`; a rule that fails makes
      the verdict UNSAFE like a failed TS check (e.g. the GEMM's async-read rule).
    - ``checker``: the exhaustive search - ``"auto"`` (default) and
      ``"reduced"``: ts-explore's own checker with partial-order reduction
      (:mod:`ts_explore.check`; it finishes schedules TS's BFS cannot);
      ``"unreduced"``: the same engine over every interleaving; ``"ts"``: TS's
      BFS, the reference. The scope records the engine, states and seconds.
    - ``progress(states, states_per_s, elapsed_s)``, ``cancel`` (a
      ``threading.Event``) and ``max_states`` reach our engine: a cancelled
      or capped search is INCONCLUSIVE, never SAFE.
    - ``cross_check=True``: every run of our checker is also searched by an
      independent second engine (:func:`ts_explore.check.cross_check`); if
      the two disagree the verdict is INCONCLUSIVE, its reason naming both
      answers. The scope records which runs were cross-checked.
    - ``exhaustive_deadlock_race_check=False`` (TaskManager's): switches TS's
      search off; with ``checker="ts"`` the verdict is then INCONCLUSIVE at
      best, with our checker ours searches instead.
    - every other keyword goes to ``TaskManager`` unchanged.


    >>> from ts_explore import gallery
    >>> v = verify(**gallery.get("cross_wait").broken())
    >>> v.ok, v.deadlocks[0].blocked[0].sentence
    (False, 'Ping waits for a commit on right; only Pong commits right')
    """
    start = time.perf_counter()
    task_list = _check_arguments(tasks, resource_dependency_graph, task_manager_kwargs)
    if tiles is not None and (isinstance(tiles, bool) or not isinstance(tiles, int) or tiles < 0):
        raise TypeError(f"verify(tiles=...) takes the number of work tiles a CTA runs (an int >= 0), got {tiles!r}")
    if isinstance(not_modelled, str):
        not_modelled = (not_modelled,)
    if cross_check and checker == "ts":
        raise ValueError("verify(cross_check=True) cross-checks ts-explore's own checker; use checker='auto', "
                         "'reduced' or 'unreduced' with it, or drop cross_check for checker='ts'")
    engine = engine_for(checker, progress=progress, cancel=cancel, max_states=max_states, cross_check=cross_check)
    if engine.own:  # our search runs whether or not TS's was switched off
        task_manager_kwargs = {k: v for k, v in task_manager_kwargs.items() if k != "exhaustive_deadlock_race_check"}
    ask = _Ask(tiles, instance, tuple(not_modelled), tuple(rules), engine)
    graph = dict(resource_dependency_graph)
    resources = _all_resources(task_list, graph)
    name_of = resource_namer(resources)
    try:
        task_set: TaskSet | None = capture_task_set(task_list, graph)
    except Exception:  # noqa: BLE001 - drawings lose their tree; verification still runs
        task_set = None
    with ck.cached_domain_probes():
        return _verify(task_list, graph, task_manager_kwargs, ask, resources, name_of, task_set, start)


def _verify(
    task_list: list[Any],
    graph: dict[Any, Any],
    task_manager_kwargs: dict[str, Any],
    ask: _Ask,
    resources: list[Any],
    name_of: Callable[[Any], str],
    task_set: TaskSet | None,
    start: float,
) -> Verdict:
    infos = {id(t): info for t, info in zip(task_list, task_set.tasks)} if task_set else {}
    collected = _run_task_manager(task_list, graph, task_manager_kwargs, ask.engine)
    notes: list[Note] = []
    runs: list[ExhaustiveRun] = []
    blocked: tuple[Any, ...] = ()
    imbalances: tuple[Any, ...] = ()
    plan = None
    unread = ""
    try:
        with warnings.catch_warnings(record=True):  # repeats of TaskManager's own warnings
            warnings.simplefilter("always")
            _complete_runs(task_list, collected, task_manager_kwargs, ask.engine)
            plan = _search_tiles(task_list, collected, task_manager_kwargs, ask, name_of)
            runs, blocked, imbalances = _analyse(task_list, collected, resources, name_of, infos, notes)
    except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
        runs = []
        collected.outcomes.append((ANALYSIS, exc))
        unread = f"{type(exc).__name__}: {exc}"
    checks = _checks(collected) + _rule_checks(ask.rules, task_set)
    scope = sc.build_scope(
        task_list, task_set, runs, [r.kwargs for r in collected.records], task_manager_kwargs,
        tiles=ask.tiles, tile_plan=plan, instance=ask.instance, not_modelled=ask.not_modelled, unread=unread,
        engine=ask.engine.name,
    )
    return Verdict(
        checks=checks,
        warnings=_notes(collected, task_set) + tuple(notes),
        simulation_blocked=blocked,
        imbalances=imbalances,
        runs=tuple(runs),
        raw_output=_raw_output(collected, checks),
        task_set=task_set,
        elapsed_s=time.perf_counter() - start,
        scope=scope,
    )


def _rule_checks(rules: tuple[Callable[[TaskSet], CheckOutcome], ...], task_set: TaskSet | None
                 ) -> tuple[CheckOutcome, ...]:
    """Our own checks of what TS does not model; a rule that cannot run is a failed check naming why."""
    out = []
    for rule in rules:
        name = getattr(rule, "__name__", type(rule).__name__)
        if task_set is None:
            out.append(CheckOutcome(name, name.replace("_", " "), False, "the task set could not be captured, so "
                                    "this rule could not run", hint="see the failed capture in the raw output"))
            continue
        try:
            out.append(rule(task_set))
        except Exception as exc:  # noqa: BLE001 - a broken rule must not crash the notebook
            out.append(CheckOutcome(name, name.replace("_", " "), False, f"{type(exc).__name__}: {exc}",
                                    error_type=type(exc).__name__, hint="the rule itself failed; report it"))
    return tuple(out)


def _search_tiles(
    task_list: list[Any], collected: _Collected, tm_kwargs: dict[str, Any], ask: _Ask, name_of: Callable[[Any], str]
) -> Any:
    """For a persistent schedule: the tile plan, and the tile counts it needs searched when nothing failed yet."""
    searched = any(name == "_exhaustive_aliasing_races" for name, _ in collected.outcomes)
    if not searched or not sc.is_persistent(task_list):
        return None
    plan = sc.coverage(task_list, name_of)
    clean = all(exc is None for _n, exc in collected.outcomes) and all(r.result.is_safe for r in collected.records)
    if clean:  # a failure already decides the verdict: no need to search more tiles
        skip = any(getattr(t, "skip_if", None) is not None for t in task_list)
        sc.extra_tile_runs(task_list, collected.records, tm_kwargs, sc.tile_counts(plan, ask.tiles, skip),
                           ask.engine.run, ask.engine.name)
    return plan


def _analyse(
    task_list: list[Any],
    collected: _Collected,
    resources: list[Any],
    name_of: Callable[[Any], str],
    infos: dict[int, Any],
    notes: list[Note],
) -> tuple[list[ExhaustiveRun], tuple[Any, ...], tuple[Any, ...]]:
    """Turn the recorded checker runs and the simulation's failure into model data."""
    persistent = sc.is_persistent(task_list)
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
        runs.append(ck.convert_run(record, lanes, model, ts_names, display, paths, opaque, persistent))
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



__all__ = ["verify"]
