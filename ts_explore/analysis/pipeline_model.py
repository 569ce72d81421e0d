"""A throughput model of a producer/consumer ring, fitted to a trace, that predicts what a change would gain.

Pure. For a pipeline ``P`` with ``S`` slots, a producer task and a consumer
task, the steady-state time per item (the period) is bounded three ways::

    T = max(B_p, B_c, O / S)

* ``B_p``, ``B_c``: the producer's and the consumer's own time per item
  (their steps, not counting the waits on ``P``). Their work steps (loads,
  reads, stores, MMAs) split over the task's warps: with ``w`` warps
  instead of ``w0`` the work part scales by ``w0 / w``; steps that are
  per-warp overhead (barriers, try-steps) do not.
* ``O``: how long one slot is occupied when nothing queues: from the
  producer acquiring it to the data landing (read off the items the
  consumer waited for), plus the consumer's hold from its wait to its
  release. At most ``S`` slots are in flight, so at most
  ``S`` items per ``O`` pass (Little's law). The consumer's and the
  producer's work inside ``O`` scales with their warps as above.

Which bound is largest names the regime: ``O / S`` largest is
**latency-bound** (both sides wait: producer for empty, consumer for full;
more slots help), ``B_c`` largest **consumer-bound** (the producer waits for
empty, the consumer rarely waits: more consumer warps help), ``B_p`` largest
**producer-bound** (the consumer waits for full, the producer never waits
for empty: more producer warps help, more slots do not). All quantities are
means over the traced warps of one CTA, then over the traced CTAs.

A change's predicted speedup on the traced CTA is Amdahl's law over the part
of its span the ring's loop takes (``f``)::

    speedup = 1 / (1 - f + f * T_new / T_now)

with ``T_now`` and ``T_new`` both from the model (so a model that misfits
the measured period by a constant factor still ranks changes right; the fit
is reported).

>>> m = RingProfile("smem", "load", "store", items=16, period_ns=400, producer_busy_ns=100,
...                 consumer_busy_ns=150, producer_work_ns=60, consumer_work_ns=120, occupancy_ns=1600,
...                 loop_share=0.9, stages=4, producer_warps=1, consumer_warps=4)
>>> m.regime(), round(m.period(), 1)
('latency-bound', 400.0)
>>> round(m.speedup(stages=8), 2)       # O/S halves: the period goes from 400 to 200 ns
1.82
>>> round(m.speedup(consumer_warps=8), 2)   # a latency-bound ring barely moves with more consumer warps
1.03
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..model.schedule import Stage
from .stalls import pipeline_of, roles

if TYPE_CHECKING:
    from ..model.timeline import Timeline, TimelineEvent

WORK_STAGES = (Stage.PRODUCER_WORK, Stage.CONSUMER_WORK)  # steps whose time splits over a task's warps


@dataclass(frozen=True)
class RingProfile:
    """One pipeline's measured per-item times (means over the traced warps and CTAs) and its current shape."""

    pipeline: str
    producer: str
    consumer: str
    items: float  # items per consumer warp
    period_ns: float  # measured time per item of the consumer's loop
    producer_busy_ns: float  # per item, the producer's steps other than its waits on this pipeline
    consumer_busy_ns: float
    producer_work_ns: float  # the part of the busy time in work steps (splits over the task's warps)
    consumer_work_ns: float
    occupancy_ns: float  # fill (acquire end to full) plus hold (wait end to release end) of one slot
    loop_share: float  # of the traced CTA's span, the consumer's loop over this pipeline
    stages: int | None = None  # slots (None: not known from the trace alone)
    producer_warps: int = 1
    consumer_warps: int = 1

    def with_stages(self, stages: int | None) -> RingProfile:
        return replace(self, stages=stages)

    def _bounds(self, stages: int, producer_warps: int, consumer_warps: int) -> tuple[float, float, float]:
        a = self.consumer_warps / consumer_warps
        b = self.producer_warps / producer_warps
        bc = self.consumer_busy_ns - self.consumer_work_ns * (1 - a)
        bp = self.producer_busy_ns - self.producer_work_ns * (1 - b)
        occupancy = (self.occupancy_ns - min(self.consumer_work_ns, self.occupancy_ns) * (1 - a)
                     - min(self.producer_work_ns, self.occupancy_ns) * (1 - b))
        return bp, bc, max(occupancy, 0.0) / max(1, stages)

    def period(self, stages: int | None = None, producer_warps: int | None = None,
               consumer_warps: int | None = None) -> float:
        """The model's time per item for this shape (the current one by default)."""
        s = stages if stages is not None else (self.stages or 1)
        return max(self._bounds(s, producer_warps or self.producer_warps, consumer_warps or self.consumer_warps))

    def regime(self) -> str:
        """``latency-bound``, ``consumer-bound`` or ``producer-bound``: the largest of the three bounds now."""
        bp, bc, lat = self._bounds(self.stages or 1, self.producer_warps, self.consumer_warps)
        names = ("producer-bound", "consumer-bound", "latency-bound")
        return names[max(range(3), key=(bp, bc, lat).__getitem__)]

    def fit(self) -> float:
        """The model's period now over the measured one (1.0: exact)."""
        return self.period() / self.period_ns if self.period_ns else 1.0

    def speedup(self, stages: int | None = None, producer_warps: int | None = None,
                consumer_warps: int | None = None) -> float:
        """Predicted kernel speedup on the traced CTA (Amdahl over the loop's share of its span)."""
        now = self.period()
        new = self.period(stages, producer_warps, consumer_warps)
        if now <= 0 or new <= 0:
            return 1.0
        f = min(1.0, max(0.0, self.loop_share))
        return 1.0 / (1.0 - f + f * new / now)

    def explain(self) -> str:
        """The three bounds now, in words."""
        bp, bc, lat = self._bounds(self.stages or 1, self.producer_warps, self.consumer_warps)
        slots = f"{self.stages} slots" if self.stages else "slots unknown"
        return (f"`{self.pipeline}` ({slots}): per item the {self.producer} task needs {bp:.0f} ns, the "
                f"{self.consumer} task {bc:.0f} ns, the ring {lat:.0f} ns (a slot is held {self.occupancy_ns:.0f} "
                f"ns); measured {self.period_ns:.0f} ns per item, model/measured {self.fit():.2f}: {self.regime()}")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def _occupancy(acquires: list[TimelineEvent], consumers: list[tuple[list[TimelineEvent], list[TimelineEvent]]],
               slack: int = 32) -> float:
    """How long a slot is held when nothing queues: the fill (acquire to full) plus the consumer's hold.

    The fill is read off the items the consumer had to wait for (then its
    wait ended when the data landed); the hold is wait end to release end.
    A filled slot that waits for a busy consumer is queueing, not latency,
    so it is left out (it vanishes when the consumer gets faster).
    """
    fills, holds = [], []
    for waits, releases in consumers:
        for k, wait in enumerate(waits):
            if k < len(acquires) and wait.duration_ns > slack:
                fills.append(float(wait.end_ns - acquires[k].end_ns))
            if k < len(releases):
                holds.append(float(releases[k].end_ns - wait.end_ns))
    if not fills:  # the consumer never waited: the fill is at most the time until it looked
        fills = [float(w.end_ns - acquires[k].end_ns) for waits, _ in consumers for k, w in enumerate(waits)
                 if k < len(acquires)]
    return max(0.0, _median(fills)) + _mean(holds)


