"""A counterexample's building blocks: the checker's per-task lanes, credit pools, interleavings.

TS-free frozen data; :mod:`ts_explore.model.verdict` builds on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import Family, Section, Stage


@dataclass(frozen=True)
class CheckerStep:
    """One entry of a task's schedule as the exhaustive checker walks it (HEAD + loop x N + TAIL)."""

    task: str
    index: int  # cursor position in the task's checker schedule
    resource: str
    stage: Stage
    call_index: int
    section: Section
    tag: str  # TS phase tag: H, '', F, L, P, I, T (SH/ST on a skipped tile)
    iteration: int | None  # domain-loop iteration; None in HEAD/TAIL or when unknown
    tile: int = 0  # work tile (persistent schedules are checked over 2 tiles)
    part: str = ""  # split work (non-pipelined): "write phase"/"read phase", "1/2"/"2/2"
    step_uid: int | None = None  # the ScheduleTree step this entry comes from
    label: str | None = None  # the work method name
    credit_slot: int = 0  # physical stage of the credit pool (only domain-interleaved resources use >0)
    tracked: bool = True  # False for WorkQueue ops (never credit-tracked)
    family: Family = Family.AUX  # colour family, as in the schedule tree drawing

    @property
    def method(self) -> str:
        """What the user typed after the dot: ``fill`` or ``acquire``."""
        return self.label or self.stage.method

    @property
    def title(self) -> str:
        """``right.wait``, ``smem.fill``."""
        return f"{self.resource}.{self.method}"

    @property
    def where(self) -> str:
        """``iteration 2`` / ``HEAD`` / ``TAIL``, plus the tile when there are several."""
        if self.section is Section.LOOP:
            text = f"iteration {self.iteration}" if self.iteration is not None else "loop"
        else:
            text = self.section.value.upper()
        return f"tile {self.tile}, {text}" if self.tile else text


@dataclass(frozen=True)
class Lane:
    """One task's checker schedule."""

    task: str
    steps: tuple[CheckerStep, ...]


@dataclass(frozen=True)
class CreditPool:
    """One credit pool: a pipelined resource (one per physical stage when domain-interleaved)."""

    resource: str
    slot: int
    initial_empty: int  # num_stages (1 per slot when domain-interleaved)


@dataclass(frozen=True)
class CreditModel:
    """What a credit replay needs: pools and how many tasks share each side of a pipeline.

    With ``producers[r] = n`` a commit credit appears only after every n-th
    commit (all producers of the round committed); likewise for consumers.
    """

    pools: tuple[CreditPool, ...]
    producers: tuple[tuple[str, int], ...] = ()
    consumers: tuple[tuple[str, int], ...] = ()
    approximate: bool = False  # PipelineGroups present: replay treats the group as one resource

    def producer_count(self, resource: str) -> int:
        """Tasks that commit this resource each round."""
        return dict(self.producers).get(resource, 1)

    def consumer_count(self, resource: str) -> int:
        """Tasks that wait on this resource each round."""
        return dict(self.consumers).get(resource, 1)


@dataclass(frozen=True)
class CreditCell:
    """Credits of one pool at one moment: free slots and published (committed, unwaited) slots."""

    resource: str
    slot: int
    empty: int
    full: int


@dataclass(frozen=True)
class Interleaving:
    """A counterexample: the shortest interleaving to the bad state, with credits after every move.

    ``credits[k]``/``cursors[k]`` describe the state after ``k`` moves
    (``credits[0]`` is the initial state); ``changed[k]`` lists the
    ``(resource, slot, "empty"|"full")`` cells move ``k`` changed.
    """

    moves: tuple[CheckerStep, ...]
    credits: tuple[tuple[CreditCell, ...], ...]
    cursors: tuple[tuple[int, ...], ...]
    changed: tuple[tuple[tuple[str, int, str], ...], ...]
    tasks: tuple[str, ...]
    approximate: bool = False

    def __len__(self) -> int:
        return len(self.moves)

    def __bool__(self) -> bool:  # a deadlock at the initial state has an empty, but real, path
        return True


__all__ = ["CheckerStep", "CreditCell", "CreditModel", "CreditPool", "Interleaving", "Lane"]
