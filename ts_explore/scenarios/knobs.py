"""One coercion for every way a config value arrives: widgets, ``Explorer(**overrides)``, ``.set``, CLI ``--set``.

A config field declares its hints with :func:`knob` (``min``/``max``/``step``,
``options``, ``label``, ``help``). :func:`configure` turns user values (Python
objects or the text a control or a shell holds) into a config, enforces the
hints, runs the scenario's own check and names the knob by its label in every
error (:class:`ConfigError`).

>>> parse_ints("lengths", "4, 8, 2")
(4, 8, 2)
>>> parse_bool("enabled", "on")
True
>>> describe_range({"min": 1, "max": 8})
'between 1 and 8'
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Mapping

LAMBDA_EXAMPLE = "lambda tile: tile % 4 == 0"


class ConfigError(ValueError):
    """A config value the scenario cannot take; the message names the knob by its label and the fix.

    ``cause`` says what is wrong and ``hint`` how to fix it (``str()`` joins
    them with ``"; "``); ``knob`` is the field a control would adjust to
    resolve it, when one is at fault.

    >>> str(ConfigError("tile 1536 is not a power of two", "tile", hint="pick 1024 or 2048"))
    'tile 1536 is not a power of two; pick 1024 or 2048'
    """

    def __init__(self, message: str, knob: str | None = None, *, hint: str = "") -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.cause = message
        self.hint = hint
        self.knob = knob  # the field name, when one knob is at fault


def knob(default: Any, *, min: int | None = None, max: int | None = None, step: int | None = None,
         options: tuple[Any, ...] | None = None, label: str | None = None, help: str = "",
         named: Mapping[str, Any] | None = None) -> Any:
    """A config field with widget hints: ``stages: int = knob(2, min=1, max=8, label="SMEM stages")``.

    ``options`` lists the only values the knob takes (a dropdown); ``min``/``max``
    bound an int (a slider) or each entry of an int tuple. ``named`` gives a
    callable knob the functions text may pick by name (a control, ``--set``, a
    candidates file, a sweep table's cell): text is never run as code, so a
    function not in the list can only be passed from Python.
    """
    for name, fn in (named or {}).items():
        if not callable(fn):
            raise TypeError(f"named choice {name!r} of a callable knob must be a function; got {fn!r}")
        fn.__ts_explore_text__ = name  # how tables and controls write it, and the text that picks it back
    hints = {"min": min, "max": max, "step": step, "label": label, "help": help,
             "options": tuple(options) if options is not None else None,
             "named": tuple(named.items()) if named else None}
    meta = {k: v for k, v in hints.items() if v is not None and v != ""}  # keep min=0
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple for sequence defaults so configs stay frozen and hashable")
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Knob:
    """What a config field accepts, read from its type and its :func:`knob` hints."""

    name: str
    label: str
    kind: str  # bool | enum | int | float | ints | str | callable | choice | fixed
    type: Any
    default: Any
    min: Any = None
    max: Any = None
    step: Any = None
    options: tuple[Any, ...] | None = None
    help: str = ""
    named: tuple[tuple[str, Any], ...] = ()  # a callable knob's functions that text picks by name

    def choices_text(self) -> str:
        """The values it takes, in words (for messages)."""
        if self.options is not None:
            return ", ".join(option_text(o) for o in self.options)
        if self.kind == "enum":
            return ", ".join(option_text(m) for m in self.type)
        if self.kind == "bool":
            return "on or off"
        return describe_range({"min": self.min, "max": self.max})


def option_text(value: Any) -> str:
    """How an option reads in a control or a message: an Enum by its value, others by ``str``."""
    if isinstance(value, enum.Enum):
        return str(value.value) if not isinstance(value.value, int) else value.name.lower()
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    return str(value)


def describe_range(meta: Mapping[str, Any]) -> str:
    """``between 1 and 8`` / ``at least 0`` / ``at most 4`` / ``any whole number``."""
    lo, hi = meta.get("min"), meta.get("max")
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}"
    if lo is not None:
        return f"at least {lo}"
    if hi is not None:
        return f"at most {hi}"
    return "any whole number"


def field_types(config_type: type) -> dict[str, Any]:
    """Resolved annotations of a config dataclass (works with ``from __future__ import annotations``)."""
    return dict(_field_types(config_type))


@functools.lru_cache(maxsize=None)
def _field_types(config_type: type) -> dict[str, Any]:
    """:func:`field_types`, resolved once per class (every control change asks; resolving compiles)."""
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


def kind_of(tp: Any, value: Any) -> str:
    """Which kind of value a field holds: ``bool``, ``enum``, ``int``, ``float``, ``ints``, ``str``, ``callable``, ``fixed``."""
    if _is_callable_type(tp) or (value is not None and callable(value) and not isinstance(value, type)):
        return "callable"
    by_name = {"bool": bool, "int": int, "float": float, "str": str}
    tp = by_name.get(tp, tp) if isinstance(tp, str) else tp
    if tp is bool:
        return "bool"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "enum"
    if tp in (int, float, str):
        return tp.__name__
    if _is_int_tuple(tp) or tp in ("tuple[int, ...]", "Tuple[int, ...]"):
        return "ints"
    for kind, test in (("bool", bool), ("enum", enum.Enum), ("int", int)):  # unresolved: from the default
        if isinstance(value, test):
            return kind
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return "ints"
    return "fixed"


@functools.lru_cache(maxsize=None)
def knobs(config_type: type) -> tuple[Knob, ...]:
    """Every field of a config dataclass as a :class:`Knob`, in field order (read once per class)."""
    types_ = field_types(config_type)
    out = []
    for f in dataclasses.fields(config_type):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
        meta = f.metadata
        kind = kind_of(types_[f.name], default)
        if meta.get("options") is not None and kind not in ("enum", "bool"):
            kind = "choice"
        out.append(Knob(name=f.name, label=str(meta.get("label") or f.name.replace("_", " ")), kind=kind,
                        type=types_[f.name], default=default, min=meta.get("min"), max=meta.get("max"),
                        step=meta.get("step"), options=meta.get("options"), help=str(meta.get("help", "")),
                        named=tuple(meta.get("named") or ())))
    return tuple(out)


def named_text(named: tuple[tuple[str, Any], ...]) -> str:
    """The names a callable knob's text may give, in words (for messages and placeholders)."""
    return ", ".join(repr(name) for name, _ in named)


def parse_callable(label: str, text: str, named: tuple[tuple[str, Any], ...] = ()) -> Any:
    """The function ``text`` names among ``named``; ``""``/``"None"`` -> None; ConfigError otherwise.

    Text comes from controls, shells, candidates files and shared sweep tables,
    so it is only ever matched against the names the knob declares, never run
    as code: a function of one's own is passed from Python instead.

    >>> parse_callable("skip fn", "")
    >>> parse_callable("skip fn", "lambda t: t")
    Traceback (most recent call last):
    ...
    ts_explore.scenarios.knobs.ConfigError: skip fn: 'lambda t: t' is text, and text is never run as code; ...
    """
    text = text.strip()
    if not text or text == "None":
        return None
    for name, fn in named:
        if text.lower() == name.lower():
            return fn
    python = f"pass a function from Python instead, e.g. {LAMBDA_EXAMPLE}"
    if named:
        raise ConfigError(f"{label}: {text!r} is not one of its named choices ({named_text(named)}); text is "
                          f"never run as code", hint=f"give one of those names, or {python}")
    raise ConfigError(f"{label}: {text!r} is text, and text is never run as code; this setting has no named "
                      "choices", hint=python)


def callable_text(value: Any) -> str:
    """The text a callable field shows for ``value`` (what :func:`parse_callable` read, or its name)."""
    if value is None:
        return ""
    return getattr(value, "__ts_explore_text__", None) or getattr(value, "__qualname__", repr(value))


def format_ints(values: tuple[int, ...]) -> str:
    """``(4, 8, 2)`` -> ``"4, 8, 2"``."""
    return ", ".join(str(v) for v in values)


def parse_ints(label: str, text: str) -> tuple[int, ...]:
    """``"4, 8, 2"`` -> ``(4, 8, 2)``; ConfigError for anything else."""
    cleaned = text.strip().strip("()[]").strip()
    out: list[int] = []
    for part in cleaned.split(",") if cleaned else []:
        part = part.strip()
        if not part and cleaned.endswith(","):
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise ConfigError(f"{label}: {part!r} in {text!r} is not a whole number; type comma-separated "
                              "whole numbers, e.g. 4, 8, 2") from None
    return tuple(out)


def parse_bool(label: str, text: str) -> bool:
    """``true/false``, ``on/off``, ``yes/no``, ``1/0``."""
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{label}: {text!r} is not on or off; use true or false")


def _whole(label: str, value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(value.strip(), 0)
        except ValueError:
            raise ConfigError(f"{label}: {value!r} is not a whole number") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{label}: {value!r} is not a whole number")
    return value


def convert(k: Knob, value: Any) -> Any:
    """A user value (object or text) in the knob's own type; ConfigError naming the knob otherwise."""
    if k.kind == "enum":
        if isinstance(value, k.type):
            return value
        for member in k.type:
            if value == member.value or (isinstance(value, str) and value.strip().lower() in _spellings(member)):
                return member
        raise ConfigError(f"{k.label}: {value!r} is not one of {k.choices_text()}", k.name)
    if k.kind == "bool":
        return parse_bool(k.label, value) if isinstance(value, str) else _strict_bool(k, value)
    if k.kind == "int":
        return _whole(k.label, value)
    if k.kind == "float":
        try:
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{k.label}: {value!r} is not a number", k.name) from None
    if k.kind == "callable":
        if isinstance(value, str):
            try:
                return parse_callable(k.label, value, k.named)
            except ConfigError as exc:
                raise ConfigError(exc.cause, k.name, hint=exc.hint) from None
        if value is None or callable(value):
            return value
        raise ConfigError(f"{k.label}: {value!r} is not a function; pass e.g. {LAMBDA_EXAMPLE}", k.name)
    if k.kind == "ints":
        if isinstance(value, str):
            return parse_ints(k.label, value)
        try:
            return tuple(_whole(k.label, v) for v in value)
        except TypeError:
            raise ConfigError(f"{k.label}: {value!r} is not a sequence of whole numbers", k.name) from None
    if k.kind == "choice":
        for option in k.options or ():
            if value == option or (isinstance(value, str) and value.strip().lower() == option_text(option).lower()):
                return option
        raise ConfigError(f"{k.label}: {option_text(value) if not isinstance(value, str) else value!r} is not one "
                          f"of {k.choices_text()}", k.name)
    return value


def _spellings(member: enum.Enum) -> tuple[str, ...]:
    """How a user may name an enum option: its name, its value, the value before a parenthesis.

    >>> import enum
    >>> _spellings(enum.Enum("Cluster", {"C2x1": "2x1 (B multicast)"}).C2x1)
    ('c2x1', '2x1 (b multicast)', '2x1')
    """
    value = str(member.value).lower()
    return (member.name.lower(), value, value.split(" (")[0].strip())


def _strict_bool(k: Knob, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{k.label}: {value!r} is not True or False", k.name)


def check_bounds(k: Knob, value: Any) -> None:
    """Enforce the knob's declared min/max (each entry of an int tuple) and options."""
    entries = value if k.kind == "ints" else (value,) if k.kind == "int" else ()
    for v in entries:
        if (k.min is not None and v < k.min) or (k.max is not None and v > k.max):
            where = " every entry" if k.kind == "ints" else ""
            raise ConfigError(f"{k.label}: {v} is out of range;{where} must be {describe_range(vars(k))}", k.name)
    if k.options is not None and k.kind not in ("choice",) and value not in k.options:
        raise ConfigError(f"{k.label}: {option_text(value)} is not one of {k.choices_text()}", k.name)


def configure(scenario: Any, values: Mapping[str, Any] | None = None, *, base: Any = None,
              check: bool = True) -> Any:
    """``base`` (default: the scenario's defaults) with ``values`` converted, bounded and checked.

    Raises :class:`ConfigError` for an unknown name, a value of the wrong kind,
    one outside its knob's range or options, or (with ``check``) a combination
    the scenario's own check refuses.
    """
    config = scenario.default_config() if base is None else base
    table = {k.name: k for k in knobs(type(config))}
    values = dict(values or {})
    unknown = sorted(set(values) - set(table))
    if unknown:
        listing = ", ".join(f"{k.name} ({k.label})" if k.label != k.name else k.name for k in table.values())
        raise ConfigError(f"scenario {scenario.name!r} has no setting {', '.join(unknown)}; its settings are: "
                          f"{listing}")
    converted = {}
    for name, value in values.items():
        k = table[name]
        converted[name] = convert(k, value)
        check_bounds(k, converted[name])
    config = dataclasses.replace(config, **converted)
    if not check:
        return config
    try:
        scenario.check(config)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(str(exc)) from None
    return config


__all__ = [
    "ConfigError",
    "Knob",
    "LAMBDA_EXAMPLE",
    "callable_text",
    "check_bounds",
    "configure",
    "convert",
    "describe_range",
    "field_types",
    "format_ints",
    "kind_of",
    "knob",
    "knobs",
    "named_text",
    "option_text",
    "parse_bool",
    "parse_callable",
    "parse_ints",
]
