"""Helpers the scenarios' CPU tests share: test ids for control overrides, a config's captured task set, a kernel
compiled for sm_90a from the task set the CPU view records."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ts_explore.model import TaskSet
from ts_explore.reader import capture_task_set


def ident(overrides: dict[str, Any]) -> str:
    """A readable test id for control overrides (enum members by name).

    >>> ident({}), ident({"stages": 2})
    ('default', 'stages=2')
    """
    return ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in overrides.items()) or "default"


def captured(scenario: Any, cfg: Any) -> TaskSet:
    """The task set ``scenario`` builds for ``cfg``, as our model."""
    built = scenario.build(cfg)
    return capture_task_set(built.tasks, built.resource_dependency_graph)


def compiled_as_recorded(scenario: Any, cfg: Any) -> Any:
    """Compile ``cfg``'s kernel for sm_90a (no GPU needed), assert that the task set built inside the kernel has
    the shape of the CPU view's, and return the kernel's resource use (registers, stack frame) from ptxas."""
    from test_kernel_trace import same_shape

    from ts_explore.kernels.build import resources

    module = __import__(scenario.kernel, fromlist=["compile"])
    seen: list[Any] = []
    fn = module.compile(scenario, cfg, arch="sm_90a",
                        on_built=lambda b: seen.append(capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert fn is not None and len(seen) == 1
    same_shape(captured(scenario, cfg), seen[0])
    used = resources(fn)
    assert used is not None, "ptxas reported no resource use"
    return used


def cuda_tool(name: str) -> str | None:
    """The CUDA toolkit's program ``name`` (``ptxas``, ``cuobjdump``): on PATH or where the toolkit installs it; None
    where there is none (the tests that need it skip, saying so)."""
    return shutil.which(name) or next((p for p in (f"/usr/local/cuda/bin/{name}", f"/usr/local/bin/{name}")
                                       if Path(p).is_file()), None)
