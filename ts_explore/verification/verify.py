"""``verify(tasks=..., resource_dependency_graph=...)``: verify a TS task set quietly, return a Verdict.

How it works:

1. the reader captures the task set (before TS touches the tasks) and runs
   TaskManager's checks with its exhaustive search switched off, keeping
   every check's outcome, printout and warnings (:mod:`ts_explore.reader.checks`);
2. the reader reads the instance once (:mod:`ts_explore.reader.instance`):
   the facts that decide which searches it needs and, for each of them, the
   checker's input and the lanes its findings are told in;
3. :mod:`.scope` says which runs are needed (each key assignment, the
   skipped-tile run, the tile counts of a persistent schedule) and the
   engine (:mod:`.engines`) runs them; our checker's findings become model
   findings directly (:mod:`.findings`), TS's reference search goes
   through :mod:`ts_explore.reader.reference`;
4. the checks, the runs and the scope make the :class:`~ts_explore.model.verdict.Verdict`.

TS mutates tasks and resources while verifying (register defaults, profiling
flags, sometimes a resource's pipeline config), so **build fresh tasks and
resources for every call**; the gallery and scenarios do.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from ..model import TaskSet
from ..model.verdict import CheckOutcome, Verdict
from ..reader.checks import (
    ANALYSIS,
    SEARCH_SWITCH,
    SETUP,
    CheckRecord,
    check_arguments,
    run_checks,
)
from ..reader.instance import Instance, Searched, read_instance, search_inputs
from ..reader.lanes import remembered_domains
from ..reader.reference import reference_search
from ..reader.schedule import ResourceNames, resource_namer
from ..reader.search_input import search_problem
from ..reader.simulation import SIMULATION, simulation_findings
from ..reader.tasks import _all_resources, capture_task_set
from . import scope as sc
from .engines import Engine, cross_check_tiles, cross_checks, engine_for
from .tile_proof import prove_tiles
from .outcomes import EXHAUSTIVE, exhaustive_outcome, raw_output, unconsumed_outputs
from .rules import run_rules
from .simulation_limit import overrule_cut_off


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
    task_set: TaskSet | None = None,
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
    - ``rules``: verification rules of ours for what TS does not model
      (:mod:`ts_explore.verification.rules`; or any function of the captured
      :class:`~ts_explore.model.TaskSet` returning a
      :class:`~ts_explore.model.verdict.CheckOutcome`); a rule that fails makes
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
    - ``task_set``: the capture of these very tasks, when the caller already
      made it (before TS touched them); it is used instead of a second capture.
    - every other keyword goes to ``TaskManager`` unchanged.


    >>> from ts_explore import gallery
    >>> v = verify(**gallery.get("cross_wait").broken())
    >>> v.ok, v.deadlocks[0].blocked[0].sentence
    (False, 'Ping waits for a commit on right; only Pong commits right')
    """
    start = time.perf_counter()
    task_list = check_arguments(tasks, resource_dependency_graph, task_manager_kwargs)
    if tiles is not None and (isinstance(tiles, bool) or not isinstance(tiles, int) or tiles < 0):
        raise TypeError(f"verify(tiles=...) takes the number of work tiles a CTA runs (an int >= 0), got {tiles!r}")
    if isinstance(not_modelled, str):
        not_modelled = (not_modelled,)
    if cross_check and checker == "ts":
        raise ValueError("verify(cross_check=True) cross-checks ts-explore's own checker; use checker='auto', "
                         "'reduced' or 'unreduced' with it, or drop cross_check for checker='ts'")
    engine = engine_for(checker, progress=progress, cancel=cancel, max_states=max_states, cross_check=cross_check)
    if engine.own:  # our search runs whether or not TS's was switched off
        task_manager_kwargs = {k: v for k, v in task_manager_kwargs.items() if k != SEARCH_SWITCH}
    ask = _Ask(tiles, instance, tuple(not_modelled), tuple(rules), engine)
    graph = dict(resource_dependency_graph)
    resources = _all_resources(task_list, graph)
    name_of = resource_namer(resources)
    capture_error = ""
    if task_set is None:
        try:
            task_set = capture_task_set(task_list, graph, name_of)
        except Exception as exc:  # noqa: BLE001 - drawings lose their tree; verification still runs
            capture_error = f"{type(exc).__name__}: {exc}"
    with remembered_domains(task_list):
        return _verify(task_list, graph, task_manager_kwargs, ask, resources, name_of, task_set, capture_error,
                       start)


