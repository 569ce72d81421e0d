"""TS resources of the Hopper attention forward, with their kernel bodies (TMA, WGMMA, online softmax).

Data flows ``QkvGlobal`` (Q, K, V in global memory) -> ``QTile`` (one per
consumer warpgroup, loaded once per tile), ``KStages`` and ``VStages`` (rings
of K and V blocks, each on its own pipeline) -> ``OutTile`` (O and the
log-sum-exp of each row). The ping-pong order uses
:class:`ts_explore.kernels.turn.Turn` (no data: the right to issue WGMMA).

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

WGMMA reads shared memory asynchronously: ``qk`` and ``pv`` issue their
GEMMs as one group each and return; ``wait_s`` / ``wait_o`` wait for them
before the K / V stage is released (our async-read rule checks that order).
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

import math
from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90
from cutlass.cute.nvgpu import OperandMajorMode, warpgroup
from cutlass.cute.nvgpu.warpgroup import OperandSource
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)
from cutlass.experimental.task_scheduling.task import Task
from cutlass.tensor_utils import LayoutEnum
from cutlass.cute.nvgpu import cpasync

IN_DTYPE = cutlass.BFloat16
ACC_DTYPE = cutlass.Float32
WG_ROWS = 64  # rows of a consumer warpgroup (one WGMMA atom of M)
WG_THREADS = 128
LOAD_WARPS = 4
LOG2E = math.log2(math.e)
STAT_SLOTS = 6  # per thread: m (2 rows), l (2 rows), rescale factor (2 rows)
M, L, F = 0, 2, 4  # where each statistic starts in ``stats``


def softmax_scale_log2(head_dim: int) -> float:
    """1/sqrt(head_dim) with log2(e) folded in, so the softmax uses exp2."""
    return LOG2E / math.sqrt(head_dim)


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
def _swizzled(base: Any, offset: Any, layout: Any) -> Any:
    ptr = cute.make_ptr(IN_DTYPE, base + offset, mem_space=cute.AddressSpace.smem, assumed_align=1024)
    return cute.make_tensor(cute.recast_ptr(ptr, layout.inner, dtype=IN_DTYPE), layout.outer)


def _consumer() -> tuple:
    """(consumer warpgroup index, thread index within it) of the calling thread."""
    tid = cute.arch.thread_idx()[0]
    wg = cute.arch.make_warp_uniform((tid - LOAD_WARPS * 32) // WG_THREADS)
    return wg, tid % WG_THREADS


def _is_issuer() -> Any:
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


def _barrier(stage_info: StageInfo) -> Any:
    return cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr(), mem_space=cute.AddressSpace.smem,
                         assumed_align=8)


class KvBlocksTask(Task):
    """A task whose K/V loop length depends on its work tile (the causal mask shortens early Q tiles).

    ``kv_bounds`` (set after construction, on the GPU) maps a work tile's
    coordinates to its K/V block count; TS calls :meth:`get_domain` per tile.
    """

    kv_bounds: Any = None

    def get_domain(self, tile_coord: Any) -> Any:
        return self.kv_bounds(tile_coord)


class ExtraKvBlockTask(KvBlocksTask):
    """The planted fault ``CONSUMER_EXTRA`` on the GPU: a consumer that runs one K/V block more than the loader."""

    def get_domain(self, tile_coord: Any) -> Any:
        return self.kv_bounds(tile_coord) + 1


@dataclass(kw_only=True)
class QkvGlobal(MemoryResource):
    """Q, K and V in global memory ((batch, seqlen, heads, head_dim), bf16): names the blocks to load.

    A work tile is ``(head, batch, z)``, ``z`` naming the Q tile (:func:`q_tile_index`).
    """

    geo: cutlass.Constexpr = None
    causal: cutlass.Constexpr[bool] = False
    seqlen_q: Any = None

    q_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    kv_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.q_block = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0),
                                         docs="Q tile of this work tile (its row block)")
        self.kv_block = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0),
                                          docs="K/V block of this iteration")

    @consumer_work(returns=q_block)
    @cute.jit
    def tile(self, stage_info: StageInfo) -> Any:
        """The work tile's Q tile (its head and batch are read from the work tile where needed)."""
        return q_tile_index(stage_info.work_tile.tile_idx, self.seqlen_q, self.geo.tile_q, self.causal)

    @consumer_work(returns=(q_block, kv_block))
    @cute.jit
    def locate(self, stage_info: StageInfo) -> tuple:
        """The work tile's Q tile and the iteration's K/V block."""
        return (q_tile_index(stage_info.work_tile.tile_idx, self.seqlen_q, self.geo.tile_q, self.causal),
                cutlass.Int32(stage_info.loop_offset))


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
    stats: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    probs: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        geo = self.geo
        self.stats = TaskLocalVariable(dtype=cute.TensorSSA, default_factory=_fresh_stats,
                                       docs="fp32 running row max and sum, and the factor the next P·V rescales O by")
        self.probs = TaskLocalVariable(dtype=cute.TensorSSA,
                                       default_factory=lambda: cute.full((score_count(geo),), 0.0, IN_DTYPE),
                                       docs="P of the block, bf16 (registers, WGMMA's A operand)")
        if geo is not None:
            self._alloc = SmemAllocation(f"q{self.index}", WG_ROWS * geo.head_dim * 2, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32) -> None:
        """TMA: this warpgroup's 64 rows of the Q tile (rows past seqlen_q arrive as zeros)."""
        if _is_issuer():
            q_layout, _, _ = smem_layouts(self.geo)
            s_q = _swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, q_layout)
            tile = stage_info.work_tile.tile_idx
            g = self.g_q[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (WG_ROWS, self.geo.head_dim),
                                     (q_block * self.geo.consumer_wgs + self.index, 0))
            t_s, t_g = cpasync.tma_partition(self.tma_q, 0, cute.make_layout(1),
                                             cute.group_modes(s_q[(None, None, 0)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_q, t_g, t_s, tma_bar_ptr=_barrier(stage_info))

    @consumer_work(returns=stats, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init(self, stage_info: StageInfo) -> Any:
        """Row max = -inf, row sum = 0 (a new tile)."""
        return _fresh_stats()

    @consumer_work(returns=(stats, probs), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_overlapped(self, stage_info: StageInfo) -> tuple:
        """``init``, plus P's registers: with overlap, P·V of block j-1 reads the P of the iteration before."""
        return _fresh_stats(), cute.full((score_count(self.geo),), 0.0, IN_DTYPE)

    @consumer_work(returns=(probs, stats), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def softmax(self, stage_info: StageInfo, scores: Any, stats: Any) -> tuple:
        """Online softmax of one block in registers: mask, new row max (over the quad), P, the row sum, and the
        factor the next P·V rescales O by. O itself is left alone (a P·V GEMM may still write it)."""
        geo = self.geo
        n_s = score_count(geo)
        c = softmax_scale_log2(geo.head_dim)
        s = cute.make_rmem_tensor((n_s,), ACC_DTYPE)
        s.store(scores)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        wg, t = _consumer()
        lane = t % 32
        block = cutlass.Int32(stage_info.loop_offset)
        first_key = block * geo.tile_k + (lane % 4) * 2
        m = q_tile_index(stage_info.work_tile.tile_idx, self.seqlen_q, geo.tile_q, self.causal)
        wg_row0 = m * geo.tile_q + wg * WG_ROWS
        row0 = wg_row0 + (t // 32) * 16 + lane // 4
        # Keys a row may see: those before seqlen_kv and, causal, up to its bottom-right-aligned diagonal.
        lim_wg = self.seqlen_kv
        lim0 = self.seqlen_kv
        lim1 = self.seqlen_kv
        if cutlass.const_expr(self.causal):
            shift = self.seqlen_kv - self.seqlen_q + 1
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
        for r in cutlass.range_constexpr(2):
            mx = s[2 * r]
            for nb in cutlass.range_constexpr(n_s // 4):
                for c0 in cutlass.range_constexpr(2):
                    mx = cute.arch.fmax(mx, s[c0 + 2 * r + 4 * nb])
            mx = cute.arch.fmax(mx, cute.arch.shuffle_sync_bfly(mx, offset=1))
            mx = cute.arch.fmax(mx, cute.arch.shuffle_sync_bfly(mx, offset=2))
            m_old = st[M + r]
            m_new = cute.arch.fmax(m_old, mx * c)
            m_safe = m_new
            if m_new == -ACC_DTYPE.inf:
                m_safe = ACC_DTYPE(0.0)
            rescale = cute.math.exp2(m_old - m_safe, fastmath=True)
            total = ACC_DTYPE(0.0)
            for nb in cutlass.range_constexpr(n_s // 4):
                for c0 in cutlass.range_constexpr(2):
                    i = c0 + 2 * r + 4 * nb
                    p = cute.math.exp2(s[i] * c - m_safe, fastmath=True)
                    s[i] = p
                    total = total + p
            st[M + r] = m_new
            st[L + r] = st[L + r] * rescale + total
            st[F + r] = rescale
        return s.load().to(IN_DTYPE), st.load()


@cute.jit
def _fresh_stats() -> Any:
    st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
    st.fill(0.0)
    st[M] = -ACC_DTYPE.inf
    st[M + 1] = -ACC_DTYPE.inf
    return st.load()


@dataclass(kw_only=True)
class KStages(MemoryResource):
    """The ring of K blocks: TMA fills a stage, S = Q·Kᵀ reads it with WGMMA (asynchronously)."""

    geo: cutlass.Constexpr = None
    overlap: cutlass.Constexpr[bool] = False
    q_tiles: cutlass.Constexpr = None  # the consumers' QTile resources (the S GEMM reads the caller's Q)
    tma_k: Any = None
    g_k: Any = None
    scores: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        geo = self.geo
        self.scores = TaskLocalVariable(dtype=cute.TensorSSA,
                                        default_factory=lambda: cute.full((score_count(geo),), 0.0, ACC_DTYPE),
                                        docs="S = Q·Kᵀ of the block, fp32 (registers)")
        if geo is not None:
            self._alloc = SmemAllocation("k_stages", geo.stages * geo.kv_stage_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32, kv_block: cutlass.Int32) -> None:
        """TMA: K block ``kv_block`` of the tile's head and batch (keys past seqlen_kv arrive as zeros)."""
        if _is_issuer():
            _, k_layout, _ = smem_layouts(self.geo)
            s_k = _swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, k_layout)
            tile = stage_info.work_tile.tile_idx
            g = self.g_k[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (self.geo.tile_k, self.geo.head_dim), (kv_block, 0))
            t_s, t_g = cpasync.tma_partition(self.tma_k, 0, cute.make_layout(1),
                                             cute.group_modes(s_k[(None, None, stage_info.stage_idx)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_k, t_g, t_s, tma_bar_ptr=_barrier(stage_info))

    @consumer_work(returns=scores)
    @cute.jit
    def qk(self, stage_info: StageInfo) -> Any:
        """Issue S = Q·Kᵀ (WGMMA, both operands in shared memory) as one group; it runs on after return."""
        geo = self.geo
        q_layout, k_layout, _ = smem_layouts(geo)
        base = stage_info.context.smem_base.data_ptr()
        wg, t = _consumer()
        q_offset = self.q_tiles[0]._alloc.offset
        if cutlass.const_expr(geo.consumer_wgs > 1):
            q_offset = q_offset + wg * (self.q_tiles[1]._alloc.offset - self.q_tiles[0]._alloc.offset)
        s_q = _swizzled(base, q_offset, q_layout)
        s_k = _swizzled(base, self._alloc.offset, k_layout)
        mma = qk_mma(geo)
        thr = mma.get_slice(t)
        frag_q = mma.make_fragment_A(thr.partition_A(s_q))
        frag_k = mma.make_fragment_B(thr.partition_B(s_k))
        flat = cute.make_rmem_tensor((score_count(geo),), ACC_DTYPE)
        frag_s = cute.make_tensor(flat.iterator, cute.make_layout(mma.partition_shape_C((WG_ROWS, geo.tile_k))))
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(frag_q, mode=[2])):
            mma.set(warpgroup.Field.ACCUMULATE, kb != 0)
            cute.gemm(mma, frag_s, frag_q[(None, None, kb, 0)], frag_k[(None, None, kb, stage_info.stage_idx)], frag_s)
        warpgroup.commit_group()
        return flat.load()

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def wait_s(self, stage_info: StageInfo) -> None:
        """Wait for the S GEMM's group. With overlap the P·V group issued after it may stay in flight; on the
        first block, which issues none, an empty group stands in for it, so the one ``wait_group(1)`` is right on
        every path (ptxas cannot tell which blocks issued a P·V and would otherwise wait for all groups)."""
        if cutlass.const_expr(self.overlap):
            if stage_info.loop_offset == stage_info.loop_start:
                warpgroup.commit_group()
            warpgroup.wait_group(1)
        else:
            warpgroup.wait_group(0)


@dataclass(kw_only=True)
class VStages(MemoryResource):
    """The ring of V blocks: TMA fills a stage, O += P·V reads it with WGMMA (P from registers)."""

    geo: cutlass.Constexpr = None
    tma_v: Any = None
    g_v: Any = None
    acc_o: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        geo = self.geo
        self.acc_o = TaskLocalVariable(dtype=cute.TensorSSA,
                                       default_factory=lambda: cute.full((o_count(geo),), 0.0, ACC_DTYPE),
                                       docs="fp32 O accumulators (registers)")
        if geo is not None:
            self._alloc = SmemAllocation("v_stages", geo.stages * geo.kv_stage_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @consumer_work(returns=acc_o, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def clear(self, stage_info: StageInfo) -> Any:
        """O = 0 (a new tile)."""
        return cute.full((o_count(self.geo),), 0.0, ACC_DTYPE)

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32, kv_block: cutlass.Int32) -> None:
        """TMA: V block ``kv_block`` of the tile's head and batch, head_dim-major (MN-major for WGMMA)."""
        if _is_issuer():
            _, _, v_layout = smem_layouts(self.geo)
            s_v = _swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, v_layout)
            tile = stage_info.work_tile.tile_idx
            g = self.g_v[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (self.geo.head_dim, self.geo.tile_k), (0, kv_block))
            t_s, t_g = cpasync.tma_partition(self.tma_v, 0, cute.make_layout(1),
                                             cute.group_modes(s_v[(None, None, stage_info.stage_idx)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_v, t_g, t_s, tma_bar_ptr=_barrier(stage_info))

    @consumer_work(returns=acc_o)
    @cute.jit
    def pv(self, stage_info: StageInfo, probs: Any, acc_o: Any, stats: Any) -> Any:
        """Rescale O by the factor the block's softmax left, then issue O += P·V (P from registers) as one group."""
        geo = self.geo
        n_o = o_count(geo)
        # Every group but the newest (this block's S GEMM, with overlap) is complete here at run time: the last
        # P·V was waited for. Saying so lets ptxas see O is not in flight when it is rescaled below; without it,
        # it cannot pair the conditional P·V of the block before with its conditional wait, and waits for all.
        warpgroup.wait_group(1)
        acc = cute.make_rmem_tensor((n_o,), ACC_DTYPE)
        acc.store(acc_o)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        for r in cutlass.range_constexpr(2):
            factor = st[F + r]
            for nb in cutlass.range_constexpr(n_o // 4):
                for c0 in cutlass.range_constexpr(2):
                    acc[c0 + 2 * r + 4 * nb] = acc[c0 + 2 * r + 4 * nb] * factor
        mma = pv_mma(geo)
        _, t = _consumer()
        thr = mma.get_slice(t)
        _, _, v_layout = smem_layouts(geo)
        s_v = _swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, v_layout)
        frag_v = mma.make_fragment_B(thr.partition_B(s_v))
        p = cute.make_rmem_tensor((score_count(geo),), IN_DTYPE)
        p.store(probs)
        frag_p = cute.make_tensor(p.iterator, cute.make_layout(mma.partition_shape_A((WG_ROWS, geo.tile_k))))
        frag_o = cute.make_tensor(acc.iterator, cute.make_layout(mma.partition_shape_C((WG_ROWS, geo.head_dim))))
        mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(frag_p, mode=[2])):
            cute.gemm(mma, frag_o, frag_p[(None, None, kb)], frag_v[(None, None, kb, stage_info.stage_idx)], frag_o)
        warpgroup.commit_group()
        return acc.load()

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def wait_o(self, stage_info: StageInfo) -> None:
        """Wait for the P·V group: O is final for the block and the V stage is read."""
        warpgroup.wait_group(0)


@dataclass(kw_only=True)
class OutTile(MemoryResource):
    """O (bf16) and the log-sum-exp per row (fp32) of one warpgroup's rows."""

    index: cutlass.Constexpr[int] = 0
    geo: cutlass.Constexpr = None
    causal: cutlass.Constexpr[bool] = False
    g_o: Any = None  # (seqlen_q, head_dim, heads, batch) bf16
    g_lse: Any = None  # (seqlen_q, heads, batch) fp32
    seqlen_q: Any = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, acc_o: Any, stats: Any) -> None:
        """Add the quad's row sums, divide O by them and store the rows before seqlen_q, with their LSE.

        A row that saw no key (causal, seqlen_q > seqlen_kv) gets O = 0 and LSE = -inf.
        """
        geo = self.geo
        n_o = o_count(geo)
        acc = cute.make_rmem_tensor((n_o,), ACC_DTYPE)
        acc.store(acc_o)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        _, t = _consumer()
        lane = t % 32
        tile = stage_info.work_tile.tile_idx
        m = q_tile_index(tile, self.seqlen_q, geo.tile_q, self.causal)
        row0 = m * geo.tile_q + self.index * WG_ROWS + (t // 32) * 16 + lane // 4
        o = self.g_o[(None, None, tile[0], tile[1])]
        lse = self.g_lse[(None, tile[0], tile[1])]
        for r in cutlass.range_constexpr(2):
            total = st[L + r]
            total = total + cute.arch.shuffle_sync_bfly(total, offset=1)
            total = total + cute.arch.shuffle_sync_bfly(total, offset=2)
            inv = ACC_DTYPE(0.0)
            if total > ACC_DTYPE(0.0):
                inv = cute.arch.rcp_approx(total)
            row = row0 + 8 * r
            if row < self.seqlen_q:
                for nb in cutlass.range_constexpr(n_o // 4):
                    for c0 in cutlass.range_constexpr(2):
                        o[(row, nb * 8 + (lane % 4) * 2 + c0)] = (acc[c0 + 2 * r + 4 * nb] * inv).to(IN_DTYPE)
                if lane % 4 == 0:
                    value = -ACC_DTYPE.inf
                    if total > ACC_DTYPE(0.0):
                        value = (st[M + r] + cute.math.log2(total, fastmath=True)) * math.log(2.0)
                    lse[row] = value


__all__ = ["ExtraKvBlockTask", "KStages", "KvBlocksTask", "OutTile", "QTile", "QkvGlobal", "VStages", "o_count",
           "pv_mma", "q_tile_index", "qk_mma", "score_count", "smem_layouts", "softmax_scale_log2"]
