"""The launched schedule is the recorded one: the model captured while tracing each kernel
(``cute.compile`` for sm_90a, no GPU needed) equals the model drawn on the CPU for the same config."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest

from ts_explore.reader import capture_task_set
from ts_explore.model import Bound, BoundKind, QueueKind, TaskSet
from ts_explore.kernels.access import CacheHint
from ts_explore.kernels.pipelined import Storer
from ts_explore.scenarios import Loader, SkipRule, get

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("grid_stride_copy", {}, "sm_90a"),
    ("grid_stride_copy", dict(per_thread=4, unroll=2, vector=2), "sm_90a"),
    ("grid_stride_copy", dict(per_thread=8, cache=CacheHint.STREAMING), "sm_90a"),
    ("pipelined_copy", {}, "sm_90a"),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=2, stages=2), "sm_90a"),
    ("pipelined_copy", dict(storer=Storer.TMA, store_warps=1), "sm_90a"),
    ("pipelined_copy", dict(storer=Storer.TMA, store_warps=1, bulk_stores=2, cache=CacheHint.EVICT_FIRST), "sm_90a"),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0), "sm_90a"),
    ("persistent_copy", dict(skip=SkipRule.MASK, mask=(1, 3)), "sm_90a"),
    ("persistent_copy", dict(queue=QueueKind.CLC), "sm_100a"),
    ("varlen_copy", {}, "sm_90a"),
    ("varlen_copy", dict(dynamic=False, queue=QueueKind.NONE), "sm_90a"),
    ("guards_demo", dict(start=1, end=9, step=2), "sm_90a"),
]


def traced(name: str, cfg: Any, arch: str = "sm_90a") -> TaskSet:
    kernel = importlib.import_module(get(name).kernel)
    seen: list[TaskSet] = []
    kernel.compile(get(name), cfg, on_built=lambda built: seen.append(
        capture_task_set(built.tasks, built.resource_dependency_graph)), arch=arch)
    assert len(seen) == 1, "the kernel builds the scenario exactly once"
    return seen[0]


def same_shape(cpu: Any, gpu: Any, path: str = "") -> None:
    """Equal, except that a bound the kernel only knows at run time (a runtime value, or a per-work-tile
    ``get_domain``) may hold any value on the CPU."""
    if isinstance(gpu, Bound):
        assert isinstance(cpu, Bound), path
        if gpu.kind is BoundKind.RUNTIME:
            assert cpu.kind in (BoundKind.INT, BoundKind.RUNTIME), f"{path}: {cpu} vs {gpu}"
        elif gpu.kind is BoundKind.DYNAMIC and cpu.kind is BoundKind.INT:
            pass  # the CPU view records one work tile's count
        else:
            assert cpu == gpu, f"{path}: {cpu} != {gpu}"
        return
    if dataclasses.is_dataclass(gpu) and not isinstance(gpu, type):
        assert type(cpu) is type(gpu), f"{path}: {type(cpu).__name__} != {type(gpu).__name__}"
        for f in dataclasses.fields(gpu):
            same_shape(getattr(cpu, f.name), getattr(gpu, f.name), f"{path}.{f.name}")
        return
    if isinstance(gpu, tuple):
        assert isinstance(cpu, tuple) and len(cpu) == len(gpu), f"{path}: {cpu!r} vs {gpu!r}"
        for i, (c, g) in enumerate(zip(cpu, gpu)):
            same_shape(c, g, f"{path}[{i}]")
        return
    assert cpu == gpu, f"{path}: {cpu!r} != {gpu!r}"


@pytest.mark.parametrize("name,overrides,arch", CASES)
def test_traced_model_equals_cpu_model(name: str, overrides: dict, arch: str) -> None:
    sc = get(name)
    cfg = sc.config(**overrides)
    built = sc.build(cfg)
    cpu = capture_task_set(built.tasks, built.resource_dependency_graph)
    gpu = traced(name, cfg, arch)
    same_shape(cpu, gpu)
    assert [t.name for t in gpu.tasks] == [t.name for t in cpu.tasks]


def test_grid_stride_kernel_bounds_are_runtime_values() -> None:
    """Inside the kernel the domain start is the thread's runtime index, not the CPU view's int."""
    loop = traced("grid_stride_copy", get("grid_stride_copy").default_config()).tasks[0].schedule.domain_loop()
    assert loop.start.kind is BoundKind.RUNTIME and loop.end.kind is BoundKind.RUNTIME


def test_clc_kernel_does_not_compile_for_hopper() -> None:
    """Why launch refuses CLC below sm_100: the CLC fetch has no sm_90 instruction."""
    from ts_explore.kernels.persistent import compile

    sc = get("persistent_copy")
    with pytest.raises(Exception, match="unsupported operation"):
        compile(sc, sc.config(queue=QueueKind.CLC), arch="sm_90a")
