"""What a verification found, item by item: checks, notes, blocked steps, deadlocks, races, runs.

TS-free frozen data; :class:`~ts_explore.model.verdict.Verdict` gathers them
and decides what they mean.
"""

from __future__ import annotations

from dataclasses import dataclass

from .interleaving import CheckerStep, CreditModel, Interleaving, Lane
from .problem import Problem
from .schedule import Section, Stage

# Credit kinds a blocked step waits for (TS's words, kept for the reader).
COMMIT_CREDIT = "commit"  # a ProducerCommit not yet consumed by a wait ("full" slot)
EMPTY_CREDIT = "empty"  # a free slot: initial stages plus ConsumerReleases


@dataclass(frozen=True)
class CheckOutcome:
    """One TS verification check: its TS name, a title in words, and whether it passed."""

    name: str  # TS method name, e.g. ``_verify_dma_ordering``
    title: str  # e.g. "DMA buffer release order"
    passed: bool
    message: str = ""  # TS's own message when it failed
    error_type: str = ""  # ValueError, AssertionError, ...
    hint: str = ""  # how to fix it
    problem: Problem | None = None  # set when TaskManager failed in an unexpected way


@dataclass(frozen=True)
class Note:
    """A warning that does not fail verification (TS printouts, Python warnings, our own notes)."""

    kind: str  # head-loop-overlap | pipeline-thread-check | cta-layout-check | unconsumed-output | ts-warning | ...
    message: str
    task: str | None = None
    resource: str | None = None


@dataclass(frozen=True)
class DomainNote:
    """A task whose domain bounds are not Python ints: TS checked a stand-in iteration count."""

    task: str
    bounds: str  # e.g. ``domain_loop(0, <runtime Int32>, 1)``
    checked_iterations: int


@dataclass(frozen=True)
class BlockedStep:
    """A task stuck at a blocking step, and why."""

    task: str
    resource: str
    stage: Stage
    reason: str  # TS's reason in its words
    credit: str = ""  # COMMIT_CREDIT or EMPTY_CREDIT
    call_index: int | None = None
    step_uid: int | None = None  # uid in the task's ScheduleTree
    position: int | None = None  # cursor in the task's checker lane
    section: Section | None = None
    iteration: int | None = None
    freed_by: tuple[str, ...] | None = None  # tasks whose later step would free it; None: not analysed

    @property
    def sentence(self) -> str:
        """``Ping waits for a commit on right``."""
        if self.credit == COMMIT_CREDIT:
            text = f"{self.task} waits for a commit on {self.resource}"
        elif self.credit == EMPTY_CREDIT:
            text = f"{self.task} waits for a free slot of {self.resource}"
        else:
            text = f"{self.task} is blocked on {self.resource}.{self.stage.method}"
        if self.freed_by is not None:
            verb = "commits" if self.credit == COMMIT_CREDIT else "releases"
            if self.freed_by:
                text += f"; only {' / '.join(self.freed_by)} {verb} {self.resource}"
            else:
                text += f", but no task {verb} {self.resource} again"
        return text


@dataclass(frozen=True)
class Deadlock:
    """A state of the exhaustive search where unfinished tasks all wait for credits."""

    variant: str  # "normal" or "skipped-tile" (plus the opaque assignment when there are several)
    cursors: tuple[int, ...]
    blocked: tuple[BlockedStep, ...]
    interleaving: Interleaving | None = None
    cycle: tuple[str, ...] = ()  # tasks waiting on each other in a circle (first repeated at the end)
    explanation: str = ""  # who waits for whom, and who could free them, in words

    kind = "deadlock"

    def describe(self) -> str:
        """One line in words."""
        text = "deadlock: " + (self.explanation or "; ".join(b.sentence for b in self.blocked))
        if self.cycle:
            text += f" (wait-for cycle {' -> '.join(self.cycle)})"
        return text


@dataclass(frozen=True)
class Race:
    """Two tasks touching aliased memory at once, one of them writing."""

    variant: str
    cursors: tuple[int, ...]
    writer_task: str
    writer_resource: str
    victim_task: str
    victim_resource: str
    victim_access: str  # 'prod' (writes), 'cons' (reads), 'cons_held' (owns the slot)
    overlap: str  # e.g. ``smem[0:1024]``
    interleaving: Interleaving | None = None

    kind = "race"

    def describe(self) -> str:
        """One line in words."""
        access = {"prod": "writes", "cons": "reads", "cons_held": "holds"}.get(self.victim_access, self.victim_access)
        return (
            f"SMEM aliasing race: {self.writer_task} writes {self.writer_resource} while "
            f"{self.victim_task} {access} {self.victim_resource} (both use {self.overlap}); "
            "no pipeline orders them"
        )


