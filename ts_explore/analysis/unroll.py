"""Per-task lanes for one moment of a counterexample: what ran, what is next, what is stuck.

The checker's lanes are HEAD + loop x N + TAIL for the concrete domain; a
long lane keeps its start, its end and a window around the task's cursor,
with the rest folded into "... k more steps" cells.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.verdict import CheckerStep, Deadlock, ExhaustiveRun, Finding, offending_steps

DONE, NEXT, BLOCKED, OFFENDING, PENDING = "done", "next", "blocked", "offending", "pending"


@dataclass(frozen=True)
class LaneCell:
    """A lane entry: a checker step with its state, or a fold of ``folded`` hidden steps."""

    step: CheckerStep | None
    state: str = PENDING
    time: int | None = None  # the counterexample move that executed it (1-based)
    folded: int = 0


@dataclass(frozen=True)
class LaneView:
    """One task's lane at one moment: its cells (some folded) and its cursor."""

    task: str
    cells: tuple[LaneCell, ...]
    cursor: int  # index of the next step (== number of steps done)
    length: int

    @property
    def finished(self) -> bool:
        """The task ran every step."""
        return self.cursor >= self.length


def cursors_at(run: ExhaustiveRun, finding: Finding | None, k: int | None) -> tuple[int, ...]:
    """Each task's cursor after ``k`` moves of the finding's counterexample (None: the bad state)."""
    if finding is None:
        return tuple(0 for _ in run.lanes)
    inter = finding.interleaving
    if inter is None:
        return tuple(finding.cursors) if k is None else tuple(0 for _ in run.lanes)
    k = len(inter) if k is None else max(0, min(k, len(inter)))
    return inter.cursors[k]


def lane_views(
    run: ExhaustiveRun, finding: Finding | None = None, k: int | None = None, max_steps: int = 48
) -> tuple[LaneView, ...]:
    """One :class:`LaneView` per task after ``k`` moves (default: the bad state itself)."""
    cursors = cursors_at(run, finding, k)
    inter = finding.interleaving if finding is not None else None
    n_moves = len(inter) if inter is not None else 0
    at_end = finding is not None and (k is None or k >= n_moves)
    marks = {(s.task, s.index) for s in offending_steps(finding, run)} if (finding is not None and at_end) else set()
    blocked = {(b.task, b.position) for b in finding.blocked} if isinstance(finding, Deadlock) and at_end else set()
    times: dict[tuple[str, int], int] = {}
    if inter is not None:
        for t, move in enumerate(inter.moves[: (n_moves if k is None else k)], start=1):
            times[(move.task, move.index)] = t
    views = []
    for lane, cursor in zip(run.lanes, cursors):
        cells = []
        for step in lane.steps:
            key = (lane.task, step.index)
            if key in blocked:
                state = BLOCKED
            elif key in marks:
                state = OFFENDING
            elif step.index < cursor:
                state = DONE
            elif step.index == cursor and finding is not None:
                state = NEXT
            else:
                state = PENDING
            cells.append(LaneCell(step, state, times.get(key)))
        views.append(LaneView(lane.task, _fold(cells, cursor, max_steps), cursor, len(lane.steps)))
    return tuple(views)


def _fold(cells: list[LaneCell], cursor: int, max_steps: int) -> tuple[LaneCell, ...]:
    if len(cells) <= max_steps:
        return tuple(cells)
    edge = max(2, max_steps // 4)
    keep = set(range(edge)) | set(range(len(cells) - edge, len(cells)))
    half = max(2, max_steps // 4)
    keep |= set(range(max(0, cursor - half), min(len(cells), cursor + half)))
    keep |= {i for i, c in enumerate(cells) if c.state in (BLOCKED, OFFENDING)}
    out: list[LaneCell] = []
    hidden = 0
    for i, c in enumerate(cells):
        if i in keep:
            if hidden:
                out.append(LaneCell(None, folded=hidden))
                hidden = 0
            out.append(c)
        else:
            hidden += 1
    if hidden:
        out.append(LaneCell(None, folded=hidden))
    return tuple(out)


__all__ = ["BLOCKED", "DONE", "NEXT", "OFFENDING", "PENDING", "LaneCell", "LaneView", "cursors_at", "lane_views"]
