"""Read TS's exhaustive interleaving checker's results: its findings and paths, as our model.

:func:`convert_run` turns one TS ``CheckResult`` into an
:class:`~ts_explore.model.verdict.ExhaustiveRun` told in the lanes of
:mod:`.lanes` (re-exported here); :func:`capture_paths` re-runs a failing
variant with TS's verbose reporter swapped for a recorder, to get the
shortest interleaving TS only prints. This is the reference engine's side
(``verify(..., checker="ts")``); our checker's findings need none of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ..analysis.cycles import wait_for
from ..analysis.narrate import blocked_sentence
from ..analysis.paths import replay
from ..model import Stage
from ..model.scope import TS_ENGINE
from ..model.verdict import (
    COMMIT_CREDIT,
    EMPTY_CREDIT,
    BlockedStep,
    CheckerStep,
    CreditModel,
    Deadlock,
    ExhaustiveRun,
    Lane,
    PdlViolation,
    Race,
)
from .lanes import LOCK, lanes_for  # re-exported: the reference engine's results are told in these lanes
from .trips import loop_iterations, probe_domain, static_domain, task_name, task_trips  # ... and these trips
from .search_input import credit_model  # re-exported with them: the pools they are told with
from .ts_text import parse_path_op


@dataclass
class RunRecord:
    """One ``check_all_interleavings`` call: its keyword arguments, result, and who ran it."""

    kwargs: dict[str, Any]
    result: Any
    run_by: str = "TaskManager"
    paths: list[tuple[str, tuple, list]] | None = None  # recorded during the run itself, when it was verbose
    seconds: float = 0.0  # how long the search took
    engine: str = TS_ENGINE  # which search produced ``result``

    @property
    def variant(self) -> str:
        """``normal`` or ``skipped-tile``."""
        return "skipped-tile" if self.kwargs.get("skipped_tile") else "normal"


class _PathRecorder(ec._VerboseReporter):
    """Stands in for TS's verbose reporter: keeps each finding's path instead of printing it."""

    sink: list[tuple[str, tuple, list]] = []

    def print_header(self, *args: Any, **kwargs: Any) -> None:
        pass

    def print_complete(self, *args: Any, **kwargs: Any) -> None:
        pass

    def print_summary(self, *args: Any, **kwargs: Any) -> None:
        pass

    def print_deadlock(self, state_no: int, cursors: tuple, held: Any, path: Any, *rest: Any, **kw: Any) -> None:
        self.sink.append(("deadlock", tuple(cursors), list(path or [])))

    def print_races(self, state_no: int, cursors: tuple, held: Any, path: Any, *rest: Any, **kw: Any) -> None:
        self.sink.append(("race", tuple(cursors), list(path or [])))

    def print_pdl_order(self, state_no: int, cursors: tuple, held: Any, path: Any, *rest: Any, **kw: Any) -> None:
        self.sink.append(("pdl-order", tuple(cursors), list(path or [])))


def run_with_paths(
    tasks: list[Any], kwargs: dict[str, Any], run: Callable[..., Any]
) -> tuple[Any, list[tuple[str, tuple, list]]]:
    """Run one checker variant verbosely; its CheckResult and ``(kind, cursors, path)`` per finding."""
    with LOCK:
        original = ec._VerboseReporter
        sink: list[tuple[str, tuple, list]] = []
        _PathRecorder.sink = sink
        ec._VerboseReporter = _PathRecorder  # type: ignore[misc]
        try:
            result = run(tasks, **{**kwargs, "verbose": True})
        finally:
            ec._VerboseReporter = original  # type: ignore[misc]
            _PathRecorder.sink = []
    return result, sink


def capture_paths(tasks: list[Any], kwargs: dict[str, Any], run: Callable[..., Any]) -> list[tuple[str, tuple, list]]:
    """Re-run one checker variant verbosely and return ``(kind, cursors, path)`` per finding."""
    return run_with_paths(tasks, kwargs, run)[1]


def moves_of(path: list[tuple[str, str]], lanes: tuple[Lane, ...], ts_names: list[str]) -> tuple[CheckerStep, ...] | None:
    """Turn TS's ``[(task, "Stage(resource)")]`` path into lane steps (k-th move of a task = its k-th step)."""
    index = {n: i for i, n in reversed(list(enumerate(ts_names)))}
    seen = [0] * len(lanes)
    moves: list[CheckerStep] = []
    for name, op in path:
        i = index.get(name)
        parsed = parse_path_op(op)
        if i is None or parsed is None or seen[i] >= len(lanes[i].steps):
            return None
        step = lanes[i].steps[seen[i]]
        if step.stage.value != parsed[0]:
            return None
        moves.append(step)
        seen[i] += 1
    return tuple(moves)


