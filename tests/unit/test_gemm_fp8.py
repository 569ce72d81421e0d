"""hopper_gemm with fp8 (e4m3) inputs on the CPU: the dtype moves TILE_K to 128, fp8 rows TMA cannot stride are
refused with the reason, the schedule records and is proven safe, and the kernel compiles for sm_90a without
spilling and traces the schedule the CPU drew."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scenario_support import captured, ident
from ts_explore.gpu.plan import plans_for
from ts_explore.kernels import gemm
from ts_explore.kernels.build import resources
from ts_explore.kernels.gemm_by_shape import ByShape
from ts_explore.kernels.gemm_geometry import DType, Geometry, Release, TileShape, k_blocks, shape_refusal
from ts_explore.kernels.host import SizeError
from ts_explore.model.plan import DeviceLimits
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get
from ts_explore.verification.verify import verify

SC = get("hopper_gemm")
H200 = DeviceLimits.h200()


def test_fp8_is_a_control_named_as_a_user_would() -> None:
    for name in ("fp8", "FP8", DType.FP8):
        assert SC.config(dtype=name).dtype is DType.FP8
    assert SC.default_config().dtype is DType.BF16, "bf16 stays the default"
    assert DType.of("bf16") is DType.BF16 and DType.of("fp8") is DType.FP8
    with pytest.raises(ValueError, match="use 'bf16' or 'fp8'"):
        DType.of("fp16")


def test_a_stage_is_one_128_byte_row_of_k_whatever_the_type() -> None:
    bf16 = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2)
    fp8 = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2, dtype=DType.FP8)
    assert (bf16.tile_k, fp8.tile_k) == (64, 128)
    assert bf16.stage_bytes == fp8.stage_bytes == 128 * 128 + 256 * 128  # twice the K in the same bytes
    assert fp8.max_stages() == bf16.max_stages() == 4
    assert fp8.smem_bytes == bf16.smem_bytes
    assert (k_blocks(4096, bf16.tile_k), k_blocks(4096, fp8.tile_k), k_blocks(528, fp8.tile_k)) == (64, 32, 5)
    assert gemm.bytes_moved((2, 3, 4), DType.FP8) == (8 + 12) + 2 * 6, "fp8 reads a byte per input, writes bf16 C"


def test_fp8_rows_tma_cannot_stride_are_refused_with_the_reason_and_the_fix() -> None:
    assert shape_refusal((256, 256, 1000)) is None, "1000 bf16 = 2000 bytes: a multiple of 16"
    message = shape_refusal((256, 256, 1000), DType.FP8)
    assert "K=1000 is not a multiple of 16" in message and "fp8" in message and "pad K to 1008" in message
    assert shape_refusal((1000, 1040, 528), DType.FP8) is None and shape_refusal((1, 8, 16), DType.FP8) is None
    assert "N=1001" in shape_refusal((256, 1001, 256), DType.FP8), "C stays bf16: N % 8"
    cfg = SC.config(dtype="fp8")
    with pytest.raises(SizeError, match="pad K to 1008"):
        gemm.plan(cfg, (256, 256, 1000), H200)
    with pytest.raises(ValueError) as err:
        SC.build(SC.config(dtype="fp8", k=264))
    assert "K=264" in str(err.value) and "multiple of 16" in str(err.value) and "272" in str(err.value)


def test_the_launch_plan_runs_k_in_blocks_of_128_and_the_gate_proves_it() -> None:
    from ts_explore.gpu.safety import prove

    cfg = SC.config(dtype="fp8")
    plans = plans_for(SC, cfg, ((4096, 4096, 4096), (1000, 1040, 528)), H200)
    assert [p.instances[0].view["extra"]["k_blocks"] for p in plans] == [32, 5]
    assert any("fp8 e4m3" in a and "128 elements of K" in a for a in plans[0].assumptions)
    assert plans[0].smem_bytes == gemm.plan(SC.default_config(), (4096, 4096, 4096), H200).smem_bytes
    assert prove(SC, cfg, plans).ok, "what launch(dtype='fp8') proves before it runs anything"


@pytest.mark.parametrize("overrides", [dict(), dict(tile=TileShape.T128x128), dict(release=Release.AFTER_WAIT)],
                         ids=ident)
def test_the_fp8_cpu_view_records_and_is_proven_safe(overrides: dict[str, Any]) -> None:
    cfg = SC.config(dtype="fp8", **overrides)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    assert ts.task("mma").schedule.domain_loop().trip_count() == k_blocks(cfg.k, 128) == 2
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    notes = " ".join(built.notes)
    assert "2 k-blocks of 128" in notes and "scale_a·scale_b" in notes


def test_an_early_release_is_caught_for_fp8_as_for_bf16() -> None:
    verdict = verify(**SC.build(SC.config(dtype="fp8", release=Release.PREMATURE)).verify_kwargs())
    assert verdict.status.value == "unsafe" and "async_read_rule" in {c.name for c in verdict.failed_checks}


def test_fp8_tolerance_allows_the_accumulation_but_catches_one_lost_k_block() -> None:
    rng = np.random.default_rng(0)
    k = 4096
    a = rng.standard_normal((64, k)).astype(np.float32)
    b = rng.standard_normal((64, k)).astype(np.float32)
    ref = a @ b.T
    # what a shorter accumulator loses: the running sum truncated to 14 bits after each 32-deep step, all one way
    drift = sum(np.abs(a[:, :i] @ b[:, :i].T) for i in range(32, k + 1, 32)) * 2.0**-14
    assert gemm.close(ref - drift.astype(np.float32), ref, k, DType.FP8).all()
    lost = ref - a[:, :128] @ b[:, :128].T  # one k-block of 128 missing: ~sqrt(128) = 11 off
    assert (~gemm.close(lost, ref, k, DType.FP8)).mean() > 0.5, "a check of every element fails on the first"


def test_the_dequantized_reference_multiplies_the_scales_in() -> None:
    a = np.array([[1.0, 2.0]], dtype=np.float32)
    b = np.array([[3.0, 4.0], [0.5, -1.0]], dtype=np.float32)
    assert gemm.reference(a, b, 0.5, 4.0).tolist() == [[22.0, -3.0]]


def test_by_shape_finds_the_shape_behind_an_fp8_calls_scales() -> None:
    calls: list[tuple] = []
    fn = ByShape(SC.config(dtype="fp8", tile=TileShape.BY_SHAPE), lambda cfg: lambda *a: calls.append((cfg, a)),
                 sms=lambda: 132)
    fn("a", "b", "c", 0.5, 2.0, 1000, 1040, 528, 1, 2, 3, "stream")
    cfg, args = calls[0]
    assert (cfg.tile, cfg.tile_n) == (TileShape.T64x256, 144) and cfg.dtype is DType.FP8  # N=1040 in 8 columns
    assert args == ("a", "b", "c", 0.5, 2.0, 1000, 1040, 528, 1, 2, 3, "stream")


@pytest.mark.parametrize("overrides", [dict(), dict(tile=TileShape.T128x128)], ids=ident)
def test_the_fp8_kernel_compiles_for_sm90a_without_spilling_and_traces_the_recorded_schedule(
        overrides: dict[str, Any]) -> None:
    from test_kernel_trace import same_shape

    cfg = SC.config(dtype="fp8", **overrides)
    seen: list[Any] = []
    fn = gemm.compile(SC, cfg, arch="sm_90a",
                      on_built=lambda b: seen.append(capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert len(seen) == 1, "the kernel builds the scenario exactly once"
    same_shape(captured(SC, cfg), seen[0])
    used = resources(fn)
    assert used is not None and used.frame_bytes == 0, used


def test_the_fp8_benchmark_holds_only_valid_configs_and_times_as_the_bf16_one() -> None:
    """The benchmark runs on a GPU machine in one go: a typo must fail here, not there."""
    import runpy
    from pathlib import Path

    bench = runpy.run_path(str(Path(__file__).parents[2] / "benchmarks" / "gemm_fp8.py"), run_name="configs")
    labels = [label for label, _ in bench["configs"]()]
    assert len(set(labels)) == len(labels)
    for _, overrides in bench["configs"]():
        cfg = SC.config(**overrides)
        SC.check(cfg)
        assert cfg.dtype is DType.FP8
    assert callable(bench["timing"]().paired), "gemm.py's timing is imported, not copied"
