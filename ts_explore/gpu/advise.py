"""``advise``: from a traced launch's stalls and the scenario's controls, ranked changes proven SAFE first.

How a suggestion is made (the model is :mod:`ts_explore.analysis.pipeline_model`):

1. The trace's waits give each pipeline a ring profile: per item, the
   producer's and the consumer's own time and how long a slot is held;
   the period is ``T = max(B_producer, B_consumer, O / slots)``. Which term
   is largest is the regime: latency-bound (both sides wait; more slots
   help), consumer-bound (the producer waits for empty slots; more
   consumer warps help), producer-bound (the consumer waits for full
   slots, the producer never for empty ones; more producer warps help).
2. The controls that size a ring's slots or a task's warps are found by
   moving each one notch and recording the schedule again
   (:mod:`.advice_knobs`). Every value of those controls (and the best
   pair of a slots and a warps control) goes through the scenario's own
   coercion; a refused value is never offered.
3. Each accepted value's speedup is predicted: Amdahl's law over the ring
   loop's share of the traced CTA, times the change in how many CTAs run
   at once (kernel time ~ waves x period / CTAs, from the launch plans),
   capped, for copies, at the fastest reference copy of the same bytes the
   launch measured (no layout beats the memory system).
4. Values predicted to gain at least ``min_gain`` are verified, best
   first, on every distinct instance of the launch they would make
   (the launch gate's :func:`~ts_explore.gpu.safety.prove`); only those
   proven SAFE are offered, until ``top`` are.

``check=True`` launches the configuration and each suggestion (CUDA-event
medians, the plain build) and reports measured against predicted; on a
machine without a GPU it says so and returns the predictions only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..analysis.advice_rank import MIN_GAIN, Ranked, occupancy_factor, simplest_first
from ..analysis.pipeline_model import RingProfile, ring_profiles
from ..analysis.stalls import Stalls, stalls
from ..model.plan import DeviceLimits
from ..model.timeline import Timeline
from ..scenarios import Scenario, get
from ..scenarios.knobs import ConfigError, configure, knobs, option_text
from .advice_knobs import Role, Shape, roles, shape_of, values
from .errors import LaunchError



@dataclass(frozen=True)
class Suggestion:
    """One change: control values, the config they make, the predicted (and measured) speedup, and why."""

    changes: tuple[tuple[str, Any], ...]  # (control, value)
    config: Any
    predicted: float
    reason: str
    verdict: str  # what the gate proved about the launch it would make
    measured: float | None = None

    def change_text(self) -> str:
        return ", ".join(f"{name}={option_text(value)}" for name, value in self.changes)

    def text(self) -> str:
        line = f"{self.change_text()}: predicted {self.predicted:.2f}x"
        if self.measured is not None:
            line += f", measured {self.measured:.2f}x"
        return f"{line} - {self.reason}"


@dataclass(frozen=True)
class Advice:
    """The stall report, the ring profiles and the ranked suggestions for one scenario config."""

    scenario: str
    config: Any
    stalls: Stalls
    profiles: tuple[RingProfile, ...]
    suggestions: tuple[Suggestion, ...]
    passed_over: tuple[tuple[str, str], ...] = ()  # (change, why it is not offered)
    note: str = ""  # e.g. that nothing was launched for lack of a GPU
    baseline_ms: float | None = None  # the config's own median when check=True launched it

    @property
    def top(self) -> Suggestion | None:
        return self.suggestions[0] if self.suggestions else None

    def text(self) -> str:
        lines = [f"bound: {self.stalls.bottleneck()}"]
        for p in self.profiles:
            lines.append(f"model: {p.explain()}")
            seen = self.stalls.regime(p.pipeline)
            if seen is not None and seen != p.regime():
                lines.append(f"  the waits read {seen} but the per-item times {p.regime()}: with {p.items:.0f} items "
                             "per warp the ring's fill and drain weigh in the waits; the advice follows the model")
        if not self.profiles:
            lines.append("model: no traced pipeline has both a producer and a consumer task; nothing to predict")
        if self.suggestions:
            lines += [f"{i}. {s.text()}" for i, s in enumerate(self.suggestions, 1)]
        else:
            lines.append(f"no change of a pipeline's slots or a task's warps is predicted to gain "
                         f"{100 * (MIN_GAIN - 1):.0f} % or more")
        refused = [f"{c} ({why})" for c, why in self.passed_over]
        if refused:
            lines.append("not offered: " + "; ".join(refused[:6]) + (f"; and {len(refused) - 6} more"
                                                                     if len(refused) > 6 else ""))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        from ..render.stalls import advice_html

        return advice_html(self)


def _copy_cap(result: Any) -> float | None:
    """For a copy: the fastest reference copy of the same bytes over the kernel's rate (None: not a copy)."""
    run = result.runs[0] if result is not None and getattr(result, "runs", ()) else None
    if run is None or run.unit != "GB/s" or not run.references:
        return None
    best = max(r.rate() for r in run.references)
    return max(1.0, best / run.rate) if run.rate else None


