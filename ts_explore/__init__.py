"""ts-explore: see, verify, debug and launch CUTLASS Task Scheduling schedules in JupyterLab.

>>> import ts_explore                                   # doctest: +SKIP
>>> rec = ts_explore.record(my_schedule, src, dst)       # doctest: +SKIP
>>> ts_explore.schedule_graph(rec)                       # doctest: +SKIP

Names are loaded on first use, so ``import ts_explore`` stays cheap for the
parts (widgets, GPU launch) a session never touches.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # foundation
    "capture": "ts_explore.capture",
    "record": "ts_explore.capture",
    "Recording": "ts_explore.capture",
    "schedule_graph": "ts_explore.api",
    "dependency_graph": "ts_explore.api",
    "save": "ts_explore.api",
    "task_set": "ts_explore.api",
    "Problem": "ts_explore.model",
    "ScheduleTree": "ts_explore.model",
    "TaskInfo": "ts_explore.model",
    "TaskSet": "ts_explore.model",
    "QueueKind": "ts_explore.model",
    # verification and deadlock debugging
    "verify": "ts_explore.capture.verify",
    "Verdict": "ts_explore.model.verdict",
    "swimlanes": "ts_explore.analysis_api",
    "deadlock_graph": "ts_explore.analysis_api",
    "Stepper": "ts_explore.app.stepper",
    "gallery": "ts_explore.gallery",
    # explorer
    "scenarios": "ts_explore.scenarios",
    "Explorer": "ts_explore.app.explorer",
    # GPU
    "launch": "ts_explore.launch",
    "LaunchResult": "ts_explore.launch",
}

__all__ = sorted([*_EXPORTS, "load_ipython_extension", "unload_ipython_extension"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ts_explore' has no attribute {name!r}")
    mod = importlib.import_module(module)
    # a name that IS a subpackage (gallery, scenarios) is the module; otherwise the
    # attribute of that name (``verify`` lives in ``ts_explore.capture.verify``).
    value = mod if module == f"{__name__}.{name}" else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext ts_explore``: draw TS objects inline."""
    from .app.extension import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: Any) -> None:
    from .app.extension import unload_ipython_extension as unload

    unload(ip)
