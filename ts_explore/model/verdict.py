"""What verification found, as frozen TS-free data: checks, warnings, deadlocks, races, paths.

:func:`ts_explore.verify` fills a :class:`Verdict`; drawings, the stepper and
the explorer read it. Nothing here holds a cutlass object, so a Verdict can be
kept, compared, turned into JSON (:meth:`Verdict.to_dict`) and shown in a
notebook (:meth:`Verdict._repr_html_`).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any

from .problem import Problem
from .scope import Abstraction, RunScope, Scope, TaskTrips
from .interleaving import CheckerStep, CreditCell, CreditModel, CreditPool, Interleaving, Lane
from .schedule import Section, Stage
from .tasks import TaskSet

# Credit kinds a blocked step waits for (TS's words, kept for the reader).
ANALYSIS_CHECK = "ts-explore analysis"  # our own reading of TS's results failed: not a TS rejection
COMMIT_CREDIT = "commit"  # a ProducerCommit not yet consumed by a wait ("full" slot)
EMPTY_CREDIT = "empty"  # a free slot: initial stages plus ConsumerReleases


class Status(str, enum.Enum):
    """The overall answer: safe, unsafe, or not proven either way."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    INCONCLUSIVE = "inconclusive"  # nothing found, but not a proof: see ``Verdict.reasons``


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


