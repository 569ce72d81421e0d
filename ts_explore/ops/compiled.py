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

from .compile_cache import CALLING, CacheKey, DiskCache, Loaded
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


def attention_config(head_dim: int, causal: bool, base: Any = None, *, seqlen_q: int = 0) -> Any:
    """The attention config for ``head_dim``, the mask and ``seqlen_q``: ``base``'s other knobs, else the op's pick
    (:func:`~.attention_policy.attention_knobs`, which says why each knob is set as it is)."""
    from dataclasses import replace

    from .attention_policy import attention_knobs

    if base is None:
        return config_of_knobs(attention_knobs(head_dim, causal, seqlen_q))
    return replace(base, head_dim=head_dim, causal=causal)


def config_of_knobs(knobs: tuple[tuple[str, object], ...]) -> Any:
    """The attention config that :func:`~.attention_policy.attention_knobs`'s pick stands for (the op's first call
    names its launch record after the same pick, so the knobs are worked out once)."""
    from ..kernels.attention_geometry import Persistence

    picked = dict(knobs)
    picked["persistence"] = Persistence(picked["persistence"])
    return scenario("hopper_attention").config(**picked)


def _compile_options(arch: str) -> str:
    return f"--gpu-arch {arch} {TVM_FFI}"


def _env_stream() -> Any:
    """The stream placeholder that TVM-FFI fills, per call, with torch's current stream on the tensors' GPU."""
    import cutlass.cute as cute

    return cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=True)


def _fake(dtype: Any, shape: tuple, stride: tuple) -> Any:
    """A placeholder tensor: TVM-FFI checks a call's tensor against it (dtype, device, shape and strides bound to the
    same symbols, 16-byte alignment), so a wrong operand is refused in C before anything launches."""
    import cutlass.cute as cute

    return cute.runtime.make_fake_tensor(dtype, shape, stride=stride, assumed_align=16)


def _compile(name: str, kernel: Any, cfg: Any, arch: str, host: Any, args: list[Any]) -> Any:
    """``cute.compile`` of ``host`` (a wrapper of ``kernel``'s host for ``cfg``) with placeholder ``args``, once the
    scenario accepts the config and the kernel can launch it on ``arch`` (else the refusal as an :class:`OpsError`)."""
    import cutlass.cute as cute

    sc = scenario(name)
    sc.check(cfg)
    refusal = kernel.launch_refusal(cfg, arch)
    if refusal is not None:
        raise OpsError(refusal)
    return cute.compile(host(kernel.host_function(sc, cfg)), *args, _env_stream(), options=_compile_options(arch))


def compile_gemm(cfg: Any, arch: str) -> Any:
    """``cute.compile`` of the GEMM for concrete ``cfg`` (no ``tile='by shape'``), for TVM-FFI calls with tensors:
    A (M, K) row-major, B (K, N) column-major (``w.t()``), C (M, N) row-major bf16."""
    import cutlass
    import cutlass.cute as cute

    from ..kernels import gemm
    from . import tensor_hosts
    from ..kernels.gemm_mainloop import OUT_DTYPE, in_dtype

    geo = cfg.geometry()
    m = cute.sym_int()
    k = cute.sym_int(divisibility=16 // geo.dtype.bytes)
    n = cute.sym_int(divisibility=8)
    args = [_fake(in_dtype(geo), (m, k), (k, 1)), _fake(in_dtype(geo), (k, n), (1, k)),
            _fake(OUT_DTYPE, (m, n), (n, 1))]
    args += [cutlass.Float32(1.0)] * geo.dtype.scale_args + [cutlass.Int32(1)] * 3
    return _compile("hopper_gemm", gemm, cfg, arch, tensor_hosts.gemm_host(geo.dtype.scale_args > 0), args)


def compile_attention(cfg: Any, arch: str) -> Any:
    """``cute.compile`` of the attention for ``cfg``, for TVM-FFI calls with tensors. The strides between tokens and
    batches are not tied to the sizes here (TVM-FFI binds symbols, not their products), so a call checks that its
    tensors are contiguous."""
    import cutlass
    import cutlass.cute as cute

    from ..kernels import attention
    from . import tensor_hosts
    from ..kernels.attention_tiles import IN_DTYPE

    b, h, sq, skv = cute.sym_int(), cute.sym_int(), cute.sym_int(), cute.sym_int()
    d = cfg.head_dim

    def qkv(rows: Any) -> Any:
        strides = (cute.sym_int64(divisibility=8), cute.sym_int64(divisibility=8), d, 1)
        return _fake(IN_DTYPE, (b, rows, h, d), strides)

    args = [qkv(sq), qkv(skv), qkv(skv), qkv(sq),
            _fake(cutlass.Float32, (b, h, sq), (cute.sym_int64(), cute.sym_int64(), 1))]
    args += [cutlass.Int32(1)] * 3
    return _compile("hopper_attention", attention, cfg, arch, tensor_hosts.attention_host, args)


def gemm_function(cfg: Any, arch: str, cache: DiskCache = CACHE) -> Loaded:
    """The TVM-FFI GEMM for concrete ``cfg`` on ``arch``: loaded from the disk cache, or compiled into it."""
    return cache.function(CacheKey.of("gemm", cfg, arch, f"{TVM_FFI} {CALLING}"), lambda: compile_gemm(cfg, arch))


def attention_function(cfg: Any, arch: str, cache: DiskCache = CACHE) -> Loaded:
    """The TVM-FFI attention for ``cfg`` on ``arch``: loaded from the disk cache, or compiled into it."""
    key = CacheKey.of("attention", cfg, arch, f"{TVM_FFI} {CALLING}")
    return cache.function(key, lambda: compile_attention(cfg, arch))


__all__ = ["CACHE", "CALLING", "TVM_FFI", "attention_config", "attention_function", "compile_attention", "compile_gemm",
           "config_of_knobs", "default_gemm_config", "gemm_function", "scenario"]
