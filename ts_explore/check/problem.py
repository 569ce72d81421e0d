"""What the search explores: each task's checker lane as plain data, plus the credit and alias tables.

:func:`ts_explore.reader.search_input.search_problem` fills a :class:`SearchProblem`
from TS ``Task`` objects with exactly the lanes, credit keys, pipeline slots and
alias maps TS's ``check_all_interleavings`` sets up; nothing here holds a TS
object, so the engine (:mod:`ts_explore.check.engine`) is pure Python over
small integers. Resources, counters and tallies are referred to by index.
"""

from __future__ import annotations

from dataclasses import dataclass

# Race-relevant access kinds, TS's words (see ts_explore.check.held).
PROD_HELD, PROD, CONS_HELD, CONS = "prod_held", "prod", "cons_held", "cons"
SLOTLESS = -1  # an access that may touch every pipeline slot
UNTAGGED = -1  # a consumer read not yet tied to a commit generation

# Own-resource ownership transitions of a step on an aliased resource.
ACQUIRE, PRODUCE, WAIT, CONSUME, RELEASE = "acquire", "produce", "wait", "consume", "release"


@dataclass(frozen=True, slots=True)
class CreditEffect:
    """One credit change of a step: ``counter += delta``, or only on every ``every``-th event.

    With ``tally >= 0`` the step first counts an event on that tally; the
    counter moves when the tally reaches a multiple of ``every`` (all
    ``every`` participants of a round took part), as TS's total counts do.
    """

    counter: int
    delta: int
    tally: int = -1
    every: int = 1


@dataclass(frozen=True, slots=True)
class HeldOp:
    """How a step changes the ownership state that races are judged on (TS's held map)."""

    own: str = ""  # ACQUIRE/PRODUCE/WAIT/CONSUME/RELEASE on its own aliased resource, or ""
    slot: int = SLOTLESS  # the pipeline slot of that transition
    write_phase: bool = False  # the write phase of split non-pipelined consumer work
    closes_window: bool = False  # the last entry of split/doubled non-pipelined work
    merge_release: tuple[tuple[int, int], ...] = ()  # (member resource, slot) freed by a merge-group release
    fused_wait: tuple[tuple[int, int], ...] = ()  # (member resource, slot) taken by a fused-merge group wait
    tag_commit: tuple[int, ...] = ()  # DMA-read resources whose untagged reads this commit tags
    clear_wait: tuple[int, ...] = ()  # DMA-read resources whose reads of this generation a wait clears
    generation: int = -1  # commit/wait generation for tag_commit/clear_wait


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of a task's checker lane.

    ``needs`` is the counter that must be positive for the step to run
    (-1: it never blocks). ``point`` is the access the race check sees while
    this step is a task's next step: ``(slot, PROD | CONS)``.
    """

    resource: int
    stage: str  # TS ScheduleStage name, e.g. "ConsumerWait"
    needs: int = -1
    effects: tuple[CreditEffect, ...] = ()
    pdl_wait: bool = False
    pdl_launch: bool = False
    point: tuple[int, str] | None = None
    held: HeldOp | None = None


@dataclass(frozen=True, slots=True)
class Counter:
    """A credit pool side: ``commit`` credits (full slots) or ``empty`` credits (free slots)."""

    resource: int
    physical_stage: int
    kind: str  # "commit" | "empty"
    initial: int = 0


@dataclass(frozen=True)
class SearchProblem:
    """One checker run's instance: lanes, credit counters, alias tables and run options.

    ``alias[r]`` are the resources sharing bytes with ``r``; ``prod_alias`` /
    ``cons_alias`` restrict ``r``'s side to the ranges its producer or consumer
    touches (TS's role alias maps). ``overlaps`` holds ``(a, b, text)`` with
    a < b describing the shared bytes, e.g. ``smem[0:1024]``. ``race_check`` is False when no two
    resources alias (TS then skips the race check).
    """

    tasks: tuple[str, ...]
    lanes: tuple[tuple[Step, ...], ...]
    resources: tuple[str, ...]
    counters: tuple[Counter, ...]
    tallies: int = 0
    alias: tuple[frozenset[int], ...] = ()
    prod_alias: tuple[frozenset[int], ...] = ()
    cons_alias: tuple[frozenset[int], ...] = ()
    overlaps: tuple[tuple[int, int, str], ...] = ()
    aliased: frozenset[int] = frozenset()  # resources in TS's alias map (their steps update ownership)
    race_check: bool = False
    domain_interleaved: frozenset[int] = frozenset()
    dma_consumers: frozenset[int] = frozenset()
    assume_pdl_wait_completed: bool = False

    def __post_init__(self) -> None:
        if len(self.tasks) != len(self.lanes):
            raise ValueError(f"{len(self.tasks)} task names for {len(self.lanes)} lanes")
        n_res, n_cnt = len(self.resources), len(self.counters)
        for t, lane in enumerate(self.lanes):
            for i, step in enumerate(lane):
                bad = (
                    not 0 <= step.resource < n_res
                    or step.needs >= n_cnt
                    or any(not 0 <= e.counter < n_cnt or e.tally >= self.tallies or e.every < 1 for e in step.effects)
                )
                if bad:
                    raise ValueError(f"step {i} of task {self.tasks[t]!r} refers to an unknown resource or counter")
        counted: dict[int, tuple[int, int, int]] = {}
        for lane in self.lanes:
            for step in lane:
                for e in step.effects:
                    if e.tally >= 0 and counted.setdefault(e.tally, (e.counter, e.delta, e.every)) != (
                        e.counter, e.delta, e.every
                    ):
                        raise ValueError(
                            f"tally {e.tally} counts events of more than one counter, direction or period; "
                            "give each (counter, direction) its own tally, as TS counts commits, waits, "
                            "acquires and releases apart"
                        )

    @property
    def lane_lengths(self) -> tuple[int, ...]:
        """Steps per task."""
        return tuple(len(lane) for lane in self.lanes)

    def overlap(self, a: int, b: int) -> str:
        """The bytes resources ``a`` and ``b`` share, in TS's words (``?`` when unknown)."""
        lo, hi = min(a, b), max(a, b)
        return next((text for x, y, text in self.overlaps if (x, y) == (lo, hi)), "?")

    def step_text(self, task: int, index: int) -> str:
        """``ConsumerWait(smem)``: a step the way TS's path printout names it."""
        step = self.lanes[task][index]
        return f"{step.stage}({self.resources[step.resource]})"


__all__ = [
    "ACQUIRE",
    "CONS",
    "CONSUME",
    "CONS_HELD",
    "PROD",
    "PRODUCE",
    "PROD_HELD",
    "RELEASE",
    "SLOTLESS",
    "UNTAGGED",
    "WAIT",
    "Counter",
    "CreditEffect",
    "HeldOp",
    "SearchProblem",
    "Step",
]
