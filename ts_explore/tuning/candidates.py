"""What tuning tries: the shapes (parsed from ``MxNxK`` text) and the candidate configs (data, not code).

A candidate is a mapping of a scenario's settings to values, exactly as a
sweep grid's cells (``{"tile": "128x128x64", "stages": 6}``); settings not
named keep the scenario's defaults. Presets are named lists of them; a JSON
file holding such a list works the same, so settings added to a scenario later
(a ``mode`` or a ``dtype``) are tuned without touching this module.

>>> parse_shapes(["4096x4096x4096", "8192X1024x512"])
[(4096, 4096, 4096), (8192, 1024, 512)]
>>> [sorted(c) for c in candidates("hopper_gemm", "quick")]
[[], ['tile'], ['swizzle']]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Per scenario, named candidate lists. hopper_gemm's default: the scenario's defaults, the launch plan's
# 'by shape' pick, L2-swizzled tile order, the other tile shapes, B multicast in a 2x1 cluster, A multicast
# in a 1x2 cluster, the hand-off epilogue (a store task sends C) on the swizzled 128x256 tile, alone and in 2x1,
# and the 192-wide tiles: 128x192 ping-pong (QuACK's sm_90 default shape) and cooperative, alone and in 2x1,
# ping-pong 'by shape' and the cooperative 256x192. A fitted width (tile_n) depends on N, so 'by shape' is the
# candidate that brings one where the launch plan picks it.
PRESETS: dict[str, dict[str, list[dict[str, Any]]]] = {
    "hopper_gemm": {
        "quick": [{}, {"tile": "by_shape"}, {"swizzle": 8}],
        "default": [{}, {"tile": "by_shape"}, {"swizzle": 8}, {"swizzle": 16}, {"tile": "t256x128"},
                    {"tile": "t256x128", "swizzle": 8}, {"tile": "t128x128", "stages": 6},
                    {"cluster": "c2x1", "swizzle": 8}, {"tile": "t128x128", "cluster": "c2x1"},
                    {"cluster": "c1x2", "swizzle": 8}, {"swizzle": 8, "epilogue": "handoff"},
                    {"cluster": "c2x1", "swizzle": 8, "epilogue": "handoff"},
                    {"mode": "pingpong", "tile": "t128x192", "stages": 4, "swizzle": 8},
                    {"mode": "pingpong", "tile": "t128x192", "stages": 4, "cluster": "c2x1", "swizzle": 8},
                    {"mode": "pingpong", "tile": "by_shape"},
                    {"tile": "t128x192", "stages": 5, "swizzle": 8},
                    {"tile": "t128x192", "stages": 5, "cluster": "c2x1", "swizzle": 8},
                    {"tile": "t256x192", "stages": 3, "swizzle": 8}],
    },
}


class TuneError(ValueError):
    """A tuning request that cannot run (bad shapes, no candidates, no GPU); the message names the fix."""


class NoGpuError(TuneError):
    """Tuning measures on a GPU and none is usable here (the command line's exit code 3)."""


def parse_shape(text: str) -> tuple[int, int, int]:
    """``"4096x4096x1024"`` -> ``(4096, 4096, 1024)``; TuneError naming the expected form otherwise."""
    parts = str(text).strip().lower().split("x")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise TuneError(f"{text!r} is not a GEMM shape: write M x N x K as three positive integers joined by 'x', "
                        "e.g. 4096x4096x4096")
    return shape  # type: ignore[return-value]


def parse_shapes(shapes: Iterable[Any]) -> list[tuple[int, int, int]]:
    """Shapes given as ``MxNxK`` text or ``(M, N, K)`` tuples, in order, each once."""
    if isinstance(shapes, (str, bytes)):
        shapes = [shapes]
    out: list[tuple[int, int, int]] = []
    for s in shapes:
        shape = parse_shape(s) if isinstance(s, str) else parse_shape("x".join(str(v) for v in s))
        if shape not in out:
            out.append(shape)
    if not out:
        raise TuneError("no shapes to tune; give at least one, e.g. --shapes 4096x4096x4096")
    return out


def candidates(scenario: str, configs: str | Iterable[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The candidate list: ``None`` (the scenario's ``default`` preset), a preset name, a JSON file, or mappings."""
    presets = PRESETS.get(scenario, {})
    if configs is None:
        configs = "default"
    if isinstance(configs, (str, Path)):
        text = str(configs)
        if text in presets:
            return [dict(c) for c in presets[text]]
        path = Path(text).expanduser()
        if not path.is_file():
            known = ", ".join(presets) or "none for this scenario"
            raise TuneError(f"--configs {text!r} is neither a preset of {scenario} (presets: {known}) nor a JSON "
                            "file; give a preset name, or a file holding a list of settings mappings such as "
                            '[{"tile": "t128x128", "stages": 6}]')
        try:
            configs = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise TuneError(f"{path} is not JSON ({exc}); it must hold a list of settings mappings") from None
    out = [dict(c) for c in configs if isinstance(c, Mapping)] if isinstance(configs, Iterable) else []
    if not out or (isinstance(configs, list) and len(out) != len(configs)):
        raise TuneError(f"the candidate configs must be a non-empty list of settings mappings such as "
                        f'[{{"stages": 6}}]; got {str(configs)[:80]}')
    return out


def refuse_code(scenario: Any, configs: Iterable[Mapping[str, Any]]) -> None:
    """TuneError when a candidate gives a callable setting text that is not one of its knob's named functions.

    A candidates file is data: its text is never run as code, so such a
    candidate could only be refused cell by cell on the GPU; it is refused here,
    before anything starts, with the names the setting takes.
    """
    from ..scenarios.knobs import ConfigError, convert, knobs

    table = {k.name: k for k in knobs(scenario.config_type)}
    for i, config in enumerate(configs, 1):
        for name, value in config.items():
            k = table.get(name)
            if k is not None and k.kind == "callable" and isinstance(value, str):
                try:
                    convert(k, value)
                except ConfigError as exc:
                    raise TuneError(f"candidate {i} ({name}={value!r}): {exc}") from None


__all__ = ["NoGpuError", "PRESETS", "TuneError", "candidates", "parse_shape", "parse_shapes", "refuse_code"]
