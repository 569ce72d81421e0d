"""Widgets generated from a scenario's config dataclass, and reading values back.

One control per field: ``int`` -> ``IntSlider`` (bounds from the field's
``knob(min=, max=, step=)`` metadata), ``Enum`` -> ``Dropdown``, ``bool`` ->
``Checkbox``, ``tuple[int, ...]`` -> ``Text`` holding comma-separated ints,
``float`` -> ``FloatSlider``, ``str`` -> ``Text``, a ``Callable`` (such as a
user skip predicate) -> ``Text`` holding a Python ``lambda``. Every control
reports on release (``continuous_update=False``) so a drag re-verifies once,
not per pixel.
"""

from __future__ import annotations

import builtins
import collections.abc
import dataclasses
import enum
import types
import typing
from typing import Any

import ipywidgets as widgets

DESCRIPTION_STYLE = {"description_width": "initial"}
CONTROL_WIDTH = "420px"


class ConfigValueError(ValueError):
    """A control holds text that cannot become a config value (the message says how to fix it)."""


def field_types(config_type: type) -> dict[str, Any]:
    """Resolved annotations of a config dataclass (works with ``from __future__ import annotations``)."""
    if not dataclasses.is_dataclass(config_type):
        raise TypeError(f"a scenario config must be a dataclass; got {config_type!r}")
    try:
        hints = typing.get_type_hints(config_type)
    except Exception:  # noqa: BLE001 - unresolvable forward refs: fall back to the raw annotations
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(config_type)}


def _is_int_tuple(tp: Any) -> bool:
    return typing.get_origin(tp) is tuple and typing.get_args(tp) in ((int, Ellipsis),)


def _is_callable_type(tp: Any) -> bool:
    """``Callable[...]`` or ``Callable[...] | None``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return any(_is_callable_type(arg) for arg in typing.get_args(tp) if arg is not type(None))
    return tp is collections.abc.Callable or typing.get_origin(tp) is collections.abc.Callable


# text -> function, so the same lambda typed twice is the same object (configs compare equal)
_LAMBDAS: dict[str, Any] = {}
LAMBDA_PLACEHOLDER = "a Python lambda, e.g. lambda tile: tile % 4 == 0 (empty: none)"


def parse_callable(name: str, text: str) -> Any:
    """``"lambda tile: tile % 4 == 0"`` -> that function; ``""`` -> None; a clear error otherwise."""
    text = text.strip()
    if not text or text == "None":
        return None
    if text not in _LAMBDAS:
        try:
            fn = eval(compile(text, f"<{name}>", "eval"), {"__builtins__": builtins})  # noqa: S307 - the user's own notebook input
        except SyntaxError as exc:
            raise ConfigValueError(f"{name}: {text!r} is not valid Python ({exc.msg}); type a lambda, "
                                   "e.g. lambda tile: tile % 4 == 0") from None
        except Exception as exc:  # noqa: BLE001 - e.g. a NameError in the expression
            raise ConfigValueError(f"{name}: evaluating {text!r} failed: {type(exc).__name__}: {exc}") from None
        if not callable(fn):
            raise ConfigValueError(f"{name}: {text!r} is not a function; type a lambda, e.g. lambda tile: tile % 4 == 0")
        fn.__ts_explore_text__ = text
        _LAMBDAS[text] = fn
    return _LAMBDAS[text]


def callable_text(value: Any) -> str:
    """What a callable field's text box shows for ``value``."""
    if value is None:
        return ""
    return getattr(value, "__ts_explore_text__", None) or getattr(value, "__qualname__", repr(value))


def kind_of(tp: Any, value: Any) -> str:
    """Which control a field gets: ``bool``, ``enum``, ``int``, ``float``, ``ints``, ``str``, ``callable`` or ``fixed``."""
    if _is_callable_type(tp) or (value is not None and callable(value) and not isinstance(value, type)):
        return "callable"
    if tp is bool or tp == "bool":
        return "bool"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "enum"
    if tp is int or tp == "int":
        return "int"
    if tp is float or tp == "float":
        return "float"
    if _is_int_tuple(tp) or tp in ("tuple[int, ...]", "Tuple[int, ...]"):
        return "ints"
    if tp is str or tp == "str":
        return "str"
    # unresolved annotations: decide from the default value
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, enum.Enum):
        return "enum"
    if isinstance(value, int):
        return "int"
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return "ints"
    return "fixed"


