"""On a CUDA GPU: every scenario launches and is exactly correct at any size, the compile cache hits, hangs are
killed, and neither the threads nor the bulk-copy engine refills a stage before its readers are done."""

from __future__ import annotations

import time

import pytest

from ts_explore.gpu import MEMCPY, LaunchError, device_info, launch
from ts_explore.kernels.access import CacheHint
from ts_explore.kernels.pipelined import Storer
from ts_explore.model import QueueKind
from ts_explore.scenarios import Loader, SkipRule

SMALL = 1 << 20  # int32 elements (4 MiB): quick, yet a few hundred tiles

CASES = [
    ("grid_stride_copy", dict(ctas=0)),
    ("grid_stride_copy", dict(vector=1, ctas=16)),
    ("grid_stride_copy", dict(vector=4, per_thread=4, unroll=2, warps=8, ctas=0)),
    ("pipelined_copy", dict(ctas=0)),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=2, stages=2, ctas=0)),
    ("pipelined_copy", dict(stages=8, tile=2048, store_warps=8, ctas=3)),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=0)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, skip=SkipRule.EVERY_KTH, every_k=3, overlaunch=5)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, skip=SkipRule.MASK, mask=(0, 7, 100))),
    ("persistent_copy", dict(queue=QueueKind.STATIC, skip=SkipRule.CUSTOM, skip_fn=lambda t: t % 4 == 1)),
    ("varlen_copy", dict()),
    ("varlen_copy", dict(dynamic=False, queue=QueueKind.NONE)),
    ("guards_demo", dict()),
    ("guards_demo", dict(start=2, end=40, step=3, every_period=4, every_start=2, modulus=3, unroll=2)),
]


@pytest.mark.parametrize("name,overrides", CASES)
def test_scenario_launches_and_matches_the_host_reference(name: str, overrides: dict) -> None:
    result = launch(name, sizes=[SMALL], reps=3, warmup=1, **overrides)
    run = result.runs[0]
    assert result.ok, result.summary()
    assert run.kernel.median_ms > 0 and run.reference(MEMCPY) is not None
    assert run.mismatches and all(m.count == 0 for m in run.mismatches)


def test_several_sizes_in_one_launch() -> None:
    result = launch("grid_stride_copy", sizes=[1 << 16, 1 << 20, 1 << 22], reps=3, ctas=0)
    assert [r.elements for r in result.runs] == [1 << 16, 1 << 20, 1 << 22] and result.ok


def test_relaunching_a_cached_config_costs_under_5_percent_of_its_compile() -> None:
    cfg = dict(per_thread=3, warps=2, ctas=0)
    first = launch("grid_stride_copy", sizes=[SMALL], reps=2, **cfg)
    again = launch("grid_stride_copy", sizes=[SMALL], reps=2, **cfg)
    assert again.cache_hit and again.first_compile_s == first.first_compile_s
    assert again.compile_s <= 0.05 * first.first_compile_s, (again.compile_s, first.first_compile_s)


def test_clc_is_refused_below_sm100_but_records() -> None:
    info = device_info()
    if info.cc >= (10, 0):
        pytest.skip(f"{info.name} is sm_100+: CLC can run here")
    with pytest.raises(LaunchError) as err:
        launch("persistent_copy", queue=QueueKind.CLC, sizes=[SMALL])
    assert err.value.reason == "needs_sm100" and "sm_100" in str(err.value) and "verifies" in str(err.value)


# Sizes with every kind of tail: one element, fewer than a vector, one short of / one past a tile, a tail of
# whole 16-byte chunks only, and large sizes a few elements past a power of two.
def tail_sizes(tile: int) -> list[int]:
    return [1, 2, 3, 5, tile - 1, tile + 1, 2 * tile + 4, 3 * tile + 7, (1 << 20) + 13, (1 << 22) - 1]


