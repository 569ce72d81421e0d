"""Measured against predicted: per-step statistics of a timeline, and each warp's steps checked against the schedule.

Pure functions over the model. :func:`expected_steps` unrolls a task's
schedule tree for one work tile (iteration guards fire as TS fires them;
``when_true``/``when_false`` blocks depend on run-time values and are
optional); :func:`check_lane` walks a warp's measured events tile by tile
against it; :func:`step_table` sums time per task and step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence, Union

from ..model import Block, BlockKind, DomainLoop, Family, Node, ScheduleTree, Stage, Step, WorkTileLoop
if TYPE_CHECKING:  # the timeline model shows its table through this module
    from ..model.timeline import Timeline, TimelineEvent


# -- the table ------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepStats:
    """One step of one task, over every traced warp that ran it."""

    task: str
    step: int
    label: str
    stage: Stage
    family: Family
    count: int
    mean_ns: float
    total_ns: int
    blocked_ns: int  # time spent inside acquire/wait steps (waiting for another task)
    share: float  # of the task's warp-time (warps x timeline span)


@dataclass(frozen=True)
class StepTable:
    """Per task and step: how often, how long, how much of it was waiting."""

    rows: tuple[StepStats, ...]
    span_ns: int

    def text(self) -> str:
        """A fixed-width table."""
        head = f"{'task':10s} {'step':24s} {'count':>6s} {'mean µs':>9s} {'blocked µs':>11s} {'share':>6s}"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            lines.append(f"{r.task:10s} {('#%d ' % r.step) + r.label:24s} {r.count:6d} {r.mean_ns / 1e3:9.3f} "
                         f"{r.blocked_ns / 1e3:11.2f} {100 * r.share:5.1f}%")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def step_table(timeline: Timeline) -> StepTable:
    """Count, mean duration, time blocked and share of the warps' time, per task and step.

    >>> from ts_explore.model.timeline import TaskWarps, Timeline, TimelineEvent
    >>> from ts_explore.model import Section
    >>> ev = [TimelineEvent("t", 0, 0, 1, "r.wait", Stage.CONSUMER_WAIT, Family.WAIT, Section.LOOP, i, 0,
    ...                     100 * i, 100 * i + 40) for i in range(3)]
    >>> row = step_table(Timeline("s", tuple(ev), (TaskWarps("t", 0, 1),))).rows[0]
    >>> row.count, row.mean_ns, row.blocked_ns, round(row.share, 2)
    (3, 40.0, 120, 0.5)
    """
    span = timeline.span_ns or 1
    groups: dict[tuple[str, int], list[TimelineEvent]] = {}
    for e in timeline.events:
        groups.setdefault((e.task, e.step), []).append(e)
    warps = {t: len({(e.cta, e.warp) for e in timeline.events if e.task == t}) for t, _ in groups}
    order = {t.name: i for i, t in enumerate(timeline.tasks)}
    rows = []
    for (task, step), evs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        total = sum(e.duration_ns for e in evs)
        first = evs[0]
        rows.append(StepStats(task, step, first.label, first.stage, first.family, len(evs), total / len(evs), total,
                              total if first.blocking else 0, total / (span * max(1, warps[task]))))
    return StepTable(tuple(rows), timeline.span_ns)


# -- expected order -------------------------------------------------------------------------
Trips = Union[int, Callable[[Union[int, None]], int]]  # domain-loop trips, or trips per work tile


def _trips(trips: Trips, tile: int | None) -> int:
    return trips(tile) if callable(trips) else trips


@dataclass(frozen=True)
class Expected:
    """A step the schedule runs at this point (``optional``: under a run-time condition)."""

    step: int
    label: str
    iteration: int | None
    optional: bool = False
    tile: int | None = None  # the work tile it belongs to (None: any)


def _fires(block: Block, i: int, n: int) -> bool | None:
    kind = block.kind
    if kind is BlockKind.FIRST_ITER:
        return i == 0
    if kind is BlockKind.LAST_ITER:
        return i == n - 1
    if kind is BlockKind.EVERY:
        period, start = block.period or 1, block.start or 0
        return i >= start and (i - start) % period == 0
    return None  # when_true / when_false: decided at run time


def _walk(nodes: Iterable[Node], out: list[Expected], *, trips: int, skipped: bool, iteration: int | None,
          optional: bool, keep: frozenset[Stage] | None, tile: int | None = None) -> None:
    more = dict(trips=trips, skipped=skipped, keep=keep, tile=tile)
    for node in nodes:
        if isinstance(node, Step):
            if keep is None or node.stage in keep:
                out.append(Expected(node.uid, node.title, iteration, optional, tile))
        elif isinstance(node, DomainLoop):
            for i in range(trips):
                _walk(node.body, out, iteration=i, optional=optional, **more)  # type: ignore[arg-type]
        elif isinstance(node, WorkTileLoop):
            _walk(node.body, out, iteration=iteration, optional=optional, **more)  # type: ignore[arg-type]
        elif isinstance(node, Block):
            if node.kind is BlockKind.SKIPPABLE:
                if not skipped:
                    _walk(node.body, out, iteration=iteration, optional=optional, **more)  # type: ignore[arg-type]
                continue
            fires = _fires(node, iteration, trips) if iteration is not None else None
            if fires is False:
                continue
            _walk(node.body, out, iteration=iteration, optional=optional or fires is None,
                  **more)  # type: ignore[arg-type]


def expected_steps(tree: ScheduleTree, trips: Trips, *, tiles: Sequence[tuple[int | None, bool]] = ((None, False),),
                   stages: Iterable[Stage] | None = None) -> tuple[Expected, ...]:
    """The steps a warp runs, in order, for a domain loop of ``trips`` iterations (or ``trips(tile)``).

    A persistent schedule runs its work-tile loop body once per entry of
    ``tiles`` (``(tile, skipped)``; a skipped tile runs only the steps outside
    ``skippable()``), between the steps before and after the loop; ``stages``
    keeps only these stages (a work-only trace).
    """
    out: list[Expected] = []
    keep = frozenset(stages) if stages is not None else None
    loop = next((i for i, n in enumerate(tree.body) if isinstance(n, WorkTileLoop)), None)
    if loop is None:
        _walk(tree.body, out, trips=_trips(trips, None), skipped=False, iteration=None, optional=False, keep=keep)
        return tuple(out)
    wtl = tree.body[loop]
    assert isinstance(wtl, WorkTileLoop)
    _walk(tree.body[:loop], out, trips=0, skipped=False, iteration=None, optional=False, keep=keep)
    for tile, skip in tiles:
        _walk(wtl.body, out, trips=_trips(trips, tile), skipped=skip, iteration=None, optional=False, keep=keep,
              tile=tile)
    _walk(tree.body[loop + 1:], out, trips=0, skipped=False, iteration=None, optional=False, keep=keep)
    return tuple(out)


def _steps_under(nodes: Iterable[Node], want: type | BlockKind) -> frozenset[int]:
    found: set[int] = set()

    def visit(nodes: Iterable[Node], inside: bool) -> None:
        for node in nodes:
            if isinstance(node, Step):
                if inside:
                    found.add(node.uid)
                continue
            hit = isinstance(node, Block) and node.kind is want if isinstance(want, BlockKind) else isinstance(
                node, want)
            visit(node.body, inside or hit)

    visit(nodes, False)
    return frozenset(found)


def skippable_steps(tree: ScheduleTree) -> frozenset[int]:
    """Uids of the steps inside ``skippable()`` blocks."""
    return _steps_under(tree.body, BlockKind.SKIPPABLE)


# -- one warp against its schedule ----------------------------------------------------------
@dataclass(frozen=True)
class LaneCheck:
    """A warp's measured steps against the schedule: how many, and the first place they differ."""

    task: str
    cta: int
    warp: int
    expected: int
    measured: int
    tiles: int
    mismatch: int | None = None  # index of the first difference (None: identical)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.mismatch is None

    def describe(self) -> str:
        where = f"{self.task} warp {self.warp} of CTA {self.cta}"
        if self.ok:
            tiles = f" over {self.tiles} tile(s)" if self.tiles else ""
            return f"{where}: all {self.measured} steps as scheduled{tiles}"
        return f"{where}: step {self.mismatch} differs - {self.detail}"