def _step_at(lanes: tuple[Lane, ...], i: int, cursor: int) -> CheckerStep | None:
    steps = lanes[i].steps
    return steps[cursor] if cursor < len(steps) else None


def convert_run(
    record: RunRecord,
    lanes: tuple[Lane, ...],
    model: CreditModel,
    ts_names: list[str],
    display: dict[str, str],
    paths: list[tuple[str, tuple, list]],
    opaque_text: tuple[tuple[str, bool], ...],
    persistent: bool = False,
) -> ExhaustiveRun:
    """One TS ``CheckResult`` as an :class:`ExhaustiveRun` with blocked steps, cycles and counterexamples."""
    res = record.result
    variant = record.variant
    shown = {ts: lane.task for ts, lane in reversed(list(zip(ts_names, lanes)))}

    def interleaving(kind: str, cursors: tuple) -> Any:
        for k, c, path in paths:
            if k == kind and c == cursors:
                moves = moves_of(path, lanes, ts_names)
                return replay(moves, lanes, model) if moves is not None else None
        return None

    deadlocks = []
    for info in res.deadlock_states:
        cursors = tuple(info.cursors)
        blocked = []
        details = list(info.blocked_details) or [None] * len(info.blocked_tasks)
        for (tname, _rname, _sname), detail in zip(info.blocked_tasks, details):
            for i, lane_name in enumerate(ts_names):
                step = _step_at(lanes, i, cursors[i])
                if lane_name != tname or step is None or step.stage.value != _sname:
                    continue
                credit = COMMIT_CREDIT if step.stage is Stage.CONSUMER_WAIT else EMPTY_CREDIT
                blocked.append(
                    BlockedStep(
                        task=step.task, resource=step.resource, stage=step.stage,
                        reason=detail.format() if detail is not None else f"{tname} blocked on {_rname}.{_sname}",
                        credit=credit, call_index=step.call_index, step_uid=step.step_uid, position=cursors[i],
                        section=step.section, iteration=step.iteration,
                    )
                )
                break
        graph = wait_for(blocked, lanes, cursors)
        blocked = [replace(e.blocked, freed_by=tuple(p.task for p in e.providers)) for e in graph.edges]
        explanation = "; ".join(blocked_sentence(e) for e in graph.edges)
        deadlocks.append(
            Deadlock(variant, cursors, tuple(blocked), interleaving("deadlock", cursors), graph.cycle, explanation)
        )
    races = tuple(
        Race(
            variant, tuple(r.cursors), shown.get(r.writer_task, r.writer_task),
            display.get(r.writer_resource, r.writer_resource), shown.get(r.victim_task, r.victim_task), display.get(r.victim_resource, r.victim_resource), r.victim_access, r.overlap_desc,
            interleaving("race", tuple(r.cursors)),
        )
        for r in res.race_states
    )
    pdl = tuple(
        PdlViolation(
            variant, tuple(p.cursors), shown.get(p.launch_task, p.launch_task), display.get(p.launch_resource, p.launch_resource),
            interleaving("pdl-order", tuple(p.cursors)),
        )
        for p in res.pdl_order_states
    )
    return ExhaustiveRun(
        variant=variant, opaque=opaque_text, num_tiles=int(record.kwargs.get("num_tiles", 1)),
        states_explored=res.states_explored, complete_count=res.complete_count,
        hit_state_limit=bool(res.hit_state_limit), deadlocks=tuple(deadlocks), races=races,
        pdl_violations=pdl, lanes=lanes, credit_model=model, run_by=record.run_by,
        persistent=persistent, seconds=record.seconds, engine=record.engine,
        cancelled=bool(getattr(res, "cancelled", False)),
        cross_checked=bool(getattr(res, "cross_checked", False)), disagreement=getattr(res, "disagreement", ""),
    )


__all__ = [
    "LOCK",
    "RunRecord",
    "probe_domain",
    "capture_paths",
    "convert_run",
    "credit_model",
    "lanes_for",
    "loop_iterations",
    "moves_of",
    "run_with_paths",
    "static_domain",
    "task_name",
    "task_trips",
]