def _per_cta(lanes: dict[int, list[TimelineEvent]], pipeline: str, producer: str,
             consumer: str) -> dict[str, float] | None:
    """One CTA's per-item measures of ``pipeline`` from its lanes (warp -> events in time order)."""

    def on(e: TimelineEvent, *stages: Stage) -> bool:
        return e.stage in stages and pipeline_of(e) == pipeline

    cons = [lane for lane in lanes.values() if lane[0].task == consumer]
    prod = [lane for lane in lanes.values() if lane[0].task == producer]
    if not cons or not prod:
        return None
    c_rows, p_rows = [], []
    for lane in cons:
        waits = [e for e in lane if on(e, Stage.CONSUMER_WAIT)] or [e for e in lane if on(e, Stage.CONSUMER_TRY_WAIT)]
        releases = [e for e in lane if on(e, Stage.CONSUMER_RELEASE)]
        if not waits:
            continue
        # The loop from the first item's arrival: the ring's first fill is latency no change of shape removes.
        first = waits[0].end_ns
        last = max(e.end_ns for e in lane if pipeline_of(e) == pipeline)
        inside = [e for e in lane if first <= e.start_ns and e.end_ns <= last]
        blocked = sum(e.duration_ns for e in inside if e.blocking)
        work = sum(e.duration_ns for e in inside if e.stage in WORK_STAGES and not e.blocking)
        n = len(waits)
        c_rows.append((n, (last - first) / n, (last - first - blocked) / n, work / n, waits, releases, last - first))
    for lane in prod:
        acquires = [e for e in lane if on(e, Stage.PRODUCER_ACQUIRE)] or [e for e in lane
                                                                          if on(e, Stage.PRODUCER_TRY_ACQUIRE)]
        if not acquires:
            continue
        first = min(e.start_ns for e in lane if pipeline_of(e) == pipeline)
        last = max(e.end_ns for e in lane if pipeline_of(e) == pipeline)
        inside = [e for e in lane if first <= e.start_ns and e.end_ns <= last]
        blocked = sum(e.duration_ns for e in inside if e.blocking and pipeline_of(e) == pipeline)
        work = sum(e.duration_ns for e in inside if e.stage in WORK_STAGES and not e.blocking)
        n = len(acquires)
        p_rows.append((n, (last - first - blocked) / n, work / n, acquires))
    if not c_rows or not p_rows:
        return None
    occupancy = _occupancy(p_rows[0][3], [(row[4], row[5]) for row in c_rows])
    span = max(e.end_ns for lane in lanes.values() for e in lane) - min(e.start_ns for lane in lanes.values()
                                                                        for e in lane)
    return {"items": _mean([r[0] for r in c_rows]), "period": _mean([r[1] for r in c_rows]),
            "consumer_busy": _mean([r[2] for r in c_rows]), "consumer_work": _mean([r[3] for r in c_rows]),
            "producer_busy": _mean([r[1] for r in p_rows]), "producer_work": _mean([r[2] for r in p_rows]),
            "occupancy": occupancy,
            "loop_share": _mean([r[6] for r in c_rows]) / span if span else 0.0,
            "producer_warps": len(p_rows), "consumer_warps": len(c_rows)}


