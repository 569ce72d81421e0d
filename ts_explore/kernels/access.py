"""How the copy kernels touch global memory: vector views, cache hints, and the element tail.

A copy of ``n`` int32 moves whole vectors of ``vector`` elements where it can;
the last ``n % vector`` elements (a vector that runs past the end) are copied
one by one under a bounds check. The helpers here are plain functions called
while a kernel is traced (no control flow of their own), so the work methods
keep every runtime ``if`` where the DSL's preprocessor sees it.

>>> CacheHint.STREAMING.value
'streaming (loads skip L1 and prefetch 256 B into L2; stores evict first)'
>>> [whole_vectors(n, 4) for n in (7, 8, 1)], [units(n, 4) for n in (7, 8, 1)]
([1, 2, 0], [2, 2, 1])
"""

from __future__ import annotations

from enum import Enum
from typing import Any

# The 64-bit L2 cache policy ``createpolicy.fractional.L2::evict_first`` produces for a
# fraction of 1.0 (the value CUTLASS passes as its EVICT_FIRST cache hint).
L2_EVICT_FIRST = 0x12F0000000000000


class CacheHint(str, Enum):
    """How loads and stores of global memory ask the caches to treat a copy's data (read and written once)."""

    NORMAL = "default (ld / st)"
    STREAMING = "streaming (loads skip L1 and prefetch 256 B into L2; stores evict first)"
    EVICT_FIRST = "L2 evict-first policy on loads and stores"
    READ_ONLY = "read-only loads (ld.global.nc)"


def whole_vectors(n: Any, vector: int) -> Any:
    """Vectors that lie entirely inside ``n`` elements (ints or DSL values)."""
    return n // vector


def units(n: Any, unit: int) -> Any:
    """``ceil(n / unit)`` for ``n >= 1`` without overflowing int32 near 2**31 (ints or DSL values)."""
    return (n - 1) // unit + 1


def vectors(tensor: Any, vector: int, count: Any) -> Any:
    """``(vector, count)`` view of a 1-D tensor: column ``i`` is elements ``[i * vector, (i + 1) * vector)``.

    The static column stride keeps the 16-byte alignment a 128-bit access needs.
    """
    import cutlass.cute as cute

    return cute.make_tensor(tensor.iterator, cute.make_layout((vector, count), stride=(1, vector)))


def _atom(load: bool, hint: CacheHint, vector: int) -> Any:
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute import nvgpu

    bits = 32 * vector
    if load:
        attrs: dict[str, Any] = {
            CacheHint.STREAMING: dict(l1c_evict_priority=nvgpu.CacheEvictionPriority.NO_ALLOCATE,
                                      l2_prefetch_size=nvgpu.L2PrefetchSize.SIZE_256B),
            CacheHint.EVICT_FIRST: {},
            CacheHint.READ_ONLY: dict(invariant=True),
        }[hint]
        return cute.make_copy_atom(nvgpu.CopyG2ROp(), cutlass.Int32, num_bits_per_copy=bits, **attrs)
    attrs = {CacheHint.STREAMING: dict(store_cache_mode=nvgpu.StoreCacheMode.STREAMING)}.get(hint, {})
    return cute.make_copy_atom(nvgpu.CopyR2GOp(), cutlass.Int32, num_bits_per_copy=bits, **attrs)


def _policy(hint: CacheHint) -> dict[str, Any]:
    import cutlass

    return {"cache_policy": cutlass.Int64(L2_EVICT_FIRST)} if hint is CacheHint.EVICT_FIRST else {}


def load_vector(hint: CacheHint, src: Any, dst: Any) -> None:
    """Global ``src`` (one vector) into registers ``dst`` with the loads ``hint`` asks for."""
    import cutlass.cute as cute

    if hint is CacheHint.NORMAL:
        cute.autovec_copy(src, dst)
    else:
        cute.copy(_atom(True, hint, cute.size(src)), src, dst, **_policy(hint))


def store_vector(hint: CacheHint, src: Any, dst: Any) -> None:
    """Registers ``src`` (one vector) into global ``dst`` with the stores ``hint`` asks for."""
    import cutlass.cute as cute

    if hint in (CacheHint.NORMAL, CacheHint.READ_ONLY):
        cute.autovec_copy(src, dst)
    else:
        cute.copy(_atom(False, hint, cute.size(dst)), src, dst, **_policy(hint))


__all__ = [
    "L2_EVICT_FIRST",
    "CacheHint",
    "load_vector",
    "store_vector",
    "units",
    "vectors",
    "whole_vectors",
]
