"""Which config ``launch`` runs for each size when the caller left the config to it: a tuning table's pick.

``launch("hopper_gemm", sizes=[shape])`` with no config (or the scenario's
default config, and no overrides, or only ``tile='by shape'``) looks the shape
up in this GPU's tuning table (:mod:`.tuning_table`, written by ``ts_explore.tune``); a
size with a pick runs the picked config, a size without one the config asked for. An
explicit config always wins, and ``tuned=False`` turns the lookup off. The
launch result says which pick each size used (``LaunchResult.tuned``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..scenarios import Scenario


@dataclass(frozen=True)
class SizePick:
    """The config one launched size runs, and the tuning table's words for it (empty: not tuned)."""

    config: Any
    note: str = ""


@functools.lru_cache(maxsize=1)
def this_gpu() -> tuple[str, str]:
    """(GPU name, driver version) of the device launches use, as the tuning tables are named by."""
    from .probe import gpu_identity

    found = gpu_identity()
    return found["gpu"], found["driver"]


def table_for(scenario: str | Scenario = "hopper_gemm", cache_dir: Any = None) -> Any:
    """This GPU's tuning table of ``scenario`` (a :class:`~.tuning_table.TuningTable`; ``.frame()`` for pandas),
    or None when it was never tuned here."""
    from ..scenarios import get
    from .tuning_table import find

    return find(get(scenario).name, *this_gpu(), cache_dir)


COMPUTES = ("dtype",)  # knobs that change what a launch computes: a pick must keep the launched value


def _spellings(value: Any) -> frozenset[str]:
    """How a table may write a knob's value (an Enum by its value or its name), in lower case."""
    return frozenset(str(v).lower() for v in (value, getattr(value, "value", value), getattr(value, "name", value)))


def wants_table(sc: Scenario, config: Any, overrides: dict[str, Any], tuned: bool) -> bool:
    """Whether the caller left the config to launch: ``tuned`` on, and no config or the defaults, or nothing
    chosen but ``tile='by shape'`` (and what a launch computes, ``dtype``): a shape the table has a pick for
    runs the pick, the others the launch plan's own 'by shape' tile."""
    if not tuned:
        return False
    if not overrides and (config is None or config == sc.default_config()):
        return True
    return leaves_tile_to_launch(sc, config, overrides)


def leaves_tile_to_launch(sc: Scenario, config: Any, overrides: dict[str, Any]) -> bool:
    """Whether the config asked for differs from the defaults only in ``tile='by shape'`` (and in ``dtype``)."""
    from dataclasses import fields

    from ..scenarios.knobs import ConfigError, configure

    try:
        cfg = configure(sc, overrides, base=sc.default_config() if config is None else config, check=False)
    except ConfigError:
        return False  # the launch itself reports the bad setting
    if getattr(getattr(cfg, "tile", None), "name", None) != "BY_SHAPE":
        return False
    default = sc.default_config()
    changed = {f.name for f in fields(cfg) if getattr(cfg, f.name) != getattr(default, f.name)}
    return changed <= {"tile", *COMPUTES}


def size_picks(sc: Scenario, default: Any, sizes: tuple[Any, ...], cache_dir: Any = None) -> tuple[SizePick, ...]:
    """Per size, the table's pick for its shape (coerced onto the defaults), else ``default`` with no note.

    A pick the scenario no longer accepts (a table written by another
    version) is passed over for the default, and the note says so.
    """
    from ..scenarios.knobs import ConfigError, configure
    from .tuning_table import find, shape_text, tuning_dir

    folder = tuning_dir(cache_dir)
    if not folder.is_dir() or not any(folder.glob(f"{sc.name}.*.json")):
        return tuple(SizePick(default) for _ in sizes)  # nothing tuned: no need to ask the GPU its name
    gpu, driver = this_gpu()
    table = find(sc.name, gpu, driver, cache_dir)
    if table is None:
        return tuple(SizePick(default) for _ in sizes)
    picks = table.picks(matching={k: _spellings(getattr(default, k)) for k in COMPUTES if hasattr(default, k)})
    out = []
    for size in sizes:
        try:
            key = shape_text(tuple(size))
        except TypeError:  # a flat size: tables hold shapes
            out.append(SizePick(default))
            continue
        pick = picks.get(key)
        if pick is None:
            out.append(SizePick(default))
            continue
        try:
            out.append(SizePick(configure(sc, pick.config, base=sc.default_config()), f"{key}: {pick.describe()}"))
        except ConfigError as exc:
            out.append(SizePick(default, f"{key}: the table's pick {pick.text} is not a valid config now ({exc}); "
                                         "ran the defaults; re-run ts-explore tune with --fresh"))
    return tuple(out)


__all__ = ["SizePick", "leaves_tile_to_launch", "size_picks", "table_for", "this_gpu", "wants_table"]