def _verify(
    task_list: list[Any],
    graph: dict[Any, Any],
    tm_kwargs: dict[str, Any],
    ask: _Ask,
    resources: list[Any],
    name_of: ResourceNames,
    task_set: TaskSet | None,
    capture_error: str,
    start: float,
) -> Verdict:
    instance: Instance | None = None
    unreadable: Exception | None = None
    try:  # everything verification needs from TS's objects, read before TaskManager or a search runs
        instance = read_instance(task_list, task_set, resources, name_of)
    except Exception as exc:  # noqa: BLE001 - told below as the analysis check, as any other failure
        unreadable = exc
    record = run_checks(task_list, graph, tm_kwargs)
    searched: list[Searched] = []
    blocked: tuple[Any, ...] = ()
    imbalances: tuple[Any, ...] = ()
    plan = None
    unread = ""
    cut_off = None
    tile_check = None
    try:
        if unreadable is not None:
            raise unreadable
        if _search_on(ask.engine, tm_kwargs) and record.reached_search:
            searched, plan, unread, cut_off = _search(task_list, task_set, instance, name_of, record, tm_kwargs,
                                                      ask)
            record.outcomes.append((EXHAUSTIVE, exhaustive_outcome(searched, instance.persistent)))
        runs = [s.run for s in searched if s.run is not None]
        if unread or len(runs) < len(searched):
            raise ValueError(f"could not read TS's search results: {unread or instance.unread}")
        if runs and cross_checks(ask.engine) and instance.persistent and ask.tiles is None:
            tile_check = cross_check_tiles(runs, sc.needed_runs(instance, tm_kwargs, 1),
                                           lambda kwargs: search_problem(task_list, **kwargs))
        blocked, imbalances = simulation_findings(record.outcomes, instance.simulation, task_set, runs)
    except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
        runs = []
        record.outcomes.append((ANALYSIS, exc))
        unread = unread or f"{type(exc).__name__}: {exc}"
    checks = record.checks() + run_rules(ask.rules, task_set, capture_error)
    scope = sc.build_scope(
        instance, runs, [s.input.kwargs for s in searched], tm_kwargs, tiles=ask.tiles, tile_proof=plan,
        instance=ask.instance, not_modelled=ask.not_modelled, unread=unread, engine=ask.engine.name,
    ) if instance is not None else None
    if scope is not None and tile_check is not None:
        scope = replace(scope, tile_check=tile_check)
    notes = record.notes + ((cut_off,) if cut_off is not None else ()) + \
        (tuple(unconsumed_outputs(task_set)) if task_set is not None else ())
    return Verdict(
        checks=checks,
        warnings=tuple(dict.fromkeys(notes)),
        simulation_blocked=blocked,
        imbalances=imbalances,
        runs=tuple(runs),
        raw_output=raw_output(record.output, checks, [str(w.message) for w in record.caught], capture_error),
        task_set=task_set,
        elapsed_s=time.perf_counter() - start,
        scope=scope,
    )


def _search_on(engine: Engine, tm_kwargs: dict[str, Any]) -> bool:
    """Our engine always searches; TS's only when the caller did not switch its search off."""
    return engine.own or tm_kwargs.get(SEARCH_SWITCH, True) is not False


def _search(task_list: list[Any], task_set: TaskSet | None, instance: Instance, name_of: ResourceNames,
            record: CheckRecord, tm_kwargs: dict[str, Any], ask: _Ask) -> tuple[list[Searched], Any, str, Any]:
    """Every search run the instance needs, read first, then run; the tile-loop proof (persistent schedules,
    :mod:`.tile_proof`); what could not be read; the note when TS's credit simulation was cut off by its round
    limit (:mod:`.simulation_limit`)."""
    needed = sc.needed_runs(instance, tm_kwargs)
    plan = None
    if instance.persistent and ask.tiles is None:  # every tile count: the tile-loop search (.tile_proof)
        opts = dict(ask.engine.options)
        plan = prove_tiles(task_list, instance, tm_kwargs, own=ask.engine.own,
                           options={k: opts.get(k) for k in ("max_states", "cancel", "progress")})
    counts = plan.failing if plan is not None else sc.tile_counts(ask.tiles, instance.skip) \
        if instance.persistent else ()
    extra = sc.extra_tile_runs(instance, tm_kwargs, counts, needed) if instance.persistent else []
    inputs, unread = search_inputs(task_list, task_set, instance, name_of, [*needed, *extra],
                                   problems=ask.engine.own)
    stalled = any(name == SIMULATION and exc is not None for name, exc in record.outcomes)
    reference = None if ask.engine.own else reference_search(task_list, instance, stalled=stalled)
    searched = [ask.engine.search(i, instance, reference) for i in inputs[:len(needed)]
                if i.problem is not None or not ask.engine.own]
    cut_off = overrule_cut_off(record.outcomes, searched) if ask.engine.own else None
    clean = all(exc is None for _n, exc in record.outcomes) and not any(
        s.unsafe or (ask.engine.own and s.capped) for s in searched)
    if clean:  # a failure already decides the verdict: no need to search more tiles
        searched += [ask.engine.search(i, instance, reference) for i in inputs[len(needed):]
                     if i.problem is not None or not ask.engine.own]
    return searched, plan, unread, cut_off


__all__ = ["verify"]
