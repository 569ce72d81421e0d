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

Each technique a control selects is a module of its own, as the schedule's
are in :mod:`ts_explore.scenarios`:

- ``mode`` (cooperative, ping-pong) and ``epilogue`` (inline, handoff): the
  schedules (``scenarios.gemm_cooperative``, ``gemm_pingpong``,
  ``gemm_handoff``) over the resources of :mod:`.gemm_mainloop` (the A/B
  ring) and :mod:`.gemm_epilogue` (``OutputTile``, ``HandoffBuffers``);
- ``cluster`` (2x1, 1x2): :mod:`.gemm_cluster` (the multicast load split,
  the TMA operations, the launch's cluster shape);
- ``dtype=fp8``: :mod:`.gemm_fp8` (the scaled entry point, quantization);
- ``persistence``, ``raster``, ``swizzle``: :mod:`.gemm_tile_scheduler`;
  ``tile='by shape'``: :mod:`.gemm_tile_pick` and :mod:`.gemm_by_shape`.

This module compiles and plans; :mod:`.gemm_host` holds the torch-side
helpers (arguments, inputs, reference, tolerance), re-exported here.
"""

# No ``from __future__ import annotations`` here: the DSL reads kernel annotations as objects.

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.nvgpu import cpasync

from ..model.plan import DeviceLimits, Instance, LaunchPlan
from .build import compile_options, default_stream, gmem_ptr
from .host import DeviceProblem, SizeError, strided_instances
from .common import BuiltHook, kernel_context, repair_edits, repaired_build, run_built
from .gemm_cluster import cluster_dims, load_slices, tma_load_ops
from .gemm_fp8 import FP8_MAX, Fp8Inputs, quantize_fp8, scaled_host, scaled_mm
from .gemm_geometry import (
    H200_DENSE_BF16_TFLOPS, DType, Geometry, Raster, Release, bytes_moved, flops, k_blocks,
    shape_refusal, tile_counts,
)
from .gemm_host import close, error_tiles, grid, kernel_args, launcher, make_inputs, reference, run
from .gemm_mainloop import OUT_DTYPE, in_dtype, slice_layout, smem_layouts
from .gemm_tile_scheduler import work_units
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
        _, _, c_layout = smem_layouts(geo)
        # The operand the cluster shares goes by multicast: A along a 1x2 cluster, B along a 2x1 one.
        a_op, b_op = tma_load_ops(geo)
        tma_a, g_a = cpasync.make_tiled_tma_atom(a_op, a, slice_layout(geo, rows_a), (rows_a, geo.tile_k))
        tma_b, g_b = cpasync.make_tiled_tma_atom(b_op, b, slice_layout(geo, rows_b), (rows_b, geo.tile_k))
        tma_c, g_c = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), c,
                                                 cute.slice_(c_layout, (None, None, 0)), (geo.tile_m, geo.epilogue_n))
        tiles_m = (m + geo.work_tile_m - 1) // geo.work_tile_m  # ping-pong: units of two tiles along M
        tiles_n = (n + geo.tile_n - 1) // geo.tile_n
        sched = utils.PersistentTileSchedulerParams((tiles_m, tiles_n, 1), (geo.cluster_m, geo.cluster_n, 1),
                                                    cfg.swizzle, along_m)
        n_k = (k + geo.tile_k - 1) // geo.tile_k
        kernel(tma_a, g_a, tma_b, g_b, tma_c, g_c, n_k, sched, scale, address(events), address(progress)).launch(
            grid=(grid_x, grid_y, grid_z), block=(geo.threads, 1, 1), cluster=cluster, stream=stream,
            min_blocks_per_mp=1)

    if geo.dtype is DType.FP8:
        return scaled_host(launch_kernel)

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

    from .gemm_geometry import TileShape
    from .gemm_tile_pick import pick_tile, straddle_note

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
        assumptions += (f"tile by shape: {pick_tile(shape, limits.sms, geo.dtype.bytes, geo.pingpong).text}",)
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
