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

from .findings import (
    COMMIT_CREDIT,
    EMPTY_CREDIT,
    BlockedStep,
    CheckOutcome,
    Deadlock,
    DomainNote,
    ExhaustiveRun,
    Finding,
    Imbalance,
    Note,
    PdlViolation,
    Race,
    offending_steps,
)
from .interleaving import CheckerStep, CreditCell, CreditModel, CreditPool, Interleaving, Lane
from .scope import Abstraction, RunScope, Scope, TaskTrips
from .tasks import TaskSet

ANALYSIS_CHECK = "ts-explore analysis"  # our own reading of TS's results failed: not a TS rejection


class Status(str, enum.Enum):
    """The overall answer: safe, unsafe, or not proven either way."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    INCONCLUSIVE = "inconclusive"  # nothing found, but not a proof: see ``Verdict.reasons``


@dataclass(frozen=True)
class Verdict:
    """Everything :func:`ts_explore.verify` learned about a task set, and what it proves.

    ``status`` is one of three answers, decided here and nowhere else:

    - **UNSAFE**: a TS check failed (``failed_checks``: credit simulation,
      structure, capacities...) or an exhaustive search run found a deadlock,
      an aliasing race or a PDL order violation (``findings``), including the
      extra tile counts ts-explore searches for persistent schedules. When a
      task's loop bound was a runtime value the failure was found at a
      stand-in length (``possible_false_positive``); TS's ``TaskManager``
      rejects it all the same.
    - **SAFE**: every check passed and every exhaustive run this instance
      needs finished below the state cap: the normal run, the skipped-tile
      run when a task has ``skip_if``, each once per assignment of the
      ``when_true``/``when_false`` keys, over the real trip count of every
      task. For persistent schedules (a WorkQueue) TS walks two work tiles;
      SAFE then also needs the tile-loop search of
      :mod:`ts_explore.check.tile_search` to close (every number of work
      tiles) or the real tiles per CTA given as ``verify(tiles=...)``, and,
      with ``skip_if``, an argument that skipped and normal tiles may mix.
    - **INCONCLUSIVE**: nothing was found, but that is not a proof; ``reasons``
      says why: the search was switched off or ts-explore could not read its
      results, a needed run hit the state cap or did not run, a bound was a
      runtime value (TS used a stand-in length), the instance does no work
      (0 iterations or 0 tiles), or an abstraction of the search does not
      provably cover the instance.

    ``ok`` is True only for SAFE. ``scope`` says in data what was searched
    (instance, trip counts, each run with its engine, states and seconds,
    tiles, abstractions, assumptions, effects outside TS's model);
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

    def repairs(self, build: Any = None, **kwargs: Any) -> Any:
        """Ranked repairs of this verdict, each proven SAFE (``ts_explore.repairs(self, build, ...)``).

        Reached through the public API, so the model does not depend on the repair package.
        """
        import ts_explore

        return ts_explore.repairs(self, build, **kwargs)

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
        engine=run.engine, cancelled=run.cancelled, cross_checked=run.cross_checked, disagreement=run.disagreement,
    )


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
