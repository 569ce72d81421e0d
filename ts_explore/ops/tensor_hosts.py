"""The ops' host functions: wrappers that take torch tensors and let TVM-FFI supply the stream.

The kernel modules' hosts take raw pointers and sizes. A TVM-FFI call that
passes ints needs Python to read each tensor's pointer and the current stream
first; passing the tensors lets TVM-FFI convert them in C (through DLPack),
check them against the placeholders they were compiled with (dtype, device,
shape and strides bound to the same symbols, alignment), and set the stream
to torch's current stream on their GPU. These wrappers read the pointers and
sizes from the tensors and call the kernel modules' hosts, so the launched
task set is still the drawn one.

This module imports the DSL, and the DSL reads the annotations below as
objects: no ``from __future__ import annotations`` here. It is imported only
when a kernel is compiled, never on a cached start.
"""

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute


def gemm_host(fp8: bool) -> Any:
    """A host taking the torch tensors themselves: ``fn(a, b, c, [scale_a, scale_b,] gx, gy, gz)``, the pointers and
    M, N, K read from them, the stream from TVM-FFI's environment (torch's current stream)."""
    def wrap(inner: Any) -> Any:
        if fp8:
            @cute.jit
            def host_fp8(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, scale_a: cutlass.Float32,
                         scale_b: cutlass.Float32, gx: cutlass.Int32, gy: cutlass.Int32, gz: cutlass.Int32,
                         stream: cuda.CUstream) -> None:
                inner(a.iterator, b.iterator, c.iterator, scale_a, scale_b, a.shape[0], b.shape[1], a.shape[1],
                      gx, gy, gz, stream)

            return host_fp8

        @cute.jit
        def host(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, gx: cutlass.Int32, gy: cutlass.Int32,
                 gz: cutlass.Int32, stream: cuda.CUstream) -> None:
            inner(a.iterator, b.iterator, c.iterator, a.shape[0], b.shape[1], a.shape[1], gx, gy, gz, stream)

        return host

    return wrap


def attention_host(inner: Any) -> Any:
    """A host taking q, k, v, o (batch, seqlen, heads, head_dim) and the LSE (batch, heads, seqlen_q) themselves:
    ``fn(q, k, v, o, lse, gx, gy, gz)``, the sizes read from them, the stream from TVM-FFI's environment."""
    @cute.jit
    def host(q: cute.Tensor, k: cute.Tensor, v: cute.Tensor, o: cute.Tensor, lse: cute.Tensor, gx: cutlass.Int32,
             gy: cutlass.Int32, gz: cutlass.Int32, stream: cuda.CUstream) -> None:
        inner(q.iterator, k.iterator, v.iterator, o.iterator, lse.iterator, q.shape[0], q.shape[2], q.shape[1],
              k.shape[1], gx, gy, gz, stream)

    return host


__all__ = ["attention_host", "gemm_host"]