def _predict(profiles: tuple[RingProfile, ...], now: Shape, new: Shape) -> tuple[float, str]:
    """The ring model's speedup for the shape change (the slowest affected ring), and why."""
    best: tuple[float, str] | None = None
    for p in profiles:
        stages = new.stage_map().get(p.pipeline, p.stages)
        warps = new.warp_map()
        pw = warps.get(p.producer, p.producer_warps) * p.producer_warps // max(1, now.warp_map().get(p.producer, 1))
        cw = warps.get(p.consumer, p.consumer_warps) * p.consumer_warps // max(1, now.warp_map().get(p.consumer, 1))
        if stages == p.stages and pw == p.producer_warps and cw == p.consumer_warps:
            continue
        gain = p.speedup(stages=stages, producer_warps=max(1, pw), consumer_warps=max(1, cw))
        why = (f"`{p.pipeline}` is {p.regime()}: the model's period goes from {p.period():.0f} to "
               f"{p.period(stages, max(1, pw), max(1, cw)):.0f} ns per item over {100 * p.loop_share:.0f} % "
               "of the traced CTA's span")
        if best is None or gain < best[0]:
            best = (gain, why)
    return best if best is not None else (1.0, "changes no traced ring")


def _source(source: Any, config: Any) -> tuple[Scenario, Any, Timeline, Any]:
    if isinstance(source, Timeline):
        if config is None:
            raise ValueError("advise(timeline, config): pass the config the trace ran (a loaded trace keeps it only "
                             f"as text: {source.config or 'none'}), e.g. get({source.scenario!r}).config(...)")
        return get(source.scenario), config, source, None
    timeline = getattr(source, "timeline", None)
    if timeline is None:
        raise ValueError("this launch recorded no timeline; launch with trace=True to get advice")
    return get(source.scenario), config if config is not None else source.config, timeline, source


def _sizes(scenario: Scenario, result: Any, sizes: Any) -> tuple[Any, ...]:
    if sizes is not None:
        return tuple(sizes)
    if result is not None and getattr(result, "plans", ()):
        return tuple(p.size for p in result.plans)
    from .plan import kernel_module

    from . import DEFAULT_SIZES

    return tuple(getattr(kernel_module(scenario), "DEFAULT_SIZES", DEFAULT_SIZES))


Changes = tuple[tuple[str, Any], ...]  # (control, value) pairs


def candidates(scenario: Scenario, config: Any,
               found: tuple[Role, ...]) -> tuple[list[tuple[Changes, Any]], list[tuple[str, str]]]:
    """Every accepted config that moves one role control (or a slots and a warps control together)."""
    table = {k.name: k for k in knobs(type(config))}
    accepted: list[tuple[Changes, Any]] = []
    refused: list[tuple[str, str]] = []
    singles: dict[str, list[Any]] = {}
    for name in dict.fromkeys(r.knob for r in found):
        for v in values(table[name], getattr(config, name)):
            try:
                accepted.append((((name, v),), configure(scenario, {name: v}, base=config)))
                singles.setdefault(name, []).append(v)
            except ConfigError as exc:
                refused.append((f"{name}={option_text(v)}", f"refused: {exc.cause}"))
    slot_knobs = [r.knob for r in found if r.kind == "stages"]
    warp_knobs = [r.knob for r in found if r.kind == "warps" and r.knob not in slot_knobs]
    for s in dict.fromkeys(slot_knobs):
        for w in dict.fromkeys(warp_knobs):
            for sv in singles.get(s, ()):
                for wv in singles.get(w, ()):
                    try:
                        accepted.append((((s, sv), (w, wv)), configure(scenario, {s: sv, w: wv}, base=config)))
                    except ConfigError:
                        continue
    return accepted, refused


