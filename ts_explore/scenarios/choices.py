"""What each control may offer in the config it sits in, judged by the scenario's own check.

A value a control offers must be one the scenario accepts together with every
other setting as it is. :func:`choices` asks the scenario's check for each
dropdown option and finds the accepted range and step of each slider around its
value (K in steps of 16 for fp8, where the knob declares 8), and says why the
rest is not offered. :func:`adjust` resolves a refusal that a
change of one control causes in another (fewer CTAs than the viewed CTA, no
work queue while tiles are over-launched) by moving the other control to its
nearest accepted value. A scenario's ``inactive`` function names controls that
change nothing for the current config (and why); they are shown disabled.

There is one judge (``Scenario.check``); this module only asks it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .knobs import ConfigError, Knob, callable_text, knobs, option_text

MAX_REASONS = 3  # values named in a tooltip before "..."
MAX_STRIDE = 16  # a slider's accepted step is at most this many of its declared steps
NEAR_POSITIONS = 64  # positions either side a stranded slider is tried at before its ends


@dataclass(frozen=True)
class Choice:
    """What one control offers now: dropdown ``options``, or a slider's ``low``..``high`` in ``step``s; ``why`` the
    rest is not.

    ``active`` is False when the control changes nothing for this config (or
    only one value is accepted): the control is shown disabled with ``why``.
    """

    name: str
    options: tuple[Any, ...] | None = None
    low: int | None = None
    high: int | None = None
    active: bool = True
    why: str = ""
    step: int | None = None

    def values(self) -> tuple[int, ...] | None:
        """Every slider position offered (None for a dropdown or a control without a range)."""
        if self.low is None or self.high is None:
            return None
        return tuple(range(self.low, self.high + 1, self.step or 1))


def refusal(scenario: Any, config: Any) -> ConfigError | None:
    """The scenario's refusal of ``config`` as a ConfigError, or None when it is accepted."""
    try:
        scenario.check(config)
    except ConfigError as exc:
        return exc
    except (ValueError, TypeError) as exc:
        return ConfigError(str(exc))
    return None


def option_values(k: Knob) -> tuple[Any, ...] | None:
    """Every value a dropdown or checkbox knob can hold (None for sliders and text)."""
    if k.options is not None:
        return tuple(k.options)
    if k.kind == "enum":
        return tuple(k.type)
    if k.kind == "bool":
        return (False, True)
    return None


def slider_bounds(k: Knob) -> tuple[int, int, int] | None:
    """A declared int knob's ``(min, max, step)``; None when it declares no range."""
    if k.kind != "int" or k.min is None or k.max is None:
        return None
    return int(k.min), int(k.max), int(k.step or 1)


def _reason_text(refused: list[tuple[Any, ConfigError]]) -> str:
    by_cause: dict[str, list[str]] = {}
    for value, err in refused:
        by_cause.setdefault(err.cause, []).append(option_text(value))
    parts = []
    for cause, values in list(by_cause.items())[:MAX_REASONS]:
        parts.append(f"{', '.join(values)}: {cause}")
    more = "; ..." if len(by_cause) > MAX_REASONS else ""
    return "not offered with the other settings: " + "; ".join(parts) + more


def _edge(ok: Callable[[int], bool], inside: int, outside: int) -> int:
    """The accepted value nearest ``outside`` on the way from ``inside`` (accepted) to ``outside`` (refused)."""
    while abs(outside - inside) > 1:
        mid = (inside + outside) // 2
        if ok(mid):
            inside = mid
        else:
            outside = mid
    return inside


def _stride(ok: Callable[[int], bool], value: int, lo: int, hi: int, step: int) -> int:
    """The step between accepted values around ``value``: the declared ``step`` times the smallest multiple that
    lands on an accepted neighbour (fp8's K: 16 where the knob declares 8); ``step`` when no neighbour is accepted.
    """
    for times in range(1, MAX_STRIDE + 1):
        for v in (value + times * step, value - times * step):
            if lo <= v <= hi and ok(v):
                return times * step
    return step


def _slider_range(scenario: Any, config: Any, k: Knob) -> tuple[int, int, int, list[tuple[Any, ConfigError]]]:
    """The accepted interval around the knob's current value, on the grid of its accepted step.

    The scenario's ranges are intervals of that grid (a bound, a multiple);
    the grid is anchored at the current value so that every position is one.
    """
    lo, hi, declared = slider_bounds(k)  # type: ignore[misc]
    value = getattr(config, k.name)
    errors: dict[int, ConfigError] = {}

    def accepted(v: int) -> bool:
        return pick(scenario, config, k.name, v)[1] is None

    step = _stride(accepted, value, lo, hi, declared)
    base = value - (value - lo) // step * step  # the lowest grid position inside the knob's bounds

    def ok(i: int) -> bool:
        _, err = pick(scenario, config, k.name, base + i * step)
        if err is not None:
            errors[i] = err
        return err is None

    here, last = (value - base) // step, (hi - base) // step
    top = last if ok(last) else _edge(ok, here, last)
    bottom = 0 if ok(0) else _edge(ok, here, 0)
    refused = []
    if top < last:
        refused.append((f"{base + (top + 1) * step} and above", errors[top + 1]))
    if bottom > 0:
        refused.append((f"{base + (bottom - 1) * step} and below", errors[bottom - 1]))
    if step != declared:
        between = value + declared
        err = pick(scenario, config, k.name, between)[1] if between <= hi else None
        if err is not None:
            refused.append((f"values between steps of {step} (e.g. {between})", err))
    return base + bottom * step, base + top * step, step, refused


