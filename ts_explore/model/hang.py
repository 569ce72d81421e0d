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
        where = f", {self.where}" if self.where else ""
        tile = f", tile {self.tile}" if self.section is not None and self.tile else ""
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

    @property
    def text(self) -> str:
        where = f", iteration {self.iteration}" if self.iteration is not None else ""
        return f"{self.task} blocked in {self.label}{where}"


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

    def groups(self) -> tuple[tuple[WarpProgress, tuple[int, ...]], ...]:
        """Warps that stopped at the same place, with the CTAs they belong to (per task and warp)."""
        seen: dict[tuple[Any, ...], list[int]] = {}
        first: dict[tuple[Any, ...], WarpProgress] = {}
        for w in self.warps:
            key = (w.task, w.warp, w.state, w.step, w.iteration, w.section)
            seen.setdefault(key, []).append(w.cta)
            first.setdefault(key, w)
        return tuple((first[k], tuple(sorted(v))) for k, v in seen.items())

    def lines(self) -> tuple[str, ...]:
        """``predicted: ... · measured: ...`` lines, then one line per group of warps that stopped alike."""
        out = [f"{self.scenario} did not finish in {self.timeout_s:g} s; read while it hung:"]
        stuck = self.stuck
        for p in self.predicted or (None,):
            measured = [w for w in stuck if p is not None and w.task == p.task]
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
        for w, ctas in self.groups():
            who = span_text(runs_of(ctas))
            out.append(f"  {w.task or '?'} warp {w.warp}, {who}: {w.text}")
        return tuple(out)

    def describe(self) -> str:
        return "\n".join(self.lines())

    def __str__(self) -> str:
        return self.describe()


__all__ = ["ENTERED", "LEFT", "HangReport", "PredictedBlock", "WarpProgress"]
