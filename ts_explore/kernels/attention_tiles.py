"""What every resource of the Hopper attention forward shares: element types, the two WGMMAs, the
shared-memory layouts, how many values a consumer thread holds, which thread does what, and the Q tile of a
work tile.

The resources themselves: :mod:`.attention_mainloop` (Q, K, V in global
memory and the K and V rings with their GEMMs), :mod:`.attention_softmax`
(each consumer's Q tile and its online softmax), :mod:`.attention_epilogue`
(O and the log-sum-exp); the ping-pong order is :class:`.turn.Turn`.

Data flows ``QkvGlobal`` (Q, K, V in global memory) -> ``QTile`` (one per
consumer warpgroup, loaded once per tile), ``KStages`` and ``VStages`` (rings
of K and V blocks, each on its own pipeline) -> ``OutTile`` (O and the
log-sum-exp of each row).

Register values routed between the steps (task-local variables), per
consumer thread; a warpgroup owns 64 rows, each thread two of them (rows
``lane / 4`` and ``lane / 4 + 8`` of its warp's 16), as WGMMA's accumulator
layout places them:

- ``scores``: S = Q·Kᵀ of one K block, ``tile_k / 2`` fp32;
- ``probs``: P = exp2(S·scale·log2e - m), the same count in bf16. The
  accumulator layout of a 64 x tile_k WGMMA and the register A operand of a
  64 x hd x tile_k one order a thread's values alike, so P feeds the P·V GEMM
  without moving between threads;
- ``acc_o`` (of ``VStages``): the ``head_dim / 2`` fp32 O accumulators;
- ``stats`` (of ``QTile``): per row the running max ``m`` (of
  S·scale·log2e), the running sum ``l`` (this thread's columns only; the
  quad's four are added in the epilogue) and the factor ``exp2(m_old -
  m_new)`` the softmax leaves for the next P·V to rescale O by. The softmax
  may not touch O itself: with overlap the previous P·V GEMM is still
  accumulating into it.

Each value is read and written in place by the steps that use it, so it
carries across K/V iterations and is reset per tile by ``init`` / ``clear``.
"""

# No ``from __future__ import annotations`` here: the DSL reads annotations as objects.

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90
from cutlass.cute.nvgpu import OperandMajorMode
from cutlass.cute.nvgpu.warpgroup import OperandSource
from cutlass.experimental.task_scheduling.resources import StageInfo
from cutlass.cutlass_dsl import extract_mlir_values, new_from_mlir_values
from cutlass.tensor_utils import LayoutEnum

from .attention_geometry import by_q_tile, grouped_longest_first, snake


IN_DTYPE = cutlass.BFloat16


ACC_DTYPE = cutlass.Float32


WG_ROWS = 64  # rows of a consumer warpgroup (one WGMMA atom of M)

MAX_SEQLEN = 1 << 20  # the longest sequence the host launches (it refuses longer ones with a SizeError)


WG_THREADS = 128


LOAD_WARPS = 4


def qk_mma(geo: Any) -> Any:
    """S = Q·Kᵀ: a 64 x tile_k WGMMA, Q and K both K-major in shared memory."""
    return sm90.make_trivial_tiled_mma(IN_DTYPE, IN_DTYPE, OperandMajorMode.K, OperandMajorMode.K, ACC_DTYPE,
                                       (1, 1, 1), tiler_mn=(WG_ROWS, geo.tile_k))


def pv_mma(geo: Any) -> Any:
    """O += P·V: a 64 x head_dim WGMMA over K = tile_k, P from registers, V MN-major in shared memory."""
    return sm90.make_trivial_tiled_mma(IN_DTYPE, IN_DTYPE, OperandMajorMode.K, OperandMajorMode.MN, ACC_DTYPE,
                                       (1, 1, 1), tiler_mn=(WG_ROWS, geo.head_dim), a_source=OperandSource.RMEM)


def smem_layouts(geo: Any) -> tuple:
    """128-byte-swizzled layouts: one warpgroup's Q (64 x hd), K stages (tile_k x hd), V stages (hd x tile_k)."""
    q = sm90.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (WG_ROWS, geo.tile_k, geo.head_dim), IN_DTYPE, 1)
    k = sm90.make_smem_layout_b(LayoutEnum.ROW_MAJOR, (WG_ROWS, geo.tile_k, geo.head_dim), IN_DTYPE, geo.stages)
    v = sm90.make_smem_layout_b(LayoutEnum.COL_MAJOR, (WG_ROWS, geo.head_dim, geo.tile_k), IN_DTYPE, geo.stages)
    return q, k, v


def score_count(geo: Any) -> int:
    """fp32 values of S (and bf16 values of P) per consumer thread."""
    return WG_ROWS * geo.tile_k // WG_THREADS


