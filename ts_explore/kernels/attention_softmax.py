"""Each consumer warpgroup's Q tile and its online softmax, with their kernel bodies (``QTile``).

A warpgroup holds its 64 Q rows for the whole tile, so the register work
of the tile hangs off it: ``init`` resets the row statistics, ``softmax``
turns one block's S into P (bf16, the P·V GEMM's register operand) and
updates them. With overlap the P·V GEMM of the block before still reads
P's registers while the softmax runs, so ``softmax_unpacked`` leaves P in
fp32 and ``pack`` converts it once that GEMM is waited for: no register a
WGMMA in flight reads is written (ptxas would serialise the WGMMAs, C7513).
The statistics, per row: the running max ``m`` (of
S·scale·log2e), the running sum ``l`` (this thread's columns only; the
quad's four are added in the epilogue) and the factor ``exp2(m_old -
m_new)`` the next P·V rescales O by. The softmax may not touch O itself:
with overlap the previous P·V GEMM is still accumulating into it.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

import math
from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import nvvm
from cutlass.cute.nvgpu import cpasync
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)

from .attention_tiles import (
    ACC_DTYPE, IN_DTYPE, WG_ROWS, consumer_thread, is_issuer, q_tile_index, score_count, smem_layouts,
    stage_barrier, swizzled, work_coord,
)


LOG2E = math.log2(math.e)


STAT_SLOTS = 6  # per thread: m (2 rows), l (2 rows), rescale factor (2 rows)
M, L, F = 0, 2, 4  # where each statistic starts in ``stats``


def softmax_scale_log2(head_dim: int) -> float:
    """1/sqrt(head_dim) with log2(e) folded in, so the softmax uses exp2."""
    return LOG2E / math.sqrt(head_dim)


@dataclass(kw_only=True)
class QTile(MemoryResource):
    """One consumer warpgroup's 64 Q rows in shared memory: TMA fills them once per tile; the warpgroup holds
    them for the whole tile, so the register work of the tile (statistics, softmax) hangs off it."""

    index: cutlass.Constexpr[int] = 0  # which consumer warpgroup's rows
    geo: cutlass.Constexpr = None
    causal: cutlass.Constexpr[bool] = False
    tma_q: Any = None  # TMA atom and coordinate tensor built by the host; None on the CPU
    g_q: Any = None
    seqlen_q: Any = None  # runtime Int32 (None on the CPU)
    seqlen_kv: Any = None
    order: Any = None  # the work order (:func:`~.attention_tiles.work_coord`); None: the scheduler's
    fence_sums: cutlass.Constexpr[bool] = False  # finish the row sums before a branch (``softmax_unpacked``)
    stats: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    probs: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    weights: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        geo = self.geo
        self.stats = TaskLocalVariable(dtype=cute.TensorSSA, default_factory=_fresh_stats,
                                       docs="fp32 running row max and sum, and the factor the next P·V rescales O by")
        self.probs = TaskLocalVariable(dtype=cute.TensorSSA,
                                       default_factory=lambda: cute.full((score_count(geo),), 0.0, IN_DTYPE),
                                       docs="P of the block, bf16 (registers, WGMMA's A operand)")
        self.weights = TaskLocalVariable(dtype=cute.TensorSSA,
                                         default_factory=lambda: cute.full((score_count(geo),), 0.0, ACC_DTYPE),
                                         docs="P of the block in fp32, before it is packed into ``probs`` (overlap)")
        if geo is not None:
            self._alloc = SmemAllocation(f"q{self.index}", WG_ROWS * geo.head_dim * 2, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32) -> None:
        """TMA: this warpgroup's 64 rows of the Q tile (rows past seqlen_q arrive as zeros)."""
        if is_issuer():
            q_layout, _, _ = smem_layouts(self.geo)
            s_q = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, q_layout)
            tile = work_coord(stage_info.work_tile.tile_idx, self.order)
            g = self.g_q[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (WG_ROWS, self.geo.head_dim),
                                     (q_block * self.geo.consumer_wgs + self.index, 0))
            t_s, t_g = cpasync.tma_partition(self.tma_q, 0, cute.make_layout(1),
                                             cute.group_modes(s_q[(None, None, 0)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_q, t_g, t_s, tma_bar_ptr=stage_barrier(stage_info))

    @consumer_work(returns=stats, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init(self, stage_info: StageInfo) -> Any:
        """Row max = -inf, row sum = 0 (a new tile)."""
        return _fresh_stats()

    @consumer_work(returns=(probs, stats), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def softmax(self, stage_info: StageInfo, scores: Any, stats: Any) -> tuple:
        """Online softmax of one block in registers: mask, new row max (over the quad), P, the row sum, and the
        factor the next P·V rescales O by. O itself is left alone (a P·V GEMM may still write it)."""
        n_s = score_count(self.geo)
        s = cute.make_rmem_tensor((n_s,), ACC_DTYPE)
        s.store(scores)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        _online_softmax(self, stage_info, s, st)
        return _packed_bf16(s, n_s), st.load()

    @consumer_work(returns=(weights, stats), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def softmax_unpacked(self, stage_info: StageInfo, scores: Any, stats: Any) -> tuple:
        """``softmax`` leaving P in fp32 (``weights``): with overlap the lagged P·V still reads P's bf16 registers,
        so the new P is packed into them by :meth:`pack` once that GEMM is waited for."""
        s = cute.make_rmem_tensor((score_count(self.geo),), ACC_DTYPE)
        s.store(scores)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        _online_softmax(self, stage_info, s, st)
        if cutlass.const_expr(self.fence_sums):
            _sums_before_branch(st[L] + st[L + 1])
        return s.load(), st.load()

    @consumer_work(returns=stats, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def last_stats(self, stage_info: StageInfo, stats: Any) -> Any:
        """The row statistics as the tile's last block left them, handed on to the epilogue (with overlap).

        A route names one writer, and TS copies a value into the reader's slot
        when that writer runs. With overlap the block's softmax is in the first
        block's guarded region or in the later blocks', and the epilogue's
        route named the later one: a tile of one K/V block never ran it, so the
        epilogue read fresh statistics (row sum 0: O = 0, LSE = -inf; seen on
        an H100). This step runs in the last block after either softmax and
        reads this tile's own slot, which both write.
        """
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        return st.load()

    @consumer_work(returns=probs, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def pack(self, stage_info: StageInfo, weights: Any) -> Any:
        """P in bf16, the P·V GEMM's register operand (after the GEMM that read the previous P completed)."""
        n_s = score_count(self.geo)
        s = cute.make_rmem_tensor((n_s,), ACC_DTYPE)
        s.store(weights)
        return _packed_bf16(s, n_s)


@cute.jit
def _online_softmax(q: Any, stage_info: StageInfo, s: Any, st: Any) -> None:
    """One block's online softmax on register tensors, in place: ``s`` (S) becomes P in fp32, ``st`` the new
    statistics of the rows (:data:`M`, :data:`L`, :data:`F`). ``q`` is the warpgroup's :class:`QTile`."""
    geo = q.geo
    n_s = score_count(geo)
    c = softmax_scale_log2(geo.head_dim)
    wg, t = consumer_thread()
    lane = t % 32
    block = cutlass.Int32(stage_info.loop_offset)
    first_key = block * geo.tile_k + (lane % 4) * 2
    m = q_tile_index(work_coord(stage_info.work_tile.tile_idx, q.order), q.seqlen_q, geo.tile_q,
                     q.causal)
    wg_row0 = m * geo.tile_q + wg * WG_ROWS
    row0 = wg_row0 + (t // 32) * 16 + lane // 4
    # Keys a row may see: those before seqlen_kv and, causal, up to its bottom-right-aligned diagonal.
    lim_wg = q.seqlen_kv
    lim0 = q.seqlen_kv
    lim1 = q.seqlen_kv
    if cutlass.const_expr(q.causal):
        shift = q.seqlen_kv - q.seqlen_q + 1
        lim_wg = cutlass.min(lim_wg, wg_row0 + shift)
        lim0 = cutlass.min(lim0, row0 + shift)
        lim1 = cutlass.min(lim1, row0 + 8 + shift)
    if (block + 1) * geo.tile_k > lim_wg:
        for nb in cutlass.range_constexpr(n_s // 4):
            for c0 in cutlass.range_constexpr(2):
                key = first_key + nb * 8 + c0
                if key >= lim0:
                    s[c0 + 4 * nb] = -ACC_DTYPE.inf
                if key >= lim1:
                    s[c0 + 2 + 4 * nb] = -ACC_DTYPE.inf
    # Row maxima of the raw scores (scaled once, below): four partial maxima per row, so a row's 32 values
    # reach the quad shuffle in 9 dependent FMNMX instead of 31 (the first exp2 waits on that chain).
    row_max = [_row_max(s, 0, n_s), _row_max(s, 1, n_s)]
    for offset in cutlass.range_constexpr(1, 3):
        other = [cute.arch.shuffle_sync_bfly(row_max[r], offset=offset) for r in range(2)]
        row_max = [cute.arch.fmax(row_max[r], other[r]) for r in range(2)]
    for r in cutlass.range_constexpr(2):
        m_old = st[M + r]
        m_new = cute.arch.fmax(m_old, row_max[r] * c)
        m_safe = m_new
        if m_new == -ACC_DTYPE.inf:
            m_safe = ACC_DTYPE(0.0)
        rescale = cute.math.exp2(m_old - m_safe, fastmath=True)
        total = st[L + r] * rescale  # the running sum seeds this block's: no separate add at the end
        for nb in cutlass.range_constexpr(n_s // 4):
            for c0 in cutlass.range_constexpr(2):
                i = c0 + 2 * r + 4 * nb
                p = cute.math.exp2(s[i] * c - m_safe, fastmath=True)  # one FFMA, then ex2.approx.ftz
                s[i] = p
                total = total + p
        st[M + r] = m_new
        st[L + r] = total
        st[F + r] = rescale


@cute.jit
def _sums_before_branch(total: Any) -> None:
    """A branch on the rows' sums (never taken: a sum of exp2s is not negative) ends the softmax's basic block
    after every exp2 and add, so ptxas cannot sink them below the P·V wait that follows."""
    if total < ACC_DTYPE(0.0):
        nvvm.nanosleep(cutlass.Int32(0).ir_value())


@cute.jit
def _row_max(s: Any, r: cutlass.Constexpr[int], n_s: cutlass.Constexpr[int]) -> Any:
    """Max of row ``r``'s scores in this thread (columns ``c0 + 2r + 4nb``), as four independent partial maxima
    combined pairwise: FMNMX's latency, not its issue rate, bounds a single chain."""
    cols = [c0 + 2 * r + 4 * nb for nb in range(n_s // 4) for c0 in range(2)]  # unrolled while tracing
    part = [s[cols[j]] for j in range(4)]
    for j in cutlass.range_constexpr(4, len(cols)):
        part[j % 4] = cute.arch.fmax(part[j % 4], s[cols[j]])
    return cute.arch.fmax(cute.arch.fmax(part[0], part[1]), cute.arch.fmax(part[2], part[3]))


@cute.jit
def _packed_bf16(s: Any, n: cutlass.Constexpr[int]) -> Any:
    """P in bf16, converted two values at a time (one ``cvt.rn.bf16x2.f32`` each) into the registers the P·V
    WGMMA reads. Converting the whole vector at once leaves the pairing to LLVM, which packs 64 values but
    converts a K/V block of 160 keys (80 values) one by one and packs them between the WGMMAs, where ptxas
    has to inject warpgroup arrives (C7519)."""
    p = cute.make_rmem_tensor((n,), IN_DTYPE)
    for i in cutlass.range_constexpr(n // 2):
        pair = cute.make_tensor(s.iterator + 2 * i, cute.make_layout(2))
        cute.make_tensor(p.iterator + 2 * i, cute.make_layout(2)).store(pair.load().to(IN_DTYPE))
    return p.load()


@cute.jit
def _fresh_stats() -> Any:
    """Statistics of a new tile: row max -inf, row sum 0, rescale factor 0."""
    st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
    st.fill(0.0)
    st[M] = -ACC_DTYPE.inf
    st[M + 1] = -ACC_DTYPE.inf
    return st.load()


__all__ = ["F", "L", "LOG2E", "M", "QTile", "STAT_SLOTS", "softmax_scale_log2"]