@dataclass(frozen=True)
class Verdict:
    """Everything :func:`ts_explore.verify` learned about a task set, and what it proves.

    ``status`` is one of three answers, decided here and nowhere else:

    - **UNSAFE**: TS rejects the task set: a TS check failed (``failed_checks``:
      credit simulation, structure, capacities...) or the exhaustive search
      found a deadlock, an aliasing race or a PDL order violation
      (``findings``). When a task's loop bound was a runtime value the failure
      was found at a stand-in length (``possible_false_positive``); TS's
      ``TaskManager`` rejects it all the same.
    - **SAFE**: every check passed and every exhaustive run this instance
      needs finished below the state cap: the normal run, the skipped-tile run
      when a task has ``skip_if``, each of them once per assignment of the
      ``when_true``/``when_false`` keys, over the real trip count of every
      task. For persistent schedules (a WorkQueue) TS walks two work tiles;
      SAFE then also needs the argument in :mod:`ts_explore.analysis.tiles`
      (tile lead bound, with the extra tile counts searched) to hold, or the
      real tiles per CTA given to ``verify(tiles=...)``.
    - **INCONCLUSIVE**: nothing was found, but that is not a proof. ``reasons``
      says why: the search was switched off, a run hit the state cap or did
      not run, a bound was a runtime value (TS used a stand-in length), the
      instance does no work (0 iterations), or an abstraction of the search
      does not provably cover the instance.

    ``ok`` is True only for SAFE. ``scope`` says in data what was searched
    (instance, trip counts, runs with states and seconds, tiles,
    abstractions, assumptions, effects outside TS's model);
    ``scope.sentence()`` says it in words.
    """

    checks: tuple[CheckOutcome, ...]
    warnings: tuple[Note, ...] = ()
    simulation_blocked: tuple[BlockedStep, ...] = ()
    imbalances: tuple[Imbalance, ...] = ()
    runs: tuple[ExhaustiveRun, ...] = ()
    raw_output: str = ""
    task_set: TaskSet | None = None
    elapsed_s: float = 0.0
    scope: Scope | None = None  # None: derived from ``runs`` alone

    def __post_init__(self) -> None:
        if self.scope is None:
            object.__setattr__(self, "scope", Scope(runs=tuple(run_scope(r) for r in self.runs)))

    # -- the answer -------------------------------------------------------------------
    @property
    def failed_checks(self) -> tuple[CheckOutcome, ...]:
        """The checks that did not pass."""
        return tuple(c for c in self.checks if not c.passed)

    @property
    def rejected(self) -> bool:
        """True when TS rejects the task set: a failed TS check or a finding of the search."""
        return any(c.name != ANALYSIS_CHECK for c in self.failed_checks) or bool(self.findings)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why a verdict without failures is not SAFE (empty when it is SAFE or UNSAFE)."""
        if self.rejected:
            return ()
        assert self.scope is not None
        return self.scope.reasons()

    @property
    def status(self) -> Status:
        """SAFE, UNSAFE or INCONCLUSIVE (see the class docstring)."""
        if self.rejected:
            return Status.UNSAFE
        return Status.INCONCLUSIVE if self.reasons else Status.SAFE

    @property
    def ok(self) -> bool:
        """True only for a proven-safe task set."""
        return self.status is Status.SAFE

    @property
    def domain_notes(self) -> tuple[DomainNote, ...]:
        """Tasks whose loop bound was a runtime value, with the stand-in length TS searched."""
        assert self.scope is not None
        return tuple(DomainNote(t.task, t.bounds, t.iterations) for t in self.scope.tasks if not t.exact)

    @property
    def possible_false_positive(self) -> bool:
        """Failures found with a stand-in domain may not happen with the real one."""
        return bool(self.domain_notes) and self.rejected

    def scoped(self, *, instance: str | None = None, not_modelled: tuple[str, ...] | list[str] = ()) -> Verdict:
        """This verdict with the instance named (``"CTA 100"``) and more unmodelled effects listed."""
        assert self.scope is not None
        return dataclasses.replace(self, scope=self.scope.extended(instance=instance, not_modelled=not_modelled))

    @property
    def deadlocks(self) -> tuple[Deadlock, ...]:
        """Deadlocks of every exhaustive run."""
        return tuple(d for r in self.runs for d in r.deadlocks)

    @property
    def races(self) -> tuple[Race, ...]:
        """Aliasing races of every exhaustive run."""
        return tuple(x for r in self.runs for x in r.races)

    @property
    def pdl_violations(self) -> tuple[PdlViolation, ...]:
        """PDL launch-before-wait violations of every exhaustive run."""
        return tuple(x for r in self.runs for x in r.pdl_violations)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Deadlocks, races and PDL order violations, in that order."""
        return (*self.deadlocks, *self.races, *self.pdl_violations)

    def run_of(self, finding: Finding) -> ExhaustiveRun:
        """The exhaustive run a finding came from."""
        for run in self.runs:
            if any(f is finding for f in (*run.deadlocks, *run.races, *run.pdl_violations)):
                return run
        raise ValueError("this finding does not belong to this verdict")

    # -- for drawings -----------------------------------------------------------------
    def highlight_keys(self) -> list[tuple[str | None, int]]:
        """``(task name, step uid)`` of every blocked or offending step, for ``schedule_graph``."""
        keys: list[tuple[str | None, int]] = []
        for b in (*self.simulation_blocked, *(b for d in self.deadlocks for b in d.blocked)):
            if b.step_uid is not None:
                keys.append((b.task, b.step_uid))
        for finding in (*self.races, *self.pdl_violations):
            for step in offending_steps(finding, self.run_of(finding)):
                if step.step_uid is not None:
                    keys.append((step.task, step.step_uid))
        return list(dict.fromkeys(keys))

    # -- words ------------------------------------------------------------------------
    def summary(self) -> str:
        """One line per failing check (human words); a single line when safe."""
        from ._verdict_text import summary_lines

        return "\n".join(summary_lines(self))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (``ts-explore verify --json``)."""
        out = _jsonable(self)
        out["status"] = self.status.value
        out["ok"] = self.ok
        out["reasons"] = list(self.reasons)
        out["possible_false_positive"] = self.possible_false_positive
        out["domain_notes"] = _jsonable(self.domain_notes)
        assert self.scope is not None
        out["scope"]["states"] = self.scope.states
        out["scope"]["seconds"] = self.scope.seconds
        out["scope"]["sentence"] = self.scope.sentence()
        out["summary"] = self.summary()
        return out

    def _repr_html_(self) -> str:
        from ..render.verdict_html import verdict_html

        return verdict_html(self)

    def __repr__(self) -> str:
        return (
            f"Verdict({self.status.value}: {len(self.failed_checks)} failed check(s), "
            f"{len(self.deadlocks)} deadlock(s), {len(self.races)} race(s), "
            f"{len(self.pdl_violations)} PDL order violation(s))"
        )


def run_scope(run: ExhaustiveRun) -> RunScope:
    """The scope entry of one exhaustive run."""
    return RunScope(
        label=run.label, variant=run.variant, opaque=run.opaque, tiles=run.num_tiles,
        states=run.states_explored, capped=run.hit_state_limit, seconds=run.seconds, run_by=run.run_by,
    )


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


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


__all__ = [
    "ANALYSIS_CHECK",
    "Abstraction",
    "COMMIT_CREDIT",
    "EMPTY_CREDIT",
    "BlockedStep",
    "CheckOutcome",
    "CheckerStep",
    "CreditCell",
    "CreditModel",
    "CreditPool",
    "Deadlock",
    "DomainNote",
    "ExhaustiveRun",
    "Finding",
    "Imbalance",
    "Interleaving",
    "Lane",
    "Note",
    "PdlViolation",
    "Race",
    "RunScope",
    "Scope",
    "Status",
    "TaskTrips",
    "Verdict",
    "offending_steps",
    "run_scope",
]
