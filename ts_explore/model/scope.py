"""What a verdict proved: the instance, trip counts, search runs, abstractions and unmodelled effects.

A :class:`Scope` travels with every :class:`~ts_explore.model.verdict.Verdict`.
It is the machine-readable half of the answer to "safe for what?"; its
:meth:`Scope.sentence` is the same in words, and :meth:`Scope.reasons` lists
what keeps a clean search from being a proof (the verdict is then
INCONCLUSIVE). TS-free frozen data, so a scope can be compared and turned into
JSON like the rest of the verdict.

>>> Scope(searched=False).reasons()
('the exhaustive search was switched off (exhaustive_deadlock_race_check=False)',)
>>> trips = TaskTrips("copy", "domain_loop(0, 0, 1)", iterations=0, exact=True, loop_steps=2)
>>> Scope(instance="CTA 100", tasks=(trips,), runs=(RunScope("normal", states=3),)).reasons()
('CTA 100 does no work (0 iterations)',)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

TS_ENGINE = "TS exhaustive_checker"

# Effects TS's model leaves out whatever the schedule; callers add their own (``verify(not_modelled=...)``).
DEFAULT_NOT_MODELLED: tuple[str, ...] = (
    "the work bodies: only the order of pipeline operations is searched, not the data, addresses or bounds "
    "they touch",
)
WORK_QUEUE_NOT_MODELLED = ("WorkQueue operations (static and CLC tile schedulers) carry no credits: they never "
                           "block in the search")


@dataclass(frozen=True)
class TaskTrips:
    """How many domain-loop iterations the search unrolled for one task, and whether that is the real count."""

    task: str
    bounds: str  # ``domain_loop(0, 8, 1)`` as recorded
    iterations: int  # iterations per tile the search walked
    exact: bool = True  # False: a runtime bound, TS used a stand-in (fallback) length
    loop_steps: int = 1  # steps in the loop body (0: an empty loop, such as a CLC scheduler's)

    @property
    def idle(self) -> bool:
        """True when the loop has work in it but runs 0 iterations."""
        return self.iterations == 0 and self.loop_steps > 0

    def describe(self) -> str:
        """``copy: domain_loop(0, 8, 1), 8 iterations``."""
        text = f"{self.task}: {self.bounds}, {self.iterations} iteration{'' if self.iterations == 1 else 's'}"
        return text if self.exact else text + " (stand-in length for a runtime bound)"


@dataclass(frozen=True)
class RunScope:
    """One exhaustive search run: which variant, over how many tiles, how far it got, and what it cost."""

    label: str  # ``normal``, ``skipped-tile (flag=True)``, ``normal, 3 tiles``
    variant: str = "normal"  # normal | skipped-tile
    opaque: tuple[tuple[str, bool], ...] = ()
    tiles: int = 1
    states: int = 0
    capped: bool = False  # stopped at the state cap: not a proof
    seconds: float = 0.0
    engine: str = TS_ENGINE
    run_by: str = "TaskManager"  # TaskManager ran it, or ts-explore ran a variant TaskManager skipped
    cancelled: bool = False  # stopped by the caller (our checker's ``cancel``): not a proof either
    cross_checked: bool = False  # an independent second search ran on it too (``verify(cross_check=True)``)
    disagreement: str = ""  # the two searches' answers when they disagreed: not a proof


@dataclass(frozen=True)
class TileCheck:
    """The unrolled cross-check of a persistent schedule (``verify(..., cross_check=True)``).

    Every tile count 1..``tiles`` was searched on its own, to a bound derived
    without the verification's tile plan (:mod:`ts_explore.check.tile_cross`);
    ``covers`` says whether that bound covers every tile count (else it is a
    stated count, ``bound`` says why).
    """

    tiles: int
    covers: bool
    bound: str  # the bound in words: ``period 4 + lead 3: covers every tile count``
    first: str  # the verification's answer: safe, not proven, or the finding kinds
    second: str  # the unrolled searches' answer
    agree: bool
    states: int = 0
    seconds: float = 0.0
    reason: str = ""  # both answers in one sentence

    def sentence(self) -> str:
        """The tile cross-check in one sentence.

        >>> TileCheck(7, True, "period 4 + lead 3", "safe", "safe", True).sentence()
        'Tiles cross-checked: an unrolled search of every count 1-7 (period 4 + lead 3) agreed (safe).'
        >>> TileCheck(8, False, "stated count", "safe", "safe", True).sentence()
        'Tiles cross-checked up to 8 only: an unrolled search of every count 1-8 (stated count) agreed (safe).'
        """
        what = f"an unrolled search of every count 1-{self.tiles} ({self.bound})"
        if not self.agree:
            return f"Tiles cross-checked: {self.reason or what + ' disagreed'}."
        head = "Tiles cross-checked" if self.covers else f"Tiles cross-checked up to {self.tiles} only"
        return f"{head}: {what} agreed ({self.second})."


@dataclass(frozen=True)
class Abstraction:
    """A simplification the search made, and whether the argument that it loses nothing holds here."""

    name: str  # two-tile | skipped-tile
    sentence: str
    sufficient: bool


@dataclass(frozen=True)
class Scope:
    """What the exhaustive search covered, in data (see :meth:`sentence` for words).

    ``instance`` names the view (``"CTA 100"``, set by the caller that built
    it); ``tasks`` the trip counts; ``runs`` each search run; ``missing`` runs
    the instance needs that did not run; ``tiles`` the work tiles per CTA the
    runs covered for persistent schedules (None: not persistent);
    ``abstractions`` what the search simplified; ``assumptions`` what the proof
    takes for granted about the program; ``not_modelled`` effects outside TS's
    model (callers extend it).
    """

    searched: bool = True  # False: the caller switched the exhaustive search off
    instance: str = ""
    tasks: tuple[TaskTrips, ...] = ()
    runs: tuple[RunScope, ...] = ()
    missing: tuple[str, ...] = ()
    tiles: tuple[int, ...] = ()  # persistent only: the tile counts the runs searched
    tiles_per_cta: int | None = None  # persistent only: the tiles a CTA of this instance runs, when the caller said
    abstractions: tuple[Abstraction, ...] = ()
    assumptions: tuple[str, ...] = ()
    not_modelled: tuple[str, ...] = DEFAULT_NOT_MODELLED
    engine: str = TS_ENGINE
    unread: str = ""  # ts-explore could not read TS's results (the reason); nothing can be claimed
    tiles_covered: str = ""  # persistent only: which work-tile counts the verdict covers, and how
    tile_check: TileCheck | None = None  # persistent, cross_check=True: the tile counts unrolled independently

    # -- totals --------------------------------------------------------------------
    @property
    def states(self) -> int:
        """States explored by every run together."""
        return sum(r.states for r in self.runs)

    @property
    def seconds(self) -> float:
        """Search time of every run together."""
        return sum(r.seconds for r in self.runs)

    def runs_text(self) -> str:
        """The runs in short: ``normal, skipped-tile; 1-4 tiles; 2 key assignments``.

        >>> Scope(runs=(RunScope("normal (1 tile)", tiles=1), RunScope("normal (2 tiles)", tiles=2))).runs_text()
        'normal; 1-2 tiles'
        """
        if not self.runs:
            return "none"
        parts = [", ".join(dict.fromkeys(r.variant for r in self.runs))]
        tiles = sorted({r.tiles for r in self.runs})
        if self.tiles or tiles != [1]:
            parts.append((f"{tiles[0]}-{tiles[-1]}" if tiles == list(range(tiles[0], tiles[-1] + 1)) and
                          len(tiles) > 1 else ", ".join(map(str, tiles))) + f" tile{'' if tiles == [1] else 's'}")
        opaque = {r.opaque for r in self.runs if r.opaque}
        if opaque:
            parts.append(f"{len(opaque)} key assignment{'' if len(opaque) == 1 else 's'}")
        return "; ".join(parts)

    @property
    def cross_checked(self) -> bool:
        """Every run was also searched by the independent second engine."""
        return bool(self.runs) and all(r.cross_checked for r in self.runs)

    def cross_check_text(self) -> str:
        """Whether the runs were cross-checked, in one sentence.

        >>> Scope(runs=(RunScope("normal", cross_checked=True),)).cross_check_text()
        'Cross-checked: an independent explicit-state search agreed on every run.'
        """
        tiles = "" if self.tile_check is None else " " + self.tile_check.sentence()
        checked = [r for r in self.runs if r.cross_checked]
        if not checked:
            return "Not cross-checked (verify(..., cross_check=True) runs an independent second search)." + tiles
        split = [f"{r.label} ({r.disagreement})" for r in checked if r.disagreement]
        if split:
            return f"Cross-checked: the independent second search disagreed on {'; '.join(split)}." + tiles
        if len(checked) < len(self.runs):
            return f"Cross-checked on {len(checked)} of {len(self.runs)} runs (the others were TS's search)." + tiles
        return "Cross-checked: an independent explicit-state search agreed on every run." + tiles

    @property
    def vacuous(self) -> bool:
        """True when every task with loop work runs 0 iterations: the instance does nothing to prove."""
        if self.tiles_per_cta == 0:
            return True
        working = [t for t in self.tasks if t.loop_steps > 0]
        return bool(working) and all(t.idle for t in working)

    # -- the verdict's INCONCLUSIVE reasons ------------------------------------------
    def reasons(self) -> tuple[str, ...]:
        """Why a clean search is not a proof of this instance (empty: it is one)."""
        out: list[str] = []
        if self.unread:
            out.append(f"ts-explore could not read TS's search results ({self.unread})")
        if not self.searched:
            out.append("the exhaustive search was switched off (exhaustive_deadlock_race_check=False)")
        elif not self.runs and not self.unread:
            out.append("no exhaustive search ran")
        who = self.instance or "this instance"
        if self.tiles_per_cta == 0:
            out.append(f"{who} does no work (0 work tiles)")
        elif self.vacuous:
            out.append(f"{who} does no work (0 iterations)")
        else:
            out.extend(f"task {t.task} does no work ({t.bounds} runs 0 iterations)" for t in self.tasks if t.idle)
        for t in self.tasks:
            if not t.exact:
                out.append(f"task {t.task} has {t.bounds}, not Python ints: TS searched a stand-in length of "
                           f"{t.iterations} iteration(s)")
        for r in self.runs:
            if r.disagreement:
                out.append(f"the search ({r.label}): {r.disagreement}")
            elif r.cancelled:
                out.append(f"the search ({r.label}) was cancelled after {r.states} states")
            elif r.capped:
                out.append(f"the search ({r.label}) stopped at its state cap after {r.states} states")
        if self.tile_check is not None and not self.tile_check.agree:
            out.append(self.tile_check.reason)
        if self.missing:
            out.append("needed search run(s) did not run: " + ", ".join(self.missing))
        out.extend(a.sentence for a in self.abstractions if not a.sufficient)
        return tuple(out)

    # -- words --------------------------------------------------------------------------
    def sentence(self) -> str:
        """What was searched, in one paragraph."""
        parts = []
        if self.instance:
            parts.append(f"Instance: {self.instance}.")
        if self.tasks:
            parts.append("Trip counts: " + "; ".join(t.describe() for t in self.tasks) + ".")
        if self.tiles or self.tiles_covered:
            per_cta = "any number" if self.tiles_per_cta is None else str(self.tiles_per_cta)
            covered = f"; covered: {self.tiles_covered}" if self.tiles_covered else ""
            parts.append(f"Work tiles per CTA: {per_cta}{covered}; searched unrolled: "
                         f"{', '.join(map(str, self.tiles)) or 'none'}.")
        if not self.searched:
            parts.append("No exhaustive search (switched off).")
        elif self.runs:
            labels = "; ".join(r.label for r in self.runs)
            parts.append(f"{self.engine} explored {self.states} states in {len(self.runs)} run(s) ({labels}) "
                         f"in {self.seconds:.2f} s.")
            parts.append(self.cross_check_text())
        for a in self.abstractions:
            parts.append(_cap(a.sentence) + ("" if a.sufficient else " (not proven)") + ".")
        parts.extend(_cap(a.rstrip(".")) + "." for a in self.assumptions)
        if self.not_modelled:
            parts.append("Not modelled: " + "; ".join(self.not_modelled) + ".")
        return " ".join(parts)

    # -- for callers --------------------------------------------------------------------
    def extended(self, *, instance: str | None = None, not_modelled: Iterable[str] = ()) -> Scope:
        """This scope with the instance named and more unmodelled effects listed."""
        extra = tuple(n for n in not_modelled if n not in self.not_modelled)
        return replace(self, instance=self.instance if instance is None else instance,
                       not_modelled=self.not_modelled + extra)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["DEFAULT_NOT_MODELLED", "TS_ENGINE", "WORK_QUEUE_NOT_MODELLED", "Abstraction", "RunScope", "Scope",
           "TaskTrips", "TileCheck"]