def _label(field: dataclasses.Field) -> str:
    return str(field.metadata.get("label") or field.name.replace("_", " "))


def _int_bounds(field: dataclasses.Field, value: int) -> tuple[int, int, int]:
    """Slider bounds: the knob's min/max/step, else a range around the default."""
    meta = field.metadata
    lo = meta.get("min", min(0, value))
    hi = meta.get("max", max(2 * value, value + 8, lo + 1))
    # an override outside the declared range widens the slider instead of being clamped
    return min(int(lo), value), max(int(hi), value), int(meta.get("step", 1))


def format_ints(values: tuple[int, ...]) -> str:
    """``(4, 8, 2)`` -> ``"4, 8, 2"``."""
    return ", ".join(str(v) for v in values)


def parse_ints(name: str, text: str, meta: typing.Mapping[str, Any] | None = None) -> tuple[int, ...]:
    """``"4, 8, 2"`` -> ``(4, 8, 2)``; a clear ConfigValueError for anything else."""
    meta = meta or {}
    cleaned = text.strip().strip("()[]").strip()
    if not cleaned:
        return ()
    out: list[int] = []
    for part in cleaned.split(","):
        part = part.strip()
        if not part and cleaned.endswith(","):
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise ConfigValueError(
                f"{name}: {part!r} in {text!r} is not a whole number; "
                "type comma-separated whole numbers, e.g. 4, 8, 2"
            ) from None
    lo, hi = meta.get("min"), meta.get("max")
    for v in out:
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"between {lo} and {hi}" if lo is not None and hi is not None else (
                f"at least {lo}" if lo is not None else f"at most {hi}")
            raise ConfigValueError(f"{name}: {v} is out of range; every entry must be {rng}")
    return tuple(out)


def coerce(name: str, tp: Any, default: Any, value: Any) -> Any:
    """A user-given value in the field's own type: ``"clc"`` -> ``QueueKind.CLC``, ``[4, 8]`` -> ``(4, 8)``.

    Raises ConfigValueError naming the field and the accepted values.
    """
    kind = kind_of(tp, default)
    if kind == "enum":
        enum_type = type(default) if isinstance(default, enum.Enum) else tp
        if isinstance(value, enum_type):
            return value
        for member in enum_type:
            if value == member.value or (isinstance(value, str) and value.lower() in (member.name.lower(),
                                                                                   str(member.value).lower())):
                return member
        choices = ", ".join(str(m.value) if not isinstance(m.value, int) else m.name.lower() for m in enum_type)
        raise ConfigValueError(f"{name}: {value!r} is not one of {choices}")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise ConfigValueError(f"{name}: {value!r} is not True or False")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigValueError(f"{name}: {value!r} is not a whole number")
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigValueError(f"{name}: {value!r} is not a number")
    if kind == "callable":
        if isinstance(value, str):
            return parse_callable(name, value)
        if value is None or callable(value):
            return value
        raise ConfigValueError(f"{name}: {value!r} is not a function")
    if kind == "ints":
        if isinstance(value, str):
            return parse_ints(name, value)
        try:
            items = tuple(value)
        except TypeError:
            raise ConfigValueError(f"{name}: {value!r} is not a sequence of whole numbers") from None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            raise ConfigValueError(f"{name}: {value!r} is not a sequence of whole numbers")
        return items
    return value


def coerce_values(config: Any, values: typing.Mapping[str, Any]) -> dict[str, Any]:
    """:func:`coerce` for several fields of ``config`` at once."""
    types = field_types(type(config))
    return {k: coerce(k, types[k], getattr(config, k), v) for k, v in values.items()}


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
        return widgets.Text(value=callable_text(value), continuous_update=False, placeholder=LAMBDA_PLACEHOLDER,
                            **common)
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
            values[f.name] = parse_ints(_label(f), control.value, f.metadata)
        elif kind == "callable":
            current = getattr(config, f.name)
            if control.value.strip() != callable_text(current):  # untouched text keeps a function set from code
                values[f.name] = parse_callable(_label(f), control.value)
        elif kind == "fixed":
            continue
        else:
            values[f.name] = control.value
    return dataclasses.replace(config, **values)


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
    "callable_text",
    "parse_callable",
    "coerce",
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
