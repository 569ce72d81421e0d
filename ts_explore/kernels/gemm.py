"""The Hopper GEMM kernel: compile once per config, run any (M, N, K), check against a reference.

``compile(scenario, cfg)`` traces the scenario's own ``build`` inside
``@cute.kernel`` (so the launched task set is the drawn one) and returns a
function of raw pointers and sizes::

    fn(a_ptr, b_ptr, c_ptr, M, N, K, grid_x, grid_y, grid_z, stream)

with ``grid_*`` from :func:`grid`; an fp8 config (``dtype=fp8``) takes the two
fp32 per-tensor scales after the pointers::

    fn(a_ptr, b_ptr, c_ptr, scale_a, scale_b, M, N, K, grid_x, grid_y, grid_z, stream)

and writes C = (scale_a·scale_b)·(A·Bᵀ) in bf16. TMA descriptors are built on the host per
call from (M, N, K), so one compiled config serves every shape that
:func:`shape_refusal` accepts. It uses WGMMA (sm_90a only) and, with
``persistence=CLC``, CLC: :func:`features` declares them and
:mod:`ts_explore.gpu.safety` (the one place for architecture rules) refuses
a GPU that lacks them, before anything is compiled for it.
"""

# No ``from __future__ import annotations`` here: the DSL reads kernel annotations as objects.

from typing import Any, Callable, NamedTuple

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.nvgpu import cpasync

from ..model.plan import DeviceLimits, Instance, LaunchPlan
from .build import compile_options, default_stream, gmem_ptr
from .host import DeviceProblem, SizeError, strided_instances
from .common import BuiltHook, kernel_context, repair_edits, repaired_build, run_built
from .gemm_geometry import (
    EPILOGUE_N, H200_DENSE_BF16_TFLOPS, DType, Geometry, Raster, Release, bytes_moved, cluster_dims, flops,
    k_blocks, launch_grid, shape_refusal, tile_counts, work_units,
)
from .gemm_resources import OUT_DTYPE, in_dtype, load_slices, smem_layouts
from .trace import address, recorder_for

Shape = tuple  # (M, N, K)
DEFAULT_SIZES = ((4096, 4096, 4096),)  # what launch() runs when given no sizes


def features(cfg: Any) -> frozenset[str]:
    """Hardware features this config's kernel uses (:data:`ts_explore.gpu.safety.FEATURES` says which GPUs have them)."""
    from ..model import QueueKind

    return frozenset({"wgmma", "clc"} if cfg.persistence is QueueKind.CLC else {"wgmma"})


def launch_refusal(cfg: Any, arch: str | None = "sm_90a") -> str | None:
    """Why ``cfg`` must not be launched (None: it may). The CPU view records and verifies anyway.

    Only this kernel's own rule; which GPU has which feature is
    :mod:`ts_explore.gpu.safety`'s (see :func:`features`), so ``arch`` is not read.
    """
    if getattr(cfg, "fault", None) is not None and cfg.fault.name != "NONE":
        return (f"fault {cfg.fault.value!r} is planted to show the verifier's counterexample; the kernel would hang "
                "on the GPU; use fault=none")
    if cfg.release is Release.PREMATURE:
        return ("release=PREMATURE frees each A/B stage while its WGMMA may still read it (the async-read rule "
                "reports it; TS cannot see it); use release=LAGGED or AFTER_WAIT")
    return None


def grid(cfg: Any, shape: Shape, sms: int) -> tuple[int, int, int]:
    """The CUDA grid for ``shape`` on a GPU with ``sms`` multiprocessors (``tile='by shape'`` resolved first)."""
    from ..model import QueueKind

    cfg = cfg.resolved(tuple(shape), sms)
    return launch_grid(tuple(shape), cfg.geometry(), persistent=cfg.persistence is QueueKind.STATIC,
                       along_m=cfg.raster is Raster.ALONG_M, sms=sms)


