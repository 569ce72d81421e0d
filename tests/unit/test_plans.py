"""Launch plans: the instances of a launch cover every CTA once, and each records the schedule those CTAs run."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ts_explore.kernels.contract import BuildContext
from ts_explore.model import BoundKind
from ts_explore.model.plan import DeviceLimits, Instance, span_text
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get

H200 = DeviceLimits.h200()


def loop_trips(scenario_name: str, cfg, instance: Instance) -> int:
    """Domain-loop trips of the first task as the CPU records ``instance``."""
    built = get(scenario_name).build(cfg, BuildContext.for_instance(instance.view))
    loop = capture_task_set(built.tasks, built.resource_dependency_graph).tasks[0].schedule.domain_loop()
    assert loop.start.kind is BoundKind.INT and loop.end.kind is BoundKind.INT, "a plan instance is concrete"
    return len(range(loop.start.value, loop.end.value, loop.step.value))


def covered(instances: tuple[Instance, ...]) -> list[int]:
    return sorted(c for i in instances for r in i.ctas for c in r)


@settings(max_examples=40, deadline=None)
@given(tiles=st.integers(1, 5000), ctas=st.integers(0, 700), stages=st.integers(1, 4))
def test_pipelined_instances_partition_the_grid_and_match_the_recorded_trips(tiles, ctas, stages) -> None:
    sc = get("pipelined_copy")
    cfg = sc.config(ctas=ctas, stages=stages, tile=1024)
    plan = importlib.import_module(sc.kernel).plan(cfg, tiles * 1024, H200)
    assert covered(plan.instances) == list(range(plan.ctas)), "every CTA in exactly one instance"
    assert sum(i.iterations * i.count for i in plan.instances) == tiles, "every tile copied once"
    for instance in plan.instances:
        assert loop_trips("pipelined_copy", cfg, instance) == instance.iterations


@settings(max_examples=40, deadline=None)
@given(vectors=st.integers(1, 100_000), ctas=st.integers(1, 64), warps=st.integers(1, 8),
       per_thread=st.integers(1, 8))
def test_grid_stride_thread_instances_match_the_recorded_trips(vectors, ctas, warps, per_thread) -> None:
    sc = get("grid_stride_copy")
    cfg = sc.config(ctas=ctas, warps=warps, per_thread=per_thread, vector=4)
    plan = importlib.import_module(sc.kernel).plan(cfg, vectors * 4, H200)
    threads = sorted(t for i in plan.instances for r in i.threads for t in r)
    assert threads == list(range(ctas * warps * 32))
    for instance in plan.instances:
        assert loop_trips("grid_stride_copy", cfg, instance) == instance.iterations


def test_every_catalog_kernel_plans_its_default_config() -> None:
    for name in ("grid_stride_copy", "pipelined_copy", "persistent_copy", "varlen_copy", "guards_demo"):
        sc = get(name)
        plan = importlib.import_module(sc.kernel).plan(sc.default_config(), 1 << 20, H200)
        assert plan.instances and plan.ctas >= 1 and plan.estimate, name
        assert plan.summary().startswith(f"{plan.ctas} CTAs x {plan.threads} threads"), name


def test_occupancy_follows_threads_shared_memory_and_registers() -> None:
    assert H200.ctas_per_sm(threads=128) == 16  # threads bound: 2048 / 128
    assert H200.ctas_per_sm(threads=128, smem_bytes=100 * 1024) == 2  # 228 KiB / (100 KiB + 1 KiB)
    assert H200.ctas_per_sm(threads=256, registers=128) == 2  # 65536 / (128 x 256)
    assert H200.ctas_per_sm(threads=1024, smem_bytes=200 * 1024, registers=255) == 1  # never below one


def test_span_text_reads_like_a_sentence() -> None:
    assert span_text([range(0, 1)]) == "CTA 0"
    assert span_text([range(3, 9), range(12, 13)]) == "CTAs 3-8, 12"
    assert span_text([], "threads") == "no threads"


def test_registers_are_read_from_the_compiled_kernel() -> None:
    """Compiled for sm_90a on the CPU: the kept cubin says how many registers a thread uses."""
    from ts_explore.kernels.build import resources

    sc = get("grid_stride_copy")
    used = resources(importlib.import_module(sc.kernel).compile(sc, sc.default_config(), arch="sm_90a"))
    assert used is not None and 8 <= used.registers <= 255 and used.name.startswith("kernel")


def test_a_plan_that_cannot_take_a_size_names_the_fix() -> None:
    from ts_explore.gpu.errors import LaunchError
    from ts_explore.gpu.plan import launch_plan

    with pytest.raises(LaunchError, match="not between 1 and") as err:
        launch_plan("guards_demo", 0, device=H200)
    assert err.value.reason == "bad_size"


@pytest.mark.parametrize("shape", [(8192, 8192, 8192), (4096, 4096, 4096), (300, 520, 200), (16384, 1024, 4096)])
@pytest.mark.parametrize("cluster", ["1x1", "2x1", "1x2"])
def test_gemm_plans_cover_every_tile_and_record_the_k_blocks(shape, cluster) -> None:
    from ts_explore.kernels import gemm
    from ts_explore.kernels.gemm_geometry import k_blocks, tile_counts

    sc = get("hopper_gemm")
    cfg = sc.config(cluster=cluster)
    plan = gemm.plan(cfg, shape, H200)
    assert covered(plan.instances) == list(range(plan.ctas))
    tiles_m, tiles_n = tile_counts(shape, cfg.geometry())
    geo = cfg.geometry()
    handed_out = sum(i.iterations * i.count for i in plan.instances) // geo.cluster_size
    assert handed_out == -(-tiles_m // geo.cluster_m) * -(-tiles_n // geo.cluster_n), "every (cluster) tile once"
    for instance in plan.instances:
        built = sc.build(cfg, BuildContext.for_instance(instance.view))
        loads = capture_task_set(built.tasks, built.resource_dependency_graph).tasks[0].schedule.domain_loop()
        assert loads.end.value == k_blocks(shape[2]), "the verified instance unrolls the launch's k-blocks"


def test_gemm_sizes_are_shapes_and_tma_alignment_is_refused_with_a_reason() -> None:
    from ts_explore.gpu.errors import LaunchError
    from ts_explore.gpu.plan import launch_plan

    with pytest.raises(LaunchError, match="shape \\(M, N, K\\)"):
        launch_plan("hopper_gemm", 1 << 20, device=H200)
    with pytest.raises(LaunchError, match="K") as err:
        launch_plan("hopper_gemm", (256, 256, 100), device=H200)
    assert err.value.reason == "bad_size"


@pytest.mark.parametrize("registers, error", [(-5, ValueError), (0, ValueError), (256, ValueError),
                                              ("128", TypeError), (1.5, TypeError)])
def test_a_plan_refuses_registers_no_thread_can_have(registers, error) -> None:
    from ts_explore.gpu import launch_plan

    with pytest.raises(error, match=f"registers={registers!r}"):
        launch_plan("grid_stride_copy", 1 << 20, registers=registers)
    assert launch_plan("grid_stride_copy", 1 << 20, registers=255).size == 1 << 20
