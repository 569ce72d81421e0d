"""TS's credit simulation ("Schedule is blocked!", unbalanced credits) as data.

TS raises these as plain ``ValueError`` text without task names; the text is
parsed in :mod:`ts_text` and each blocked line is matched back to a task:
TS prints one line per blocked task in task order, so line k belongs to the
first later task whose schedule has that resource (cut to 10 characters),
stage and call index. Where the exhaustive checker found a deadlock with the
same task, resource and stage, its blocked step supplies the exact position.
"""

from __future__ import annotations

from typing import Any, Callable

from ..model import Section, Stage, TaskInfo
from ..model.verdict import COMMIT_CREDIT, EMPTY_CREDIT, BlockedStep, ExhaustiveRun, Imbalance
from .lanes import task_name
from .ts_text import BlockedLine, parse_blocked, parse_imbalance

SIMULATION = "_print_task_schedules"


def _sections(task: Any) -> list[tuple[Section, list[tuple[Any, Any, int]]]]:
    return [
        (Section.HEAD, [(r, s, c) for r, s, c, _l in task.head_schedule_list]),
        (Section.LOOP, [(r, s, c) for r, s, c, _g, _l in task.loop_schedule_list]),
        (Section.TAIL, [(r, s, c) for r, s, c, _l in task.tail_schedule_list]),
    ]


def _candidates(task: Any, line: BlockedLine) -> list[tuple[Section, Any]]:
    """Entries of a task that print as this line (a cut name can fit several resources)."""
    return [
        (section, res)
        for section, entries in _sections(task)
        for res, stage, cid in entries
        if line.matches(getattr(res, "name", "")) and stage.name == line.stage and cid == line.call_index
    ]


def blocked_steps(
    lines: list[BlockedLine],
    tasks: list[Any],
    infos: dict[int, TaskInfo],
    name_of: Callable[[Any], str],
    runs: tuple[ExhaustiveRun, ...] | list[ExhaustiveRun],
) -> tuple[BlockedStep, ...]:
    """Match parsed blocked lines to tasks and tree steps."""
    exact = {(b.task, b.resource, b.stage): b for r in runs for d in r.deadlocks for b in d.blocked}
    out: list[BlockedStep] = []
    next_task = 0
    for line in lines:
        for j in range(next_task, len(tasks)):
            found = _candidates(tasks[j], line)
            if not found:
                continue
            name, stage = task_name(tasks[j]), Stage(line.stage)
            # prefer the entry the exhaustive checker saw blocked, else the first in program order
            section, res = next((c for c in found if (name, name_of(c[1]), stage) in exact), found[0])
            resource = name_of(res)
            known = exact.get((name, resource, stage))
            uid = known.step_uid if known else None
            info = infos.get(id(tasks[j]))
            if uid is None and info is not None:
                uid = next(
                    (s.uid for s in info.schedule.steps()
                     if (s.section, s.resource, s.stage, s.call_index) == (section, resource, stage, line.call_index)),
                    None,
                )
            out.append(
                BlockedStep(
                    task=name, resource=resource, stage=stage, reason=line.reason,
                    credit=COMMIT_CREDIT if line.credit == "commit" else EMPTY_CREDIT,
                    call_index=line.call_index, step_uid=uid, section=section,
                    iteration=known.iteration if known else None,
                    freed_by=known.freed_by if known else None,
                )
            )
            next_task = j + 1
            break
    return tuple(out)


def simulation_findings(
    outcomes: list[tuple[str, BaseException | None]],
    tasks: list[Any],
    infos: dict[int, TaskInfo],
    name_of: Callable[[Any], str],
    runs: list[ExhaustiveRun],
) -> tuple[tuple[BlockedStep, ...], tuple[Imbalance, ...]]:
    """Blocked steps and imbalances from the simulation check's exception, if it failed."""
    exc = next((e for name, e in outcomes if name == SIMULATION and e is not None), None)
    if exc is None:
        return (), ()
    message = str(exc)
    lines = parse_blocked(message)
    if lines is not None:
        return blocked_steps(lines, tasks, infos, name_of, runs), ()
    imb = parse_imbalance(message)
    if imb is not None:
        shown = next((name_of(r) for t in tasks for r in [*t.src_resources, *t.dst_resources]
                      if getattr(r, "name", None) == imb.resource), imb.resource)
        return (), (Imbalance(imb.kind, imb.count, shown, message.strip()),)
    return (), ()


__all__ = ["SIMULATION", "blocked_steps", "simulation_findings"]
