"""The Hopper GEMM's host side on torch tensors: the grid, the compiled function's arguments, inputs, the
reference product and its tolerance, the launch the worker, the tests and the benchmark share.

:mod:`.gemm` compiles the kernel and plans a launch; these functions feed
the compiled function (``kernel_args``, ``launcher``, ``run``: shapes,
dtypes and alignment checked once, here) and judge what it wrote
(``reference``, ``close``, ``error_tiles``). fp8's own pieces (scales,
quantization, cuBLAS's fp8 product) are :mod:`.gemm_fp8`'s.
"""

# No ``from __future__ import annotations`` here, as in the kernel modules it serves.

from typing import Any, Callable

import cuda.bindings.driver as cuda
import cutlass

from .build import gmem_ptr
from .gemm_fp8 import Fp8Inputs, quantize_fp8, scale_value
from .gemm_geometry import DType, Raster, shape_refusal
from .gemm_mainloop import OUT_DTYPE, in_dtype
from .gemm_tile_scheduler import launch_grid

Shape = tuple  # (M, N, K)


def grid(cfg: Any, shape: Shape, sms: int) -> tuple[int, int, int]:
    """The CUDA grid for ``shape`` on a GPU with ``sms`` multiprocessors (``tile='by shape'`` resolved first)."""
    from ..model import QueueKind

    cfg = cfg.resolved(tuple(shape), sms)
    return launch_grid(tuple(shape), cfg.geometry(), persistent=cfg.persistence is QueueKind.STATIC,
                       along_m=cfg.raster is Raster.ALONG_M, sms=sms)


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
        scales = [cutlass.Float32(scale_value("scale_a", scale_a)), cutlass.Float32(scale_value("scale_b", scale_b))]
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


__all__ = ["close", "error_tiles", "grid", "kernel_args", "launcher", "make_inputs", "reference", "run"]
