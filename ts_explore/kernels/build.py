"""Compile a kernel's host function once per config, without needing device memory.

Buffers travel as raw global-memory pointers (``cute.runtime.make_ptr``), so a
kernel compiles on a machine with no GPU (``CUTE_DSL_ARCH=sm_90a``) and the
compiled function is later called with the addresses of real allocations.
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_ptr


def gmem_ptr(address: int = 0, dtype: Any = cutlass.Int32) -> Any:
    """A 16-byte-aligned global pointer argument (``address`` 0 when only compiling)."""
    return make_ptr(dtype, int(address), cute.AddressSpace.gmem, assumed_align=16)


def default_stream() -> Any:
    """A placeholder stream argument for compilation."""
    import cuda.bindings.driver as cuda

    return cuda.CUstream(0)


def compile_with_pointers(host: Any, pointers: int, ints: int, arch: str | None = None) -> Any:
    """``cute.compile(host, ptr * pointers, 1 * ints, stream)`` for ``arch`` (e.g. ``sm_90a``).

    Without ``arch`` the DSL uses ``CUTE_DSL_ARCH`` or the GPU it finds.
    """
    args = [gmem_ptr() for _ in range(pointers)] + [cutlass.Int32(1) for _ in range(ints)]
    if arch:
        return cute.compile(host, *args, default_stream(), options=f"--gpu-arch {arch}")
    return cute.compile(host, *args, default_stream())


__all__ = ["compile_with_pointers", "default_stream", "gmem_ptr"]