BULK = dict(storer=Storer.TMA, store_warps=1)
ANY_SIZE = [
    ("grid_stride_copy", dict(ctas=0), 4),
    ("grid_stride_copy", dict(vector=2, per_thread=3, ctas=7), 2),
    ("grid_stride_copy", dict(per_thread=8, warps=8, ctas=264, cache=CacheHint.STREAMING), 4),
    ("grid_stride_copy", dict(per_thread=4, ctas=0, cache=CacheHint.EVICT_FIRST), 4),
    ("grid_stride_copy", dict(per_thread=4, unroll=2, ctas=0, cache=CacheHint.READ_ONLY), 4),
    ("pipelined_copy", dict(ctas=0), 4096),
    ("pipelined_copy", dict(tile=1024, stages=3, ctas=24, cache=CacheHint.STREAMING), 1024),
    ("pipelined_copy", dict(loader=Loader.THREADS, load_warps=2, stages=2, vector=2, ctas=0), 4096),
    ("pipelined_copy", dict(BULK, ctas=0), 4096),
    ("pipelined_copy", dict(BULK, bulk_stores=2, tile=256, stages=2, ctas=48), 256),
    ("pipelined_copy", dict(BULK, bulk_stores=2, tile=16384, stages=3, ctas=0, cache=CacheHint.EVICT_FIRST), 16384),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0), 8192),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=0, vector=2, per_thread=2, cache=CacheHint.STREAMING), 8192),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=3, tile=1024, warps=1, skip=SkipRule.EVERY_KTH, every_k=2,
                             overlaunch=3), 1024),
]


@pytest.mark.parametrize("name,overrides,tile", ANY_SIZE)
def test_copies_of_any_size_are_exact(name: str, overrides: dict, tile: int) -> None:
    """The tail (a partial vector or tile, the last n % 4 elements) is copied by the kernel, nothing past it."""
    sizes = tail_sizes(tile)
    result = launch(name, sizes=sizes, reps=1, warmup=0, references=False, **overrides)
    assert [r.elements for r in result.runs] == sizes
    assert result.ok, result.summary()


def test_sizes_outside_int32_are_refused() -> None:
    for size in (0, 1 << 31):
        with pytest.raises(LaunchError) as err:
            launch("pipelined_copy", sizes=[size])
        assert err.value.reason == "bad_size" and "between 1 and" in str(err.value)


def test_watchdog_kills_a_hanging_kernel_and_the_next_launch_works() -> None:
    import hang_kernel  # noqa: F401  (registers the scenario)

    start = time.perf_counter()
    with pytest.raises(LaunchError) as err:
        launch("hang_forever_test", sizes=[4], reps=1, warmup=0, timeout=20)
    assert err.value.reason == "timeout"
    assert "did not finish in 20 s" in str(err.value) and "verifier said" in str(err.value)
    assert time.perf_counter() - start < 60
    after = launch("grid_stride_copy", sizes=[SMALL], reps=2)
    assert after.ok


@pytest.mark.parametrize("overrides", [dict(tile=1024, stages=8), dict(tile=4096, stages=4), dict(store_warps=8),
                                       dict(BULK, tile=1024, stages=8), dict(BULK, tile=2048, stages=3, bulk_stores=2),
                                       dict(BULK, tile=16384, stages=2, bulk_stores=2)])
def test_bulk_copy_refills_never_overtake_the_readers(overrides: dict) -> None:
    """Many tiles per CTA and several CTAs per SM: without the proxy fence before release, a refill
    raced the last readers of a stage (tens to thousands of wrong elements per 512 MiB). With bulk stores
    the engine is the reader: a stage is released only after ``cp.async.bulk.wait_group.read``."""
    for _ in range(2):
        result = launch("pipelined_copy", sizes=[1 << 27, (1 << 27) - 1], reps=1, warmup=0, references=False,
                        ctas=0, **overrides)
        assert result.ok, result.summary()


@pytest.mark.parametrize("name,overrides", [("grid_stride_copy", dict(ctas=0)), ("persistent_copy", dict())])
def test_keep_output_hands_back_exactly_what_the_host_reference_expects(name: str, overrides: dict) -> None:
    import importlib

    import numpy as np

    from ts_explore.scenarios import get

    size = SMALL + 77  # a tail
    result = launch(name, sizes=[size], reps=1, warmup=0, keep_output=True, **overrides)
    run = result.runs[0]
    assert result.ok and run.outputs, result.summary()
    module = importlib.import_module(get(name).kernel)
    expected = module.host_problem(result.config, result.plans[0]).expected
    assert set(run.outputs) == set(expected)
    for key, want in expected.items():
        got = run.outputs[key]
        assert isinstance(got, np.ndarray) and got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