def compile(scenario: Any, cfg: Any, *, arch: str | None = None, on_built: BuiltHook | None = None,
            trace: Any = None) -> Any:
    """Trace ``scenario.build(cfg, ...)`` inside the kernel and compile it (no GPU needed for sm_90a).

    With a ``trace`` spec (:class:`~ts_explore.model.timeline.TraceSpec`) the
    kernel is instrumented (:mod:`ts_explore.kernels.trace`) and the compiled
    function takes the ``events, progress`` buffer addresses after the stream.
    A ``tile='by shape'`` config gives a :class:`~.gemm_by_shape.ByShape`,
    called the same way, that compiles the picked tile's kernel on first use.
    """
    from .gemm_by_shape import ByShape
    from .gemm_geometry import TileShape

    if cfg.tile is TileShape.BY_SHAPE:
        if trace is not None:
            raise ValueError("tile='by shape' compiles one kernel per shape and cannot be traced as one; trace with "
                             "the tile the launch plan names (launch_plan('hopper_gemm', size, tile='by shape'))")
        scenario.check(cfg)
        edits = repair_edits()  # each shape's kernel compiles later: it keeps the repair this call was made under

        def per_shape(concrete: Any) -> Any:
            with repaired_build(edits):
                return compile(scenario, concrete, arch=arch, on_built=on_built)

        return ByShape(cfg, per_shape)
    scenario.check(cfg)
    refusal = launch_refusal(cfg, arch)
    if refusal is not None:
        raise ValueError(refusal)
    host = host_function(scenario, cfg, on_built, trace)
    geo = cfg.geometry()
    args = [gmem_ptr(0, in_dtype(geo)), gmem_ptr(0, in_dtype(geo)), gmem_ptr(0, OUT_DTYPE)]
    args += [cutlass.Float32(1.0)] * geo.dtype.scale_args
    args += [cutlass.Int32(8)] * 6
    args.append(default_stream())
    if trace is not None:
        args += [cutlass.Int64(0), cutlass.Int64(0)]
    return cute.compile(host, *args, options=compile_options(arch))


