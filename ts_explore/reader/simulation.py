"""TS's credit simulation ("Schedule is blocked!", unbalanced credits) as data.

TS raises these as plain ``ValueError`` text without task names; the text is
parsed in :mod:`ts_text` and each blocked line is matched back to a task:
TS prints one line per blocked task in task order, so line k belongs to the
first later task whose schedule has that resource (cut to 10 characters),
stage and call index. Where the exhaustive checker found a deadlock with the
same task, resource and stage, its blocked step supplies the exact position.
What the matching needs from the tasks is read with the rest of the instance,
before anything runs (:func:`read_simulation_input`), so the findings are
told from our model alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Section, Stage, TaskInfo, TaskSet
from ..model.verdict import COMMIT_CREDIT, EMPTY_CREDIT, BlockedStep, ExhaustiveRun, Imbalance
from .schedule import NameOf
from .ts_text import PRINTED_NAME_WIDTH, BlockedLine, parse_blocked, parse_imbalance

SIMULATION = "_print_task_schedules"


@dataclass(frozen=True)
class PrintedEntry:
    """One schedule entry of a task as TS's simulation prints it, with the name ts-explore shows."""

    section: Section
    printed: str  # the resource's TS name cut as TS prints it
    stage: str  # ScheduleStage name
    call_index: int
    resource: str  # the resource's name in ts-explore


@dataclass(frozen=True)
class SimulationInput:
    """What matching the simulation's text needs, read from the tasks before anything runs."""

    tasks: tuple[tuple[str, tuple[PrintedEntry, ...]], ...] = ()  # (task name, its entries in program order)
    shown: dict[str, str] = field(default_factory=dict)  # TS name of a task's src/dst -> shown name (first wins)


def read_simulation_input(tasks: list[Any], task_names: tuple[str, ...], names: NameOf) -> SimulationInput:
    """Each task's head/loop/tail entries and its src/dst names, as ts-explore shows them (tasks named in order)."""
    read = []
    for task, shown_task in zip(tasks, task_names):
        lists = ((Section.HEAD, [(r, s, c) for r, s, c, _l in task.head_schedule_list]),
                 (Section.LOOP, [(r, s, c) for r, s, c, _g, _l in task.loop_schedule_list]),
                 (Section.TAIL, [(r, s, c) for r, s, c, _l in task.tail_schedule_list]))
        entries = tuple(PrintedEntry(section, getattr(res, "name", "")[:PRINTED_NAME_WIDTH], stage.name, cid,
                                     names.get(id(res)) or names(res))
                        for section, found in lists for res, stage, cid in found)
        read.append((shown_task, entries))
    shown: dict[str, str] = {}
    for task in tasks:
        for res in [*task.src_resources, *task.dst_resources]:
            shown.setdefault(getattr(res, "name", None), names.get(id(res)) or names(res))
    return SimulationInput(tuple(read), shown)


def _candidates(entries: tuple[PrintedEntry, ...], line: BlockedLine) -> list[PrintedEntry]:
    """Entries of a task that print as this line (a cut name can fit several resources)."""
    return [e for e in entries
            if e.printed == line.resource_prefix and e.stage == line.stage and e.call_index == line.call_index]


def blocked_steps(
    lines: list[BlockedLine],
    sim: SimulationInput,
    infos: tuple[TaskInfo, ...],
    runs: tuple[ExhaustiveRun, ...] | list[ExhaustiveRun],
) -> tuple[BlockedStep, ...]:
    """Match parsed blocked lines to tasks and tree steps (``infos``: the captured tasks, in task order)."""
    exact = {(b.task, b.resource, b.stage): b for r in runs for d in r.deadlocks for b in d.blocked}
    out: list[BlockedStep] = []
    next_task = 0
    for line in lines:
        for j in range(next_task, len(sim.tasks)):
            name, entries = sim.tasks[j]
            found = _candidates(entries, line)
            if not found:
                continue
            stage = Stage(line.stage)
            # prefer the entry the exhaustive checker saw blocked, else the first in program order
            hit = next((c for c in found if (name, c.resource, stage) in exact), found[0])
            section, resource = hit.section, hit.resource
            known = exact.get((name, resource, stage))
            uid = known.step_uid if known else None
            info = infos[j] if j < len(infos) else None
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
    message: str | None,
    sim: SimulationInput,
    task_set: TaskSet | None,
    runs: list[ExhaustiveRun],
) -> tuple[tuple[BlockedStep, ...], tuple[Imbalance, ...]]:
    """Blocked steps and imbalances from the simulation check's failure ``message`` (None: it passed)."""
    if message is None:
        return (), ()
    lines = parse_blocked(message)
    if lines is not None:
        return blocked_steps(lines, sim, task_set.tasks if task_set is not None else (), runs), ()
    imb = parse_imbalance(message)
    if imb is not None:
        shown = sim.shown.get(imb.resource, imb.resource)
        return (), (Imbalance(imb.kind, imb.count, shown, message.strip()),)
    return (), ()


__all__ = ["SIMULATION", "PrintedEntry", "SimulationInput", "blocked_steps", "read_simulation_input",
           "simulation_findings"]
