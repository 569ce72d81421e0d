"""fp8 inputs of the Hopper GEMM (``dtype=fp8``): float8 e4m3 A and B with one fp32 scale per tensor.

The schedule is the bf16 one with 128 elements of K per stage (one 128-byte
swizzle row either way, :attr:`.gemm_geometry.Geometry.tile_k`); the
epilogue multiplies the fp32 accumulators by scale_a·scale_b before the
bf16 conversion (:class:`.gemm_epilogue.OutputTile`). Here: the compiled
function's fp8 entry point (:func:`scaled_host`: the two scales after the
pointers), how a user's tensors are quantized (:func:`quantize_fp8`),
the scales read once per launch (:func:`scale_value`), and the cuBLAS
product timed beside (:func:`scaled_mm`).
"""

# No ``from __future__ import annotations`` here: the DSL reads the host function's annotations as objects.

from typing import Any, Callable, NamedTuple

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

FP8_MAX = 448.0  # the largest finite float8 e4m3 (e4m3fn) value


def scaled_host(launch_kernel: Callable[..., None]) -> Any:
    """The ``@cute.jit`` host function of an fp8 config: ``launch_kernel`` with the product of the two scales.

    ``fn(a_ptr, b_ptr, c_ptr, scale_a, scale_b, M, N, K, grid_x, grid_y, grid_z, stream[, events, progress])``
    """
    @cute.jit
    def host_fp8(a_ptr: cute.Pointer, b_ptr: cute.Pointer, c_ptr: cute.Pointer, scale_a: cutlass.Float32,
                 scale_b: cutlass.Float32, m: cutlass.Int32, n: cutlass.Int32, k: cutlass.Int32,
                 grid_x: cutlass.Int32, grid_y: cutlass.Int32, grid_z: cutlass.Int32, stream: cuda.CUstream,
                 events: Any = None, progress: Any = None) -> None:
        launch_kernel(a_ptr, b_ptr, c_ptr, scale_a * scale_b, m, n, k, grid_x, grid_y, grid_z, stream, events,
                      progress)

    return host_fp8


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


def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any) -> Any:
    """torch._scaled_mm on the same fp8 tensors: bf16 (scale_a·A)·(scale_b·B)ᵀ, cuBLAS's default (promoted)
    accumulation. ``b.t()`` of the row-major N x K B is the column-major K x N operand it wants; torch refuses
    N or K not a multiple of 16."""
    import torch

    out = torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    return out[0] if isinstance(out, tuple) else out  # torch < 2.4 also returned the amax


def scale_value(name: str, scale: Any) -> float:
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


__all__ = ["FP8_MAX", "Fp8Inputs", "quantize_fp8", "scale_value", "scaled_host", "scaled_mm"]