def ring_profiles(timeline: Timeline, stages: dict[str, int] | None = None) -> tuple[RingProfile, ...]:
    """A :class:`RingProfile` for every traced pipeline with both a producer and a consumer task.

    ``stages`` gives each pipeline's slots (from the recorded schedule); a
    pipeline not named keeps ``stages=None`` (its ring bound then assumes 1).
    """
    by_cta: dict[int, dict[int, list[TimelineEvent]]] = {}
    for e in timeline.events:
        by_cta.setdefault(e.cta, {}).setdefault(e.warp, []).append(e)
    for lanes in by_cta.values():
        for lane in lanes.values():
            lane.sort(key=lambda e: (e.start_ns, e.end_ns))
    out = []
    for name, producer, consumer in roles(timeline):
        if producer is None or consumer is None or producer == consumer:
            continue
        rows = [r for r in (_per_cta(lanes, name, producer, consumer) for lanes in by_cta.values()) if r]
        if not rows:
            continue
        mean = {k: _mean([float(r[k]) for r in rows]) for k in rows[0]}
        out.append(RingProfile(name, producer, consumer, items=mean["items"], period_ns=mean["period"],
                               producer_busy_ns=mean["producer_busy"], consumer_busy_ns=mean["consumer_busy"],
                               producer_work_ns=mean["producer_work"], consumer_work_ns=mean["consumer_work"],
                               occupancy_ns=mean["occupancy"], loop_share=mean["loop_share"],
                               stages=(stages or {}).get(name), producer_warps=round(mean["producer_warps"]),
                               consumer_warps=round(mean["consumer_warps"])))
    return tuple(out)


__all__ = ["RingProfile", "WORK_STAGES", "ring_profiles"]
