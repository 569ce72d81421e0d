"""Widgets generated from a scenario's config dataclass, and reading values back.

One control per field: ``int`` -> ``IntSlider`` (bounds from the field's
``knob(min=, max=, step=)`` metadata), ``Enum`` -> ``Dropdown``, ``bool`` ->
``Checkbox``, ``tuple[int, ...]`` -> ``Text`` holding comma-separated ints,
``float`` -> ``FloatSlider``, ``str`` -> ``Text``, a ``Callable`` (such as a
user skip predicate) -> ``Combobox`` offering the knob's named functions (text
is never run as code; a function of one's own is set from Python). Every control
reports on release (``continuous_update=False``) so a drag re-verifies once,
not per pixel.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import ipywidgets as widgets

from ..scenarios.choices import Choice, option_values, slider_bounds
from ..scenarios.knobs import (
    ConfigError,
    Knob,
    callable_text,
    check_bounds,
    convert,
    field_types,
    format_ints,
    kind_of,
    knobs,
    named_text,
    option_text,
    parse_callable,
    parse_ints,
)


def callable_placeholder(named: tuple[tuple[str, Any], ...]) -> str:
    """What an empty callable box says it takes: its named functions (a function of one's own comes from code)."""
    if not named:
        return "set a function from Python (text is not run as code)"
    return f"one of {named_text(named)}, or a function set from Python (empty: none)"

DESCRIPTION_STYLE = {"description_width": "initial"}
CONTROL_WIDTH = "420px"


ConfigValueError = ConfigError  # a control holds text that cannot become a config value


def _label(field: dataclasses.Field) -> str:
    return str(field.metadata.get("label") or field.name.replace("_", " "))


def _int_bounds(field: dataclasses.Field, value: int) -> tuple[int, int, int]:
    """Slider bounds: the knob's min/max/step, else a range around the default."""
    meta = field.metadata
    lo = meta.get("min", min(0, value))
    hi = meta.get("max", max(2 * value, value + 8, lo + 1))
    return min(int(lo), value), max(int(hi), value), int(meta.get("step", 1))


def coerce_values(config: Any, values: typing.Mapping[str, Any]) -> dict[str, Any]:
    """User values (objects or text) in each field's own type, bounded by its knob (ConfigError otherwise)."""
    table = {k.name: k for k in knobs(type(config))}
    out = {}
    for name, value in values.items():
        out[name] = convert(table[name], value)
        check_bounds(table[name], out[name])
    return out


def make_control(field: dataclasses.Field, tp: Any, value: Any) -> widgets.Widget:
    """One widget for one config field, showing ``value``."""
    kind = kind_of(tp, value)
    common: dict[str, Any] = {
        "description": _label(field),
        "style": DESCRIPTION_STYLE,
        "layout": widgets.Layout(width=CONTROL_WIDTH),
    }
    help_text = field.metadata.get("help")
    if help_text:
        common["tooltip"] = help_text
    options = field.metadata.get("options")
    if options is not None:
        return widgets.Dropdown(options=[(option_text(o), o) for o in options], value=value, **common)
    if kind == "bool":
        return widgets.Checkbox(value=bool(value), indent=False, **common)
    if kind == "enum":
        options = [(str(m.value) if not isinstance(m.value, int) else m.name.lower(), m) for m in type(value)]
        return widgets.Dropdown(options=options, value=value, **common)
    if kind == "int":
        lo, hi, step = _int_bounds(field, int(value))
        return widgets.IntSlider(value=int(value), min=lo, max=hi, step=step, continuous_update=False, **common)
    if kind == "float":
        lo = float(field.metadata.get("min", 0.0))
        hi = float(field.metadata.get("max", max(2 * float(value), 1.0)))
        step = float(field.metadata.get("step", (hi - lo) / 100 or 0.01))
        return widgets.FloatSlider(value=float(value), min=lo, max=hi, step=step, continuous_update=False, **common)
    if kind == "ints":
        return widgets.Text(value=format_ints(tuple(value)), continuous_update=False,
                            placeholder="comma-separated whole numbers, e.g. 4, 8, 2", **common)
    if kind == "str":
        return widgets.Text(value=str(value), continuous_update=False, **common)
    if kind == "callable":
        named = tuple(field.metadata.get("named") or ())
        return widgets.Combobox(value=callable_text(value), options=[name for name, _ in named], ensure_option=False,
                                continuous_update=False, placeholder=callable_placeholder(named), **common)
    return widgets.Text(value=repr(value), disabled=True, **common)


def make_controls(config: Any) -> dict[str, widgets.Widget]:
    """A control per field of ``config`` (a dataclass instance), in field order."""
    types = field_types(type(config))
    return {
        f.name: make_control(f, types[f.name], getattr(config, f.name))
        for f in dataclasses.fields(config)
    }


def read_config(config: Any, controls: typing.Mapping[str, widgets.Widget]) -> Any:
    """A new config with every control's value; ConfigValueError names a field holding bad text."""
    types = field_types(type(config))
    values: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        control = controls.get(f.name)
        if control is None:
            continue
        kind = kind_of(types[f.name], getattr(config, f.name))
        if kind == "ints":
            values[f.name] = parse_ints(_label(f), control.value)
        elif kind == "callable":
            current = getattr(config, f.name)
            if control.value.strip() != callable_text(current):  # untouched text keeps a function set from code
                values[f.name] = control.value  # a name the knob declares; coerce_values looks it up
        elif kind == "fixed":
            continue
        else:
            values[f.name] = control.value
    return dataclasses.replace(config, **coerce_values(config, values))


def _set_range(control: widgets.IntSlider, low: int, high: int) -> None:
    """Set a slider's min/max in an order ipywidgets accepts (min <= max at every step)."""
    if low > control.max:
        control.max, control.min = high, low
    else:
        control.min, control.max = low, high


def apply_choice(control: widgets.Widget, k: Knob, choice: Choice | None) -> None:
    """Offer what ``choice`` allows (None: the knob's full range), keeping the value; disable an idle control.

    A slider takes the choice's step as well as its range, so that each of its
    positions is a value the scenario accepts (a value outside the offer, set
    from code, keeps the knob's declared step so that it stays reachable).

    The tooltip says what the control does and why values are missing or why
    it is disabled.
    """
    value = control.value
    why = choice.why if choice is not None else ""
    tip = "\n".join(t for t in (k.help, why) if t)
    if getattr(control, "tooltip", None) != (tip or None):
        control.tooltip = tip or None
    control.disabled = k.kind == "fixed" or (choice is not None and not choice.active)
    if isinstance(control, widgets.Dropdown):
        allowed = choice.options if choice is not None and choice.options is not None else option_values(k)
        if allowed is not None:
            if value not in allowed:  # a value set from code outside the offer stays visible
                allowed = (*allowed, value)
            wanted = tuple((option_text(o), o) for o in allowed)
            if tuple(control.options) != wanted:
                control.options = wanted
                control.value = value
    elif isinstance(control, widgets.IntSlider):
        bounds = slider_bounds(k)
        if bounds is not None:
            offer = choice is not None and choice.low is not None and choice.high is not None
            low, high = (choice.low, choice.high) if offer else bounds[:2]  # type: ignore[union-attr]
            step = (choice.step or bounds[2]) if offer else bounds[2]  # type: ignore[union-attr]
            if value < low or value > high or (value - low) % step:  # a value set from code off the offer
                low, high, step = min(low, value), max(high, value), bounds[2]
            if (control.min, control.max) != (low, high):
                _set_range(control, low, high)
            if control.step != step:
                control.step = step


def show_value(control: widgets.Widget, field: dataclasses.Field, tp: Any, value: Any) -> None:
    """Put a config value into its control (the inverse of :func:`read_config`)."""
    kind = kind_of(tp, value)
    if kind == "ints":
        control.value = format_ints(tuple(value))
    elif kind == "callable":
        control.value = callable_text(value)
    elif kind == "fixed":
        control.value = repr(value)
    else:
        if kind == "int" and isinstance(control, widgets.IntSlider):
            control.min = min(control.min, int(value))
            control.max = max(control.max, int(value))
        control.value = value


__all__ = [
    "ConfigValueError",
    "apply_choice",
    "callable_text",
    "parse_callable",
    "coerce_values",
    "field_types",
    "format_ints",
    "kind_of",
    "make_control",
    "make_controls",
    "parse_ints",
    "read_config",
    "show_value",
]