def host_function(scenario: Any, cfg: Any, on_built: BuiltHook | None = None, trace: Any = None) -> Any:
    """The ``@cute.jit`` host function: TMA descriptors from (M, N, K), then the kernel launch."""
    from ..model import QueueKind

    geo: Geometry = cfg.geometry()
    persistent = cfg.persistence is QueueKind.STATIC
    along_m = cfg.raster is Raster.ALONG_M
    cluster = cluster_dims(geo, persistent=persistent, along_m=along_m)

    @cute.kernel
    def kernel(tma_a: cute.CopyAtom, g_a: cute.Tensor, tma_b: cute.CopyAtom, g_b: cute.Tensor,
               tma_c: cute.CopyAtom, g_c: cute.Tensor, n_k: cutlass.Int32, sched: Any, scale: cutlass.Float32,
               events: cutlass.Int64, progress: cutlass.Int64) -> None:
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == 0:
            cpasync.prefetch_descriptor(tma_a)
            cpasync.prefetch_descriptor(tma_b)
            cpasync.prefetch_descriptor(tma_c)
        ctx = kernel_context({"tma_a": tma_a, "g_a": g_a, "tma_b": tma_b, "g_b": g_b, "tma_c": tma_c, "g_c": g_c},
                             {"k_blocks": n_k, "scheduler_params": sched, "scale": scale})
        # With a 2x1 or 1x2 cluster the peer CTA's multicasts and releases land in this CTA's shared memory.
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress, every_lane=True),
                  cluster=geo.cluster_size > 1)

    @cute.jit
    def launch_kernel(a_ptr: cute.Pointer, b_ptr: cute.Pointer, c_ptr: cute.Pointer, scale: cutlass.Float32,
                      m: cutlass.Int32, n: cutlass.Int32, k: cutlass.Int32, grid_x: cutlass.Int32,
                      grid_y: cutlass.Int32, grid_z: cutlass.Int32, stream: cuda.CUstream, events: Any,
                      progress: Any) -> None:
        # shape_refusal turns away K and N that TMA cannot stride (K % 16 fp8 elements, K % 8 and N % 8 bf16)
        k8 = cute.assume(k, divby=16 // geo.dtype.bytes)
        n8 = cute.assume(n, divby=8)
        a = cute.make_tensor(a_ptr, cute.make_layout((m, k8), stride=(k8, 1)))
        b = cute.make_tensor(b_ptr, cute.make_layout((n8, k8), stride=(k8, 1)))
        c = cute.make_tensor(c_ptr, cute.make_layout((m, n8), stride=(n8, 1)))
        rows_a, rows_b = load_slices(geo, geo.load_warps)
        slice_geo = Geometry(tile_m=rows_a, tile_n=rows_b, stages=1, consumer_wgs=1, dtype=geo.dtype)
        a_slice, b_slice, _ = smem_layouts(slice_geo)
        _, _, c_layout = smem_layouts(geo)
        # The operand the cluster shares goes by multicast: A along a 1x2 cluster, B along a 2x1 one.
        a_op = cpasync.CopyBulkTensorTileG2SOp() if geo.cluster_n == 1 else \
            cpasync.CopyBulkTensorTileG2SMulticastOp()
        tma_a, g_a = cpasync.make_tiled_tma_atom(a_op, a, cute.slice_(a_slice, (None, None, 0)), (rows_a, geo.tile_k))
        b_op = cpasync.CopyBulkTensorTileG2SOp() if geo.cluster_m == 1 else \
            cpasync.CopyBulkTensorTileG2SMulticastOp()
        tma_b, g_b = cpasync.make_tiled_tma_atom(b_op, b, cute.slice_(b_slice, (None, None, 0)),
                                                 (rows_b, geo.tile_k))
        tma_c, g_c = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), c,
                                                 cute.slice_(c_layout, (None, None, 0)), (geo.tile_m, EPILOGUE_N))
        tiles_m = (m + geo.work_tile_m - 1) // geo.work_tile_m  # ping-pong: units of two tiles along M
        tiles_n = (n + geo.tile_n - 1) // geo.tile_n
        sched = utils.PersistentTileSchedulerParams((tiles_m, tiles_n, 1), (geo.cluster_m, geo.cluster_n, 1),
                                                    cfg.swizzle, along_m)
        n_k = (k + geo.tile_k - 1) // geo.tile_k
        kernel(tma_a, g_a, tma_b, g_b, tma_c, g_c, n_k, sched, scale, address(events), address(progress)).launch(
            grid=(grid_x, grid_y, grid_z), block=(geo.threads, 1, 1), cluster=cluster, stream=stream,
            min_blocks_per_mp=1)

    if geo.dtype is DType.FP8:
        @cute.jit
        def host_fp8(a_ptr: cute.Pointer, b_ptr: cute.Pointer, c_ptr: cute.Pointer, scale_a: cutlass.Float32,
                     scale_b: cutlass.Float32, m: cutlass.Int32, n: cutlass.Int32, k: cutlass.Int32,
                     grid_x: cutlass.Int32, grid_y: cutlass.Int32, grid_z: cutlass.Int32, stream: cuda.CUstream,
                     events: Any = None, progress: Any = None) -> None:
            launch_kernel(a_ptr, b_ptr, c_ptr, scale_a * scale_b, m, n, k, grid_x, grid_y, grid_z, stream, events,
                          progress)

        return host_fp8

    @cute.jit
    def host(a_ptr: cute.Pointer, b_ptr: cute.Pointer, c_ptr: cute.Pointer, m: cutlass.Int32, n: cutlass.Int32,
             k: cutlass.Int32, grid_x: cutlass.Int32, grid_y: cutlass.Int32, grid_z: cutlass.Int32,
             stream: cuda.CUstream, events: Any = None, progress: Any = None) -> None:
        launch_kernel(a_ptr, b_ptr, c_ptr, cutlass.Float32(1.0), m, n, k, grid_x, grid_y, grid_z, stream, events,
                      progress)

    return host


# ---- the launch plan and the problem the launch worker runs -------------------------------------------------


