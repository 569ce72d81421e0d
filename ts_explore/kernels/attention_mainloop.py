"""The Hopper attention forward's mainloop resources, with their kernel bodies: Q, K and V in global memory,
the K and V rings and their GEMMs (S = Q·Kᵀ, O += P·V), and the tasks whose K/V loop follows the causal mask.

WGMMA reads shared memory asynchronously: ``qk`` and ``pv`` issue their
GEMMs as one group each and return; ``wait_s`` / ``wait_o`` wait for them
before the K / V stage is released (our async-read rule checks that order).
With overlap (``overlap=True``) the P·V GEMM of the block before is issued
right after the next S GEMM: ``KStages.wait_s_keep_pv`` then waits for the
S group only and leaves the P·V group running under the softmax.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import nvvm
from cutlass.cute.nvgpu import cpasync, warpgroup
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

from .attention_softmax import F, STAT_SLOTS
from .attention_tiles import (
    ACC_DTYPE, IN_DTYPE, MAX_SEQLEN, WG_ROWS, consumer_thread, is_issuer, o_count, pv_mma, q_tile_index, qk_mma,
    score_count, smem_layouts, stage_barrier, swizzled, work_coord,
)


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
    order: Any = None  # the work order (:func:`work_coord`); None: the scheduler's

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
        coord = work_coord(stage_info.work_tile.tile_idx, self.order)
        return q_tile_index(coord, self.seqlen_q, self.geo.tile_q, self.causal)

    @consumer_work(returns=(q_block, kv_block))
    @cute.jit
    def locate(self, stage_info: StageInfo) -> tuple:
        """The work tile's Q tile and the iteration's K/V block."""
        coord = work_coord(stage_info.work_tile.tile_idx, self.order)
        return q_tile_index(coord, self.seqlen_q, self.geo.tile_q, self.causal), cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class KStages(MemoryResource):
    """The ring of K blocks: TMA fills a stage, S = Q·Kᵀ reads it with WGMMA (asynchronously)."""

    geo: cutlass.Constexpr = None
    q_tiles: cutlass.Constexpr = None  # the consumers' QTile resources (the S GEMM reads the caller's Q)
    tma_k: Any = None
    g_k: Any = None
    order: Any = None  # the work order (:func:`work_coord`); None: the scheduler's
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
        if is_issuer():
            _, k_layout, _ = smem_layouts(self.geo)
            s_k = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, k_layout)
            tile = work_coord(stage_info.work_tile.tile_idx, self.order)
            g = self.g_k[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (self.geo.tile_k, self.geo.head_dim), (kv_block, 0))
            t_s, t_g = cpasync.tma_partition(self.tma_k, 0, cute.make_layout(1),
                                             cute.group_modes(s_k[(None, None, stage_info.stage_idx)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_k, t_g, t_s, tma_bar_ptr=stage_barrier(stage_info))

    @consumer_work(returns=scores)
    @cute.jit
    def qk(self, stage_info: StageInfo) -> Any:
        """Issue S = Q·Kᵀ (WGMMA, both operands in shared memory) as one group; it runs on after return."""
        geo = self.geo
        q_layout, k_layout, _ = smem_layouts(geo)
        base = stage_info.context.smem_base.data_ptr()
        wg, t = consumer_thread()
        q_offset = self.q_tiles[0]._alloc.offset
        if cutlass.const_expr(geo.consumer_wgs > 1):
            q_offset = q_offset + wg * (self.q_tiles[1]._alloc.offset - self.q_tiles[0]._alloc.offset)
        s_q = swizzled(base, q_offset, q_layout)
        s_k = swizzled(base, self._alloc.offset, k_layout)
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
        """Wait for the S GEMM's group (and any before it): S is in registers and the K stage is read."""
        warpgroup.wait_group(0)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def wait_s_keep_pv(self, stage_info: StageInfo) -> None:
        """With overlap, where the lagged P·V was issued after this block's S GEMM: wait for every group but the
        newest, so S is in registers and the K stage is read while the P·V GEMM runs on (groups complete in
        the order they were committed)."""
        warpgroup.wait_group(1)


