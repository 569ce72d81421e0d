"""Read TS's exhaustive interleaving checker: its lanes, credit pools, findings and paths.

The checker walks each task's HEAD + loop x N + TAIL list (repeated for 2
tiles when a WorkQueue is present), with non-pipelined work split in two
entries. :func:`lanes_for` rebuilds exactly those lists through TS's own
helpers and tags every entry with its tree step, iteration and tile.
:func:`capture_paths` re-runs a failing variant with TS's verbose reporter
swapped for a recorder, to get the shortest interleaving TS only prints.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import ScheduleStage, guard_fires
from cutlass.experimental.task_scheduling.resources import PipelineGroup, WorkQueue

from ..analysis.cycles import wait_for
from ..analysis.narrate import blocked_sentence
from ..analysis.paths import replay
from ..model import Section, Stage, TaskInfo
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

    @property
    def variant(self) -> str:
        return "skipped-tile" if self.kwargs.get("skipped_tile") else "normal"


def task_name(task: Any) -> str:
    """The name ts-explore shows for a task (TaskInfo's rule)."""
    return task.name or f"task@{task.warp_start}"


def loop_iterations(task: Any) -> int:
    """How many loop iterations the checker unrolls (TS's ``expand_loop`` rule, fallback 1)."""
    start, end, step = task.domain_start, task.domain, task.step
    static = isinstance(start, int) and isinstance(step, int)
    if task.domain_getter is None and isinstance(end, int) and static:
        return len(range(start, end, step))
    if task.domain_getter is not None and static:
        probed = ts_tm._try_probe_domain(task)
        if probed is not None:
            return len(range(start, probed, step))
    step_i = step if isinstance(step, int) else 1
    stop = 1 if step_i > 0 else -1
    return max(0, len(range(start if isinstance(start, int) else 0, stop, step_i)))


def static_domain(task: Any) -> bool:
    """True when the checker unrolls the real iteration count (all bounds Python ints)."""
    if not (isinstance(task.domain_start, int) and isinstance(task.step, int)):
        return False
    if task.domain_getter is not None:
        return ts_tm._try_probe_domain(task) is not None
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


def _parts(entry: tuple) -> list[tuple[tuple, str]]:
    """How TS's ``_explode_sync_work`` splits one entry: (entry, part label) pairs."""
    phases = ec._consumer_work_phase_entries(entry)
    if len(phases) > 1:
        return [(phases[0], "write phase"), (phases[1], "read phase")]
    if ec._should_double_nonpipeline_producer_work(entry[0], entry[1]):
        return [(entry, "1/2"), (entry, "2/2")]
    return [(entry, "")]


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
    raw: list[list[tuple[tuple, int | None, int, str]]] = []
    for task in tasks:
        entries = ec._expand_task_for_check(task, skipped_tile, opaque_assignment)
        iters = _iterations(task, entries, skipped_tile, opaque_assignment)
        one = [(p, it, part) for e, it in zip(entries, iters) for p, part in _parts(e)]
        raw.append([(e, it, tile, part) for tile in range(num_tiles) for e, it, part in one])
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    keys = ts_tm._precompute_stage_credit_keys(tasks, [[r[0] for r in lane] for lane in raw], domain_rids)
    lanes = []
    for task, lane, lane_keys in zip(tasks, raw, keys):
        info = infos.get(id(task))
        uids = {}
        if info is not None:
            uids = {(s.section, s.resource, s.stage, s.call_index): s.uid for s in info.schedule.steps()}
        steps = []
        for idx, ((entry, it, tile, part), key) in enumerate(zip(lane, lane_keys)):
            res, stage, cid, tag = entry[0], Stage(entry[1].value), entry[2], entry[3]
            section = _SECTION_OF_TAG.get(tag, Section.LOOP)
            name = name_of(res)
            steps.append(
                CheckerStep(
                    task=task_name(task), index=idx, resource=name, stage=stage, call_index=cid,
                    section=section, tag=tag, iteration=it, tile=tile, part=part,
                    step_uid=uids.get((section, name, stage, cid)), label=_label(task, res, entry[1], cid, section),
                    credit_slot=key[1], tracked=not isinstance(res, WorkQueue), family=family_of(res, stage),
                )
            )
        lanes.append(Lane(task_name(task), tuple(steps)))
    return tuple(lanes)


def _label(task: Any, res: Any, stage: Any, cid: int, section: Section) -> str | None:
    lists = {
        Section.HEAD: task.head_schedule_list,
        Section.LOOP: [(r, s, c, lbl) for r, s, c, _g, lbl in task.loop_schedule_list],
        Section.TAIL: task.tail_schedule_list,
    }[section]
    for r, s, c, lbl in lists:
        if r is res and s == stage and c == cid:
            return lbl
    return None


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
    producers: dict[int, int] = {}
    consumers: dict[int, int] = {}
    for task in tasks:
        for side, counts, stage in (
            (task.dst_resources, producers, ScheduleStage.ProducerCommit),
            (task.src_resources, consumers, ScheduleStage.ConsumerWait),
        ):
            for res in side:
                if isinstance(res, WorkQueue) or res.pipeline_config is None:
                    continue
                if not ts_tm._count_independent_interleave_lane(counts, id(res), task, res, stage):
                    counts[id(res)] = counts.get(id(res), 0) + 1
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


def capture_paths(tasks: list[Any], kwargs: dict[str, Any], run: Callable[..., Any]) -> list[tuple[str, tuple, list]]:
    """Re-run one checker variant verbosely and return ``(kind, cursors, path)`` per finding."""
    with LOCK:
        original = ec._VerboseReporter
        sink: list[tuple[str, tuple, list]] = []
        _PathRecorder.sink = sink
        ec._VerboseReporter = _PathRecorder  # type: ignore[misc]
        try:
            run(tasks, **{**kwargs, "verbose": True})
        finally:
            ec._VerboseReporter = original  # type: ignore[misc]
            _PathRecorder.sink = []
    return sink


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
    "static_domain",
    "task_name",
]
