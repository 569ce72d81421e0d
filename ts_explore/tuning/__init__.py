"""Per-shape tuning: measure candidate configs at each shape on the sweep's cluster, keep each shape's fastest.

``ts_explore.tune(...)`` is :func:`.run.tune`; the table it writes
(:mod:`ts_explore.gpu.tuning_table`, in the GPU layer because ``launch``
reads it through :mod:`ts_explore.gpu.tuned`) lives in the user's cache, one
file per scenario, GPU and driver. Modules: ``candidates`` (shapes and
candidate configs), ``run`` (the tuning sweep), ``command`` (``ts-explore tune``).
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {"tune": "run", "TuneSweep": "run", "TuneError": "candidates", "PRESETS": "candidates"}
_GPU = {"table_for": "ts_explore.gpu.tuned"}  # this GPU's table, for notebooks (it lives in the GPU layer)


def __getattr__(name: str) -> Any:
    if name in _GPU:
        value = getattr(importlib.import_module(_GPU[name]), name)
        globals()[name] = value
        return value
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = sorted([*_NAMES, *_GPU])