@dataclass(kw_only=True)
class VStages(MemoryResource):
    """The ring of V blocks: TMA fills a stage, O += P·V reads it with WGMMA (P from registers)."""

    geo: cutlass.Constexpr = None
    tma_v: Any = None
    g_v: Any = None
    order: Any = None  # the work order (:func:`work_coord`); None: the scheduler's
    fence_pv_wait: cutlass.Constexpr[bool] = False  # end a basic block before the P·V wait (:meth:`wait_o`)
    acc_o: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    probs: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        geo = self.geo
        self.acc_o = TaskLocalVariable(dtype=cute.TensorSSA,
                                       default_factory=lambda: cute.full((o_count(geo),), 0.0, ACC_DTYPE),
                                       docs="fp32 O accumulators (registers)")
        self.probs = TaskLocalVariable(dtype=cute.TensorSSA,
                                       default_factory=lambda: cute.full((score_count(geo),), 0.0, IN_DTYPE),
                                       docs="P as the P·V GEMM reads it, bf16 (the softmax's P is copied here)")
        if geo is not None:
            self._alloc = SmemAllocation("v_stages", geo.stages * geo.kv_stage_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc]

    @consumer_work(returns=acc_o, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def clear(self, stage_info: StageInfo) -> Any:
        """O = 0 (a new tile)."""
        return cute.full((o_count(self.geo),), 0.0, ACC_DTYPE)

    @consumer_work(returns=(acc_o, probs), work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def clear_overlapped(self, stage_info: StageInfo) -> tuple:
        """O = 0 and a P for this warpgroup, with overlap. The ring's copy of P (``probs``), which the P·V GEMM
        reads, is shared by the consumer warpgroups' code; with overlap the compiler also sees a path where the
        lagged P·V reads it before the tile's first block wrote it, and without a value set here the other
        warpgroup's P reached it: their registers became one and ptxas serialised every WGMMA (C7512)."""
        return cute.full((o_count(self.geo),), 0.0, ACC_DTYPE), cute.full((score_count(self.geo),), 0.0, IN_DTYPE)

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, q_block: cutlass.Int32, kv_block: cutlass.Int32) -> None:
        """TMA: V block ``kv_block`` of the tile's head and batch, head_dim-major (MN-major for WGMMA)."""
        if is_issuer():
            _, _, v_layout = smem_layouts(self.geo)
            s_v = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, v_layout)
            tile = work_coord(stage_info.work_tile.tile_idx, self.order)
            g = self.g_v[(None, None, tile[0], tile[1])]
            g_tile = cute.local_tile(g, (self.geo.head_dim, self.geo.tile_k), (0, kv_block))
            t_s, t_g = cpasync.tma_partition(self.tma_v, 0, cute.make_layout(1),
                                             cute.group_modes(s_v[(None, None, stage_info.stage_idx)], 0, 2),
                                             cute.group_modes(g_tile, 0, 2))
            cute.copy(self.tma_v, t_g, t_s, tma_bar_ptr=stage_barrier(stage_info))

    @consumer_work(returns=acc_o)
    @cute.jit
    def pv(self, stage_info: StageInfo, probs: Any, acc_o: Any, stats: Any) -> Any:
        """Rescale O by the factor the block's softmax left, then issue O += P·V (P from registers) as one group."""
        geo = self.geo
        n_o = o_count(geo)
        # Every group but the newest (this block's S GEMM, with overlap) is complete here at run time: the last
        # P·V was waited for. Saying so costs nothing and tells ptxas O is not in flight when it is rescaled below.
        warpgroup.wait_group(1)
        acc = cute.make_rmem_tensor((n_o,), ACC_DTYPE)
        acc.store(acc_o)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        # A factor is exp2(m_old - m_new) <= 1, and exactly 1 where the block left the row's max as it was: the
        # usual case once a row has seen a few blocks. A warp whose 16 rows all kept their max skips the rescale
        # (its FMULs sit between the V stage's wait and the P·V issue); the vote keeps the branch warp-uniform.
        if cute.arch.vote_any_sync(st[F] * st[F + 1] < ACC_DTYPE(1.0)):
            for r in cutlass.range_constexpr(2):
                factor = st[F + r]
                for nb in cutlass.range_constexpr(n_o // 4):
                    for c0 in cutlass.range_constexpr(2):
                        acc[c0 + 2 * r + 4 * nb] = acc[c0 + 2 * r + 4 * nb] * factor
        mma = pv_mma(geo)
        _, t = consumer_thread()
        thr = mma.get_slice(t)
        _, _, v_layout = smem_layouts(geo)
        s_v = swizzled(stage_info.context.smem_base.data_ptr(), self._alloc.offset, v_layout)
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
        """Wait for the P·V group: O is final for the block and the V stage is read.

        With overlap this wait follows the block's softmax, so the P·V GEMM runs under it. ptxas schedules within
        a basic block and moved the wait to the top of the softmax's block (so it could pack P between the
        exp2s): every exp2 then waited for the P·V GEMM, and that wait was the consumers' largest stall on the
        source page of Nsight Compute. With ``fence_pv_wait`` :func:`block_boundary` ends the block here, so the
        wait stays after the softmax (the scenario sets it where that was measured faster).
        """
        if cutlass.const_expr(self.fence_pv_wait):
            block_boundary(cute.size(self.g_v, mode=[1]))
        warpgroup.wait_group(0)


@cute.jit
def block_boundary(length: cutlass.Int32) -> None:
    """End the basic block here for ptxas's scheduler: a branch around a ``nanosleep`` that never runs, taken
    only for a sequence ``length`` the host refuses to launch (over :data:`MAX_SEQLEN`). The compilers cannot
    prove it false (they know a tensor extent is not negative, so ``length < 0`` folded away); on the GPU it
    costs a compare and a branch not taken."""
    if length > MAX_SEQLEN:
        nvvm.nanosleep(cutlass.Int32(0).ir_value())


__all__ = ["ExtraKvBlockTask", "KStages", "KvBlocksTask", "QkvGlobal", "VStages"]
