"""Instrumented kernels (compiled for sm_90a on the CPU): every drawn step gets its id in the kernel.

The ids a traced kernel writes are the uids of the CPU model's steps, for
every task, under iteration guards, runtime conditions and skippable regions;
and the one TS hook the instrumentation uses still has the shape it relies on.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from typing import Any

import cutlass
import pytest
from cutlass.experimental.task_scheduling.enums import ScheduleStage, ScheduleStageType
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.reader.trace_hook import HOOK, HOOK_ARGS, collect_emitted
from ts_explore.model import BlockKind, QueueKind
from ts_explore.model.timeline import TraceSpec
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import Loader, SkipRule, get

CASES: list[tuple[str, dict[str, Any]]] = [
    ("grid_stride_copy", dict(per_thread=2, unroll=2)),
    ("pipelined_copy", {}),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=2, stages=2)),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0)),
    ("persistent_copy", dict(skip=SkipRule.MASK, mask=(1, 3))),
    ("varlen_copy", {}),
    ("guards_demo", dict(start=1, end=9, step=2)),
]


def emitted(name: str, cfg: Any, spec: TraceSpec) -> set[tuple[str, int]]:
    sc = get(name)
    with collect_emitted() as seen:
        importlib.import_module(sc.kernel).compile(sc, cfg, arch="sm_90a", trace=spec)
    return seen


@pytest.mark.parametrize("name,overrides", CASES)
def test_every_drawn_step_is_emitted_with_its_id(name: str, overrides: dict) -> None:
    sc = get(name)
    cfg = sc.config(**overrides)
    built = sc.build(cfg)
    drawn = capture_task_set(built.tasks, built.resource_dependency_graph)
    want = {(t.name, s.uid) for t in drawn.tasks for s in t.schedule.steps()}
    assert emitted(name, cfg, TraceSpec()) == want


def test_guarded_and_skippable_steps_keep_their_ids() -> None:
    """The cases above cover guards and skippable regions: make sure they are really there."""
    guards = get("guards_demo")
    b = guards.build(guards.config())
    tree = capture_task_set(b.tasks, b.resource_dependency_graph).tasks[0].schedule
    kinds = {blk.kind for blk in tree.blocks()}
    assert {BlockKind.FIRST_ITER, BlockKind.EVERY} <= kinds, kinds
    persistent = get("persistent_copy")
    b = persistent.build(persistent.config(skip=SkipRule.MASK, mask=(1, 3)))
    tree = capture_task_set(b.tasks, b.resource_dependency_graph).tasks[0].schedule
    assert any(blk.kind is BlockKind.SKIPPABLE for blk in tree.blocks())


def test_work_only_tracing_still_knows_every_step() -> None:
    """Only work steps get events, yet the step map covers the whole schedule (ids stay the drawn ones)."""
    sc = get("pipelined_copy")
    assert emitted("pipelined_copy", sc.config(), TraceSpec(stages="work")) == emitted(
        "pipelined_copy", sc.config(), TraceSpec(stages="all"))


def test_the_ts_hook_still_has_the_shape_the_instrumentation_needs() -> None:
    """Fails loudly when TS renames its per-step hook, changes its arguments or the routing slot."""
    hook = getattr(Task, HOOK, None)
    assert callable(hook), f"TS Task has no {HOOK} any more: the trace hook in reader/trace_hook.py must move"
    assert tuple(inspect.signature(hook).parameters) == HOOK_ARGS
    resource = object()
    slot = Task._routing_slot(resource, ScheduleStage.ConsumerWait, ScheduleStageType.Loop, 3)
    assert slot == (id(resource), ScheduleStage.ConsumerWait, ScheduleStageType.Loop, 3)
    calls = [node for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(Task))))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == HOOK]
    assert len(calls) >= 5, "TS runs its steps elsewhere now: the trace hook would miss them"
    for call in calls:  # every call site hands over the routing slot (5th argument) that names the step
        assert len(call.args) == 5 or any(k.arg == "routing_slot" for k in call.keywords), ast.dump(call)[:200]


def test_untraced_and_traced_builds_take_different_arguments() -> None:
    """The instrumented kernel takes its two buffers after the stream; the plain one is unchanged."""
    from ts_explore.kernels.build import default_stream, gmem_ptr

    sc = get("pipelined_copy")
    module = importlib.import_module(sc.kernel)
    cfg = sc.config()
    plain = module.compile(sc, cfg, arch="sm_90a")
    traced = module.compile(sc, cfg, arch="sm_90a", trace=TraceSpec())
    args = [gmem_ptr(16), gmem_ptr(32), 4096, 1, default_stream()]
    assert len(plain.generate_execution_args(*args)[0]) + 2 == len(
        traced.generate_execution_args(*args, cutlass.Int64(64), cutlass.Int64(128))[0])


@pytest.mark.parametrize("progress", [False, True])
def test_tracing_some_ctas_leaves_the_rest_on_the_plain_schedule(progress: bool) -> None:
    """CTAs that record nothing run an uninstrumented copy of the schedule, over the same shared memory.

    Tracing CTAs 0-1 emits the schedule twice (recording / plain); a kernel
    that also writes progress (every CTA) emits it once. Shared memory must
    not grow with the second copy, or tracing would change the occupancy it measures.
    """
    from ts_explore.kernels.build import resources

    sc = get("pipelined_copy")
    cfg = sc.config()
    module = importlib.import_module(sc.kernel)
    spec = TraceSpec(stages="work", ctas=2, progress=progress)
    assert spec.splits is not progress
    plain = resources(module.compile(sc, cfg, arch="sm_90a"))
    traced = resources(module.compile(sc, cfg, arch="sm_90a", trace=spec))
    assert plain is not None and traced is not None
    assert traced.static_smem_bytes == plain.static_smem_bytes
    assert emitted("pipelined_copy", cfg, spec) == emitted("pipelined_copy", cfg, TraceSpec(stages="all"))


def test_a_launch_that_splits_offers_builds_capped_at_the_plain_kernels_register_count_and_at_255() -> None:
    """The worker's instrumented builds for a launch: uncapped first, then capped at the plain count and at 255.

    Uncapped, the threads-loader copy's recording branch takes more
    registers than the plain kernel, which changes how the compiler builds
    the plain branch; the capped build uses no more than the plain kernel.
    A kernel whose instrumented build needs no more registers gets one build.
    """
    from types import SimpleNamespace

    from ts_explore.gpu import launch_plan
    from ts_explore.gpu.runner import Runner
    from ts_explore.kernels.build import resources
    from ts_explore.model.plan import DeviceLimits

    info = SimpleNamespace(arch="sm_90")
    builds = {}
    for label, name, overrides in [("threads", "pipelined_copy", dict(loader=Loader.THREADS, load_warps=4, ctas=0)),
                                   ("static", "persistent_copy", dict(queue=QueueKind.STATIC, overlaunch=0,
                                                                      tile=32768, per_thread=4, warps=8, ctas=0))]:
        sc = get(name)
        cfg = sc.config(**overrides)
        plain = resources(importlib.import_module(sc.kernel).compile(sc, cfg, arch="sm_90a"))
        assert plain is not None
        plan = launch_plan(name, 1 << 26, device=DeviceLimits.h200(), registers=plain.registers, **overrides)
        m = {"kernel": sc.kernel, "scenario": name, "config": cfg, "trace": TraceSpec(stages="work")}
        found, _ = Runner().instrumented(m, info, plan)
        builds[label] = [(spec.registers, resources(build.fn).registers) for spec, build in found]
        if label == "threads":
            (none, uncapped), (cap, capped), *rest = builds[label]
            assert none is None and cap == plain.registers and capped <= plain.registers < uncapped
            assert all(cap == 255 and used > plain.registers for cap, used in rest), builds[label]
        else:
            assert builds[label] == [(None, plain.registers)]


def test_a_register_cap_given_by_the_user_holds_when_every_cta_records() -> None:
    from ts_explore.kernels.build import resources

    sc = get("pipelined_copy")
    cfg = sc.config(loader=Loader.THREADS, load_warps=4, ctas=0)
    module = importlib.import_module(sc.kernel)
    free = resources(module.compile(sc, cfg, arch="sm_90a", trace=TraceSpec(stages="all", ctas=0)))
    held = resources(module.compile(sc, cfg, arch="sm_90a", trace=TraceSpec(stages="all", ctas=0, registers=48)))
    assert free is not None and held is not None
    assert held.registers <= 48 < free.registers
