"""The critical path of a traced kernel: the chain of steps, across warps, that its last event waited on.

Pure. Walking back from the last event to end, each step's predecessor is
the later of two things it needed: the previous step of its own warp
(program order), and, for a blocking step, the step of another task that
let it through, found through the schedule's pipeline semantics:

* a consumer's ``k``-th ``wait`` on pipeline ``P`` is let through by the
  ``k``-th ``commit`` on ``P`` (of the producer warp that committed it last):
  the ring hands items over in order;
* a producer's ``acquire`` on ``P`` is let through by the latest
  ``release`` on ``P`` (any consumer warp of the CTA) that ended while it
  waited; when none did, the slot was already free.

A blocking step that really waited (longer than the timer's resolution)
was let through by its signal, even when the signal ended before the wait
began: the bytes a ``commit`` announced were still in flight (a TMA
transfer), and the time from the signal's end to the wait's end stays on
the waiting step. Any other step follows the later of the two. So the chain
accounts for the span from its first step to the kernel's last event.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.schedule import Stage

if TYPE_CHECKING:
    from ..model.timeline import Timeline, TimelineEvent

SLACK_NS = 32  # the global timer's resolution on Hopper: a release may be stamped one tick after the acquire ends


@dataclass(frozen=True)
class CriticalPath:
    """Steps in time order; ``links[i]`` says how step ``i`` follows step ``i - 1`` (``""`` for the first)."""

    steps: tuple[TimelineEvent, ...]
    links: tuple[str, ...]

    @property
    def length_ns(self) -> int:
        return self.steps[-1].end_ns - self.steps[0].start_ns if self.steps else 0

    def covered(self) -> tuple[int, ...]:
        """Time each step holds the path: from the previous step's end (its own start, for the first) to its end."""
        out = []
        for i, e in enumerate(self.steps):
            begin = e.start_ns if i == 0 else self.steps[i - 1].end_ns
            out.append(max(0, e.end_ns - begin))
        return tuple(out)

    def by_task(self) -> dict[str, int]:
        """Time on the path per task, largest first."""
        totals: dict[str, int] = {}
        for e, ns in zip(self.steps, self.covered()):
            totals[e.task] = totals.get(e.task, 0) + ns
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def by_step(self) -> dict[tuple[str, str], int]:
        """Time on the path per (task, step label), largest first."""
        totals: dict[tuple[str, str], int] = {}
        for e, ns in zip(self.steps, self.covered()):
            totals[(e.task, e.label)] = totals.get((e.task, e.label), 0) + ns
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def heaviest(self) -> str | None:
        """``task: label`` of the step that holds the path longest."""
        top = next(iter(self.by_step()), None)
        return f"{top[0]}: {top[1]}" if top else None

    def crossings(self) -> int:
        """How often the path moves to another warp through a pipeline."""
        return sum(1 for link in self.links if link and link != "program order")

    def sentence(self) -> str:
        """What the kernel's end waited on, in words."""
        if not self.steps:
            return "critical path: empty (no events)"
        total = sum(self.covered()) or 1
        parts = ", ".join(f"{task} {100 * ns / total:.0f} %" for task, ns in self.by_task().items())
        last = self.steps[-1]
        return (f"critical path: {len(self.steps)} steps over {self.length_ns / 1e3:.1f} µs ({parts}; "
                f"{self.crossings()} hand-overs between tasks); it ends with {last.label} of {last.task} warp "
                f"{last.warp} of CTA {last.cta}; longest on it: {self.heaviest()}")


def _signal_kinds(event: TimelineEvent) -> tuple[Stage, ...] | None:
    if event.stage in (Stage.CONSUMER_WAIT, Stage.CONSUMER_TRY_WAIT):
        return (Stage.PRODUCER_COMMIT,)
    if event.stage in (Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_TRY_ACQUIRE):
        return (Stage.CONSUMER_RELEASE,)
    return None


