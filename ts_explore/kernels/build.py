"""Compile a kernel's host function once per config, without needing device memory.

Buffers travel as raw global-memory pointers (``cute.runtime.make_ptr``), so a
kernel compiles on a machine with no GPU (``CUTE_DSL_ARCH=sm_90a``) and the
compiled function is later called with the addresses of real allocations.
"""

from __future__ import annotations

import functools
import struct
import tempfile
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_ptr

from .cubin import KernelResources, kernel_resources


def gmem_ptr(address: int = 0, dtype: Any = cutlass.Int32) -> Any:
    """A 16-byte-aligned global pointer argument (``address`` 0 when only compiling)."""
    return make_ptr(dtype, int(address), cute.AddressSpace.gmem, assumed_align=16)


def default_stream() -> Any:
    """A placeholder stream argument for compilation."""
    import cuda.bindings.driver as cuda

    return cuda.CUstream(0)


def compile_options(arch: str | None = None) -> str:
    """DSL compile options: the architecture (else ``CUTE_DSL_ARCH`` or the GPU found) and a kept cubin.

    The cubin is kept (in a private temporary folder, not the working
    directory) so :func:`resources` can read registers and shared memory.
    """
    options = f"--keep-cubin --dump-dir {_dump_dir()}"
    return f"--gpu-arch {arch} {options}" if arch else options


@functools.lru_cache(maxsize=1)
def _dump_dir() -> str:
    return tempfile.mkdtemp(prefix="ts-explore-cubin-")


def compile_with_pointers(host: Any, pointers: int, ints: int, arch: str | None = None, traced: bool = False) -> Any:
    """``cute.compile(host, ptr * pointers, 1 * ints, stream)`` for ``arch`` (e.g. ``sm_90a``).

    ``traced``: the host also takes the addresses of the instrumentation's two
    buffers after the stream (``events``, ``progress``, as Int64; see
    :mod:`ts_explore.kernels.trace`). Addresses travel as 64-bit integers: as
    ``cute.Pointer`` arguments they reached the kernel wrong on an H200
    (misaligned and illegal addresses), as Int64 they arrive intact.
    """
    args = [gmem_ptr() for _ in range(pointers)] + [cutlass.Int32(1) for _ in range(ints)] + [default_stream()]
    if traced:
        args += [cutlass.Int64(0), cutlass.Int64(0)]
    return cute.compile(host, *args, options=compile_options(arch))


def resources(compiled: Any) -> KernelResources | None:
    """Registers and static shared memory of a compiled function's kernel (None if its cubin is not at hand)."""
    cubin = getattr(compiled, "__cubin__", None)
    if not isinstance(cubin, bytes):
        return None
    try:
        found = kernel_resources(cubin)
    except (ValueError, IndexError, struct.error):
        return None
    return max(found, key=lambda k: k.registers) if found else None


__all__ = ["compile_options", "compile_with_pointers", "default_stream", "gmem_ptr", "resources"]
