"""Why a traced kernel is slow: time each warp spends waiting, per pipeline and stage, and what bounds it.

Pure functions over a :class:`~ts_explore.model.timeline.Timeline` (a launch's
trace or one read back with ``load_trace``). A blocking event (an acquire or a
wait, :attr:`TimelineEvent.blocking`) is time a warp waits for another task:
a producer stage (``try_acquire``/``acquire``) waits for an **empty** slot of
the resource named before the dot of its label, a consumer stage
(``try_wait``/``wait``) for a **full** one. :func:`stalls` sums that time per
pipeline, stage and warp, per task, and follows the critical path back from
the kernel's last event (:mod:`.critical_path`); :meth:`Stalls.bottleneck`
names the largest wait in a sentence.

A warp's time is its active span (first step's start to last step's end), so
a share is "of the time this warp was running steps".

>>> from ts_explore.model.timeline import TaskWarps, Timeline, TimelineEvent
>>> from ts_explore.model import Family, Section, Stage
>>> def ev(task, warp, label, stage, family, start, end):
...     return TimelineEvent(task, 0, warp, 0, label, stage, family, Section.LOOP, 0, 0, start, end)
>>> t = Timeline("s", (ev("load", 0, "smem.acquire", Stage.PRODUCER_ACQUIRE, Family.ACQUIRE, 0, 1),
...                    ev("load", 0, "smem.commit", Stage.PRODUCER_COMMIT, Family.COMMIT, 1, 40),
...                    ev("store", 1, "smem.wait", Stage.CONSUMER_WAIT, Family.WAIT, 0, 60),
...                    ev("store", 1, "smem.read", Stage.CONSUMER_WORK, Family.CONSUMER_WORK, 60, 100)),
...              (TaskWarps("load", 0, 1), TaskWarps("store", 1, 2)))
>>> s = stalls(t)
>>> [(p.pipeline, p.side, p.wait_ns) for p in s.pipelines]
[('smem', 'empty', 1), ('smem', 'full', 60)]
>>> s.bottleneck()
'the store warp waits 60 % of its time for `smem` to fill: the load task (its producer) is the bound'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model.schedule import Stage
from .critical_path import CriticalPath, critical_path

if TYPE_CHECKING:
    from ..model.timeline import Timeline, TimelineEvent

EMPTY, FULL = "empty", "full"  # what a producer waits for / what a consumer waits for
QUIET = 0.05  # waits below this share of a task's time are not a bound worth naming


def pipeline_of(event: TimelineEvent) -> str:
    """The resource a step belongs to: the part of its label before the dot (``smem_ab.wait`` -> ``smem_ab``).

    >>> from types import SimpleNamespace as E
    >>> pipeline_of(E(label="smem_ab.try_wait")), pipeline_of(E(label="barrier"))
    ('smem_ab', 'barrier')
    """
    return event.label.split(".", 1)[0]


def side_of(stage: Stage) -> str:
    """``empty`` for a producer stage (waiting for a free slot), ``full`` for a consumer stage (for data).

    >>> side_of(Stage.PRODUCER_ACQUIRE), side_of(Stage.CONSUMER_TRY_WAIT)
    ('empty', 'full')
    """
    return EMPTY if stage.is_producer else FULL


@dataclass(frozen=True)
class WarpWait:
    """One warp's waits at one stage of one pipeline."""

    pipeline: str
    stage: Stage
    task: str
    cta: int
    warp: int
    count: int  # blocking steps
    wait_ns: int  # time inside them
    active_ns: int  # the warp's active span

    @property
    def side(self) -> str:
        return side_of(self.stage)

    @property
    def share(self) -> float:
        return self.wait_ns / self.active_ns if self.active_ns else 0.0


@dataclass(frozen=True)
class PipelineWait:
    """One pipeline and side (``empty``/``full``), summed over the warps of the task that waits."""

    pipeline: str
    side: str
    task: str
    warps: int
    count: int
    wait_ns: int
    active_ns: int  # summed active spans of those warps
    stages: tuple[tuple[Stage, int], ...]  # wait time per stage (try_wait and wait, ...)

    @property
    def share(self) -> float:
        """Of the waiting task's warp time."""
        return self.wait_ns / self.active_ns if self.active_ns else 0.0


@dataclass(frozen=True)
class TaskTime:
    """A task's warps: their summed active time and how much of it they waited."""

    task: str
    warps: int
    active_ns: int
    wait_ns: int

    @property
    def share(self) -> float:
        return self.wait_ns / self.active_ns if self.active_ns else 0.0


