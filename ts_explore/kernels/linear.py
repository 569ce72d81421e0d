"""The kernel and host wrapper shared by the copies over a flat int32 buffer (grid-stride, pipelined).

The kernel hands its runtime indices and tensors to the scenario's own build
function, so the traced task set is the one the explorer draws; the host takes
raw pointers, the element count and the grid size. Any element count: the
kernel receives it whole, and the work bodies handle a partial last vector
or tile.
"""

# No ``from __future__ import annotations`` here: the DSL reads kernel annotations as objects.

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from .access import units
from .build import compile_with_pointers
from .common import BuiltHook, run_built
from .trace import address, recorder_for


def compile_linear_copy(scenario: Any, cfg: Any, *, count_name: str, unit: int, threads: int,
                        on_built: BuiltHook | None = None, arch: str | None = None, trace: Any = None) -> Any:
    """Compile ``scenario``'s copy for ``cfg``; call it as ``fn(src_ptr, dst_ptr, n, grid, stream)``.

    The kernel receives ``n`` as the build context's ``extra["n"]`` and
    ``ceil(n / unit)`` as ``extra[count_name]`` (vectors for the grid-stride
    copy, tiles for the pipelined one; the last may be partial). With a
    ``trace`` spec it is instrumented and takes ``events, progress`` pointers after the stream.
    """
    from .contract import BuildContext

    @cute.kernel
    def kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32, count: cutlass.Int32, events: cutlass.Int64,
               progress: cutlass.Int64) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        gx, _, _ = cute.arch.grid_dim()
        ctx = BuildContext(on_gpu=True, block=bx, thread=tx, grid=gx,
                           tensors={"src": src, "dst": dst}, extra={"n": n, count_name: count})
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress))

    @cute.jit
    def host(src_ptr: cute.Pointer, dst_ptr: cute.Pointer, n: cutlass.Int32, grid: cutlass.Int32,
             stream: cuda.CUstream, events: Any = None, progress: Any = None) -> None:
        src = cute.make_tensor(src_ptr, cute.make_layout(n))
        dst = cute.make_tensor(dst_ptr, cute.make_layout(n))
        kernel(src, dst, n, units(n, unit), address(events), address(progress)).launch(
            grid=(grid, 1, 1), block=(threads, 1, 1), stream=stream)

    return compile_with_pointers(host, pointers=2, ints=2, arch=arch, traced=trace is not None)


__all__ = ["compile_linear_copy"]