def problem_shape(size: Any, dtype: DType = DType.BF16) -> tuple[int, int, int]:
    """``size`` as ``(M, N, K)``; SizeError naming the fix for anything else or a shape TMA cannot stride
    (with ``dtype`` inputs: fp8 rows need K % 16)."""
    try:
        shape = tuple(int(v) for v in size)
    except TypeError:
        raise SizeError(f"a GEMM size is a shape (M, N, K), got {size!r}; pass e.g. sizes=[(4096, 4096, 4096)]") \
            from None
    if len(shape) != 3 or min(shape) < 1:
        raise SizeError(f"a GEMM size is three positive ints (M, N, K), got {size!r}")
    refusal = shape_refusal(shape, dtype)
    if refusal is not None:
        raise SizeError(refusal)
    return shape  # type: ignore[return-value]


def plan(cfg: Any, size: Any, limits: DeviceLimits, registers: int | None = None) -> LaunchPlan:
    """Persistent CTAs (clusters kept whole) walk output tiles; every tile runs K/64 (fp8: K/128) k-blocks."""
    from ..model import QueueKind

    from .gemm_geometry import TileShape, pick_tile, straddle_note

    shape = problem_shape(size, cfg.dtype)
    by_shape = cfg.tile is TileShape.BY_SHAPE
    cfg = cfg.resolved(shape, limits.sms)
    geo = cfg.geometry()
    gx, gy, gz = grid(cfg, shape, limits.sms)
    ctas = gx * gy * gz
    n_k = k_blocks(shape[2], geo.tile_k)
    tiles_m, tiles_n = tile_counts(shape, geo)
    each = f"{n_k} k-block{'s' if n_k != 1 else ''} each"
    extra = {"k_blocks": n_k, **({"shape": shape, "sms": limits.sms} if by_shape else {})}  # by shape: same pick
    if cfg.persistence is QueueKind.STATIC:
        c = geo.cluster_size
        units = work_units(shape, geo, cfg.swizzle, cfg.raster is Raster.ALONG_M)  # padded to whole swizzle groups
        per_cluster = strided_instances(units, ctas // c, "tile pair" if geo.pingpong else "tile",
                                        view=lambda b: {"block": b * c, "grid": ctas, "extra": extra})
        instances = tuple(Instance(ctas=(range(i.ctas[0].start * c, (i.ctas[0][-1] + 1) * c),), view=i.view,
                                   work=f"{i.work}, {each}", iterations=i.iterations) for i in per_cluster)
    else:
        instances = (Instance(ctas=(range(ctas),), view={"block": 0, "grid": ctas, "extra": extra},
                              work=f"{'1 tile pair' if geo.pingpong else '1 tile'}, {each}",
                              iterations=(2 if geo.pingpong else 1) * n_k),)
    m, n, k = shape
    assumptions = (f"C[{m} x {n}] = A[{m} x {k}] · B[{n} x {k}]^T in {tiles_m} x {tiles_n} tiles of "
                   f"{geo.tile_m} x {geo.tile_n}",)
    if geo.dtype is DType.FP8:
        assumptions += (f"fp8 e4m3 A and B with per-tensor scales, {geo.tile_k} elements of K per k-block",)
    if by_shape:
        assumptions += (f"tile by shape: {pick_tile(shape, limits.sms, geo.dtype.bytes).text}",)
    straddle = straddle_note(shape, geo.dtype.bytes)
    if straddle is not None:
        assumptions += (straddle,)
    if geo.pingpong:
        units_m = -(-m // geo.work_tile_m)
        assumptions += (f"ping-pong: {units_m} x {tiles_n} work units of two {geo.tile_m}-row tiles stacked along M; "
                        "consumer mma0 takes the upper tile of each, mma1 the lower"
                        + ("; the lower tiles of the last row of units lie outside C and do no work"
                           if units_m * 2 > tiles_m else ""),)
    if cfg.swizzle > 1 and cfg.persistence is QueueKind.STATIC:
        pad = work_units(shape, geo, cfg.swizzle, cfg.raster is Raster.ALONG_M) - work_units(shape, geo)
        assumptions += (f"tiles handed out in groups of {cfg.swizzle} (L2 swizzle)"
                        + (f"; {pad} padded tile{'s' if pad != 1 else ''} outside C do no work" if pad else ""),)
    return LaunchPlan(kernel=__name__, size=shape, grid=(gx, gy, gz), threads=geo.threads,
                      smem_bytes=geo.smem_bytes, device=limits, instances=instances, registers=registers,
                      work_units="(M, N, K)", assumptions=assumptions)


def device_problem(fn: Any, cfg: Any, plan: LaunchPlan, stream: Any) -> DeviceProblem:
    """Random-normal inputs on the GPU (bf16, or fp8 quantized with per-tensor scales), checked against an fp32
    product of the (dequantized) inputs; torch.matmul (fp8: torch._scaled_mm) timed beside on the same tensors."""
    import torch

    shape = plan.size
    m, n, k = shape
    dtype = cfg.dtype
    inputs = make_inputs(shape, dtype=dtype)
    a, b = inputs[0], inputs[1]
    scales = inputs[2:]
    c = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()  # inputs made on torch's stream, the kernel runs on the launcher's
    args = kernel_args(a, b, c, cfg, plan.device.sms, stream, *scales)
    if dtype is DType.FP8:
        # cuBLAS's fp8 GEMM behind _scaled_mm takes only N % 16 == 0 (K % 16 is ours too): none to time beside
        references = {"torch._scaled_mm": lambda: scaled_mm(*inputs)} if n % 16 == 0 else {}
    else:
        references = {"torch.matmul": lambda: torch.matmul(a, b.T)}

    def check() -> tuple[int, int, tuple, Any]:
        from cuda.bindings import driver as cu

        cu.cuStreamSynchronize(stream)
        ref = reference(a, b, *scales)
        bad = ~close(c, ref, k, dtype)
        wrong = int(bad.sum())
        first: tuple = ()
        if wrong:
            idx = torch.nonzero(bad.reshape(-1))[:8, 0].tolist()
            flat, want = c.reshape(-1).float(), ref.reshape(-1)
            first = tuple((i, float(want[i]), float(flat[i])) for i in idx)
        return wrong, m * n, first, error_tiles(bad, cfg.resolved(shape, plan.device.sms)) if wrong else None

    return DeviceProblem(launch=lambda: fn(*args), check=check, references=references,
                         flops=flops(shape), bytes_moved=bytes_moved(shape, dtype), elements=m * n, grid=plan.ctas,
                         shape=f"{m}x{n}x{k}", args=tuple(args), outputs=lambda: {"C": c.float().cpu().numpy()})


# ---- host-side helpers the launcher, the tests and the benchmark share -------------------------------------


FP8_MAX = 448.0  # the largest finite float8 e4m3 (e4m3fn) value


class Fp8Inputs(NamedTuple):
    """fp8 operands as a user quantizes them: A ≈ scale_a·a, B ≈ scale_b·b (scales: 1-element fp32 tensors)."""

    a: Any  # M x K float8_e4m3fn, row-major
    b: Any  # N x K float8_e4m3fn, row-major
    scale_a: Any
    scale_b: Any


def quantize_fp8(x: Any) -> tuple[Any, Any]:
    """``x`` (fp32) as float8 e4m3 with one per-tensor scale amax/448, so the largest |x| lands on e4m3's largest."""
    import torch

    scale = (x.abs().amax().float() / FP8_MAX).clamp(min=torch.finfo(torch.float32).tiny).reshape(1)
    return (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


def make_inputs(shape: Shape, seed: int = 0, device: str = "cuda", dtype: DType = DType.BF16) -> Any:
    """Random-normal A (M x K) and B (N x K), seeded (torch): bf16 ``(a, b)``, or for ``dtype=fp8``
    an :class:`Fp8Inputs` of the same normals quantized per tensor (:func:`quantize_fp8`)."""
    import torch

    m, n, k = shape
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn((m, k), generator=gen, device=device, dtype=torch.float32)
    b = torch.randn((n, k), generator=gen, device=device, dtype=torch.float32)
    if DType.of(dtype) is DType.FP8:
        a8, scale_a = quantize_fp8(a)
        b8, scale_b = quantize_fp8(b)
        return Fp8Inputs(a8, b8, scale_a, scale_b)
    return a.to(torch.bfloat16), b.to(torch.bfloat16)


def reference(a: Any, b: Any, scale_a: Any = None, scale_b: Any = None) -> Any:
    """A·Bᵀ accumulated in fp32 (torch on the tensors' device, numpy for numpy arrays).

    With scales (fp8 inputs) it is the product of the dequantized inputs,
    (scale_a·A)·(scale_b·B)ᵀ, each dequantized element exact in fp32.
    """
    try:
        import torch

        if isinstance(a, torch.Tensor):
            fa, fb = a.float(), b.float()
            if scale_a is not None:
                fa, fb = fa * scale_a.float(), fb * scale_b.float()
            return torch.matmul(fa, fb.T)
    except ImportError:
        pass
    import numpy as np

    fa, fb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    if scale_a is not None:
        fa, fb = fa * np.float32(scale_a), fb * np.float32(scale_b)
    return fa @ fb.T


def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any) -> Any:
    """torch._scaled_mm on the same fp8 tensors: bf16 (scale_a·A)·(scale_b·B)ᵀ, cuBLAS's default (promoted)
    accumulation. ``b.t()`` of the row-major N x K B is the column-major K x N operand it wants; torch refuses
    N or K not a multiple of 16."""
    import torch

    out = torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    return out[0] if isinstance(out, tuple) else out  # torch < 2.4 also returned the amax


def close(c: Any, ref: Any, k: int, dtype: DType = DType.BF16) -> Any:
    """Which elements of C agree with the fp32 reference (a boolean array; NaN never agrees).

    Rounding C to bf16 costs up to 2^-8 of |C| (allowed: 2^-7); summing K
    products in another order costs O(sqrt(K)) fp32 ulps (allowed:
    0.01·sqrt(K)). One lost or doubled k-block of unit-normal data is off by
    ~sqrt(64) = 8, far outside both.

    fp8 (``dtype=fp8``; inputs of unit-normal scale, as :func:`make_inputs`
    makes): Hopper's fp8 WGMMA adds into its accumulator with fewer bits than
    fp32 (about 14 of the running sum, as reported for H800), once per
    32-deep instruction, and this kernel keeps the sum there for the whole K
    (no promotion to fp32 registers), so the error can grow with the running
    sum (~sqrt(K)) over K/32 additions: up to ~2^-14·K^1.5/32·(2/3) if every
    addition lost the same way. Allowed: a further 2^-11·K^1.5/32, about six
    times that (4.0 at K=4096; 0.19 at K=528). One lost k-block of 128 is off
    by ~sqrt(128) = 11.
    """
    diff = abs(c.float() - ref) if hasattr(c, "float") else abs(c.astype("float32") - ref)
    allowed = abs(ref) * 2.0**-7 + 0.01 * max(1, k) ** 0.5
    if DType.of(dtype) is DType.FP8:
        allowed = allowed + 2.0**-11 * max(1, k) ** 1.5 / 32
    return diff <= allowed


def error_tiles(bad: Any, cfg: Any) -> Any:
    """Mismatching elements per output tile (a small integer array for a heatmap)."""
    import numpy as np

    mask = bad.cpu().numpy() if hasattr(bad, "cpu") else np.asarray(bad)
    tm, tn = cfg.geometry().tile_m, cfg.geometry().tile_n
    rows, cols = -(-mask.shape[0] // tm), -(-mask.shape[1] // tn)
    padded = np.zeros((rows * tm, cols * tn), dtype=np.int64)
    padded[: mask.shape[0], : mask.shape[1]] = mask
    return padded.reshape(rows, tm, cols, tn).sum(axis=(1, 3))


def launcher(fn: Any, a: Any, b: Any, c: Any, cfg: Any, sms: int, stream: Any = None, scale_a: Any = None,
             scale_b: Any = None) -> Callable[[], None]:
    """A zero-argument launch of a compiled GEMM on torch tensors (A: M x K, B: N x K, C: M x N bf16;
    A and B bf16, or float8 e4m3 with ``scale_a``, ``scale_b`` for an fp8 config).

    Shapes, dtypes and alignment are checked once, here.
    """
    args = kernel_args(a, b, c, cfg, sms, stream, scale_a, scale_b)
    # The compiled function's own call converts the arguments on every launch. Its convert-once split
    # (generate_execution_args + run_compiled_program) launched with stale arguments on an H200 once
    # these objects had been freed (an illegal address in the first TMA load); the plain call costs
    # microseconds against launches of 0.1 ms and more.
    return lambda: fn(*args)


def _scale_value(name: str, scale: Any) -> float:
    """A per-tensor scale (a float, or a 1-element tensor) as a Python float; ValueError naming the fix."""
    if scale is None:
        raise ValueError(f"{name} is missing: an fp8 GEMM computes C = (scale_a·scale_b)·(A·Bᵀ); pass both scales "
                         "(1.0 for unscaled inputs)")
    numel = getattr(scale, "numel", None)
    if numel is not None and numel() != 1:
        raise ValueError(f"{name} has {numel()} elements; this GEMM takes one scale per tensor (a float or a "
                         "1-element tensor)")
    value = float(scale.reshape(-1)[0]) if numel is not None else float(scale)
    if not value == value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name}={value} is not finite; quantize with a finite scale (amax/448)")
    return value


def kernel_args(a: Any, b: Any, c: Any, cfg: Any, sms: int, stream: Any = None, scale_a: Any = None,
                scale_b: Any = None) -> list[Any]:
    """The compiled GEMM's arguments for torch tensors A, B, C (checked here), the stream last.

    An fp8 config takes float8 e4m3 A and B and their per-tensor scales
    (floats or 1-element tensors, read once here), passed after the pointers.
    """
    import torch

    m, k = a.shape
    n = b.shape[0]
    dtype = cfg.dtype
    refusal = shape_refusal((m, n, k), dtype)
    if refusal is not None:
        raise ValueError(refusal)
    if tuple(b.shape) != (n, k) or tuple(c.shape) != (m, n):
        raise ValueError(f"shapes do not chain: A {tuple(a.shape)}, B {tuple(b.shape)} (N x K), C {tuple(c.shape)}")
    want = torch.float8_e4m3fn if dtype is DType.FP8 else torch.bfloat16
    for name, t, kind in (("A", a, want), ("B", b, want), ("C", c, torch.bfloat16)):
        if t.dtype != kind or not t.is_contiguous() or t.data_ptr() % 16:
            raise ValueError(f"{name} must be a contiguous, 16-byte aligned {kind} CUDA tensor for dtype="
                             f"{dtype.short}; got {t.dtype}, contiguous={t.is_contiguous()}")
    scales: list[Any] = []
    if dtype is DType.FP8:
        scales = [cutlass.Float32(_scale_value("scale_a", scale_a)), cutlass.Float32(_scale_value("scale_b", scale_b))]
    elif scale_a is not None or scale_b is not None:
        raise ValueError("scales apply to fp8 inputs only; a bf16 GEMM takes none (use dtype='fp8' for scaled "
                         "float8 inputs)")
    gx, gy, gz = grid(cfg, (m, n, k), sms)
    if stream is None:
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    geo = cfg.resolved((m, n, k), sms).geometry()
    return [gmem_ptr(a.data_ptr(), in_dtype(geo)), gmem_ptr(b.data_ptr(), in_dtype(geo)),
            gmem_ptr(c.data_ptr(), OUT_DTYPE), *scales, *(cutlass.Int32(v) for v in (m, n, k, gx, gy, gz)), stream]


def run(fn: Any, a: Any, b: Any, c: Any, cfg: Any, sms: int, stream: Any = None, scale_a: Any = None,
        scale_b: Any = None) -> None:
    """Launch once (see :func:`launcher`)."""
    launcher(fn, a, b, c, cfg, sms, stream, scale_a, scale_b)()


__all__ = [
    "FP8_MAX",
    "Fp8Inputs",
    "H200_DENSE_BF16_TFLOPS",
    "device_problem",
    "plan",
    "problem_shape",
    "quantize_fp8",
    "scaled_mm",
    "bytes_moved",
    "close",
    "compile",
    "error_tiles",
    "flops",
    "grid",
    "k_blocks",
    "kernel_args",
    "launch_refusal",
    "launcher",
    "make_inputs",
    "reference",
    "run",
    "shape_refusal",
    "tile_counts",
]
