"""Read TS's exhaustive interleaving checker: its lanes, credit pools, findings and paths.

The checker walks each task's HEAD + loop x N + TAIL list (repeated for 2
tiles when a WorkQueue is present), with non-pipelined work split in two
entries. :func:`lanes_for` rebuilds exactly those lists through TS's own
helpers and tags every entry with its tree step, iteration and tile.
:func:`capture_paths` re-runs a failing variant with TS's verbose reporter
swapped for a recorder, to get the shortest interleaving TS only prints.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import guard_fires
from cutlass.experimental.task_scheduling.resources import PipelineGroup, WorkQueue

from ..analysis.cycles import wait_for
from ..analysis.narrate import blocked_sentence
from ..analysis.paths import replay
from ..model.scope import TS_ENGINE
from ..model import Family, Section, Stage, TaskInfo
from ..model.schedule import range_length
from ..model.verdict import (
    COMMIT_CREDIT,
    EMPTY_CREDIT,
    BlockedStep,
    CheckerStep,
    CreditModel,
    CreditPool,
    Deadlock,
    ExhaustiveRun,
    Lane,
    PdlViolation,
    Race,
)
from .schedule import family_of
from .search_input import participants
from .ts_text import parse_path_op

NameOf = Callable[[Any], str]
LOCK = threading.RLock()  # guards the module attributes swapped while verifying

_SECTION_OF_TAG = {"H": Section.HEAD, "SH": Section.HEAD, "T": Section.TAIL, "ST": Section.TAIL}


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


def task_name(task: Any) -> str:
    """The name ts-explore shows for a task (TaskInfo's rule)."""
    return task.name or f"task@{task.warp_start}"


_TS_PROBE = ts_tm._try_probe_domain
_probe_cache: dict[int, tuple[Any, int | None]] | None = None  # set while a verification runs


def probe_domain(task: Any) -> int | None:
    """TS's host-side ``get_domain`` probe (an int loop end, or None); cached while verifying."""
    if _probe_cache is None:
        return _TS_PROBE(task)
    hit = _probe_cache.get(id(task))
    if hit is None or hit[0] is not task:
        hit = _probe_cache[id(task)] = (task, _TS_PROBE(task))
    return hit[1]


@contextlib.contextmanager
def cached_domain_probes() -> Iterator[None]:
    """One probe per task per verification: TS probes in every expansion and each probe traces DSL code."""
    global _probe_cache
    with LOCK:
        outer = _probe_cache
        _probe_cache = {} if outer is None else outer
        ts_tm._try_probe_domain = probe_domain
        try:
            yield
        finally:
            ts_tm._try_probe_domain = _TS_PROBE if outer is None else probe_domain
            _probe_cache = outer


def loop_iterations(task: Any) -> int:
    """How many loop iterations the checker unrolls (TS's ``expand_loop`` rule, fallback 1)."""
    start, end, step = task.domain_start, task.domain, task.step
    static = isinstance(start, int) and isinstance(step, int)
    if task.domain_getter is None and isinstance(end, int) and static:
        return range_length(start, end, step)
    if task.domain_getter is not None and static:
        probed = probe_domain(task)
        if probed is not None:
            return range_length(start, probed, step)
    step_i = step if isinstance(step, int) else 1
    stop = 1 if step_i > 0 else -1
    return range_length(start if isinstance(start, int) else 0, stop, step_i)


def static_domain(task: Any) -> bool:
    """True when the checker unrolls the real iteration count (all bounds Python ints)."""
    if not (isinstance(task.domain_start, int) and isinstance(task.step, int)):
        return False
    if task.domain_getter is not None:
        return probe_domain(task) is not None
    return isinstance(task.domain, int)


def _iterations(task: Any, entries: list[Any], skipped: bool, assignment: dict | None) -> list[int | None]:
    """Loop iteration of each entry, recomputed with TS's guard rule and checked against TS's list."""
    if skipped and getattr(task, "skip_if", None) is not None:
        return [None] * len(entries)
    n = loop_iterations(task)
    mine: list[tuple[Any, int | None]] = [(e, None) for e in task.head_schedule_list]
    for i in range(n):
        for res, stage, cid, guard, lbl in task.loop_schedule_list:
            if guard_fires(guard, i, n, opaque_assignment=assignment):
                mine.append(((res, stage, cid, lbl), i))
    mine += [(e, None) for e in task.tail_schedule_list]
    same = len(mine) == len(entries) and all(
        a[0] is b[0] and a[1] == b[1] and a[2] == b[2] for (a, _), b in zip(mine, entries)
    )
    return [it for _, it in mine] if same else [None] * len(entries)


_PARTS = {2: ("write phase", "read phase"), -2: ("1/2", "2/2"), 1: ("",)}


def _split(entry: tuple) -> int:
    """How TS's ``_explode_sync_work`` splits an entry: 2 read/write phases, -2 doubled, 1 kept."""
    if len(ec._consumer_work_phase_entries(entry)) > 1:
        return 2
    return -2 if ec._should_double_nonpipeline_producer_work(entry[0], entry[1]) else 1


@dataclass(frozen=True)
class _ResourceStage:
    """What a lane step needs from one (resource, stage) pair; TS resources are slow to query."""

    name: str
    stage: Stage
    split: int
    tracked: bool
    family: Family


def lanes_for(
    tasks: list[Any],
    infos: dict[int, TaskInfo],
    name_of: NameOf,
    *,
    skipped_tile: bool = False,
    opaque_assignment: dict | None = None,
    num_tiles: int = 1,
) -> tuple[Lane, ...]:
    """Each task's checker schedule as :class:`Lane` s (same order and length as TS's)."""
    facts: dict[tuple[int, Any], _ResourceStage] = {}

    def fact(entry: tuple) -> _ResourceStage:
        key = (id(entry[0]), entry[1])
        found = facts.get(key)
        if found is None:
            res, stage = entry[0], Stage(entry[1].value)
            found = facts[key] = _ResourceStage(
                name_of(res), stage, _split(entry), not isinstance(res, WorkQueue), family_of(res, stage)
            )
        return found

    per_task: list[list[tuple[tuple, int | None, str]]] = []
    for task in tasks:
        entries = ec._expand_task_for_check(task, skipped_tile, opaque_assignment)
        iters = _iterations(task, entries, skipped_tile, opaque_assignment)
        per_task.append(
            [(e, it, part) for e, it in zip(entries, iters) for part in _PARTS[fact(e).split]] * num_tiles
        )
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    if domain_rids:  # per-physical-stage credit pools: ask TS which slot each entry uses
        keys = ts_tm._precompute_stage_credit_keys(tasks, [[e for e, _, _ in lane] for lane in per_task], domain_rids)
    else:
        keys = [[(0, 0)] * len(lane) for lane in per_task]
    lanes = []
    for task, lane, lane_keys in zip(tasks, per_task, keys):
        info = infos.get(id(task))
        labels = _labels(task)
        uids = {}
        if info is not None:
            uids = {(s.section, s.resource, s.stage, s.call_index): s.uid for s in info.schedule.steps()}
        name = task_name(task)
        per_tile = len(lane) // max(num_tiles, 1)
        steps = []
        for idx, ((entry, it, part), key) in enumerate(zip(lane, lane_keys)):
            f = fact(entry)
            cid, tag = entry[2], entry[3]
            section = _SECTION_OF_TAG.get(tag, Section.LOOP)
            steps.append(
                CheckerStep(
                    name, idx, f.name, f.stage, cid, section, tag, it, idx // per_tile if per_tile else 0, part,
                    uids.get((section, f.name, f.stage, cid)), labels.get((section, id(entry[0]), entry[1], cid)),
                    key[1], f.tracked, f.family,
                )
            )
        lanes.append(Lane(name, tuple(steps)))
    return tuple(lanes)


def _labels(task: Any) -> dict[tuple[Section, int, Any, int], str | None]:
    """Work-method label of every (section, resource id, stage, call id) of a task."""
    out = {(Section.HEAD, id(r), s, c): lbl for r, s, c, lbl in task.head_schedule_list}
    out.update({(Section.LOOP, id(r), s, c): lbl for r, s, c, _g, lbl in task.loop_schedule_list})
    out.update({(Section.TAIL, id(r), s, c): lbl for r, s, c, lbl in task.tail_schedule_list})
    return out


def credit_model(tasks: list[Any], name_of: NameOf) -> CreditModel:
    """Initial pools and participant counts exactly as ``check_all_interleavings`` sets them up."""
    resources = ec._collect_resources(tasks)
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    by_id = {id(r): r for r in resources}
    pools = tuple(
        CreditPool(name_of(by_id[rid]), slot, n)
        for (rid, slot), n in ec._build_initial_cons_credits(resources, domain_rids).items()
        if rid in by_id
    )
    producers, consumers = participants(tasks)
    approximate = any(isinstance(r, PipelineGroup) or getattr(r, "pipeline_group", None) for r in resources)
    return CreditModel(
        pools=pools,
        producers=tuple((name_of(by_id[k]), n) for k, n in producers.items() if k in by_id),
        consumers=tuple((name_of(by_id[k]), n) for k, n in consumers.items() if k in by_id),
        approximate=approximate,
    )


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
    "capture_paths",
    "convert_run",
    "credit_model",
    "lanes_for",
    "loop_iterations",
    "moves_of",
    "run_with_paths",
    "static_domain",
    "task_name",
]
