"""Copies of any size, without a GPU: plans name the CTA or thread that copies the tail, the gate proves it,
host references expect every element, and every copy path compiles for sm_90a without spilling."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ts_explore.gpu import LaunchError
from ts_explore.gpu.plan import plans_for
from ts_explore.gpu.reference import FILL, pattern
from ts_explore.gpu.safety import prove
from ts_explore.kernels.access import CacheHint
from ts_explore.kernels.build import resources
from ts_explore.kernels.host import MAX_ELEMENTS
from ts_explore.kernels.pipelined import Storer
from ts_explore.model import QueueKind
from ts_explore.model.plan import DeviceLimits, LaunchPlan
from ts_explore.scenarios import Loader, SkipRule, get

H200 = DeviceLimits.h200()

# Sizes a user might launch: tiny, one off a power of two or a tile, and anything in range.
SIZES = st.one_of(
    st.integers(1, 70),
    st.sampled_from([2**k + d for k in (10, 12, 13, 14, 20, 27, 30) for d in (-5, -1, 0, 1, 3, 13)]),
    st.integers(1, MAX_ELEMENTS - (1 << 21)),
)

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("grid_stride_copy", dict(ctas=0, per_thread=4)),
    ("grid_stride_copy", dict(ctas=5, vector=2, warps=1)),
    ("pipelined_copy", dict(ctas=0, tile=4096, stages=4)),
    ("pipelined_copy", dict(ctas=7, tile=256, storer=Storer.TMA, store_warps=1)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=0, overlaunch=0, tile=32768, per_thread=4, warps=8)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=3, tile=1024, warps=1)),
]


def plan_of(name: str, size: int, **overrides: Any) -> LaunchPlan:
    sc = get(name)
    return plans_for(sc, sc.config(**overrides), (size,), H200)[0]


def unit_and_work(name: str, cfg: Any, plan: LaunchPlan) -> tuple[int, int, int, int]:
    """(elements per unit, units handed out, units a worker's trip advances by, owner of the last real unit)."""
    n = plan.size
    if name == "grid_stride_copy":
        workers = plan.ctas * plan.threads
        count = -(-n // cfg.vector)
        return cfg.vector, count, workers * cfg.per_thread, (count - 1) % workers
    logical = -(-n // cfg.tile)
    extra = cfg.overlaunch if name == "persistent_copy" else 0
    return cfg.tile, logical + extra, plan.ctas, (logical - 1) % plan.ctas


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=SIZES, which=st.integers(0, len(CONFIGS) - 1))
def test_every_size_plans_each_worker_once_and_names_the_tail(size: int, which: int) -> None:
    name, overrides = CONFIGS[which]
    sc = get(name)
    cfg = sc.config(**overrides)
    plan = plans_for(sc, cfg, (size,), H200)[0]
    unit, count, step, owner = unit_and_work(name, cfg, plan)
    per_thread = name == "grid_stride_copy"
    spans = [i.threads[0] if per_thread else i.ctas[0] for i in plan.instances]
    workers = plan.ctas * plan.threads if per_thread else plan.ctas
    assert sorted(w for s in spans for w in s) == list(range(workers)), "every worker in exactly one instance"
    for inst, span in zip(plan.instances, spans):
        for w in (span.start, span[-1]):
            assert inst.iterations == len(range(w, count, step)), (inst.describe(), w)
    tails = [i for i in plan.instances if "tail" in i.work]
    if size % unit:
        (tail,) = tails
        assert [w for s in (tail.threads if per_thread else tail.ctas) for w in s] == [owner]
        assert str(size % unit) in tail.work
    else:
        assert not tails


def test_the_tail_instance_is_proven_as_recorded_for_its_cta() -> None:
    sc = get("pipelined_copy")
    cfg = sc.config(ctas=3, tile=1024)
    size = 5 * 1024 + 7  # 6 tiles over 3 CTAs; CTA 2 owns tile 5: 4 staged elements + 3 copied directly
    report = prove(sc, cfg, plans_for(sc, cfg, (size,), H200))
    assert report.ok, report.summary()
    assert report.summary().splitlines() == [
        "CTAs 0-1: 2 tiles - proven",
        "CTA 2: 2 tiles, the last a 7-element tail (4 staged + 3 copied directly) - proven"]
    tail = report.proven[1].instance
    assert tail.view["block"] == 2 and tail.view["extra"]["n"] == size
    built = sc.build(cfg, _for(tail))
    assert built.notes[0].startswith("CTA 2 of 3 copies 2 of the 6 tiles: 2, 5")


def _for(instance: Any) -> Any:
    from ts_explore.scenarios import BuildContext

    return BuildContext.for_instance(instance.view)


def test_a_grid_stride_thread_owns_the_partial_vector() -> None:
    plan = plan_of("grid_stride_copy", 4 * 256 + 3, ctas=2, warps=4)  # 257 vectors over 256 threads
    assert [i.describe() for i in plan.instances] == [
        "thread 0 (CTA 0): 2 iterations, the last a 3-element tail (a partial vector)",
        "threads 1-255 (CTAs 0-1): 1 iteration"]


@pytest.mark.parametrize("queue", [QueueKind.NONE, QueueKind.STATIC, QueueKind.CLC])
def test_persistent_plans_say_which_tile_is_partial(queue: QueueKind) -> None:
    plan = plan_of("persistent_copy", 12 * 1024 + 100, queue=queue, tile=1024, warps=1, ctas=5,
                   overlaunch=0 if queue is QueueKind.NONE else 2)
    text = plan.summary()
    assert "tile 12 holds 100 of 1024 elements (the tail)" in text
    if queue is QueueKind.STATIC:  # 15 tiles handed out over 5 CTAs: tile 12 goes to CTA 2
        assert "CTA 2: 3 tiles, 8 row(s) each; tile 12 holds" in text
    if queue is QueueKind.NONE:
        assert plan.ctas == 13 and "CTA 12: 1 tile" in text


def host_problem(name: str, size: int, **overrides: Any) -> Any:
    sc = get(name)
    cfg = sc.config(**overrides)
    module = importlib.import_module(sc.kernel)
    return module.host_problem(cfg, module.plan(cfg, size, H200))


@pytest.mark.parametrize("name", ["grid_stride_copy", "pipelined_copy"])
@pytest.mark.parametrize("size", [1, 3, 4095, 4097, (1 << 20) + 13])
def test_flat_copies_expect_every_element(name: str, size: int) -> None:
    problem = host_problem(name, size)
    assert problem.outputs == {"dst": size} and problem.bytes_moved == 8 * size
    assert np.array_equal(problem.expected["dst"], pattern(size)) and problem.args[2] == size


def test_persistent_reference_keeps_skipped_tiles_and_copies_the_partial_one() -> None:
    size = 9 * 1024 + 10  # tiles 0-8 whole, tile 9 holds 10 elements; every 3rd tile (2, 5, 8) skipped
    problem = host_problem("persistent_copy", size, skip=SkipRule.EVERY_KTH, every_k=3, tile=1024, warps=1)
    dst, src = problem.expected["dst"], pattern(size)
    assert len(dst) == size
    for t in range(10):
        part = slice(t * 1024, min(size, (t + 1) * 1024))
        assert (dst[part] == FILL).all() if t in (2, 5, 8) else np.array_equal(dst[part], src[part])
    assert problem.args[3:5] == (10, 12) and problem.bytes_moved == 8 * (size - 3 * 1024)


@pytest.mark.parametrize("size", [0, -4, MAX_ELEMENTS + 1, 2.5, True])
def test_sizes_outside_int32_are_refused_with_the_range(size: Any) -> None:
    sc = get("pipelined_copy")
    with pytest.raises(LaunchError) as err:
        plans_for(sc, sc.default_config(), (size,), H200)
    assert err.value.reason == "bad_size" and ("between 1 and" in str(err.value) or "whole number" in str(err.value))


def test_a_scalar_grid_stride_size_next_to_int32_max_is_refused_with_a_fix() -> None:
    """Its loop index would pass 2**31 - 1 stepping out of the domain."""
    sc = get("grid_stride_copy")
    with pytest.raises(LaunchError) as err:
        plans_for(sc, sc.config(vector=1, ctas=0), (MAX_ELEMENTS,), H200)
    assert err.value.reason == "bad_size" and "vector=4" in str(err.value)
    assert plans_for(sc, sc.config(vector=4, ctas=0), (MAX_ELEMENTS,), H200)[0].size == MAX_ELEMENTS


# Every copy path, compiled for Hopper here: registers within budget and nothing spilled to local memory.
PATHS: list[tuple[str, dict[str, Any], int]] = [
    ("grid_stride_copy", dict(per_thread=8, warps=8, cache=CacheHint.STREAMING), 96),
    ("grid_stride_copy", dict(per_thread=4, cache=CacheHint.EVICT_FIRST), 64),
    ("grid_stride_copy", dict(per_thread=4, vector=2, cache=CacheHint.READ_ONLY), 64),
    ("pipelined_copy", dict(tile=8192, stages=6, store_warps=8), 96),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=4, cache=CacheHint.STREAMING), 96),
    ("pipelined_copy", dict(storer=Storer.TMA, store_warps=1, tile=16384, stages=3, bulk_stores=2), 48),
    ("pipelined_copy", dict(storer=Storer.TMA, store_warps=1, cache=CacheHint.EVICT_FIRST), 48),
    ("persistent_copy", dict(queue=QueueKind.STATIC, per_thread=4, warps=8, tile=32768,
                             cache=CacheHint.STREAMING), 96),
]


@pytest.mark.parametrize("name,overrides,budget", PATHS)
def test_every_copy_path_compiles_for_hopper_without_spilling(name: str, overrides: dict, budget: int) -> None:
    sc = get(name)
    fn = importlib.import_module(sc.kernel).compile(sc, sc.config(**overrides), arch="sm_90a")
    used = resources(fn)
    assert used is not None and used.frame_bytes == 0, used
    assert used.registers <= budget, used


def test_the_benchmark_sweep_holds_only_valid_configs() -> None:
    """The sweep runs on a GPU machine in one go: a typo must fail here, not there."""
    import runpy
    from pathlib import Path

    sweep = runpy.run_path(str(Path(__file__).parents[2] / "benchmarks" / "gpu_copy.py"), run_name="sweep")
    labels = [label for label, _, _ in sweep["CONFIGS"]]
    assert len(set(labels)) == len(labels)
    for label, name, overrides in sweep["CONFIGS"]:
        sc = get(name)
        sc.check(sc.config(**overrides))