def o_count(geo: Any) -> int:
    """fp32 O accumulators per consumer thread."""
    return WG_ROWS * geo.head_dim // WG_THREADS


@cute.jit
def swizzled(base: Any, offset: Any, layout: Any) -> Any:
    """A bf16 shared-memory tensor at ``base + offset`` bytes with a swizzled (composed) layout."""
    ptr = cute.make_ptr(IN_DTYPE, base + offset, mem_space=cute.AddressSpace.smem, assumed_align=1024)
    return cute.make_tensor(cute.recast_ptr(ptr, layout.inner, dtype=IN_DTYPE), layout.outer)


def consumer_thread() -> tuple:
    """(consumer warpgroup index, thread index within it) of the calling thread."""
    tid = cute.arch.thread_idx()[0]
    wg = cute.arch.make_warp_uniform((tid - LOAD_WARPS * 32) // WG_THREADS)
    return wg, tid % WG_THREADS


def is_issuer() -> Any:
    """The first load warp issues every TMA of the loader (the copy elects one of its threads)."""
    return cute.arch.make_warp_uniform(cute.arch.warp_idx()) % LOAD_WARPS == 0


def q_tile_index(coord: Any, seqlen_q: Any, tile_q: int, causal: bool) -> Any:
    """The Q tile of work tile ``coord`` = ``(head, batch, z)``: ``z``, or causal the last tile first.

    Under the causal mask later Q tiles visit more K/V blocks; the grid's last
    coordinate is its slowest, so reversing it starts the longest tiles first
    and the short ones fill the tail.
    """
    z = cutlass.Int32(coord[2])
    if causal:
        return (seqlen_q + tile_q - 1) // tile_q - 1 - z
    return z


class WorkOrder:
    """How work tiles are taken, with the Int32 sizes that needs: heads, batch, Q tiles, the grid's CTAs and the
    (head, batch) pairs of a causal L2 group.

    ``how`` (fixed when the kernel is built): ``"by q tile"`` (non-causal:
    :func:`~.attention_geometry.by_q_tile`), ``"grouped"`` (causal, one CTA
    per tile: :func:`~.attention_geometry.grouped_longest_first`) or
    ``"snake"`` (causal under static persistence:
    :func:`~.attention_geometry.snake` over the longest-first order). TS
    carries the resources through run-time branches and loops, so this gives
    the DSL its five values and takes them back (the DSL's dynamic
    expression protocol), as the tile schedulers do.
    """

    def __init__(self, heads: Any, batch: Any, tiles: Any, grid: Any, group: Any, how: str) -> None:
        self.heads, self.batch, self.tiles, self.grid, self.group = heads, batch, tiles, grid, group
        self.how = how

    def _sizes(self) -> tuple:
        return self.heads, self.batch, self.tiles, self.grid, self.group

    def __extract_mlir_values__(self) -> list:
        return [v for size in self._sizes() for v in extract_mlir_values(size)]

    def __new_from_mlir_values__(self, values: list) -> "WorkOrder":
        sizes = (new_from_mlir_values(size, [value]) for size, value in zip(self._sizes(), values))
        return WorkOrder(*sizes, how=self.how)


def work_coord(coord: Any, order: Any) -> Any:
    """The work tile ``(head, batch, z)`` a CTA runs for the scheduler's ``coord``.

    ``order`` is None (the scheduler's order, heads fastest) or a
    :class:`WorkOrder`: the scheduler's tiles are numbered as it hands them
    out and taken in the order's sequence instead (the plan's walks and views
    use the same functions).
    """
    if order is None:
        return coord
    heads, batch, tiles = order.heads, order.batch, order.tiles
    linear = cutlass.Int32(coord[0]) + heads * (cutlass.Int32(coord[1]) + batch * cutlass.Int32(coord[2]))
    if order.how == "by q tile":
        return by_q_tile(linear, heads, tiles)
    if order.how == "grouped":
        pair, z = grouped_longest_first(linear, heads * batch, tiles, order.group, cutlass.min)
        rest = pair // heads
        return pair - rest * heads, rest, z
    t = snake(linear, heads * batch * tiles, order.grid, cutlass.min)
    rest = t // heads
    return (t - rest * heads, rest - (rest // batch) * batch, rest // batch)


def stage_barrier(stage_info: StageInfo) -> Any:
    """The acquired stage's mbarrier, as the pointer a TMA load signals."""
    return cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr(), mem_space=cute.AddressSpace.smem,
                         assumed_align=8)


__all__ = ["ACC_DTYPE", "IN_DTYPE", "LOAD_WARPS", "WG_ROWS", "WG_THREADS", "consumer_thread", "is_issuer", "o_count",
           "pv_mma", "q_tile_index", "qk_mma", "score_count", "smem_layouts", "stage_barrier", "swizzled",
           "WorkOrder", "work_coord"]