def advise(source: Any, config: Any = None, *, sizes: Any = None, top: int = 3, min_gain: float = MIN_GAIN,
           check: bool = False, reps: int = 20, device: DeviceLimits | None = None) -> Advice:
    """Ranked changes to ``source``'s config (a traced :class:`LaunchResult`, or a :class:`Timeline` and ``config``).

    ``sizes``: the launch sizes to verify (and, with ``check``, to time)
    each suggestion at (default: the result's own, else the kernel's
    default). ``device``: the limits the launch plans assume (default: the
    result's GPU, else an assumed H200). See the module docstring for the
    model and the rules; every offered config was accepted by the
    scenario's coercion and proven SAFE on each instance of that launch.
    """
    from .plan import plans_for
    from .safety import prove

    scenario, config, timeline, result = _source(source, config)
    if not isinstance(config, scenario.config_type):
        raise TypeError(f"scenario {scenario.name!r} takes a {scenario.config_type.__name__}, got "
                        f"{type(config).__name__}")
    report = stalls(timeline)
    sizes = _sizes(scenario, result, sizes)
    limits = device or getattr(getattr(result, "device", None), "limits", None) or DeviceLimits.h200()
    now = shape_of(scenario, config)
    profiles = tuple(replace(p, stages=now.stage_map().get(p.pipeline)) for p in ring_profiles(timeline))
    found = roles(scenario, config, now)
    accepted, passed = candidates(scenario, config, found)
    base_plans = plans_for(scenario, config, sizes, limits)
    cap = _copy_cap(result)
    ranked: list[Ranked] = []
    for changes, cfg in accepted:
        try:
            gain, why = _predict(profiles, now, shape_of(scenario, cfg))
            new_plans = plans_for(scenario, cfg, sizes, limits)
        except (LaunchError, ValueError, TypeError) as exc:
            passed.append((", ".join(f"{n}={option_text(v)}" for n, v in changes), f"not planned: {exc}"))
            continue
        factor = occupancy_factor(base_plans[0], new_plans[0])
        gain *= factor
        if factor != 1.0:
            why += f"; CTAs at once x{1 / factor if factor < 1 else factor:.2f} ({'fewer' if factor < 1 else 'more'})"
        if cap is not None and gain > cap:
            gain, why = cap, why + f"; capped at {cap:.2f}x (the fastest reference copy of the same bytes)"
        ranked.append((gain, why, changes, cfg))
    offered: list[Suggestion] = []

    def safe(row: Ranked) -> bool:
        gain, why, changes, cfg = row
        gate = prove(scenario, cfg, plans_for(scenario, cfg, sizes, limits))
        if not gate.ok:
            passed.append((", ".join(f"{n}={option_text(v)}" for n, v in changes), "not proven SAFE: " + (
                gate.problem or "; ".join(p.describe() for p in gate.refused_by))))
            return False
        offered.append(Suggestion(changes, cfg, gain, why, "proven SAFE: " + gate.summary().replace("\n", "; ")))
        return True

    simplest_first(config, ranked, min_gain, accept=safe, top=top)
    advice = Advice(scenario.name, config, report, profiles, tuple(offered), tuple(passed))
    return measure(advice, scenario, sizes, reps) if check else advice


def measure(advice: Advice, scenario: Scenario, sizes: tuple[Any, ...], reps: int = 20) -> Advice:
    """Launch the config and each suggestion at ``sizes`` and fill in measured speedups (first size's medians).

    Without a GPU nothing is launched: the advice comes back with a note
    saying so and its predictions only.
    """
    from . import cuda_unavailable_reason, launch

    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        return replace(advice, note=f"no GPU here ({unavailable[1]}): nothing was launched; these are the "
                                    "model's predictions only")
    if not advice.suggestions:
        return replace(advice, note="nothing to launch: no suggestion")
    def median_ms(config: Any) -> float:
        return launch(scenario, config, sizes=list(sizes), reps=reps, references=False).runs[0].kernel.median_ms

    base = median_ms(advice.config)
    measured = [replace(s, measured=base / median_ms(s.config)) for s in advice.suggestions]
    return replace(advice, suggestions=tuple(measured), baseline_ms=base,
                   note=f"measured: medians of {reps} CUDA-event timings of the plain build at {sizes[0]}, "
                        f"this config {base:.4f} ms")


__all__ = ["Advice", "Suggestion", "advise", "candidates", "measure"]