@dataclass(frozen=True)
class PdlViolation:
    """A PDL launch_griddep that can run before any wait_griddep."""

    variant: str
    cursors: tuple[int, ...]
    launch_task: str
    launch_resource: str
    interleaving: Interleaving | None = None

    kind = "pdl-order"

    def describe(self) -> str:
        """One line in words."""
        return (
            f"PDL launch before wait: {self.launch_task} can call {self.launch_resource}.launch_griddep "
            "before any task has called wait_griddep"
        )


Finding = Deadlock | Race | PdlViolation


@dataclass(frozen=True)
class ExhaustiveRun:
    """One run of TS's exhaustive interleaving checker (one variant, one opaque assignment)."""

    variant: str  # "normal" | "skipped-tile"
    opaque: tuple[tuple[str, bool], ...]
    num_tiles: int
    states_explored: int
    complete_count: int
    hit_state_limit: bool
    deadlocks: tuple[Deadlock, ...]
    races: tuple[Race, ...]
    pdl_violations: tuple[PdlViolation, ...]
    lanes: tuple[Lane, ...]
    credit_model: CreditModel
    run_by: str = "TaskManager"  # or "ts-explore" when TaskManager stopped before this variant
    persistent: bool = False  # a WorkQueue is present: the lanes repeat ``num_tiles`` work tiles
    seconds: float = 0.0  # search time of this run
    engine: str = "TS exhaustive_checker"  # the search that produced it (``model.scope.TS_ENGINE`` or ours)
    cancelled: bool = False  # our checker was stopped by the caller (``hit_state_limit`` is then True too)
    cross_checked: bool = False  # the independent second search ran on this instance too
    disagreement: str = ""  # both answers when the two searches disagreed (``hit_state_limit`` is then True too)

    @property
    def safe(self) -> bool:
        """No deadlock, race or PDL order violation in this run."""
        return not (self.deadlocks or self.races or self.pdl_violations)

    @property
    def label(self) -> str:
        """``normal`` / ``skipped-tile``, the tiles of a persistent run, the opaque assignment when there is one."""
        details = [f"{self.num_tiles} tile{'' if self.num_tiles == 1 else 's'}"] if self.persistent else []
        details += [f"{k}={v}" for k, v in self.opaque]
        return self.variant + (f" ({', '.join(details)})" if details else "")


@dataclass(frozen=True)
class Imbalance:
    """End-of-run imbalance in TS's credit simulation (e.g. a commit nobody waited for)."""

    kind: str  # unconsumed-commit | acquire-without-release | release-without-acquire
    count: int
    resource: str
    message: str


def offending_steps(finding: Finding, run: ExhaustiveRun) -> tuple[CheckerStep, ...]:
    """The lane steps a finding is about: blocked steps, the racing accesses, the early launch.

    A racing access may be the task's next step or one it already made
    (pipelined writes stay live until the consumer waits), so the search
    walks back from the cursor to the nearest step on the named resource.
    """
    if isinstance(finding, Race):
        wanted = [(finding.writer_task, finding.writer_resource), (finding.victim_task, finding.victim_resource)]
    elif isinstance(finding, PdlViolation):
        wanted = [(finding.launch_task, finding.launch_resource)]
    else:
        wanted = [(b.task, b.resource) for b in finding.blocked]
    found: list[CheckerStep] = []
    for task, resource in wanted:
        for i, lane in enumerate(run.lanes):
            if lane.task != task or i >= len(finding.cursors):
                continue
            cursor = min(finding.cursors[i], len(lane.steps) - 1)
            for k in range(cursor, -1, -1):
                if lane.steps[k].resource == resource:
                    found.append(lane.steps[k])
                    break
    return tuple(found)


__all__ = [
    "COMMIT_CREDIT",
    "EMPTY_CREDIT",
    "BlockedStep",
    "CheckOutcome",
    "Deadlock",
    "DomainNote",
    "ExhaustiveRun",
    "Finding",
    "Imbalance",
    "Note",
    "PdlViolation",
    "Race",
    "offending_steps",
]
