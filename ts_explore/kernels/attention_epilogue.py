"""The Hopper attention forward's epilogues, with their kernel bodies: O and the log-sum-exp of each row.

Each consumer warpgroup adds its quads' row sums, divides O by them and
writes each row's LSE from registers. O then leaves one of two ways:

- ``OutBuffer`` (``tma_store=True``, the default): the warpgroup writes its
  64 rows of O into its own shared-memory buffer (stmatrix) and commits it;
  the store task (warps 2-3 of the load warpgroup) waits for the buffer,
  sends it with one TMA store (which clips the rows past ``seqlen_q``) and
  releases it once the store has read it. The consumer goes on to its next
  tile meanwhile. The buffer is a one-stage TS pipeline per consumer, so the
  checker sees the hand-over; the async-read rule checks each release against
  the store task's read wait, as TS counts a buffer as read when the step that
  issued the TMA store returns.
- ``OutTile`` (``tma_store=False``): the warpgroup stores its rows before
  ``seqlen_q`` straight from registers, two bytes a store.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

import math
from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import MemoryResource, StageInfo, consumer_work, producer_work

from .attention_softmax import L, M, STAT_SLOTS
from .attention_tiles import (
    ACC_DTYPE, IN_DTYPE, WG_ROWS, consumer_thread, o_count, pv_mma, q_tile_index, smem_layouts, swizzled, work_coord,
)
from .stmatrix import source_index, stmatrix_copy

STORE_WARP = 2  # the warp of the store task that issues the TMA stores of O


@dataclass(kw_only=True)
class OutTile(MemoryResource):
    """O (bf16) and the log-sum-exp per row (fp32) of one warpgroup's rows."""

    index: cutlass.Constexpr[int] = 0
    geo: cutlass.Constexpr = None
    causal: cutlass.Constexpr[bool] = False
    g_o: Any = None  # (seqlen_q, head_dim, heads, batch) bf16
    g_lse: Any = None  # (seqlen_q, heads, batch) fp32
    seqlen_q: Any = None
    order: Any = None  # the work order (:func:`~.attention_tiles.work_coord`); None: the scheduler's

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, acc_o: Any, stats: Any) -> None:
        """Add the quad's row sums, divide O by them and store the rows before seqlen_q, with their LSE.

        A row that saw no key (causal, seqlen_q > seqlen_kv) gets O = 0 and LSE = -inf.
        """
        geo = self.geo
        acc = cute.make_rmem_tensor((o_count(geo),), ACC_DTYPE)
        acc.store(acc_o)
        rows = _normalise(self, stage_info, acc, stats)
        _, t = consumer_thread()
        lane = t % 32
        tile = work_coord(stage_info.work_tile.tile_idx, self.order)
        o = self.g_o[(None, None, tile[0], tile[1])]
        for r in cutlass.range_constexpr(2):
            row = rows + 8 * r
            if row < self.seqlen_q:
                for nb in cutlass.range_constexpr(o_count(geo) // 4):
                    for c0 in cutlass.range_constexpr(2):
                        o[(row, nb * 8 + (lane % 4) * 2 + c0)] = acc[c0 + 2 * r + 4 * nb].to(IN_DTYPE)


@cute.jit
def _normalise(out: Any, stage_info: StageInfo, acc: Any, stats: Any) -> Any:
    """Divide O (``acc``, fp32 registers, in place) by its rows' sums and write the rows' LSE (the quad's first
    lane, rows before seqlen_q); return the first of this thread's two rows. ``out``: the warpgroup's
    ``OutTile`` or ``OutBuffer``."""
    geo = out.geo
    n_o = o_count(geo)
    st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
    st.store(stats)
    _, t = consumer_thread()
    lane = t % 32
    tile = work_coord(stage_info.work_tile.tile_idx, out.order)
    m = q_tile_index(tile, out.seqlen_q, geo.tile_q, out.causal)
    row0 = m * geo.tile_q + out.index * WG_ROWS + (t // 32) * 16 + lane // 4
    lse = out.g_lse[(None, tile[0], tile[1])]
    for r in cutlass.range_constexpr(2):
        total = st[L + r]
        total = total + cute.arch.shuffle_sync_bfly(total, offset=1)
        total = total + cute.arch.shuffle_sync_bfly(total, offset=2)
        inv = ACC_DTYPE(0.0)
        if total > ACC_DTYPE(0.0):
            inv = cute.arch.rcp_approx(total)
        for nb in cutlass.range_constexpr(n_o // 4):
            for c0 in cutlass.range_constexpr(2):
                acc[c0 + 2 * r + 4 * nb] = acc[c0 + 2 * r + 4 * nb] * inv
        row = row0 + 8 * r
        if row < out.seqlen_q:
            if lane % 4 == 0:
                value = -ACC_DTYPE.inf
                if total > ACC_DTYPE(0.0):
                    value = (st[M + r] + cute.math.log2(total, fastmath=True)) * math.log(2.0)
                lse[row] = value
    return row0


def o_layout(geo: Any) -> Any:
    """One consumer's O buffer: 64 rows x head_dim bf16, head_dim contiguous, 128-byte swizzled (Q's layout)."""
    return smem_layouts(geo)[0]


def o_store_copy(geo: Any) -> Any:
    """Registers -> shared memory for O (stmatrix), laid over the P·V WGMMA's accumulators."""
    return stmatrix_copy(pv_mma(geo), IN_DTYPE, ACC_DTYPE)


@dataclass(kw_only=True)
class OutBuffer(MemoryResource):
    """One consumer warpgroup's O in shared memory on its way to global memory, as a one-stage pipeline.

    Producer (the consumer warpgroup, every thread): acquire, ``stage`` (LSE
    to global, O into the buffer), commit. Consumer (the store task): wait,
    ``store`` (one warp issues the TMA store and commits it as a bulk group),
    ``drain`` (that warp waits until every store has read its buffer),
    release; ``flush`` waits for every store to complete before the CTA exits.
    """

    index: cutlass.Constexpr[int] = 0
    geo: cutlass.Constexpr = None
    causal: cutlass.Constexpr[bool] = False
    tma_o: Any = None  # TMA store atom and O's coordinate tensor (seqlen_q, head_dim, heads, batch)
    g_o: Any = None
    g_lse: Any = None  # (seqlen_q, heads, batch) fp32
    seqlen_q: Any = None
    order: Any = None  # the work order (:func:`~.attention_tiles.work_coord`); None: the scheduler's
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.geo is not None:
            self._alloc = SmemAllocation(f"o{self.index}", WG_ROWS * self.geo.head_dim * 2, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @producer_work
    @cute.jit
    def stage(self, stage_info: StageInfo, acc_o: Any, stats: Any) -> None:
        """Write the rows' LSE, and O divided by the row sums, in bf16, into this warpgroup's buffer (stmatrix);
        fence so that the TMA store (async proxy) sees it once the commit hands the buffer over."""
        geo = self.geo
        acc = cute.make_rmem_tensor((o_count(geo),), ACC_DTYPE)
        acc.store(acc_o)
        _normalise(self, stage_info, acc, stats)
        _, t = consumer_thread()
        s_o = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, o_layout(geo))
        r2s = o_store_copy(geo)
        thr = r2s.get_slice(t)
        dst = thr.partition_D(s_o[(None, None, 0)])
        # the accumulators retiled for stmatrix: ((values, 16-column blocks), M blocks, 1); the copy walks the
        # destination as (values, M blocks, 16-column blocks): the whole width is one part
        shape_c = pv_mma(geo).partition_shape_C((WG_ROWS, geo.head_dim))
        src = r2s.retile(cute.make_tensor(acc.iterator, cute.make_layout(shape_c)))
        piece = cute.make_rmem_tensor(cute.shape(thr.partition_S(s_o[(None, None, 0)])), ACC_DTYPE)
        per_block, n_blocks = cute.size(piece, mode=[0]), cute.size(piece, mode=[2])
        for v in cutlass.range_constexpr(per_block):
            for mb in cutlass.range_constexpr(cute.size(piece, mode=[1])):
                for nb in cutlass.range_constexpr(n_blocks):
                    piece[(v, mb, nb)] = src[(source_index(v, nb, 0, per_block, n_blocks), mb, 0)]
        out = cute.make_rmem_tensor(piece.shape, IN_DTYPE)
        out.store(piece.load().to(IN_DTYPE))
        cute.copy(r2s, out, dst)
        cute.arch.fence_proxy("async.shared", space="cta")

    @consumer_work
    @cute.jit
    def store(self, stage_info: StageInfo) -> None:
        """Send the buffer to the warpgroup's 64 rows of the tile's O (TMA clips rows past seqlen_q) and commit
        it as one bulk group; the TMA engine reads the buffer after this returns."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == STORE_WARP:
            geo = self.geo
            tile = work_coord(stage_info.work_tile.tile_idx, self.order)
            m = q_tile_index(tile, self.seqlen_q, geo.tile_q, self.causal)
            s_o = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, o_layout(geo))
            g = self.g_o[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (WG_ROWS, geo.head_dim), (m * geo.consumer_wgs + self.index, 0))
            t_s, t_g = cpasync.tma_partition(self.tma_o, 0, cute.make_layout(1),
                                             cute.group_modes(s_o[(None, None, 0)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_o, t_s, t_g)
            cute.arch.cp_async_bulk_commit_group()

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def drain(self, stage_info: StageInfo) -> None:
        """Wait until every TMA store of O has read its buffer (each may be released and refilled)."""
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == STORE_WARP:
            cute.arch.cp_async_bulk_wait_group(0, read=True)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def flush(self, stage_info: StageInfo) -> None:
        """Before the CTA exits: every TMA store of O has written global memory."""
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == STORE_WARP:
            cute.arch.cp_async_bulk_wait_group(0)


__all__ = ["OutBuffer", "OutTile", "STORE_WARP", "o_layout", "o_store_copy"]
