"""Where a hung kernel's warps stopped, beside where the verifier predicted they would block.

Frozen, TS-free data. An instrumented kernel publishes each warp's last
blocking step (entered, or left) to host-mapped memory; the launcher reads it
while the kernel hangs (:class:`WarpProgress`) and pairs it with the
verifier's counterexample (:class:`PredictedBlock`) in a :class:`HangReport`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .plan import runs_of, span_text
from .schedule import Section

ENTERED, LEFT = "entered", "left"


@dataclass(frozen=True)
class WarpProgress:
    """Where one warp was when a hung kernel was read: its last blocking step, entered or left."""

    cta: int
    warp: int
    task: str | None
    state: str  # ENTERED (inside the step: it is waiting there), LEFT (past it), "" (no blocking step seen)
    step: int | None = None
    label: str = ""
    iteration: int | None = None
    tile: int = 0
    section: Section | None = None
    at_ns: int | None = None  # when the warp wrote this, from the first progress write of the launch

    @property
    def stuck(self) -> bool:
        return self.state == ENTERED

    @property
    def where(self) -> str:
        if self.section is Section.LOOP and self.iteration is not None:
            return f"iteration {self.iteration}"
        return self.section.value.upper() if self.section is not None else ""

    @property
    def text(self) -> str:
        """``stopped in smem.acquire, iteration 4`` / ``past smem.wait, iteration 7`` / ``no blocking step yet``."""
        return self.describe(f", tile {self.tile}" if self.section is not None and self.tile else "")

    def describe(self, tile: str) -> str:
        """:attr:`text` with ``tile`` (e.g. ``, tiles 0-3``) in place of this warp's own tile."""
        where = f", {self.where}" if self.where else ""
        if self.state == ENTERED:
            return f"stopped in {self.label}{where}{tile}"
        if self.state == LEFT:
            return f"past {self.label}{where}{tile} (its last blocking step; finished, or stuck outside the schedule)"
        return "no blocking step reached (never started, or still before its first acquire/wait)"


@dataclass(frozen=True)
class PredictedBlock:
    """A step the verifier predicts a task blocks in (from its counterexample)."""

    task: str
    label: str  # ``smem.acquire``
    step: int | None
    iteration: int | None
    reason: str = ""
    ctas: tuple[range, ...] = ()  # the CTAs of the launch instance this was verified for (empty: every CTA)
    instance: str = ""  # that instance in words (``CTAs 0-1: 9 tiles``)

    def covers(self, cta: int) -> bool:
        """Whether CTA ``cta`` runs the instance this block was predicted for."""
        return not self.ctas or any(cta in r for r in self.ctas)

    @property
    def text(self) -> str:
        where = f", iteration {self.iteration}" if self.iteration is not None else ""
        return f"{self.task} blocked in {self.label}{where}" + (f" ({self.instance})" if self.instance else "")


@dataclass(frozen=True)
class HangReport:
    """A kernel that did not finish: each warp's last blocking step, beside the verifier's prediction."""

    scenario: str
    timeout_s: float
    warps: tuple[WarpProgress, ...]
    predicted: tuple[PredictedBlock, ...] = ()
    verdict: str = ""  # what the gate said, in words
    grid: int = 0
    threads: int = 0

    @property
    def stuck(self) -> tuple[WarpProgress, ...]:
        """Warps inside a blocking step when the kernel was read."""
        return tuple(w for w in self.warps if w.stuck)

    def groups(self) -> tuple[tuple[WarpProgress, tuple[int, ...], tuple[int, ...]], ...]:
        """Warps that stopped at the same place on the same tile trip, with their CTAs and tiles (per task and warp).

        The tile is part of the place: warps group when their tile is as far
        from their CTA index as in the group (the same trip of a strided
        tile loop, or each CTA's own tile), so a group line lists its own tiles.
        """
        seen: dict[tuple[Any, ...], list[WarpProgress]] = {}
        for w in self.warps:
            key = (w.task, w.warp, w.state, w.step, w.iteration, w.section, w.tile - w.cta)
            seen.setdefault(key, []).append(w)
        return tuple((ws[0], tuple(sorted(w.cta for w in ws)), tuple(sorted({w.tile for w in ws})))
                     for ws in seen.values())

    def lines(self) -> tuple[str, ...]:
        """``predicted: ... · measured: ...`` lines, then one line per group of warps that stopped alike."""
        out = [f"{self.scenario} did not finish in {self.timeout_s:g} s; read while it hung:"]
        stuck = self.stuck
        for p in self.predicted or (None,):
            measured = [w for w in stuck if p is not None and w.task == p.task and p.covers(w.cta)]
            head = f"predicted: {p.text}" if p is not None else "predicted: (the verifier named no blocked step)"
            if measured:
                w = measured[0]
                tail = f"measured: warp {w.warp} {w.text}" + (f" (+{len(measured) - 1} more warps)"
                                                               if len(measured) > 1 else "")
            elif p is not None:
                tail = f"measured: no warp of {p.task} is inside a blocking step"
            else:
                tail = f"measured: {len(stuck)} warp(s) inside a blocking step"
            out.append(f"{head} · {tail}")
        for w, ctas, tiles in self.groups():
            who = span_text(runs_of(ctas))
            shown = w.section is not None and any(tiles)
            out.append(f"  {w.task or '?'} warp {w.warp}, {who}: "
                       f"{w.describe(', ' + span_text(runs_of(tiles), 'tiles') if shown else '')}")
        return tuple(out)

    def describe(self) -> str:
        return "\n".join(self.lines())

    def __str__(self) -> str:
        return self.describe()


__all__ = ["ENTERED", "LEFT", "HangReport", "PredictedBlock", "WarpProgress"]
