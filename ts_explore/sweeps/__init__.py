"""Sweeps: verify (and launch) grids of scenario configurations on a Dask cluster, into a pandas DataFrame.

``ts_explore.sweep(scenario, grid, ...)`` is :func:`.engine.sweep`: this package is
callable, because Python binds ``ts_explore.sweep`` to the package as soon as
any of its modules is imported (a Dask worker imports ``ts_explore.sweeps.cell``),
and the documented call must keep working then. Dask
(``distributed``, ``dask-cuda``) and pandas come with ``pip install
'ts-explore[sweep]'``; without them a sweep says how to install them.

Modules: ``grid`` (cells and their keys), ``cell`` (what a worker runs for one
cell), ``cluster`` (the local cluster sweeps start), ``bootstrap`` (whether
this program's worker processes can start), ``worker_setup`` (preloaded by
each local worker), ``identity`` (a user scenario's code: its digest, the
modules sent by value), ``cache`` (results on disk), ``table`` (the
DataFrame and its files), ``engine`` (submitting cells, collecting rows),
``command`` (``ts-explore sweep``).
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module (loaded on first use, so `ts-explore --help` does not import the DSL)
_NAMES = {"Sweep": "engine", "sweep": "engine", "SweepError": "errors", "shutdown": "cluster",
          "start_cluster": "cluster", "GridError": "grid", "config_of": "grid"}


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_NAMES)
