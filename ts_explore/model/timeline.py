"""What one traced launch measured: per-warp step events (and, from :mod:`.hang`, where a hung kernel stopped).

Frozen, TS-free data. An instrumented kernel writes one event per step a warp
runs (step id, loop iteration, work tile, start and end in nanoseconds of the
GPU's global timer); the launcher decodes them into a :class:`Timeline`. A
kernel that hangs is read while it hangs: each warp's last blocking step
(entered, or left) comes back as :class:`WarpProgress` rows of a
:class:`HangReport`.

``Timeline.save(path)`` writes Chrome trace-event JSON (``traceEvents`` of
complete ``"X"`` events, one thread per warp, one process per CTA) that the
Perfetto UI and ``chrome://tracing`` open; :func:`ts_explore.model.trace_file.load_trace`
reads it back.

>>> e = TimelineEvent("load", 0, 4, 2, "smem.acquire", Stage.PRODUCER_ACQUIRE, Family.ACQUIRE, Section.LOOP, 3, 0,
...                   1000, 1750)
>>> e.duration_ns, e.where
(750, 'iteration 3')
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .plan import runs_of, span_text
from .schedule import Family, Section, Stage

FORMAT = "ts-explore timeline 1"
WORK_STAGES = frozenset({Stage.PRODUCER_WORK, Stage.CONSUMER_WORK, Stage.PRODUCER_AUX_WORK,
                         Stage.CONSUMER_AUX_WORK})
BLOCKING_STAGES = frozenset({Stage.PRODUCER_ACQUIRE, Stage.CONSUMER_WAIT})
STAGE_SETS = ("all", "work", "none")
MAX_REGISTERS = 255  # the most registers per thread PTX lets a kernel ask for (`.maxnreg`)


@dataclass(frozen=True)
class TraceSpec:
    """What an instrumented kernel records; part of the compile-cache key.

    ``stages``: ``"all"`` steps, only the producer/consumer ``"work"`` steps
    (the cheap setting), or ``"none"`` (progress only). ``ctas``: how many
    CTAs record events (0: every CTA), ``start`` the first of them (the
    others follow it); None (the default) lets the launch choose, from its
    plan, CTAs whose instrumented steps do not set the kernel's end
    (:func:`quiet_start`). ``capacity``: events kept
    per warp (later ones are counted as lost). ``progress``: every warp
    writes its last blocking step to host-mapped memory, so a hang can be
    diagnosed while it hangs. Those are system-scope stores over PCIe from
    every CTA before and after every acquire and wait (on an H200 they
    doubled the time of a bandwidth-bound pipelined copy), so progress is off
    unless asked for; a launch forced past the verifier always turns it on.
    ``registers``: a cap on the instrumented build's registers per thread
    (None: no cap); a launch that :attr:`splits` also tries caps of its
    own and keeps a capped build when it is clearly faster
    (:meth:`alternatives` says which and why).
    """

    stages: str = "all"
    ctas: int = 2
    capacity: int = 4096
    progress: bool = False
    start: int | None = None
    registers: int | None = None

    def __post_init__(self) -> None:
        if self.stages not in STAGE_SETS:
            raise ValueError(f"trace stages {self.stages!r} is not one of {', '.join(STAGE_SETS)}")
        if self.ctas < 0 or self.capacity < 1:
            raise ValueError(f"trace ctas={self.ctas} / capacity={self.capacity}: use ctas >= 0 and capacity >= 1")
        if self.start is not None and self.start < 0:
            raise ValueError(f"trace start={self.start}: the first recording CTA is an index >= 0 (or None: "
                             "chosen from the launch plan)")
        if self.registers is not None and not 1 <= self.registers <= MAX_REGISTERS:
            raise ValueError(f"trace registers={self.registers}: a register cap per thread is 1-255 (or None: "
                             "no cap)")

    @property
    def first_cta(self) -> int:
        """The first recording CTA (the others follow it); 0 until :meth:`placed` chose one."""
        return self.start or 0

    def placed(self, plan: Any) -> TraceSpec:
        """This spec with its recording CTAs fixed for ``plan`` (a :class:`~ts_explore.model.plan.LaunchPlan`).

        A ``start`` given stays; otherwise :func:`quiet_start` picks it.
        """
        return self if self.start is not None else replace(self, start=quiet_start(plan, self.ctas))

    def alternatives(self, plan: Any) -> tuple[TraceSpec, ...]:
        """Register caps worth timing against this spec's uncapped build: the plain kernel's count, and 255.

        Empty when no cap applies: the spec does not :attr:`splits`, sets its
        own ``registers``, or ``plan`` (a
        :class:`~ts_explore.model.plan.LaunchPlan`) does not know the plain
        kernel's count. Why caps matter: the compiler allocates registers
        and schedules instructions for the whole kernel, so a recording
        branch that needs more registers changes how the plain branch of
        the same kernel is built, and every CTA pays. Which build is fastest
        depends on the kernel, as measured on an H200 with two CTAs
        recording work steps: the threads-loader pipelined copy took
        1.039-1.054x uncapped and 1.000x capped at the plain kernel's count
        (its plain branch then compiles as the plain kernel does); a
        128-thread grid-stride copy took 1.032-1.043x uncapped (56
        registers), 1.030-1.076x at the plain count (40, with spills) and
        0.996-0.998x at the PTX maximum of 255 (59 registers: a cap that
        does not bind still changes the compiler's register budgeting). So
        a launch builds them all, times them against the plain kernel and
        keeps a capped one only when it is clearly faster
        (:func:`ts_explore.gpu.runner.kept_build`).

        >>> from types import SimpleNamespace as plan
        >>> [s.registers for s in TraceSpec(stages="work").alternatives(plan(registers=40))]
        [40, 255]
        >>> TraceSpec(ctas=0).alternatives(plan(registers=40)), TraceSpec().alternatives(plan(registers=None))
        ((), ())
        """
        count = getattr(plan, "registers", None)
        if not self.splits or self.registers is not None or count is None:
            return ()
        return tuple(replace(self, registers=cap) for cap in dict.fromkeys((min(count, MAX_REGISTERS), MAX_REGISTERS)))

    def records(self, stage: Stage) -> bool:
        """Whether a step of this stage gets a timeline event."""
        return self.stages == "all" or (self.stages == "work" and stage in WORK_STAGES)

    @property
    def events(self) -> bool:
        """Whether any step is recorded (False: progress only)."""
        return self.stages != "none"

    @property
    def splits(self) -> bool:
        """Whether the CTAs that record nothing run an uninstrumented copy of the schedule.

        True when only some CTAs record events and no progress is written
        (progress comes from every CTA): the kernel then branches once on the
        CTA index, so tracing two CTAs costs the other CTAs nothing per step.

        >>> TraceSpec(stages="work", ctas=2).splits, TraceSpec(ctas=0).splits, TraceSpec(progress=True).splits
        (True, False, False)
        """
        return self.events and self.ctas > 0 and not self.progress


def quiet_start(plan: Any, ctas: int) -> int:
    """The first of ``ctas`` consecutive CTAs whose instrumentation does not set the kernel's end.

    An instrumented step costs a few percent, so the CTAs that record run a
    little slower. When the grid takes more than one wave (more CTAs than
    fit on the GPU at once), CTAs 0, 1, ... finish in the first wave and
    later CTAs fill in behind them: trace those (0). When every CTA is
    resident at once, the kernel ends with its slowest CTA, and a static
    split hands out its units round-robin from CTA 0, so the first CTAs often
    carry one unit more (CTAs 0-1 of a 4096^3 GEMM on 132 SMs: 4 tiles, the
    last 16 CTAs 3): trace the last window of CTAs that all have work and
    carry the fewest units. Plans whose CTAs' work is not one number each
    (per-thread or overlapping instances) keep 0.
    """
    grid = plan.ctas
    if ctas <= 0 or ctas >= grid:
        return 0
    resident = plan.device.sms * plan.device.ctas_per_sm(plan.threads, plan.smem_bytes, plan.registers)
    if grid > resident:
        return 0
    units: dict[int, int] = {}
    for inst in plan.instances:
        if inst.threads or inst.iterations is None:
            return 0
        for span in inst.ctas:
            for cta in span:
                if cta in units:
                    return 0
                units[cta] = inst.iterations
    if len(units) != grid:
        return 0
    best: tuple[int, int] | None = None  # (most units in the window, -start)
    for start in range(grid - ctas + 1):
        window = [units[c] for c in range(start, start + ctas)]
        if min(window) > 0:
            key = (max(window), -start)
            best = key if best is None or key < best else best
    return -best[1] if best else 0


@dataclass(frozen=True)
class TaskWarps:
    """A task and the warps of a CTA that run it."""

    name: str
    warp_start: int
    warp_end: int  # exclusive


@dataclass(frozen=True)
class TimelineEvent:
    """One step one warp ran: when, which step of the drawn schedule, which iteration and tile."""

    task: str
    cta: int
    warp: int
    step: int  # uid of the step in the task's ScheduleTree (as drawn)
    label: str  # ``resource.method`` as in the diagrams
    stage: Stage
    family: Family
    section: Section
    iteration: int | None  # domain-loop iteration; None in HEAD/TAIL
    tile: int  # work tile (the CTA index for non-persistent tasks)
    start_ns: int  # relative to the timeline's origin
    end_ns: int

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def where(self) -> str:
        """``iteration 3`` / ``HEAD`` / ``TAIL``."""
        return f"iteration {self.iteration}" if self.section is Section.LOOP else self.section.value.upper()

    @property
    def blocking(self) -> bool:
        """An acquire or wait: time spent in it is time waiting for another task."""
        return self.stage in BLOCKING_STAGES or self.family in (Family.ACQUIRE, Family.WAIT)


@dataclass(frozen=True)
class Timeline:
    """The measured per-warp schedule of one launch (the traced CTAs)."""

    scenario: str
    events: tuple[TimelineEvent, ...]
    tasks: tuple[TaskWarps, ...]
    spec: TraceSpec = field(default_factory=TraceSpec)
    device: str = ""
    config: str = ""  # the config in words
    kernel_ns: int | None = None  # CUDA-event time of the traced launch
    origin_ns: int = 0  # low 32 bits of the global timer (ns) at time 0 (the earliest event)
    lost: tuple[tuple[int, int, int], ...] = ()  # (cta, warp, events not kept) where the capacity ran out
    undecoded: int = 0  # events recorded but not kept (a timeline keeps the first CTAs' up to a limit)

    # -- views ------------------------------------------------------------------------
    @property
    def ctas(self) -> tuple[int, ...]:
        return tuple(sorted({e.cta for e in self.events}))

    def warps(self, cta: int | None = None) -> tuple[tuple[int, int], ...]:
        """``(cta, warp)`` pairs with events, in order."""
        return tuple(sorted({(e.cta, e.warp) for e in self.events if cta is None or e.cta == cta}))

    def lane(self, cta: int, warp: int) -> tuple[TimelineEvent, ...]:
        """One warp's events in time order."""
        return tuple(sorted((e for e in self.events if e.cta == cta and e.warp == warp), key=lambda e: e.start_ns))

    def task_of(self, warp: int) -> str | None:
        return next((t.name for t in self.tasks if t.warp_start <= warp < t.warp_end), None)

    def only(self, *, cta: int | None = None, task: str | None = None) -> Timeline:
        """The same timeline restricted to one CTA and/or one task."""
        keep = tuple(e for e in self.events if (cta is None or e.cta == cta) and (task is None or e.task == task))
        return replace(self, events=keep)

    @property
    def span_ns(self) -> int:
        """First start to last end over all events."""
        if not self.events:
            return 0
        return max(e.end_ns for e in self.events) - min(e.start_ns for e in self.events)

    def summary(self) -> str:
        """One line: what was traced and how much came back."""
        text = (f"{self.scenario}: {len(self.events)} events from {len(self.warps())} warps of "
                f"{span_text(runs_of(self.ctas))} over {self.span_ns / 1e3:.1f} µs ({self.spec.stages} steps traced)")
        if self.lost:
            text += f"; {sum(n for _, _, n in self.lost)} events lost (capacity {self.spec.capacity} per warp)"
        if self.undecoded:
            text += f"; {self.undecoded} more events recorded by later CTAs, not kept"
        return text

    def __repr__(self) -> str:
        return f"Timeline({self.summary()})"

    # -- Chrome trace-event JSON --------------------------------------------------------
    def to_chrome(self) -> dict[str, Any]:
        """A Chrome trace-event document: one process per CTA, one thread per warp, complete events."""
        meta: list[dict[str, Any]] = []
        for cta, warp in self.warps():
            if warp == min(w for c, w in self.warps() if c == cta):
                meta.append({"name": "process_name", "ph": "M", "pid": cta, "tid": 0, "args": {"name": f"CTA {cta}"}})
                meta.append({"name": "process_sort_index", "ph": "M", "pid": cta, "tid": 0,
                             "args": {"sort_index": cta}})
            meta.append({"name": "thread_name", "ph": "M", "pid": cta, "tid": warp,
                         "args": {"name": f"warp {warp} · {self.task_of(warp) or '?'}"}})
            meta.append({"name": "thread_sort_index", "ph": "M", "pid": cta, "tid": warp, "args": {"sort_index": warp}})
        events = [_chrome_event(e) for e in sorted(self.events, key=lambda e: (e.cta, e.warp, e.start_ns))]
        other = {"format": FORMAT, "scenario": self.scenario, "device": self.device, "config": self.config,
                 "kernel_ns": self.kernel_ns, "origin_ns": self.origin_ns, "lost": [list(x) for x in self.lost],
                 "undecoded": self.undecoded,
                 "spec": asdict(self.spec),
                 "tasks": [[t.name, t.warp_start, t.warp_end] for t in self.tasks]}
        return {"traceEvents": meta + events, "displayTimeUnit": "ns", "otherData": other}

    def save(self, path: str | Path) -> Path:
        """Write Chrome trace-event JSON (open it in https://ui.perfetto.dev); returns the path."""
        path = Path(path)
        path.write_text(json.dumps(self.to_chrome(), indent=None, separators=(",", ":")) + "\n")
        return path


def _chrome_event(e: TimelineEvent) -> dict[str, Any]:
    args: dict[str, Any] = {"task": e.task, "step": e.step, "stage": e.stage.value, "family": e.family.value,
                            "section": e.section.value, "iteration": e.iteration, "tile": e.tile,
                            "start_ns": e.start_ns, "end_ns": e.end_ns}
    return {"name": e.label, "cat": e.family.value, "ph": "X", "ts": e.start_ns / 1e3,
            "dur": max(0, e.duration_ns) / 1e3, "pid": e.cta, "tid": e.warp, "args": args}


__all__ = [
    "BLOCKING_STAGES",
    "FORMAT",
    "WORK_STAGES",
    "TaskWarps",
    "Timeline",
    "TimelineEvent",
    "TraceSpec",
    "quiet_start",
]
