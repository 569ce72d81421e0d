"""A sweep's cells: the grid expanded into configs, each coerced by the scenario's one coercion.

A grid maps knob names to the values to try (``{"stages": [1, 2, 4], "store_warps": "1,4"}``);
its cells are every combination, in order. A sequence of mappings lists cells
one by one instead. Each value goes through
:func:`ts_explore.scenarios.knobs.configure`, so a cell the scenario refuses
becomes a ``refused`` row carrying the knob's label and the fix, not an error.

>>> from ts_explore import scenarios
>>> cells = expand(scenarios.get("pipelined_copy"), {"stages": [1, 2], "store_warps": [4, 64]})
>>> [(c.values, c.refused is None) for c in cells]
[({'stages': 1, 'store_warps': 4}, True), ({'stages': 1, 'store_warps': 64}, False), ({'stages': 2, 'store_warps': 4}, True), ({'stages': 2, 'store_warps': 64}, False)]
>>> cells[1].refused.startswith("warps of the store task: ")   # the knob's label, then why and the fix
True
>>> cells[0].columns["stages"], cells[0].columns["loader"]
(1, 'tma')
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import itertools
import json
import marshal
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..scenarios.knobs import ConfigError, Knob, callable_text, configure, format_ints, knobs, option_text


class GridError(ValueError):
    """A grid the sweep cannot expand (unknown knob, no values, wrong shape); names the fix."""


@dataclass(frozen=True)
class Cell:
    """One configuration of a sweep: what the user asked for, the config (or why it is refused), its key."""

    index: int
    values: dict[str, Any]  # the swept knobs, as given
    config: Any  # the coerced config; None when refused
    refused: str | None  # the coercion's message when the scenario refuses the values
    columns: dict[str, Any]  # every knob as a plain scalar (text for enums, tuples and functions)
    key: str  # stable across processes and runs: scenario + every knob's value


def cell_value(k: Knob, value: Any) -> Any:
    """A knob value as a plain scalar a table, a CSV file and the coercion all accept back.

    >>> from ts_explore.scenarios.knobs import Knob
    >>> cell_value(Knob("lengths", "lengths", "ints", tuple, ()), (4, 8))
    '4, 8'
    """
    if isinstance(value, enum.Enum):
        return value.name.lower()  # short, and the coercion takes it back
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if k.kind == "ints":
        return format_ints(tuple(value))
    if k.kind == "callable" or callable(value):
        return callable_text(value)
    if k.kind in ("enum", "choice"):
        return option_text(value)
    return str(value)


def _identity(value: Any) -> Any:
    """What makes a value distinct in a key (a function's code, not just its name)."""
    if isinstance(value, types.FunctionType) and not hasattr(value, "__ts_explore_text__"):
        digest = hashlib.sha256(marshal.dumps(value.__code__)).hexdigest()[:16]
        return f"{value.__module__}.{value.__qualname__}#{digest}"
    return value


def cell_key(scenario_name: str, kn: Sequence[Knob], config: Any, extra: Mapping[str, Any] | None = None) -> str:
    """A short stable hash of the scenario name and every knob's value (plus ``extra``, e.g. launch sizes)."""
    fields = {k.name: cell_value(k, _identity(getattr(config, k.name))) for k in kn}
    text = json.dumps({"scenario": scenario_name, "config": fields, **(extra or {})}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _as_values(name: str, values: Any) -> list[Any]:
    """``[1, 2]`` / ``range(1, 4)`` / ``"1, 2, 4"`` / a single value -> a list of values."""
    if isinstance(values, str):
        parts = [p.strip() for p in values.split(",")]
        out: list[Any] = [p for p in parts if p]
    elif isinstance(values, Iterable) and not isinstance(values, (bytes, tuple)):
        out = list(values)
    else:
        out = [values]
    if not out:
        raise GridError(f"grid entry {name!r} has no values; give at least one, e.g. {name}=[1, 2]")
    return out


def combinations(grid: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The grid's cells as plain dicts: a product over a mapping, or the mappings of a sequence as given."""
    if isinstance(grid, Mapping):
        names = list(grid)
        lists = [_as_values(n, grid[n]) for n in names]
        return [dict(zip(names, combo)) for combo in itertools.product(*lists)]
    if isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        cells = [dict(c) for c in grid if isinstance(c, Mapping)]
        if len(cells) != len(grid):
            raise GridError("a grid is a mapping {knob: values} or a list of mappings {knob: value}")
        return cells
    raise GridError(f"a grid is a mapping {{knob: values}} or a list of mappings; got {type(grid).__name__}")


def expand(scenario: Any, grid: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, base: Any = None,
           extra_key: Mapping[str, Any] | None = None) -> list[Cell]:
    """Every cell of ``grid`` over ``base`` (default: the scenario's defaults), coerced and keyed."""
    base = scenario.default_config() if base is None else base
    kn = knobs(type(base))
    names = {k.name for k in kn}
    combos = combinations(grid)
    unknown = sorted({n for c in combos for n in c} - names)
    if unknown:
        listing = ", ".join(k.name for k in kn)
        raise GridError(f"scenario {scenario.name!r} has no setting {', '.join(unknown)}; its settings are: {listing}")
    if not combos:
        raise GridError("the grid has no cells; give each knob at least one value")
    cells = []
    for index, values in enumerate(combos):
        try:
            config, refused = configure(scenario, values, base=base), None
        except ConfigError as exc:
            config, refused = None, str(exc)
        shown = config if config is not None else _raw_config(base, values)
        columns = {k.name: cell_value(k, getattr(shown, k.name)) for k in kn}
        if refused is not None:  # values the coercion could not convert are shown as given
            columns.update({n: _scalar(v) for n, v in values.items()
                            if getattr(shown, n) == getattr(base, n) and v != columns[n]})
            key_source = json.dumps({"scenario": scenario.name, "refused": columns}, sort_keys=True, default=str)
            key = hashlib.sha256(key_source.encode()).hexdigest()[:24]
        else:
            key = cell_key(scenario.name, kn, config, extra_key)
        cells.append(Cell(index, dict(values), config, refused, columns, key))
    return cells


def _scalar(value: Any) -> Any:
    """A value the coercion refused, for its row: numbers typed as text become numbers (one type per column).

    >>> _scalar("64"), _scalar("2.5"), _scalar("tma"), _scalar((4, 8))
    (64, 2.5, 'tma', '(4, 8)')
    """
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value.strip())
            except ValueError:
                continue
        return value
    return value if isinstance(value, (bool, int, float)) or value is None else str(value)


def _raw_config(base: Any, values: Mapping[str, Any]) -> Any:
    """The base config with the values a refused cell could convert (for its row's knob columns)."""
    table = {k.name: k for k in knobs(type(base))}
    good = {}
    for name, value in values.items():
        try:
            from ..scenarios.knobs import convert

            good[name] = convert(table[name], value)
        except (ConfigError, TypeError, ValueError):
            continue
    return dataclasses.replace(base, **good)


def config_of(scenario: Any, row: Mapping[str, Any], names: Iterable[str] | None = None, base: Any = None) -> Any:
    """The config a row (of a sweep's table) describes: its knob columns through the coercion.

    ``names`` limits it to some knobs (e.g. the two a heatmap shows); the others
    come from ``base`` (default: the scenario's defaults).
    """
    base = scenario.default_config() if base is None else base
    wanted = [k.name for k in knobs(type(base))] if names is None else list(names)
    return configure(scenario, {n: _plain(row[n]) for n in wanted if n in row}, base=base)


def _plain(value: Any) -> Any:
    """numpy/pandas scalars -> Python ones (the coercion checks for int, bool, str)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, (str, bytes)) else value


__all__ = ["Cell", "GridError", "cell_key", "cell_value", "combinations", "config_of", "expand"]
