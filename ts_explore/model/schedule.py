"""Frozen, TS-free description of one recorded schedule tree.

Everything downstream of capture (renderers, analysis, the explorer) reads
these classes only, so they never depend on cutlass objects or their identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterator, Union


class Stage(str, Enum):
    """The pipeline stage or work kind of a step (mirrors TS ``ScheduleStage``)."""

    PRODUCER_TRY_ACQUIRE = "ProducerTryAcquire"
    PRODUCER_ACQUIRE = "ProducerAcquire"
    PRODUCER_WORK = "ProducerWork"
    PRODUCER_AUX_WORK = "ProducerAuxWork"
    PRODUCER_COMMIT = "ProducerCommit"
    CONSUMER_TRY_WAIT = "ConsumerTryWait"
    CONSUMER_WAIT = "ConsumerWait"
    CONSUMER_WORK = "ConsumerWork"
    CONSUMER_AUX_WORK = "ConsumerAuxWork"
    CONSUMER_RELEASE = "ConsumerRelease"

    @property
    def is_producer(self) -> bool:
        return self.value.startswith("Producer")

    @property
    def method(self) -> str:
        """The schedule-proxy method that records this stage (``acquire`` ...)."""
        return _STAGE_METHODS[self]

    @property
    def short(self) -> str:
        """A compact human label such as ``try_acquire`` or ``producer work``."""
        return _STAGE_SHORT[self]


_STAGE_METHODS = {
    Stage.PRODUCER_TRY_ACQUIRE: "try_acquire",
    Stage.PRODUCER_ACQUIRE: "acquire",
    Stage.PRODUCER_WORK: "producer_work",
    Stage.PRODUCER_AUX_WORK: "producer_aux_work",
    Stage.PRODUCER_COMMIT: "commit",
    Stage.CONSUMER_TRY_WAIT: "try_wait",
    Stage.CONSUMER_WAIT: "wait",
    Stage.CONSUMER_WORK: "consumer_work",
    Stage.CONSUMER_AUX_WORK: "consumer_aux_work",
    Stage.CONSUMER_RELEASE: "release",
}

_STAGE_SHORT = {
    Stage.PRODUCER_TRY_ACQUIRE: "try_acquire",
    Stage.PRODUCER_ACQUIRE: "acquire",
    Stage.PRODUCER_WORK: "producer work",
    Stage.PRODUCER_AUX_WORK: "producer aux",
    Stage.PRODUCER_COMMIT: "commit",
    Stage.CONSUMER_TRY_WAIT: "try_wait",
    Stage.CONSUMER_WAIT: "wait",
    Stage.CONSUMER_WORK: "consumer work",
    Stage.CONSUMER_AUX_WORK: "consumer aux",
    Stage.CONSUMER_RELEASE: "release",
}


class Family(str, Enum):
    """Colour family of a step: what kind of operation a reader sees."""

    ACQUIRE = "acquire"  # producer opens a slot (try_acquire / acquire)
    COMMIT = "commit"  # producer publishes a slot
    WAIT = "wait"  # consumer waits for a slot (try_wait / wait)
    RELEASE = "release"  # consumer frees a slot
    PRODUCER_WORK = "producer_work"
    CONSUMER_WORK = "consumer_work"
    AUX = "aux"  # auxiliary work, ignored by ordering checks
    QUEUE = "queue"  # any WorkQueue operation
    BARRIER = "barrier"  # PDL and other signal-only resources


class Section(str, Enum):
    """Where a step runs relative to the domain loop (TS's Head/Loop/Tail)."""

    HEAD = "head"
    LOOP = "loop"
    TAIL = "tail"


class BoundKind(str, Enum):
    """How a domain-loop bound was given."""

    INT = "int"  # a Python int fixed at trace time
    DYNAMIC = "dynamic"  # a Task method evaluated per work tile (``get_domain``)
    RUNTIME = "runtime"  # a DSL value only known when the kernel runs


@dataclass(frozen=True)
class Bound:
    """One ``domain_loop`` bound as the reader should see it."""

    kind: BoundKind
    text: str
    value: int | None = None

    @staticmethod
    def of_int(value: int) -> "Bound":
        return Bound(BoundKind.INT, str(value), value)


@dataclass(frozen=True)
class Literal:
    """A ``cutlass.Constexpr`` keyword literal captured at a call site."""

    name: str
    text: str  # repr() of the value, stable across runs for plain Python literals


@dataclass(frozen=True)
class Step:
    """One recorded pipeline op or work call."""

    uid: int  # TS ``unique_id``: order of recording within the schedule
    resource: str
    stage: Stage
    label: str | None  # work method name; None for plain pipeline ops
    call_index: int  # TS call id: per (section, resource, stage) counter
    section: Section
    family: Family
    literals: tuple[Literal, ...] = ()
    returns: tuple[str, ...] = ()  # task-local variable slot names produced

    @property
    def method(self) -> str:
        """What the user typed after the dot: ``get_item`` or ``acquire``."""
        return self.label or self.stage.method

    @property
    def title(self) -> str:
        return f"{self.resource}.{self.method}"


@dataclass(frozen=True)
class Route:
    """A dataflow edge: variable produced by one step feeds an argument of another."""

    source: int  # producing step uid
    variable: str  # task-local variable slot name
    destination: int  # consuming step uid
    argument: str  # parameter name on the consuming work method


class BlockKind(str, Enum):
    """The kind of a conditional region of the tree."""

    SKIPPABLE = "skippable"
    FIRST_ITER = "first_iter"
    LAST_ITER = "last_iter"
    EVERY = "every"
    WHEN_TRUE = "when_true"
    WHEN_FALSE = "when_false"


@dataclass(frozen=True)
class Condition:
    """The runtime value behind ``when_true`` / ``when_false``."""

    key: str  # stable text of the verifier key
    resource: str | None = None
    method: str | None = None
    variable: str | None = None
    step: int | None = None  # uid of the step that produced the value, if found
    explicit_key: bool = False  # the user passed key=

    @property
    def text(self) -> str:
        if self.resource and self.method:
            return f"{self.resource}.{self.method}() -> {self.variable}"
        return f"key={self.key}"


@dataclass(frozen=True)
class Block:
    """A guarded region: skippable, an iteration guard, or a runtime condition."""

    kind: BlockKind
    body: tuple["Node", ...]
    period: int | None = None  # EVERY
    start: int | None = None  # EVERY
    condition: Condition | None = None  # WHEN_TRUE / WHEN_FALSE

    @property
    def title(self) -> str:
        if self.kind is BlockKind.EVERY:
            return f"every({self.period}, start={self.start})"
        if self.kind in (BlockKind.WHEN_TRUE, BlockKind.WHEN_FALSE):
            assert self.condition is not None
            return f"{self.kind.value}({self.condition.text})"
        if self.kind is BlockKind.SKIPPABLE:
            return "skippable()"
        return f"{self.kind.value}()"


@dataclass(frozen=True)
class DomainLoop:
    """``with domain_loop(start, end, step, unroll=...)``."""

    start: Bound
    end: Bound
    step: Bound
    unroll: int | None
    body: tuple["Node", ...]

    @property
    def title(self) -> str:
        return (
            f"domain_loop({self.start.text}, {self.end.text}, {self.step.text}"
            f", unroll={self.unroll})"
        )

    def trip_count(self) -> int | None:
        """Iterations when every bound is a trace-time int, else None (any size: ``len(range)`` stops at 2**63).

        >>> DomainLoop(Bound.of_int(0), Bound.of_int(2**63), Bound.of_int(1), None, ()).trip_count() == 2**63
        True
        """
        if all(b.kind is BoundKind.INT for b in (self.start, self.end, self.step)):
            assert self.start.value is not None and self.end.value is not None
            assert self.step.value is not None
            return range_length(self.start.value, self.end.value, self.step.value)
        return None


def range_length(start: int, end: int, step: int) -> int:
    """``len(range(start, end, step))`` for ints of any size (0 for a zero step).

    >>> range_length(0, 10, 3), range_length(5, -5, -2), range_length(3, 0, 1), range_length(0, 2**64, 1) == 2**64
    (4, 5, 0, True)
    """
    if step > 0 and end > start:
        return (end - start + step - 1) // step
    if step < 0 and end < start:
        return (start - end - step - 1) // -step
    return 0


class SkipKind(str, Enum):
    """How the ``skip_if`` predicate of a work-tile loop was given."""

    QUEUE_METHOD = "queue_method"
    FUNCTION = "function"
    LAMBDA = "lambda"


@dataclass(frozen=True)
class SkipPredicate:
    kind: SkipKind
    name: str  # qualified name, e.g. ``MyQueue.skip_work_tile_if``
    source: str | None = None  # one-line source for lambdas, when available


class QueueKind(str, Enum):
    """Scheduling shape selected by the work queue."""

    NONE = "none"  # non-persistent: no WorkQueue
    STATIC = "static"  # static persistent: local arithmetic, no scheduler task
    CLC = "clc"  # CLC dynamic persistent: a scheduler task fetches tiles


@dataclass(frozen=True)
class WorkTileLoop:
    """``with work_tile_loop(wq, skip_if=...)`` — the persistent per-tile loop."""

    queue: str
    queue_kind: QueueKind
    skip_if: SkipPredicate | None
    body: tuple["Node", ...]

    @property
    def title(self) -> str:
        text = f"work_tile_loop({self.queue}"
        if self.skip_if is not None:
            text += f", skip_if={self.skip_if.name}"
        return text + f") [{self.queue_kind.value}]"


Node = Union[Step, Block, DomainLoop, WorkTileLoop]


@dataclass(frozen=True)
class ScheduleTree:
    """A whole recorded ``@schedule``: the tree plus its dataflow routes."""

    name: str
    resources: tuple[str, ...]  # resource names in parameter order
    body: tuple[Node, ...]
    routes: tuple[Route, ...] = ()
    from_lists: bool = False  # rebuilt from a Task's lists (TS keeps no tree); ``name`` is then the task's
    unrecovered: tuple[str, ...] = ()  # what the rebuild could not match (shown in the drawing's title)

    def walk(self) -> Iterator[Node]:
        """Pre-order walk over every node."""
        yield from walk_nodes(self.body)

    def steps(self) -> tuple[Step, ...]:
        """Every step in recording (execution) order."""
        return tuple(n for n in self.walk() if isinstance(n, Step))

    def step(self, uid: int) -> Step:
        for s in self.steps():
            if s.uid == uid:
                return s
        raise KeyError(f"schedule {self.name!r} has no step #{uid}")

    def domain_loop(self) -> DomainLoop | None:
        return next((n for n in self.walk() if isinstance(n, DomainLoop)), None)

    def work_tile_loop(self) -> WorkTileLoop | None:
        return next((n for n in self.walk() if isinstance(n, WorkTileLoop)), None)

    def blocks(self) -> tuple[Block, ...]:
        return tuple(n for n in self.walk() if isinstance(n, Block))


def children(node: Node) -> tuple[Node, ...]:
    """Direct children of a node (empty for a step)."""
    return () if isinstance(node, Step) else node.body


def walk_nodes(nodes: tuple[Node, ...]) -> Iterator[Node]:
    for node in nodes:
        yield node
        yield from walk_nodes(children(node))


__all__ = [
    "Block",
    "BlockKind",
    "Bound",
    "BoundKind",
    "Condition",
    "DomainLoop",
    "Family",
    "Literal",
    "Node",
    "QueueKind",
    "Route",
    "ScheduleTree",
    "Section",
    "SkipKind",
    "SkipPredicate",
    "Stage",
    "Step",
    "WorkTileLoop",
    "children",
    "range_length",
    "walk_nodes",
]
