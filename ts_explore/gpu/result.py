"""What a launch reports: per-size timings, reference copies, and correctness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.plan import GateReport, LaunchPlan
from ..model.timeline import Timeline
from .device import DeviceInfo
from .reference import Mismatch
from .timing import MEMCPY, TORCH, Timing


@dataclass(frozen=True)
class SizeRun:
    """One problem size: the kernel's timing, references doing the same work, and mismatches."""

    elements: int
    bytes_moved: int
    grid: int
    kernel: Timing
    references: tuple[Timing, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()
    checked: bool = True
    shape: str = ""  # the problem in words when it is not a flat size (e.g. ``8192x8192x8192``)
    timeline: Timeline | None = None  # the instrumented first run's per-warp trace (launch(..., trace=...))
    traced_ms: float | None = None  # how long that instrumented run took (CUDA events)
    traced_timing: Timing | None = None  # the instrumented build timed like the plain one (launch(time_trace=True))
    traced_baseline: Timing | None = None  # the plain build, launched in turn with the instrumented one
    outputs: dict[str, Any] | None = None  # launch(keep_output=True): output name -> host numpy array
    sm_clock_mhz: int | None = None  # the SM clock read while the timed rounds ran (GPU-made problems; NVML)

    def overhead(self) -> float | None:
        """Instrumented over plain median time (``launch(..., time_trace=True)``), e.g. 1.03.

        The plain time is the one taken in alternation with the instrumented
        build (same rounds), falling back to the plain build's own timing.
        """
        if self.traced_timing is None:
            return None
        plain = self.traced_baseline or self.kernel
        return self.traced_timing.median_ms / plain.median_ms

    @property
    def ok(self) -> bool:
        return self.checked and all(m.count == 0 for m in self.mismatches)

    @property
    def gbps(self) -> float:
        return self.kernel.gbps()

    @property
    def rate(self) -> float:
        """The kernel's figure of merit (median): TFLOP/s for arithmetic, GB/s for copies."""
        return self.kernel.rate()

    @property
    def unit(self) -> str:
        return self.kernel.unit

    @property
    def label(self) -> str:
        """The size in words: the shape, or the bytes moved."""
        if self.shape:
            return self.shape
        mib = self.elements * 4 / 2**20
        return f"{mib:.0f} MiB" if mib >= 1 else f"{self.elements * 4 / 1024:.0f} KiB"

    def reference(self, label: str) -> Timing | None:
        return next((r for r in self.references if r.label == label), None)

    def ratio(self, label: str | None = None) -> float | None:
        """Kernel rate over a reference's (median vs median); the first reference by default."""
        ref = self.reference(label) if label is not None else (self.references[0] if self.references else None)
        return self.rate / ref.rate() if ref is not None else None


@dataclass(frozen=True)
class LaunchResult:
    """A finished launch. Refusals and failures raise :class:`~ts_explore.launch.LaunchError` instead."""

    scenario: str
    config: Any
    device: DeviceInfo
    runs: tuple[SizeRun, ...]
    compile_s: float  # spent compiling (or looking up the cache) in this launch
    first_compile_s: float  # what compiling this config cost the first time
    cache_hit: bool
    verdict: str  # what the gate said before launching, one line per distinct instance
    forced: bool = False
    plans: tuple[LaunchPlan, ...] = ()  # one per size, as launched
    gate: GateReport | None = None  # what was proven about each instance
    edits: tuple[Any, ...] = ()  # launch(repair=...): the repair's edits, written onto the kernel's build
    tuned: tuple[str, ...] = ()  # per tuned size: 'MxNxK: tuned: <config> (table <file>, measured N TFLOP/s)'

    @property
    def ok(self) -> bool:
        """Every size checked and every output exactly as the host reference."""
        return all(r.ok for r in self.runs)

    @property
    def verdicts(self) -> tuple[Any, ...]:
        """The Verdicts the launch gate proved before launching, one per distinct instance (``gate.proven`` says which)."""
        return self.gate.verdicts if self.gate is not None else ()

    @property
    def timeline(self) -> Timeline | None:
        """The per-warp trace of the first size's instrumented run (None unless launched with ``trace=``)."""
        return next((r.timeline for r in self.runs if r.timeline is not None), None)

    def compare(self, cta: int | None = None) -> Any:
        """The traced warps (of ``cta``, or all) checked step by step against the schedule recorded on the CPU."""
        from ..scenarios import get
        from .trace_compare import compare

        timeline, plan = self.traced_run()
        return compare(get(self.scenario), self.config, plan, timeline, cta, self.edits)

    def advise(self, *, check: bool = False, top: int = 3, **kwargs: Any) -> Any:
        """Ranked control changes from this launch's stalls, each proven SAFE (:func:`ts_explore.gpu.advise.advise`).

        ``check=True`` launches the suggestions and reports measured against predicted speedups.
        """
        from .advise import advise

        if self.edits:
            raise ValueError("advise() ranks changes of the scenario's controls, and this launch ran a repair the "
                             "scenario's schedule does not have; put the repair into the schedule (its source_diff "
                             "shows the edit), launch that, then advise")
        return advise(self, check=check, top=top, **kwargs)

    def traced_run(self) -> tuple[Timeline, LaunchPlan]:
        """The first traced size's timeline and the launch plan it ran under (ValueError naming the fix if none)."""
        for run, plan in zip(self.runs, self.plans):
            if run.timeline is not None:
                return run.timeline, plan
        raise ValueError("this launch recorded no timeline; launch with trace=True")

    @property
    def best(self) -> SizeRun:
        return max(self.runs, key=lambda r: r.rate)

    def summary(self) -> str:
        """A few lines a notebook prints."""
        head = (f"{self.scenario} on {self.device.name} ({self.device.arch}); compile "
                f"{'cache hit, ' if self.cache_hit else ''}{self.compile_s:.3f} s "
                f"(first compile {self.first_compile_s:.2f} s)")
        lines = [head, ("verifier (FORCED past a failure): " if self.forced else "verifier: ")
                 + ("with the repair's edits written on: " if self.edits else "") + self.verdict.replace("\n", "; ")]
        lines += [f"  {note}" for note in self.tuned]
        for r in self.runs:
            refs = ", ".join(f"{t.label} {t.rate():.0f} {t.unit}" for t in r.references)
            state = "correct" if r.ok else ("not checked" if not r.checked else
                                            "WRONG: " + "; ".join(m.text for m in r.mismatches if m.count))
            size = r.shape or f"{r.elements:>12,d} elements"
            clock = f" at SM {r.sm_clock_mhz} MHz" if r.sm_clock_mhz else ""
            lines.append(f"  {size}, {r.grid} CTAs: {r.kernel.median_ms:.4f} ms, {r.rate:.0f} {r.unit}"
                         + (f" (refs: {refs})" if refs else "") + clock + f" - {state}")
        if self.device.peak_gbps and any(r.unit == "GB/s" for r in self.runs):
            lines.append(f"  device peak (clock x bus width): {self.device.peak_gbps:.0f} GB/s")
        for r in self.runs:
            if r.traced_ms is not None:
                lines.append(f"  instrumented first run ({r.elements:,d} elements): {r.traced_ms:.4f} ms"
                             + (f"; {r.timeline.summary()}" if r.timeline is not None else ""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.summary())


__all__ = ["MEMCPY", "TORCH", "LaunchResult", "SizeRun"]