@dataclass(frozen=True)
class Stalls:
    """Where a traced kernel's warps wait, and the chain of steps its end waits on."""

    scenario: str
    warps: tuple[WarpWait, ...]
    pipelines: tuple[PipelineWait, ...]
    tasks: tuple[TaskTime, ...]
    path: CriticalPath
    span_ns: int
    roles: tuple[tuple[str, str | None, str | None], ...] = ()  # (pipeline, producer task, consumer task)
    timeline: Timeline | None = field(default=None, repr=False, compare=False)  # what the lanes are drawn from

    @property
    def wait_ns(self) -> int:
        """Every warp's waiting time, summed (equals the blocked time of the events)."""
        return sum(w.wait_ns for w in self.warps)

    def producer(self, pipeline: str) -> str | None:
        return next((p for name, p, _ in self.roles if name == pipeline), None)

    def consumer(self, pipeline: str) -> str | None:
        return next((c for name, _, c in self.roles if name == pipeline), None)

    def task(self, name: str) -> TaskTime | None:
        return next((t for t in self.tasks if t.task == name), None)

    def share(self, pipeline: str, side: str) -> float:
        """The waiting task's share of time spent at ``side`` of ``pipeline`` (0 when it never waits there)."""
        return next((p.share for p in self.pipelines if p.pipeline == pipeline and p.side == side), 0.0)

    def regime(self, pipeline: str) -> str | None:
        """What the waits on ``pipeline`` say: both ends wait (``latency-bound``), only the producer waits for
        empty slots (``consumer-bound``), only the consumer for full ones (``producer-bound``), or None."""
        full, empty = self.share(pipeline, FULL) >= QUIET, self.share(pipeline, EMPTY) >= QUIET
        return {(True, True): "latency-bound", (False, True): "consumer-bound",
                (True, False): "producer-bound"}.get((full, empty))

    def worst(self) -> PipelineWait | None:
        """The pipeline and side with the largest share of its task's time."""
        return max(self.pipelines, key=lambda p: (p.share, p.wait_ns), default=None)

    def frame(self) -> Any:
        """One row per warp, pipeline and stage (a pandas DataFrame): the per-warp numbers behind the sums."""
        import pandas as pd

        return pd.DataFrame([{"pipeline": w.pipeline, "waits for": w.side, "stage": w.stage.value, "task": w.task,
                              "cta": w.cta, "warp": w.warp, "count": w.count, "wait_ns": w.wait_ns,
                              "active_ns": w.active_ns, "share": w.share} for w in self.warps])

    def bottleneck(self) -> str:
        """The bound in one sentence (the largest wait, or the work steps when nobody waits much)."""
        worst = self.worst()
        if worst is None or worst.share < QUIET:
            top = self.path.heaviest()
            what = f"; the critical path spends most in `{top}`" if top else ""
            return f"no task waits {100 * QUIET:.0f} % of its time or more: the work steps are the bound{what}"
        who = _who(worst.task, worst.warps)
        pct = f"{100 * worst.share:.0f} %"
        if worst.side == FULL:
            producer = self.producer(worst.pipeline)
            text = f"{who} {pct} of {_its(worst.warps)} time for `{worst.pipeline}` to fill"
            other = self.share(worst.pipeline, EMPTY)
            if producer is not None and other >= QUIET:
                return (f"{text} while the {producer} task waits {100 * other:.0f} % for a free slot: too few slots "
                        f"in flight for the latency (latency-bound)")
            bound = f"the {producer} task (its producer)" if producer else "whoever fills it (not traced)"
            return f"{text}: {bound} is the bound"
        consumer = self.consumer(worst.pipeline)
        text = f"{who} {pct} of {_its(worst.warps)} time for a free slot of `{worst.pipeline}`"
        other = self.share(worst.pipeline, FULL)
        if consumer is not None and other >= QUIET:
            return (f"{text} while the {consumer} task waits {100 * other:.0f} % for it to fill: too few slots in "
                    "flight for the latency (latency-bound)")
        bound = f"the {consumer} task (which releases it)" if consumer else "whoever releases it (not traced)"
        return f"{text}: {bound} is the bound"

    def text(self) -> str:
        """The report: per pipeline and side, per task, the critical path and the bound."""
        waiting = len({(w.cta, w.warp) for w in self.warps})
        lines = [f"{self.scenario}: {waiting} warps wait, {self.wait_ns / 1e3:.1f} µs in all over a span of "
                 f"{self.span_ns / 1e3:.1f} µs",
                 f"{'pipeline':12s} {'waits for':9s} {'task':8s} {'warps':>5s} {'count':>6s} {'wait µs':>9s} "
                 f"{'share':>6s}"]
        for p in self.pipelines:
            lines.append(f"{p.pipeline:12s} {p.side:9s} {p.task:8s} {p.warps:5d} {p.count:6d} "
                         f"{p.wait_ns / 1e3:9.2f} {100 * p.share:5.1f}%")
        lines.append("per task: " + "; ".join(f"{t.task} waits {100 * t.share:.0f} % of {t.warps} warp(s)' time"
                                              for t in self.tasks))
        lines.append(self.path.sentence())
        lines.append("bound: " + self.bottleneck())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def _who(task: str, warps: int) -> str:
    return f"the {task} warp{'s' if warps != 1 else ''} wait{'' if warps != 1 else 's'}"