def pick(scenario: Any, config: Any, name: str, value: Any) -> tuple[Any, ConfigError | None]:
    """``config`` with ``name`` set to ``value`` as a user would pick it: other knobs adjusted, or the refusal."""
    trial = dataclasses.replace(config, **{name: value})
    err = refusal(scenario, trial)
    if err is None:
        return trial, None
    adjusted, _ = adjust(scenario, trial, keep=name)
    again = refusal(scenario, adjusted)
    return (adjusted, None) if again is None else (trial, again)  # the refusal no adjustment resolves


def offered(scenario: Any, config: Any, k: Knob, inactive: str | None = None) -> Choice:
    """What the control of knob ``k`` offers for ``config`` (which the scenario accepts).

    A value is offered when the scenario accepts it, directly or once the
    knobs its check names are adjusted (:func:`pick`).
    """
    values = option_values(k)
    if values is not None:
        accepted, refused = [], []
        for v in values:
            _, err = pick(scenario, config, k.name, v)
            (accepted if err is None else refused).append(v if err is None else (v, err))
        why = _reason_text(refused) if refused else ""
        if inactive is None and len(accepted) <= 1 and refused:
            inactive = why
        return Choice(k.name, options=tuple(accepted), active=inactive is None, why=inactive or why)
    if slider_bounds(k) is not None:
        low, high, step, refused = _slider_range(scenario, config, k)
        why = _reason_text(refused) if refused else ""
        if inactive is None and low == high and refused:
            inactive = why
        return Choice(k.name, low=low, high=high, active=inactive is None, why=inactive or why, step=step)
    return Choice(k.name, active=inactive is None, why=inactive or "")


def inactive_knobs(scenario: Any, config: Any) -> dict[str, str]:
    """``{field: why}`` for knobs that change nothing for ``config`` (the scenario's ``inactive_fn``)."""
    fn = getattr(scenario, "inactive_fn", None)
    return dict(fn(config)) if fn is not None else {}


def choices(scenario: Any, config: Any) -> dict[str, Choice]:
    """A :class:`Choice` per knob; with a refused ``config`` nothing is narrowed (the message says why)."""
    table = knobs(type(config))
    off = inactive_knobs(scenario, config)
    if refusal(scenario, config) is not None:
        return {k.name: Choice(k.name, active=k.name not in off, why=off.get(k.name, "")) for k in table}
    return {k.name: offered(scenario, config, k, off.get(k.name)) for k in table}


def _candidates(scenario: Any, config: Any, k: Knob) -> Iterable[Any]:
    """Values to move a blamed knob to, nearest first."""
    value = getattr(config, k.name)
    values = option_values(k)
    if values is not None:
        here = values.index(value) if value in values else 0
        yield from sorted(values, key=lambda v: abs(values.index(v) - here))
        return
    bounds = slider_bounds(k)
    if bounds is not None:
        lo, hi, step = bounds

        def ok(v: int) -> bool:  # this knob is no longer to blame (another may still be, for the next round)
            err = refusal(scenario, dataclasses.replace(config, **{k.name: v}))
            return err is None or err.knob != k.name

        for distance in range(1, NEAR_POSITIONS + 1):  # the nearest positions first: the accepted values may lie
            for v in (value - distance * step, value + distance * step):  # between refused ones at both ends
                if lo <= v <= hi and ok(v):
                    yield v
        if ok(lo):  # accepted values lie below: the largest accepted one under the current value
            inside, outside = 0, (value - lo) // step
            yield lo + _edge(lambda i: ok(lo + i * step), inside, outside) * step
        if ok(hi):
            inside, outside = (hi - lo) // step, (value - lo) // step
            yield lo + _edge(lambda i: ok(lo + i * step), inside, outside) * step
        yield k.default
        return
    if k.kind == "callable" and value is None and k.named:
        yield k.named[0][1]
    yield k.default


def adjust(scenario: Any, config: Any, keep: str | Iterable[str] | None = None,
           rounds: int = 8) -> tuple[Any, tuple[str, ...]]:
    """``config`` with the knobs a refusal blames moved to their nearest accepted value, never those in ``keep``.

    ``keep`` is the knob a user just moved, or every knob set from code at once.
    Returns the new config and one sentence per adjusted knob; a refusal that
    names no knob, or a kept one, is left for the message to explain.
    """
    kept = {keep} if isinstance(keep, str) else set(keep or ())
    table = {k.name: k for k in knobs(type(config))}
    notes: list[str] = []
    for _ in range(rounds):
        err = refusal(scenario, config)
        if err is None or err.knob is None or err.knob in kept or err.knob not in table:
            break
        k = table[err.knob]
        before = getattr(config, k.name)
        for candidate in _candidates(scenario, config, k):
            if candidate == before:
                continue
            trial = dataclasses.replace(config, **{k.name: candidate})
            again = refusal(scenario, trial)
            if again is None or again.knob != k.name:
                config = trial
                shown = callable_text(candidate) if k.kind == "callable" else option_text(candidate)
                notes.append(f"{k.label} set to {shown}: {err.cause}")
                break
        else:
            break
    return config, tuple(notes)


__all__ = ["Choice", "adjust", "choices", "inactive_knobs", "offered", "option_values", "pick", "refusal",
           "slider_bounds"]
