"""ts-explore: see, verify, debug and launch CUTLASS Task Scheduling schedules in JupyterLab.

>>> import ts_explore
>>> from cutlass.experimental.task_scheduling import domain_loop
>>> from ts_explore.seed_examples.resources import GmemSink, GmemSource
>>> def copy(src, dst):
...     with domain_loop(0, 8, 1):
...         dst.set_item(data=src.get_item())
>>> rec = ts_explore.record(copy, GmemSource(name="src"), GmemSink(name="dst"))
>>> rec.ok, [s.title for s in rec.tree.steps()]
(True, ['src.get_item', 'dst.set_item'])
>>> "src.get_item" in ts_explore.schedule_graph(rec).source   # a graphviz.Digraph; notebooks draw it
True

Names are loaded on first use, so ``import ts_explore`` stays cheap for the
parts (widgets, GPU launch) a notebook never touches.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> "module:attribute", or "module" for a public submodule
_EXPORTS: dict[str, str] = {
    # foundation
    "capture": "ts_explore.reader:capture",
    "record": "ts_explore.reader:record",
    "range_constexpr_on_cpu": "ts_explore.reader.constexpr:range_constexpr_on_cpu",
    "Recording": "ts_explore.reader:Recording",
    "schedule_graph": "ts_explore.app.drawings:schedule_graph",
    "dependency_graph": "ts_explore.app.drawings:dependency_graph",
    "save": "ts_explore.app.drawings:save",
    "task_set": "ts_explore.app.drawings:task_set",
    "Problem": "ts_explore.model:Problem",
    "ScheduleTree": "ts_explore.model:ScheduleTree",
    "TaskInfo": "ts_explore.model:TaskInfo",
    "TaskSet": "ts_explore.model:TaskSet",
    "QueueKind": "ts_explore.model:QueueKind",
    # verification and deadlock debugging
    "verify": "ts_explore.verification.verify:verify",
    "Verdict": "ts_explore.model.verdict:Verdict",
    "swimlanes": "ts_explore.render.verdict_drawings:swimlanes",
    "deadlock_graph": "ts_explore.render.verdict_drawings:deadlock_graph",
    "Stepper": "ts_explore.app.stepper:Stepper",
    "repairs": "ts_explore.repair:repairs",
    "gallery": "ts_explore.gallery",
    # explorer
    "scenarios": "ts_explore.scenarios",
    "Explorer": "ts_explore.app.explorer:Explorer",
    # GPU
    "launch": "ts_explore.gpu:launch",
    "LaunchResult": "ts_explore.gpu:LaunchResult",
    "launch_plan": "ts_explore.gpu.plan:launch_plan",
    "load_trace": "ts_explore.model.trace_file:load_trace",
    "sweep": "ts_explore.sweeps:sweep",
    "tune": "ts_explore.tuning.run:tune",
}

__all__ = sorted([*_EXPORTS, "load_ipython_extension", "unload_ipython_extension"])

# model classes get their notebook display hooks and drawing methods here, in one place
from .app.hooks import attach as _attach_hooks  # noqa: E402

_attach_hooks()


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'ts_explore' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    mod = importlib.import_module(module)
    value = getattr(mod, attr) if attr else mod
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
