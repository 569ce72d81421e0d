"""On an sm_90 GPU: the TS-scheduled WGMMA GEMM matches torch.matmul for every shape and control value.

bf16 inputs, fp32 accumulation, bf16 C: an element may differ from the fp32
reference by bf16 rounding of C (2^-8 relative) plus accumulation-order noise
that grows like sqrt(K); one lost or doubled k-block is ~sqrt(64) off, far
outside that.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from ts_explore.kernels import gemm  # noqa: E402
from ts_explore.kernels.gemm_geometry import Cluster, Epilogue, GemmMode, Raster, Release, TileShape  # noqa: E402
from ts_explore.model import QueueKind  # noqa: E402
from ts_explore.scenarios import get  # noqa: E402

SCENARIO = get("hopper_gemm")
BENCH_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (16384, 1024, 4096)]
TAIL_SHAPES = [
    (1000, 1024, 1024),  # M tail (not a multiple of 128 or 256)
    (1024, 1000, 1024),  # N tail (a multiple of 8, not of the tile)
    (1024, 1024, 1000),  # K tail (a partial k-block, zero-filled by TMA)
    (777, 1496, 3000),   # all three
    (1, 8, 8),           # one row, one partial k-block
    (130, 264, 72),      # just past one tile in every dimension
]
SMALL = (520, 1048, 584)  # tails in M, N and K; a few tiles: quick per control value


@functools.lru_cache(maxsize=None)
def compiled(**overrides: Any) -> Any:
    return gemm.compile(SCENARIO, SCENARIO.config(**overrides))


def sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def check(shape: tuple[int, int, int], seed: int = 0, **overrides: Any) -> None:
    cfg = SCENARIO.config(**overrides)
    fn = compiled(**overrides)
    a, b = gemm.make_inputs(shape, seed)
    c = torch.full((shape[0], shape[1]), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm.run(fn, a, b, c, cfg, sms())
    torch.cuda.synchronize()
    assert_matches(c, gemm.reference(a, b), shape, cfg, f"{shape} {overrides}", "the fp32 product")


def assert_matches(c: Any, want: Any, shape: tuple[int, int, int], cfg: Any, what: str, of: str,
                   dtype: Any = None) -> None:
    """Every element of C within ``gemm.close`` of ``want``; else the count, the largest error and a map of the
    errors per output tile (``dtype``: the inputs', for the tolerance; bf16 by default)."""
    from ts_explore.kernels.gemm_geometry import DType

    bad = ~gemm.close(c, want, shape[2], dtype or DType.BF16)
    count = int(bad.sum())
    if count:
        tiles = gemm.error_tiles(bad, cfg.resolved(shape, sms()))
        raise AssertionError(f"{what}: {count} of {c.numel()} elements off {of} (max error "
                             f"{float((c.float() - want).abs().nan_to_num(1e30).max()):.3g}, |C| up to "
                             f"{float(want.abs().max()):.3g}); errors per output tile:\n{tiles}")


@pytest.mark.parametrize("shape", BENCH_SHAPES + TAIL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_shape_matches_torch(shape: tuple[int, int, int]) -> None:
    check(shape)


CONTROLS: list[dict[str, Any]] = [
    dict(tile=TileShape.T128x128),
    dict(tile=TileShape.T128x128, consumer_wgs=1, stages=6),
    dict(tile=TileShape.T256x128),
    dict(stages=2),
    dict(stages=4),
    dict(tile=TileShape.T128x128, stages=6),
    dict(persistence=QueueKind.NONE),
    dict(persistence=QueueKind.NONE, raster=Raster.ALONG_N),
    dict(raster=Raster.ALONG_N),
    dict(release=Release.AFTER_WAIT),
    dict(cluster=Cluster.C2x1),
    dict(cluster=Cluster.C2x1, tile=TileShape.T256x128),
    dict(cluster=Cluster.C2x1, persistence=QueueKind.NONE, raster=Raster.ALONG_N),
    dict(cluster=Cluster.C1x2),
    dict(cluster=Cluster.C1x2, tile=TileShape.T256x128),
    dict(cluster=Cluster.C1x2, tile=TileShape.T128x128),
    dict(cluster=Cluster.C1x2, tile=TileShape.T128x128, consumer_wgs=1, stages=6),
    dict(cluster=Cluster.C1x2, tile=TileShape.T64x128, consumer_wgs=1),  # 8-row slices of A per load warp
    dict(cluster=Cluster.C1x2, persistence=QueueKind.NONE),
    dict(cluster=Cluster.C1x2, persistence=QueueKind.NONE, raster=Raster.ALONG_N),
    dict(tile=TileShape.T64x128, consumer_wgs=1),
    dict(tile=TileShape.T64x256, consumer_wgs=1),
    dict(tile=TileShape.T64x128, consumer_wgs=1, stages=8, persistence=QueueKind.NONE),
    dict(tile=TileShape.BY_SHAPE),
    dict(swizzle=8),
    dict(swizzle=3),  # pads the tile columns of SMALL (5) to 6
    dict(swizzle=4, raster=Raster.ALONG_N, cluster=Cluster.C2x1),
    dict(swizzle=8, cluster=Cluster.C1x2),
    dict(swizzle=4, raster=Raster.ALONG_N, cluster=Cluster.C1x2),
]


@pytest.mark.parametrize("overrides", CONTROLS, ids=lambda o: ",".join(f"{k}={getattr(v, 'name', v)}"
                                                                       for k, v in o.items()))
def test_each_control_value_launches_and_matches_torch(overrides: dict[str, Any]) -> None:
    check(SMALL, seed=1, **overrides)
    check((1000, 1000, 1000), seed=2, **overrides)


CLUSTER_1X2_SHAPES = BENCH_SHAPES[:2] + TAIL_SHAPES + [(1000, 1032, 520), (1024, 1280, 256)]  # odd N tile counts


@pytest.mark.parametrize("shape", CLUSTER_1X2_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("persistence", [QueueKind.STATIC, QueueKind.NONE], ids=lambda q: f"persistence={q.name}")
def test_cluster_1x2_matches_torch_at_every_shape(shape: tuple[int, int, int], persistence: QueueKind) -> None:
    """A shared by N-neighbour CTAs (TMA multicast): M, N, K tails and odd N tile counts, whose last CTA lies
    outside C and only loads its half of A for its partner."""
    check(shape, seed=4, cluster=Cluster.C1x2, persistence=persistence)


def test_control_values_that_cannot_launch_are_refused_with_a_reason() -> None:
    from ts_explore import launch
    from ts_explore.gpu.errors import LaunchError

    with pytest.raises(ValueError, match="async-read rule"):
        gemm.compile(SCENARIO, SCENARIO.config(release=Release.PREMATURE))
    with pytest.raises(LaunchError) as err:  # the architecture rule is the launch gate's (gpu.safety)
        launch("hopper_gemm", persistence=QueueKind.CLC, sizes=[SMALL])
    assert err.value.reason == "cannot_run_here" and "sm_100" in str(err.value) and "no GPU" in str(err.value)


def test_k_not_a_multiple_of_8_is_refused_with_a_reason() -> None:
    cfg = SCENARIO.default_config()
    a, b = gemm.make_inputs((256, 256, 100))
    c = torch.empty((256, 256), device="cuda", dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="K=100 is not a multiple of 8.*16-byte"):
        gemm.run(compiled(), a, b, c, cfg, sms())


def test_one_compiled_config_serves_many_shapes() -> None:
    fn = compiled()
    for shape in [(256, 256, 64), (300, 520, 136), (2048, 1024, 512)]:
        check(shape)
    assert compiled() is fn


def test_launch_runs_the_gemm_through_the_gate_and_reports_tflops() -> None:
    """The user's path: ts_explore.launch plans (M, N, K), proves each instance, checks against fp32, times torch."""
    from ts_explore.gpu import LaunchError, launch

    result = launch("hopper_gemm", sizes=[(4096, 4096, 4096), (1000, 1032, 520)], reps=5, warmup=2)
    assert result.ok, result.summary()
    big, tails = result.runs
    assert big.unit == "TFLOP/s" and big.rate > 300 and big.reference("torch.matmul") is not None
    assert big.shape == "4096x4096x4096" and tails.mismatches[0].total == 1000 * 1032
    assert result.gate is not None and result.gate.ok and "proven" in result.verdict
    assert result.plans[0].registers is not None, "the worker read the compiled kernel's registers"
    with pytest.raises(LaunchError) as err:
        launch("hopper_gemm", release="premature", sizes=[(512, 512, 512)])
    assert err.value.reason == "unverified" and "early release" in str(err.value), "the async-read rule refuses it"


# (5000, 3080, 4136): a large grid whose rows of A and B (8272 B) straddle 128-byte lines: 128x256 in 2x1 clusters
BY_SHAPE_SHAPES = [(1000, 1032, 520), (1, 8, 8), (130, 264, 72), (777, 1496, 3000), (64, 4096, 8), (4096, 4096, 1024),
                   (5000, 3080, 4136)]


def test_by_shape_compiles_the_planned_tile_for_each_shape_and_matches_torch() -> None:
    """One 'by shape' config: small shapes get a smaller tile (more CTAs), large ones the 128x256 tile; tails too."""
    from ts_explore.kernels.gemm_tile_pick import pick_tile

    fn = compiled(tile=TileShape.BY_SHAPE)
    for shape in BY_SHAPE_SHAPES:
        check(shape, seed=3, tile=TileShape.BY_SHAPE)
        pick = pick_tile(shape, sms())
        assert fn.config_for(shape).tile is pick.tile and fn.config_for(shape).cluster.m == pick.cluster_m
    assert fn.config_for((5000, 3080, 4136)).cluster.m == 2
    tiles = {cfg.tile for cfg in fn.compiled}
    assert TileShape.T128x256 in tiles and len(tiles) >= 2, tiles


def test_launch_by_shape_shows_the_pick_in_the_plan_and_hands_back_c() -> None:
    """launch(tile='by shape', keep_output=True): the plan names the tile; C comes back and equals A·Bᵀ."""
    from ts_explore.gpu import launch

    shapes = [(1000, 1032, 520), (520, 1048, 584)]
    result = launch("hopper_gemm", tile=TileShape.BY_SHAPE, sizes=shapes, reps=3, warmup=1, keep_output=True)
    assert result.ok and result.gate is not None and result.gate.ok, result.summary()
    from ts_explore.kernels.gemm_tile_pick import pick_tile

    pick = pick_tile(shapes[0], sms())
    assert f"tile by shape: {pick.text}" in result.plans[0].summary() and result.plans[0].ctas == pick.tiles
    for shape, run in zip(shapes, result.runs):
        assert run.outputs is not None and set(run.outputs) == {"C"}
        out = run.outputs["C"]
        assert out.shape == shape[:2] and str(out.dtype) == "float32"
        a, b = gemm.make_inputs(shape, seed=0)
        ref = gemm.reference(a, b)
        assert bool(gemm.close(torch.from_numpy(out).cuda(), ref, shape[2]).all())
    plain = launch("hopper_gemm", sizes=[(256, 256, 64)], reps=1, warmup=0)
    assert plain.runs[0].outputs is None, "outputs are kept only when asked for"


# ---- fp8 (e4m3) A and B with per-tensor scales, bf16 C ----------------------------------------------------------

FP8_SHAPES = [(4096, 4096, 4096), (1000, 1040, 528)]  # the second: tails in M, N (not of the tile) and K (4 + 16/128)
FP8_CONTROLS: list[dict[str, Any]] = [
    dict(tile=TileShape.T128x128),
    dict(tile=TileShape.T256x128),
    dict(cluster=Cluster.C2x1),
    dict(cluster=Cluster.C1x2),
    dict(cluster=Cluster.C1x2, tile=TileShape.T128x128, persistence=QueueKind.NONE),
    dict(release=Release.AFTER_WAIT),
    dict(swizzle=8),
    dict(tile=TileShape.BY_SHAPE),
    dict(persistence=QueueKind.NONE, raster=Raster.ALONG_N),
    dict(tile=TileShape.T64x128, consumer_wgs=1),
    dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6),  # the scales reach both consumers' epilogues
]


def check_fp8(shape: tuple[int, int, int], seed: int = 0, **overrides: Any) -> None:
    """Ours against the fp32 product of the dequantized inputs, and against torch._scaled_mm on the same tensors."""
    from ts_explore.kernels.gemm_geometry import DType

    cfg = SCENARIO.config(dtype=DType.FP8, **overrides)
    fn = compiled(dtype=DType.FP8, **overrides)
    a, b, scale_a, scale_b = gemm.make_inputs(shape, seed, dtype=DType.FP8)
    assert a.dtype == torch.float8_e4m3fn and float(a.float().abs().max()) == gemm.FP8_MAX
    c = torch.full((shape[0], shape[1]), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm.run(fn, a, b, c, cfg, sms(), None, scale_a, scale_b)
    torch.cuda.synchronize()
    ref = gemm.reference(a, b, scale_a, scale_b)
    theirs = gemm.scaled_mm(a, b, scale_a, scale_b).float()
    torch_off = int((~gemm.close(theirs, ref, shape[2], DType.FP8)).sum())
    assert torch_off == 0, f"{shape}: torch._scaled_mm itself is off the reference in {torch_off} elements: the " \
                           "fp8 tolerance (gemm.close) is too tight for this GPU"
    for name, want in (("the dequantized fp32 product", ref), ("torch._scaled_mm", theirs)):
        assert_matches(c, want, shape, cfg, f"fp8 {shape} {overrides}", name, DType.FP8)


@pytest.mark.parametrize("shape", FP8_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fp8_matches_the_dequantized_product_and_torch_scaled_mm(shape: tuple[int, int, int]) -> None:
    check_fp8(shape)


@pytest.mark.parametrize("overrides", FP8_CONTROLS, ids=lambda o: ",".join(f"{k}={getattr(v, 'name', v)}"
                                                                           for k, v in o.items()))
def test_fp8_control_values_launch_and_match(overrides: dict[str, Any]) -> None:
    check_fp8((520, 1056, 592), seed=1, **overrides)  # tails in M, N and K; N % 16 for torch._scaled_mm
    check_fp8((1000, 1040, 528), seed=2, **overrides)


def test_fp8_inputs_the_kernel_cannot_take_are_refused_with_a_reason() -> None:
    from ts_explore.kernels.gemm_geometry import DType

    cfg = SCENARIO.config(dtype=DType.FP8)
    fn = compiled(dtype=DType.FP8)
    c = torch.empty((256, 256), device="cuda", dtype=torch.bfloat16)
    a, b, sa, sb = gemm.make_inputs((256, 256, 1000), dtype=DType.FP8)
    with pytest.raises(ValueError, match="K=1000 is not a multiple of 16.*pad K to 1008"):
        gemm.run(fn, a, b, c, cfg, sms(), None, sa, sb)
    a, b, sa, sb = gemm.make_inputs((256, 256, 256), dtype=DType.FP8)
    with pytest.raises(ValueError, match="scale_a is missing"):
        gemm.run(fn, a, b, c, cfg, sms())
    with pytest.raises(ValueError, match="float8_e4m3fn"):
        gemm.run(fn, a.float().to(torch.bfloat16), b, c, cfg, sms(), None, sa, sb)
    with pytest.raises(ValueError, match="fp8 inputs only"):
        gemm.run(compiled(), *gemm.make_inputs((256, 256, 256)), c, SCENARIO.default_config(), sms(), None, sa, sb)


def test_launch_runs_the_fp8_gemm_through_the_gate_beside_torch_scaled_mm() -> None:
    """launch('hopper_gemm', dtype='fp8'): proven, checked against the dequantized product, timed beside _scaled_mm."""
    from ts_explore.gpu import launch

    result = launch("hopper_gemm", dtype="fp8", sizes=[(4096, 4096, 4096), (1000, 1040, 528)], reps=5, warmup=2)
    assert result.ok, result.summary()
    big, tails = result.runs
    assert big.unit == "TFLOP/s" and big.rate > 400 and big.reference("torch._scaled_mm") is not None
    assert tails.mismatches[0].total == 1000 * 1040
    assert result.gate is not None and result.gate.ok and "proven" in result.verdict
    assert any("fp8 e4m3" in a for a in result.plans[0].assumptions)


# ---- ping-pong: two consumer warpgroups on alternate tiles (units of two tiles stacked along M), one ring ------

PINGPONG = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6)
PINGPONG_CONTROLS: list[dict[str, Any]] = [
    PINGPONG,
    dict(PINGPONG, cluster=Cluster.C2x1),
    dict(PINGPONG, swizzle=8),
    dict(PINGPONG, cluster=Cluster.C2x1, swizzle=4),
    dict(PINGPONG, cluster=Cluster.C1x2),
    dict(PINGPONG, cluster=Cluster.C1x2, swizzle=4),
    dict(PINGPONG, cluster=Cluster.C1x2, persistence=QueueKind.NONE),
    dict(PINGPONG, persistence=QueueKind.NONE),
    dict(PINGPONG, release=Release.AFTER_WAIT),
    dict(PINGPONG, stages=2),
    dict(PINGPONG, tile=TileShape.T64x256, stages=5),
    dict(PINGPONG, tile=TileShape.T64x256, stages=5, cluster=Cluster.C2x1, swizzle=8),
    dict(PINGPONG, tile=TileShape.T64x256, stages=5, cluster=Cluster.C1x2, swizzle=8),
]
PINGPONG_SHAPES = [(4096, 4096, 4096), (8192, 8192, 1024), (1000, 1032, 520), (130, 264, 72), (1, 8, 8)]


@pytest.mark.parametrize("shape", PINGPONG_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("overrides", PINGPONG_CONTROLS, ids=lambda o: "pingpong-" + ",".join(
    f"{k}={getattr(v, 'name', v)}" for k, v in o.items() if k != "mode"))
def test_pingpong_matches_torch(overrides: dict[str, Any], shape: tuple[int, int, int]) -> None:
    check(shape, seed=3, **overrides)


def test_pingpong_broken_order_is_refused_before_it_can_hang() -> None:
    from ts_explore.scenarios.gemm import GemmFault

    with pytest.raises(ValueError, match="fault=none"):
        gemm.compile(SCENARIO, SCENARIO.config(**PINGPONG, fault=GemmFault.PINGPONG_BROKEN))


def test_pingpong_launch_at_8192_cubed_is_proven_and_correct() -> None:
    """128 k-blocks per tile, 256 ring stages per work unit: the gate proves the plan (each consumer searched alone
    with the loader, for any number of tiles), the launch runs and is correct."""
    from ts_explore.gpu import launch

    result = launch("hopper_gemm", sizes=[(8192, 8192, 8192)], reps=5, warmup=2, **PINGPONG)
    assert result.ok, result.summary()
    run = result.runs[0]
    assert result.gate is not None and result.gate.ok and run.ratio("torch.matmul") > 0.5, result.summary()


def test_pingpong_trace_shows_the_mainloops_alternating_and_each_epilogue_under_the_other_mainloop() -> None:
    """Traced work steps of the first traced CTA. Both consumers step through all 2 x 16 ring stages of a unit;
    their own mainloops are the iterations that issue WGMMA (mma0: 0-15, mma1: 16-31). Per unit mma1's start after
    mma0's, mma0's next unit's after mma1's; mma0's C stores run under the tail of mma1's mainloop and mma1's
    under mma0's next mainloop."""
    from ts_explore.gpu import launch
    from ts_explore.model.timeline import TraceSpec

    n_k = 1024 // 64
    result = launch("hopper_gemm", sizes=[(4096, 4096, 1024)], reps=2, warmup=1, trace=TraceSpec(stages="work"),
                    **PINGPONG)
    assert result.ok, result.summary()
    alignment = result.compare()
    assert alignment.ok, alignment.summary()
    cta = result.timeline.spec.first_cta

    def spans(task: str, suffixes: tuple[str, ...], own: int | None = None) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        for e in result.timeline.events:
            if e.cta == cta and e.task == task and e.label.endswith(suffixes) and (
                    own is None or (e.iteration is not None and e.iteration // n_k == own)):
                lo, hi = out.get(e.tile, (e.start_ns, e.end_ns))
                out[e.tile] = (min(lo, e.start_ns), max(hi, e.end_ns))
        return out

    main0, main1 = spans("mma0", (".mma",), own=0), spans("mma1", (".mma",), own=1)
    epilogue0, epilogue1 = spans("mma0", (".stage", ".store")), spans("mma1", (".stage", ".store"))
    # Events name a unit by its M index (distinct for this CTA's 4 units); order the units as mma0 ran them.
    units = sorted(set(main0) & set(main1), key=lambda u: main0[u][0])
    assert len(units) >= 2, (main0, main1)
    for u, following in zip(units, units[1:] + [None]):
        assert main1[u][0] >= main0[u][0], f"unit {u}: mma1 started its WGMMAs before mma0"
        if following is not None:
            assert main0[following][0] >= main1[u][0], f"mma0 started unit {following} before mma1 started unit {u}"

    def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[0] < b[1] and b[0] < a[1]

    under1 = [u for u in units if u in epilogue0 and overlap(epilogue0[u], main1[u])]
    assert under1, f"no epilogue of mma0 overlapped mma1's mainloop: {epilogue0} vs {main1}"
    under0 = [u for u, nxt in zip(units, units[1:]) if u in epilogue1 and overlap(epilogue1[u], main0[nxt])]
    assert under0, f"no epilogue of mma1 overlapped mma0's next mainloop: {epilogue1} vs {main0}"


# ---- the hand-off epilogue: the consumers hand C to a store task -------------------------------------------------

HANDOFF = dict(epilogue=Epilogue.HANDOFF)
HANDOFF_CONTROLS: list[dict[str, Any]] = [
    dict(HANDOFF, swizzle=8),
    dict(HANDOFF, cluster=Cluster.C2x1),
    dict(HANDOFF, cluster=Cluster.C2x1, swizzle=8),
    dict(HANDOFF, cluster=Cluster.C1x2),
    dict(HANDOFF, cluster=Cluster.C1x2, swizzle=8),
    dict(HANDOFF, tile=TileShape.T256x128),  # two buffers: each store is released one part late
    dict(HANDOFF, tile=TileShape.T256x128, cluster=Cluster.C2x1),
    dict(HANDOFF, tile=TileShape.T128x128),
    dict(HANDOFF, tile=TileShape.T128x128, consumer_wgs=1, stages=6),
    dict(HANDOFF, tile=TileShape.T64x256, consumer_wgs=1),
    dict(HANDOFF, persistence=QueueKind.NONE),
    dict(HANDOFF, persistence=QueueKind.NONE, raster=Raster.ALONG_N, cluster=Cluster.C2x1),
    dict(HANDOFF, release=Release.AFTER_WAIT),
    dict(HANDOFF, stages=2),
    dict(HANDOFF, tile=TileShape.BY_SHAPE),
]
HANDOFF_FP8_CONTROLS: list[dict[str, Any]] = [HANDOFF, dict(HANDOFF, cluster=Cluster.C2x1),
                                              dict(HANDOFF, cluster=Cluster.C1x2),
                                              dict(HANDOFF, tile=TileShape.T256x128)]


def _handoff_id(overrides: dict[str, Any]) -> str:
    return "handoff" + "".join(f",{k}={getattr(v, 'name', v)}" for k, v in overrides.items() if k != "epilogue")


@pytest.mark.parametrize("shape", BENCH_SHAPES[:1] + BENCH_SHAPES[2:] + TAIL_SHAPES + [SMALL],
                         ids=lambda s: "x".join(map(str, s)))
def test_handoff_matches_torch_at_every_shape(shape: tuple[int, int, int]) -> None:
    check(shape, seed=5, **HANDOFF)


@pytest.mark.parametrize("overrides", HANDOFF_CONTROLS, ids=_handoff_id)
def test_handoff_control_values_launch_and_match_torch(overrides: dict[str, Any]) -> None:
    check(SMALL, seed=1, **overrides)
    check((1000, 1000, 1000), seed=2, **overrides)
    check((130, 264, 72), seed=3, **overrides)


@pytest.mark.parametrize("overrides", HANDOFF_FP8_CONTROLS, ids=_handoff_id)
def test_handoff_fp8_matches_the_dequantized_product_and_torch_scaled_mm(overrides: dict[str, Any]) -> None:
    for shape in FP8_SHAPES + [(520, 1056, 592)]:
        check_fp8(shape, seed=1, **overrides)


def test_handoff_faults_are_refused_before_they_can_hang() -> None:
    from ts_explore.scenarios.gemm import GemmFault

    for fault in (GemmFault.HANDOFF_EARLY_RELEASE, GemmFault.HANDOFF_EXTRA_PART):
        with pytest.raises(ValueError, match="fault=none"):
            gemm.compile(SCENARIO, SCENARIO.config(**HANDOFF, fault=fault))


def test_handoff_launch_at_8192_cubed_is_proven_and_correct() -> None:
    from ts_explore.gpu import launch

    result = launch("hopper_gemm", sizes=[(8192, 8192, 8192)], reps=5, warmup=2, **HANDOFF)
    assert result.ok, result.summary()
    run = result.runs[0]
    assert result.gate is not None and result.gate.ok and run.ratio("torch.matmul") > 0.5, result.summary()


def test_handoff_trace_shows_the_store_task_sending_c_under_the_next_mainloop() -> None:
    """Traced work steps of the first traced CTA: the store task's TMA stores of a tile overlap the consumers'
    WGMMAs of the CTA's next tile (the consumers no longer wait for the stores)."""
    from ts_explore.gpu import launch
    from ts_explore.model.timeline import TraceSpec

    result = launch("hopper_gemm", sizes=[(4096, 4096, 1024)], reps=2, warmup=1, trace=TraceSpec(stages="work"),
                    **HANDOFF)
    assert result.ok, result.summary()
    alignment = result.compare()
    assert alignment.ok, alignment.summary()
    cta = result.timeline.spec.first_cta

    def spans(task: str, suffix: str) -> dict[Any, tuple[int, int]]:
        out: dict[Any, tuple[int, int]] = {}
        for e in result.timeline.events:
            if e.cta == cta and e.task == task and e.label.endswith(suffix):
                lo, hi = out.get(e.tile, (e.start_ns, e.end_ns))
                out[e.tile] = (min(lo, e.start_ns), max(hi, e.end_ns))
        return out

    main, stores = spans("mma", ".mma"), spans("store", ".store")
    tiles = sorted(main, key=lambda t: main[t][0])
    assert len(tiles) >= 2 and set(tiles) <= set(stores), (main, stores)
    under = [t for t, nxt in zip(tiles, tiles[1:]) if stores[t][0] < main[nxt][1] and main[nxt][0] < stores[t][1]]
    assert under, f"no tile's stores overlapped the next tile's mainloop: {stores} vs {main}"


# ---- the 192-wide tiles (issue 39): 128x192 ping-pong and cooperative, 256x192 cooperative --------------------------

PP192 = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=4)
WIDE_CONTROLS: list[dict[str, Any]] = [
    PP192,
    dict(PP192, cluster=Cluster.C2x1, swizzle=8),  # QuACK's default shape: 2x1, B multicast in 24-row slices
    dict(PP192, persistence=QueueKind.NONE),
    dict(tile=TileShape.T128x192, stages=5, swizzle=8),  # six epilogue parts through three buffers
    dict(tile=TileShape.T128x192, stages=5, cluster=Cluster.C2x1),
    dict(tile=TileShape.T128x192, stages=4, epilogue=Epilogue.HANDOFF),
    dict(tile=TileShape.T256x192, stages=3, swizzle=8),
]
# aligned to the 192-wide tile, N tails of it (1032 = 5 x 192 + 72, 3080 = 16 x 192 + 8), K tails, tiny
WIDE_SHAPES = [(4096, 6144, 4096), (1000, 1032, 520), (5000, 3080, 4136), (130, 264, 72), (1, 8, 8)]


def _wide_id(overrides: dict[str, Any]) -> str:
    return ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in overrides.items())


@pytest.mark.parametrize("shape", WIDE_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("overrides", WIDE_CONTROLS, ids=_wide_id)
def test_the_192_wide_tiles_match_the_fp32_product(overrides: dict[str, Any], shape: tuple[int, int, int]) -> None:
    check(shape, **overrides)


def test_the_128x192_ping_pong_launch_at_8192_cubed_is_proven_and_correct() -> None:
    from ts_explore.gpu import launch

    result = launch("hopper_gemm", sizes=[(8192, 8192, 8192)], reps=5, warmup=2, **PP192, cluster=Cluster.C2x1,
                    swizzle=8)
    assert result.ok, result.summary()
    assert result.gate is not None and result.gate.ok and result.runs[0].ratio("torch.matmul") > 0.5, result.summary()


def test_by_shape_ping_pong_runs_the_planned_tile_and_matches() -> None:
    for shape in [(8192, 8192, 1024), (1000, 1032, 520)]:
        check(shape, mode=GemmMode.PINGPONG, tile=TileShape.BY_SHAPE)


def test_the_128x192_ping_pong_traced_launch_aligns_with_the_schedule() -> None:
    """A traced launch of the 192-accumulator consumers: the recorder's registers still fit and every traced
    task's steps align with the recorded schedule."""
    from ts_explore.gpu import launch
    from ts_explore.model.timeline import TraceSpec

    result = launch("hopper_gemm", sizes=[(4096, 4096, 1024)], reps=2, warmup=1, trace=TraceSpec(stages="work"),
                    **PP192)
    assert result.ok, result.summary()
    alignment = result.compare()
    assert alignment.ok, alignment.summary()
    tasks = {e.task for e in result.timeline.events}
    assert {"mma0", "mma1"} <= tasks, tasks


@pytest.mark.parametrize("overrides", [PP192, dict(PP192, cluster=Cluster.C2x1),
                                       dict(tile=TileShape.T256x192, stages=3)], ids=_wide_id)
def test_the_192_wide_tiles_in_fp8_match_the_dequantized_product(overrides: dict[str, Any]) -> None:
    check_fp8((520, 1056, 592), seed=1, **overrides)  # tails in M, N and K; N % 16 for torch._scaled_mm
    check_fp8((1000, 1040, 528), seed=2, **overrides)


# ---- the shared epilogue (issue 39): both ping-pong consumers store through one set of C buffers, in turns ---------
# (selected with -k turns; the ring takes 5 stages at 128x192 instead of 4)

TURNS = dict(mode=GemmMode.PINGPONG, tile=TileShape.T128x192, stages=5, epilogue=Epilogue.SHARED)
TURNS_CONTROLS: list[dict[str, Any]] = [TURNS, dict(TURNS, cluster=Cluster.C2x1, swizzle=8),
                                        dict(TURNS, persistence=QueueKind.NONE)]


@pytest.mark.parametrize("shape", WIDE_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("overrides", TURNS_CONTROLS, ids=lambda o: "turns-" + _wide_id(o))
def test_turns_match_the_fp32_product(overrides: dict[str, Any], shape: tuple[int, int, int]) -> None:
    check(shape, **overrides)


@pytest.mark.parametrize("overrides", TURNS_CONTROLS[:2], ids=lambda o: "turns-" + _wide_id(o))
def test_turns_at_8192_cubed_match_the_fp32_product(overrides: dict[str, Any]) -> None:
    """128 k-blocks per tile, the turn handed over 2 x 11 times per CTA. Run without launch()'s gate: at 128
    k-blocks its tile-loop search of the three coupled tasks stops INCONCLUSIVE at its cap of 10^7 states (the turn
    ties both consumers to each other, so the per-consumer projections that prove the other ping-pong builds do
    not apply); the schedule is proven SAFE at the CPU view's sizes and up to 32 k-blocks at this grid."""
    check((8192, 8192, 8192), **overrides)


def test_turns_in_fp8_match_the_dequantized_product() -> None:
    check_fp8((520, 1056, 592), seed=1, **TURNS)  # tails in M, N and K; N % 16 for torch._scaled_mm
    check_fp8((1000, 1040, 528), seed=2, **TURNS, cluster=Cluster.C2x1)


def test_turns_early_hand_over_is_refused_before_it_can_race() -> None:
    from ts_explore.scenarios.gemm import GemmFault

    with pytest.raises(ValueError, match="fault=none"):
        gemm.compile(SCENARIO, SCENARIO.config(**TURNS, fault=GemmFault.SHARED_EARLY_TURN))


def test_turns_traced_launch_aligns_with_the_schedule() -> None:
    """A traced launch with the turn: every traced task's steps (the turn's acquire, wait, commit and release
    among them) align with the recorded schedule."""
    from ts_explore.gpu import launch
    from ts_explore.model.timeline import TraceSpec

    result = launch("hopper_gemm", sizes=[(4096, 4096, 1024)], reps=2, warmup=1, trace=TraceSpec(stages="work"),
                    **TURNS)
    assert result.ok, result.summary()
    alignment = result.compare()
    assert alignment.ok, alignment.summary()
    assert {"mma0", "mma1"} <= {e.task for e in result.timeline.events}