class _Index:
    """Per CTA and pipeline: each warp's commits and releases, and each warp's wait ordinals.

    Releases are kept sorted by their end (with their end times beside them),
    so the release that let an acquire through is found by bisection: the
    walk back over a trace of n events stays O(n log n), not O(n^2).
    """

    def __init__(self, timeline: Timeline) -> None:
        lanes: dict[tuple[int, int], list[TimelineEvent]] = {}
        for e in timeline.events:
            lanes.setdefault((e.cta, e.warp), []).append(e)
        self.lanes = {k: sorted(v, key=lambda e: (e.start_ns, e.end_ns)) for k, v in lanes.items()}
        self.position = {id(e): (k, i) for k, lane in self.lanes.items() for i, e in enumerate(lane)}
        self.commits: dict[tuple[int, str], dict[int, list[TimelineEvent]]] = {}
        self.releases: dict[tuple[int, str], list[TimelineEvent]] = {}
        self.ordinal: dict[int, int] = {}
        for (cta, warp), lane in self.lanes.items():
            counts: dict[tuple[str, Stage], int] = {}
            for e in lane:
                name = e.label.split(".", 1)[0]
                key = (name, e.stage)
                self.ordinal[id(e)] = counts.get(key, 0)
                counts[key] = counts.get(key, 0) + 1
                if e.stage is Stage.PRODUCER_COMMIT:
                    self.commits.setdefault((cta, name), {}).setdefault(warp, []).append(e)
                elif e.stage is Stage.CONSUMER_RELEASE:
                    self.releases.setdefault((cta, name), []).append(e)
        for key, found in self.releases.items():  # by end; equal ends keep the order they were found in
            found.sort(key=lambda r: r.end_ns)
        self.release_ends = {key: [r.end_ns for r in found] for key, found in self.releases.items()}

    def previous(self, e: TimelineEvent) -> TimelineEvent | None:
        key, i = self.position[id(e)]
        return self.lanes[key][i - 1] if i > 0 else None

    def signal(self, e: TimelineEvent) -> TimelineEvent | None:
        kinds = _signal_kinds(e)
        if kinds is None:
            return None
        name = e.label.split(".", 1)[0]
        if Stage.PRODUCER_COMMIT in kinds:
            k = self.ordinal[id(e)]
            lanes = self.commits.get((e.cta, name), {})
            found = [lane[k] for w, lane in lanes.items() if w != e.warp and k < len(lane)]
            return max(found, key=lambda s: s.end_ns, default=None)
        return self._release_during(e, name)

    def _release_during(self, e: TimelineEvent, name: str) -> TimelineEvent | None:
        """Another warp's release of ``name`` that ended last while ``e`` waited (the first such, on a tie)."""
        releases, ends = self.releases.get((e.cta, name), []), self.release_ends.get((e.cta, name), [])
        lo, hi = bisect.bisect_left(ends, e.start_ns), bisect.bisect_right(ends, e.end_ns + SLACK_NS)
        last = hi - 1
        while last >= lo and releases[last].warp == e.warp:
            last -= 1
        if last < lo:
            return None
        first_of_end = bisect.bisect_left(ends, ends[last], lo, last + 1)
        return next(r for r in releases[first_of_end:last + 1] if r.warp != e.warp)


def critical_path(timeline: Timeline) -> CriticalPath:
    """The chain of steps the kernel's last event waited on, first step first (ends at the last event)."""
    if not timeline.events:
        return CriticalPath((), ())
    index = _Index(timeline)
    current = max(timeline.events, key=lambda e: (e.end_ns, e.start_ns))
    chain: list[TimelineEvent] = [current]
    links: list[str] = []
    seen = {id(current)}
    while True:
        before = index.previous(current)
        signal = index.signal(current)
        blocked = current.duration_ns > SLACK_NS  # it waited: the signal (and what it started) ended the wait
        if (signal is not None and id(signal) not in seen and signal.end_ns <= current.end_ns + SLACK_NS
                and (blocked or before is None or signal.end_ns > before.end_ns)):
            link = f"`{current.label.split('.', 1)[0]}` {'full' if signal.stage is Stage.PRODUCER_COMMIT else 'empty'}"
            nxt = signal
        elif before is not None and id(before) not in seen:
            link, nxt = "program order", before
        else:
            break
        links.append(link)
        chain.append(nxt)
        seen.add(id(nxt))
        current = nxt
    chain.reverse()
    links.reverse()
    return CriticalPath(tuple(chain), ("", *links))


__all__ = ["CriticalPath", "SLACK_NS", "critical_path"]