def _its(warps: int) -> str:
    return "their" if warps != 1 else "its"


def _active(events: list[TimelineEvent]) -> int:
    return max(e.end_ns for e in events) - min(e.start_ns for e in events) if events else 0


def roles(timeline: Timeline) -> tuple[tuple[str, str | None, str | None], ...]:
    """``(pipeline, producer task, consumer task)`` for every resource with a producer or consumer step.

    The producer is the task that acquires or commits it, the consumer the
    task that waits on or releases it (None: not traced, e.g. a static work
    queue whose tiles come from the launch).
    """
    out: dict[str, list[str | None]] = {}
    for e in timeline.events:
        side = None
        if e.stage in (Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_TRY_ACQUIRE, Stage.PRODUCER_COMMIT):
            side = 0
        elif e.stage in (Stage.CONSUMER_WAIT, Stage.CONSUMER_TRY_WAIT, Stage.CONSUMER_RELEASE):
            side = 1
        if side is not None:
            slot = out.setdefault(pipeline_of(e), [None, None])
            slot[side] = slot[side] or e.task
    return tuple((name, p, c) for name, (p, c) in out.items())


def stalls(timeline: Timeline) -> Stalls:
    """Waits per pipeline, stage and warp, per task, the critical path and the bound of ``timeline``.

    Raises ValueError for a timeline with no events (a trace with
    ``stages="none"`` or nothing recorded): there is nothing to attribute.
    """
    if not timeline.events:
        raise ValueError(f"{timeline.scenario or 'this timeline'} has no events; trace with trace=True (every "
                         "step) to see where warps wait")
    if timeline.spec.stages == "work":
        raise ValueError("this timeline records only work steps (trace='work'), so no wait was timed; trace with "
                         "trace=True to see where warps wait")
    lanes: dict[tuple[int, int], list[TimelineEvent]] = {}
    for e in timeline.events:
        lanes.setdefault((e.cta, e.warp), []).append(e)
    active = {k: _active(v) for k, v in lanes.items()}
    rows: dict[tuple[str, Stage, int, int], list[TimelineEvent]] = {}
    for e in timeline.events:
        if e.blocking:
            rows.setdefault((pipeline_of(e), e.stage, e.cta, e.warp), []).append(e)
    warps = tuple(WarpWait(p, stage, evs[0].task, cta, warp, len(evs), sum(e.duration_ns for e in evs),
                           active[(cta, warp)])
                  for (p, stage, cta, warp), evs in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][2],
                                                                                         kv[0][3], kv[0][1].value)))
    groups: dict[tuple[str, str, str], list[WarpWait]] = {}
    for w in warps:
        groups.setdefault((w.pipeline, w.side, w.task), []).append(w)
    pipelines = []
    for (p, side, task), ws in sorted(groups.items()):
        lanes_of = {(w.cta, w.warp) for w in ws}
        per_stage: dict[Stage, int] = {}
        for w in ws:
            per_stage[w.stage] = per_stage.get(w.stage, 0) + w.wait_ns
        pipelines.append(PipelineWait(p, side, task, len(lanes_of), sum(w.count for w in ws),
                                      sum(w.wait_ns for w in ws), sum(active[k] for k in lanes_of),
                                      tuple(sorted(per_stage.items(), key=lambda kv: kv[0].value))))
    order = [t.name for t in timeline.tasks]
    tasks = []
    for name in sorted({e.task for e in timeline.events}, key=lambda n: order.index(n) if n in order else 99):
        keys = [k for k, evs in lanes.items() if evs[0].task == name]
        tasks.append(TaskTime(name, len(keys), sum(active[k] for k in keys),
                              sum(e.duration_ns for k in keys for e in lanes[k] if e.blocking)))
    return Stalls(timeline.scenario, warps, tuple(pipelines), tuple(tasks), critical_path(timeline),
                  timeline.span_ns, roles(timeline), timeline)


__all__ = ["EMPTY", "FULL", "QUIET", "PipelineWait", "Stalls", "TaskTime", "WarpWait", "pipeline_of", "roles",
           "side_of", "stalls"]
