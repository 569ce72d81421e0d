"""``verify(tasks=..., resource_dependency_graph=...)``: verify a TS task set quietly, return a Verdict.

How it works:

1. the reader captures the task set once (:func:`ts_explore.reader.capture_set.capture_set`):
   the schedule trees before TS touches the tasks, TaskManager's checks run
   with its exhaustive search switched off (each check's outcome, printout and
   warnings kept), the instance (the facts that decide which searches it
   needs) and, for each needed run, the checker's input and the lanes its
   findings are told in, and a persistent schedule's tile-loop tables;
2. :func:`verify_captured` works on that capture alone: :mod:`.scope` says
   which runs are needed (each key assignment, the skipped-tile run, TS's two
   tiles of a persistent schedule), the tile-loop search proves every tile
   count of a persistent one (:mod:`.tile_proof`; a finding is searched again
   unrolled at the count it needs), and the engine (:mod:`.engines`) runs
   them; our checker's findings become model findings directly
   (:mod:`.findings`), TS's reference search runs on the TS objects the
   capture kept for it (:class:`~ts_explore.reader.capture_set.TaskObjects`);
3. the checks, the runs and the scope make the :class:`~ts_explore.model.verdict.Verdict`.

TS mutates tasks and resources while verifying (register defaults, profiling
flags, sometimes a resource's pipeline config), so **build fresh tasks and
resources for every call**; the gallery and scenarios do.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from ..check.problem import SearchProblem
from ..model import TaskSet
from ..model.verdict import CheckOutcome, Verdict
from ..reader.capture_set import CapturedSet, capture_set, remembered_domains
from ..reader.checks import SEARCH_SWITCH
from ..reader.instance import SearchInput, Searched
from ..reader.simulation import simulation_findings
from ..reader.task_objects import TaskObjects
from . import scope as sc
from .engines import Engine, cross_check_tiles, cross_checks, engine_for
from .tile_proof import TileProof, prove_tiles
from .outcomes import analysis_check, exhaustive_check, raw_output, unconsumed_outputs
from .rules import run_rules
from .simulation_limit import overrule_cut_off


@dataclass(frozen=True)
class Ask:
    """What the caller says about the instance beyond the tasks (``verify``'s keyword-only arguments)."""

    tiles: int | None = None
    instance: str | None = None
    not_modelled: tuple[str, ...] = ()
    rules: tuple[Callable[[TaskSet], CheckOutcome], ...] = ()
    engine: Engine = engine_for("auto")  # verify's default checker


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
      ts-explore's tile-loop search covers every number of work tiles at
      once (:mod:`ts_explore.check.tile_search`), or says why it cannot (the
      verdict is then INCONCLUSIVE); ``verdict.scope.tiles_covered`` says which.
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
    ask = Ask(tiles, instance, tuple(not_modelled), tuple(rules), engine)
    with remembered_domains(tasks):  # each get_domain probe answered once, whoever reads the tasks
        captured, live = capture_set(tasks, resource_dependency_graph, task_manager_kwargs, tiles=tiles,
                                     task_set=task_set, search=_search_on(engine, task_manager_kwargs),
                                     problems=engine.own)
        return verify_captured(captured, ask, task_manager_kwargs, live=live, start=start)


def verify_captured(captured: CapturedSet, ask: Ask, tm_kwargs: dict[str, Any], *,
                    live: TaskObjects | None = None, start: float | None = None) -> Verdict:
    """The verdict of a captured task set, from the capture alone.

    ``live``: the capture's TS tasks, for what only they answer (TS's own
    search, ``checker="ts"``; a search input at a tile count the capture could
    not know of: a tile-loop finding's count, the tile cross-check's counts);
    without them such a run cannot be read, and the verdict says so
    (INCONCLUSIVE), never SAFE.
    """
    start = time.perf_counter() if start is None else start
    instance, record, task_set = captured.instance, captured.checks, captured.task_set
    checks: list[CheckOutcome] = list(record.outcomes)
    searched: list[Searched] = []
    blocked: tuple[Any, ...] = ()
    imbalances: tuple[Any, ...] = ()
    plan = None
    unread = ""
    cut_off = None
    tile_check = None
    failure = captured.unreadable
    if failure is None and instance is not None:
        try:
            simulation = record.simulation_error
            if _search_on(ask.engine, tm_kwargs) and record.reached_search:
                searched, plan, unread, cut_off = _search(captured, checks, tm_kwargs, ask, live)
                checks.append(exhaustive_check(searched, instance.persistent))
                if cut_off is not None:  # the simulation's report was its round limit: nothing to tell
                    simulation = None
            runs = [s.run for s in searched if s.run is not None]
            if unread or len(runs) < len(searched):
                raise ValueError(f"could not read TS's search results: {unread or instance.unread}")
            if runs and cross_checks(ask.engine) and instance.persistent and ask.tiles is None:
                read = [i for i in (*captured.inputs, *captured.extra) if i.problem is not None]
                known = [{i.num_tiles: i.problem for i in read
                          if sc.same_call(i.kwargs, {**kw, "num_tiles": i.num_tiles})}
                         for kw in captured.runs]  # per needed run, its inputs captured at any tile count
                tile_check = cross_check_tiles(runs, [live.unrolled(kw, found) if live is not None
                                                      else found.get for kw, found in zip(captured.runs, known)])
            blocked, imbalances = simulation_findings(simulation, instance.simulation, task_set, runs)
        except Exception as exc:  # noqa: BLE001 - an odd task set must not crash the notebook
            failure = (type(exc).__name__, str(exc))
    if failure is not None:
        runs = []
        checks.append(analysis_check(*failure))
        unread = unread or f"{failure[0]}: {failure[1]}"
    checks_out = tuple(checks) + run_rules(ask.rules, task_set, captured.capture_error)
    at_tiles = instance is not None and instance.persistent and ask.tiles is not None
    needed = captured.tile_runs if at_tiles else captured.runs
    scope = sc.build_scope(
        instance, runs, [s.input.kwargs for s in searched], tm_kwargs, needed=needed, tiles=ask.tiles,
        tile_proof=plan, instance=ask.instance, not_modelled=ask.not_modelled, unread=unread, engine=ask.engine.name,
    ) if instance is not None else None
    if scope is not None and tile_check is not None:
        scope = replace(scope, tile_check=tile_check)
    notes = (*record.notes, *((cut_off,) if cut_off is not None else ()),
             *(unconsumed_outputs(task_set) if task_set is not None else ()))
    return Verdict(
        checks=checks_out,
        warnings=tuple(dict.fromkeys(notes)),
        simulation_blocked=blocked,
        imbalances=imbalances,
        runs=tuple(runs),
        raw_output=raw_output(record.output, checks_out, list(record.warnings), captured.capture_error),
        task_set=task_set,
        elapsed_s=time.perf_counter() - start,
        scope=scope,
    )


def _search_on(engine: Engine, tm_kwargs: dict[str, Any]) -> bool:
    """Our engine always searches; TS's only when the caller did not switch its search off."""
    return engine.own or tm_kwargs.get(SEARCH_SWITCH, True) is not False


def _search(captured: CapturedSet, checks: list[CheckOutcome], tm_kwargs: dict[str, Any], ask: Ask,
            live: TaskObjects | None) -> tuple[list[Searched], TileProof | None, str, Any]:
    """Every search run the instance needs, then run; the tile-loop proof (persistent schedules,
    :mod:`.tile_proof`); what could not be read; the note when TS's credit simulation was cut off by its round
    limit (:mod:`.simulation_limit`, which marks the simulation check passed in ``checks``).

    The runs of a persistent schedule beyond TS's tile count are searched only when the needed ones found
    nothing: the caller's counts (``tiles``, captured), or the counts tile-loop findings need (read from the
    kept tasks: no one could name them before the tile-loop search ran).
    """
    instance, own = captured.instance, ask.engine.own
    assert instance is not None
    plan = None
    if instance.persistent and ask.tiles is None:  # every tile count: the tile-loop search (.tile_proof)
        opts = dict(ask.engine.options)
        plan = prove_tiles(instance, captured.tile_loops,
                           options={k: opts.get(k) for k in ("max_states", "cancel", "progress")})
    reference = None
    if not own:
        if live is None or live.reference is None:
            raise ValueError("TS's own search (checker='ts') runs on the TS tasks, which were not kept")
        reference = live.reference
    searched = [ask.engine.search(i, instance, reference) for i in captured.inputs if i.problem is not None or not own]
    cut_off = overrule_cut_off(checks, captured.checks.simulation_error, searched) if own else None
    clean = all(c.passed for c in checks) and not any(s.unsafe or (own and s.capped) for s in searched)
    unread = captured.unread
    extra: tuple[SearchInput, ...] = captured.extra
    if clean and plan is not None and plan.failing:  # a failure already decides the verdict: no more tiles
        runs = [{**kw, "num_tiles": k} for k in plan.failing for kw in captured.runs if kw["num_tiles"] != k]
        if runs and live is None:
            unread = unread or (f"the search input of {len(runs)} run(s) was not captured (tile counts "
                                f"{', '.join(str(r['num_tiles']) for r in runs)}) and the TS tasks were not kept "
                                "to read it")
        elif runs:
            extra, more_unread = live.read(instance, runs, problems=own)
            unread = unread or more_unread
    if clean:
        searched += [ask.engine.search(i, instance, reference) for i in extra if i.problem is not None or not own]
    return searched, plan, unread, cut_off


__all__ = ["Ask", "verify", "verify_captured"]
