"""Sweeps: verify (and launch) grids of scenario configurations on a Dask cluster, into a pandas DataFrame.

``ts_explore.sweep(scenario, grid, ...)`` is :func:`.engine.sweep`: this package is
callable, because Python binds ``ts_explore.sweep`` to the package as soon as
any of its modules is imported (a Dask worker imports ``ts_explore.sweep.cell``),
and the documented call must keep working then. Dask
(``distributed``, ``dask-cuda``) and pandas come with ``pip install
'ts-explore[sweep]'``; without them a sweep says how to install them.

Modules: ``grid`` (cells and their keys), ``cell`` (what a worker runs for one
cell), ``cluster`` (the local cluster sweeps start), ``cache`` (results on
disk), ``table`` (the DataFrame and its files), ``engine`` (submitting cells,
collecting rows), ``command`` (``ts-explore sweep``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .cluster import SweepError, shutdown, start_cluster
from .engine import Sweep, sweep
from .grid import GridError, config_of


class _SweepPackage(types.ModuleType):
    """This package, callable as :func:`sweep`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage

__all__ = ["GridError", "Sweep", "SweepError", "config_of", "shutdown", "start_cluster", "sweep"]