def measured_tiles(events: Sequence[TimelineEvent], tree: ScheduleTree) -> list[tuple[int, bool]]:
    """``(tile, skipped)`` of each work tile a warp's events walk through, in order.

    A tile none of whose events is inside ``skippable()`` counts as skipped.
    """
    in_loop = _steps_under(tree.body, WorkTileLoop)
    inside = skippable_steps(tree)
    tiles: list[tuple[int, list[TimelineEvent]]] = []
    for e in events:
        if e.step not in in_loop:
            continue
        if tiles and tiles[-1][0] == e.tile:
            tiles[-1][1].append(e)
        else:
            tiles.append((e.tile, [e]))
    return [(tile, bool(inside) and not any(e.step in inside for e in evs)) for tile, evs in tiles]


def check_lane(events: Sequence[TimelineEvent], tree: ScheduleTree, trips: Trips, *,
               tiles: Sequence[tuple[int, bool]] | None = None,
               stages: Iterable[Stage] | None = None) -> LaneCheck:
    """Compare one warp's events (time order) with its schedule, step by step.

    ``tiles`` (persistent schedules): the ``(tile, skipped)`` the warp should
    walk; by default the ones its events walk (:func:`measured_tiles`), which
    checks the order inside each tile but not the tile assignment. Optional
    steps (run-time conditions) may be absent.
    """
    first = events[0] if events else None
    task, cta, warp = (first.task, first.cta, first.warp) if first else (tree.name, 0, 0)
    walk = list(tiles) if tiles is not None else measured_tiles(events, tree)
    want = expected_steps(tree, trips, tiles=walk or [(None, False)], stages=stages)
    required = sum(1 for w in want if not w.optional)
    k = 0
    for w in want:
        got = events[k] if k < len(events) else None
        if got is not None and got.step == w.step and got.iteration == w.iteration and (
                w.tile is None or got.tile == w.tile):
            k += 1
            continue
        if w.optional:
            continue
        seen = f"{got.label} ({got.where}, tile {got.tile})" if got is not None else "nothing (its events end here)"
        where = f"iteration {w.iteration}" if w.iteration is not None else "outside the loop"
        where += f", tile {w.tile}" if w.tile is not None else ""
        return LaneCheck(task, cta, warp, required, len(events), len(walk), k,
                         f"expected {w.label} ({where}), measured {seen}")
    if k < len(events):
        extra = events[k]
        return LaneCheck(task, cta, warp, required, len(events), len(walk), k,
                         f"measured {extra.label} ({extra.where}, tile {extra.tile}) after the last scheduled step")
    return LaneCheck(task, cta, warp, required, len(events), len(walk))


@dataclass(frozen=True)
class Alignment:
    """Every traced warp checked against its schedule."""

    lanes: tuple[LaneCheck, ...]

    @property
    def ok(self) -> bool:
        return all(lane.ok for lane in self.lanes)

    def summary(self) -> str:
        bad = [lane for lane in self.lanes if not lane.ok]
        head = (f"{len(self.lanes)} warps: every step in the scheduled order" if not bad else
                f"{len(bad)} of {len(self.lanes)} warps differ from the schedule")
        return "\n".join([head, *(lane.describe() for lane in (bad or self.lanes))])

    def __str__(self) -> str:
        return self.summary()


__all__ = ["Alignment", "Expected", "Trips", "LaneCheck", "StepStats", "StepTable", "check_lane", "expected_steps",
           "skippable_steps", "step_table"]
