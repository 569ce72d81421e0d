"""The ops' kernels compiled for TVM-FFI calls: the catalog GEMM and attention behind a host of ints.

The DSL's default call path converts every argument in Python on each call
(50-165 µs measured on an H200). Compiled with ``--enable-tvm-ffi``, the same
host function (the kernel modules' own :func:`~ts_explore.kernels.gemm.host_function`
and :func:`~ts_explore.kernels.attention.host_function`, so the launched task
set is still the drawn one) becomes a C function that takes plain Python
ints for its pointers, sizes and stream and costs a few microseconds. The
compiled function is exported to an object file and loaded back through
:class:`~.compile_cache.DiskCache`, so a later process loads it instead of
compiling.

The functions these return are called as the kernel modules document, with
integers: ``gemm(a_ptr, b_ptr, c_ptr, [scale_a, scale_b,] M, N, K, gx, gy, gz, stream)``
and ``attention(q, k, v, o, lse, batch, heads, seqlen_q, seqlen_kv, gx, gy, gz, stream)``.
"""

from __future__ import annotations

import functools
from typing import Any

from .compile_cache import CacheKey, DiskCache, Loaded
from .gate import OpsError

TVM_FFI = "--enable-tvm-ffi"
CACHE = DiskCache()


@functools.lru_cache(maxsize=None)
def scenario(name: str) -> Any:
    """The catalog scenario ``hopper_gemm`` or ``hopper_attention``."""
    from ..scenarios import get

    return get(name)


def default_gemm_config(fp8: bool = False) -> Any:
    """The GEMM config the ops use unless given one: the tile picked by shape (what the benchmarks call 'by shape')."""
    from ..kernels.gemm_geometry import DType, TileShape

    return scenario("hopper_gemm").config(tile=TileShape.BY_SHAPE, dtype=DType.FP8 if fp8 else DType.BF16)


def attention_config(head_dim: int, causal: bool, base: Any = None) -> Any:
    """The attention config for ``head_dim`` and the mask (``base``'s other knobs, else the scenario's defaults)."""
    from dataclasses import replace

    if base is None:
        return scenario("hopper_attention").config(head_dim=head_dim, causal=causal)
    return replace(base, head_dim=head_dim, causal=causal)


def _compile_options(arch: str) -> str:
    return f"--gpu-arch {arch} {TVM_FFI}"


def _compile(name: str, kernel: Any, cfg: Any, arch: str, args: list[Any]) -> Any:
    """``cute.compile`` of ``kernel``'s host for ``cfg`` with placeholder ``args``, once the scenario accepts the
    config and the kernel can launch it on ``arch`` (else the refusal as an :class:`OpsError`)."""
    import cutlass.cute as cute

    sc = scenario(name)
    sc.check(cfg)
    refusal = kernel.launch_refusal(cfg, arch)
    if refusal is not None:
        raise OpsError(refusal)
    return cute.compile(kernel.host_function(sc, cfg), *args, options=_compile_options(arch))


def compile_gemm(cfg: Any, arch: str) -> Any:
    """``cute.compile`` of the GEMM host for concrete ``cfg`` (no ``tile='by shape'``), for TVM-FFI calls."""
    import cutlass

    from ..kernels import gemm
    from ..kernels.build import default_stream, gmem_ptr
    from ..kernels.gemm_mainloop import OUT_DTYPE, in_dtype

    geo = cfg.geometry()
    args = [gmem_ptr(0, in_dtype(geo)), gmem_ptr(0, in_dtype(geo)), gmem_ptr(0, OUT_DTYPE)]
    args += [cutlass.Float32(1.0)] * geo.dtype.scale_args + [cutlass.Int32(8)] * 6 + [default_stream()]
    return _compile("hopper_gemm", gemm, cfg, arch, args)


def compile_attention(cfg: Any, arch: str) -> Any:
    """``cute.compile`` of the attention host for ``cfg``, for TVM-FFI calls."""
    import cutlass

    from ..kernels import attention
    from ..kernels.attention_tiles import IN_DTYPE
    from ..kernels.build import default_stream, gmem_ptr

    args = [gmem_ptr(0, IN_DTYPE)] * 4 + [gmem_ptr(0, cutlass.Float32)] + [cutlass.Int32(128)] * 7
    args.append(default_stream())
    return _compile("hopper_attention", attention, cfg, arch, args)


def gemm_function(cfg: Any, arch: str, cache: DiskCache = CACHE) -> Loaded:
    """The TVM-FFI GEMM for concrete ``cfg`` on ``arch``: loaded from the disk cache, or compiled into it."""
    return cache.function(CacheKey.of("gemm", cfg, arch, TVM_FFI), lambda: compile_gemm(cfg, arch))


def attention_function(cfg: Any, arch: str, cache: DiskCache = CACHE) -> Loaded:
    """The TVM-FFI attention for ``cfg`` on ``arch``: loaded from the disk cache, or compiled into it."""
    return cache.function(CacheKey.of("attention", cfg, arch, TVM_FFI), lambda: compile_attention(cfg, arch))


__all__ = ["CACHE", "TVM_FFI", "attention_config", "attention_function", "compile_attention", "compile_gemm",
           "default_gemm_config", "gemm_function", "scenario"]
