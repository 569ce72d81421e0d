"""The Hopper GEMM's mainloop resources, with their kernel bodies: A and B in global memory, the A/B ring.

Data flows ``GlobalOperands`` (A and B in global memory) -> ``SmemOperands``
(a ring of A/B stages filled by TMA, read by WGMMA) -> an epilogue resource of
:mod:`.gemm_epilogue` (C, written through shared memory by TMA stores). The
fp32 accumulator is a task-local variable of ``SmemOperands``: ``clear``
makes it, each ``mma`` adds one k-block to it, the epilogue steps read it.

WGMMA reads its shared-memory operands asynchronously: ``mma`` issues the
k-block's WGMMAs, commits them as one group and waits until at most
``in_flight`` groups are outstanding. With ``in_flight=1`` the stage read by
the *previous* k-block is complete when ``mma`` returns, so the schedule may
release that one, not the current one (see ``ts_explore.analysis.async_reads``).

The techniques read their own parts here: a cluster's load brings its slice
of the shared operand (:func:`.gemm_cluster.load_split`) and multicasts it;
ping-pong's consumers walk a two-tile work unit (``locate_in_unit``, ``mma``'s
``tile``); fp8 changes the element type (:func:`in_dtype`) and so the K of a stage.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, warpgroup
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    TaskLocalVariable,
    consumer_work,
    producer_work,
)
from cutlass.tensor_utils import LayoutEnum

from .gemm_cluster import load_pieces, load_split, multicast_mask
from .gemm_geometry import LOAD_WARPS, WARPGROUP_THREADS, DType, Geometry


IN_DTYPE = cutlass.BFloat16  # bf16 inputs; :func:`in_dtype` gives a geometry's own


ACC_DTYPE = cutlass.Float32


OUT_DTYPE = cutlass.BFloat16


ROW_MAJOR = LayoutEnum.ROW_MAJOR  # A (M x K), B (N x K) and C (M x N) all have unit stride in their last mode


def in_dtype(geo: Geometry) -> Any:
    """The DSL type of A's and B's elements (bf16, or float8 e4m3)."""
    return cutlass.Float8E4M3FN if geo.dtype is DType.FP8 else IN_DTYPE


def tiled_mma(geo: Geometry) -> Any:
    """One 64 x tile_n WGMMA atom per consumer warpgroup, stacked along M (fp8 WGMMA reads only K-major A and B,
    as ours are)."""
    return sm90.make_trivial_tiled_mma(in_dtype(geo), in_dtype(geo), OperandMajorMode.K, OperandMajorMode.K,
                                       ACC_DTYPE, (geo.consumer_wgs, 1, 1), tiler_mn=(64, geo.tile_n))


def smem_layouts(geo: Geometry) -> tuple[Any, Any, Any]:
    """Staged, 128-byte-swizzled layouts of A, B and the epilogue buffers."""
    mnk = (geo.tile_m, geo.tile_n, geo.tile_k)
    a = sm90.make_smem_layout_a(ROW_MAJOR, mnk, in_dtype(geo), geo.stages)
    b = sm90.make_smem_layout_b(ROW_MAJOR, mnk, in_dtype(geo), geo.stages)
    c = sm90.make_smem_layout_epi(OUT_DTYPE, ROW_MAJOR, (geo.tile_m, geo.epilogue_n), geo.epilogue_buffers)
    return a, b, c


def slice_layout(geo: Geometry, rows: int) -> Any:
    """One stage's swizzled layout of ``rows`` rows of A or B (one load warp's TMA box), built unstaged.

    Slicing the stage mode off a staged layout aborts the DSL when the rows are an odd number of 8-row swizzle
    atoms (24 rows: a 192-wide B split over a 2x1 cluster's eight load warps), so the box is tiled directly.
    """
    atom_kind = sm90.get_smem_layout_atom(ROW_MAJOR, in_dtype(geo), geo.tile_k)
    return cute.tile_to_shape(sm90.make_smem_layout_atom(atom_kind, in_dtype(geo)), (rows, geo.tile_k), order=(0, 1))


def swizzled(base: Any, offset: int, layout: Any, dtype: Any = IN_DTYPE) -> Any:
    """A shared-memory tensor of ``dtype`` at ``base + offset`` bytes with a swizzled (composed) layout."""
    ptr = cute.make_ptr(dtype, base + offset, mem_space=cute.AddressSpace.smem, assumed_align=1024)
    return cute.make_tensor(cute.recast_ptr(ptr, layout.inner, dtype=dtype), layout.outer)


def accumulator_shape(geo: Geometry) -> Any:
    """Per-thread accumulator fragment shape ``(MMA, MMA_M, MMA_N)``."""
    return tiled_mma(geo).partition_shape_C((geo.tile_m, geo.tile_n))


@dataclass(kw_only=True)
class GlobalOperands(MemoryResource):
    """A and B in global memory: names the tile and k-block the load task fetches next."""

    swap_mn: cutlass.Constexpr[bool] = False  # a grid without a queue walks N along x
    k_blocks: Any = None  # ping-pong: k-blocks per tile (a kernel argument), to split a unit's k-loop
    m_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    n_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    k_block: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.m_block = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs="tile row")
        self.n_block = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs="tile column")
        self.k_block = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0), docs="k-block")

    @consumer_work(returns=(m_block, n_block, k_block))
    @cute.jit
    def locate(self, stage_info: StageInfo) -> tuple:
        tile = stage_info.work_tile.tile_idx
        m, n = cutlass.Int32(tile[0]), cutlass.Int32(tile[1])
        if cutlass.const_expr(self.swap_mn):
            m, n = cutlass.Int32(tile[1]), cutlass.Int32(tile[0])
        return m, n, cutlass.Int32(stage_info.loop_offset)

    @consumer_work(returns=(m_block, n_block, k_block))
    @cute.jit
    def locate_in_unit(self, stage_info: StageInfo) -> tuple:
        """Ping-pong: the work unit covers two tiles stacked along M and its k-loop runs ``2 * k_blocks``
        iterations; iteration i is k-block ``i mod k_blocks`` of the upper tile (i < k_blocks) or the lower one."""
        unit = stage_info.work_tile.tile_idx
        m, n = cutlass.Int32(unit[0]), cutlass.Int32(unit[1])
        if cutlass.const_expr(self.swap_mn):
            m, n = cutlass.Int32(unit[1]), cutlass.Int32(unit[0])
        i = cutlass.Int32(stage_info.loop_offset)
        lower = cutlass.Int32(i >= self.k_blocks)
        return m * 2 + lower, n, i - lower * self.k_blocks


@dataclass(kw_only=True)
class SmemOperands(MemoryResource):
    """The ring of A/B stages: TMA fills a stage, WGMMA reads it into the accumulator."""

    tma_a: Any = None  # TMA atoms and coordinate tensors built by the host; None on the CPU
    tma_b: Any = None
    g_a: Any = None
    g_b: Any = None
    geo: cutlass.Constexpr = None
    in_flight: cutlass.Constexpr[int] = 1  # WGMMA groups left outstanding when ``mma`` returns
    consumer_thread0: cutlass.Constexpr[int] = LOAD_WARPS * 32
    load_warps: cutlass.Constexpr[int] = LOAD_WARPS  # warps of the task that fills this ring
    k_blocks: Any = None  # ping-pong: k-blocks per tile (a kernel argument); see ``mma``'s ``tile``
    acc: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    _alloc_a: cutlass.Constexpr = field(init=False, default=None)
    _alloc_b: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        count = self.geo.accumulators_per_thread
        self.acc = TaskLocalVariable(dtype=cute.TensorSSA,
                                     default_factory=lambda: cute.full((count,), 0.0, ACC_DTYPE),
                                     docs="this thread's fp32 accumulators of the output tile (registers)")
        self._alloc_a = SmemAllocation("a_stages", self.geo.stages * self.geo.a_stage_bytes, alignment=1024)
        self._alloc_b = SmemAllocation("b_stages", self.geo.stages * self.geo.b_stage_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc_a, self._alloc_b]

    @cute.jit
    def _stages(self, stage_info: StageInfo) -> tuple:
        base = stage_info.context.smem_base.data_ptr()
        a, b, _ = smem_layouts(self.geo)
        return (swizzled(base, self._alloc_a.offset, a, in_dtype(self.geo)),
                swizzled(base, self._alloc_b.offset, b, in_dtype(self.geo)))

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, m_block: cutlass.Int32, n_block: cutlass.Int32,
             k_block: cutlass.Int32) -> None:
        """Each load warp brings its slice of A's and B's rows into the acquired stage.

        The operand a cluster's CTAs share (B in 2x1, A in 1x2) is cut into
        ``cluster size x`` slices per CTA (:func:`.gemm_cluster.load_pieces`):
        each CTA brings its own share and multicasts it to both, so each CTA's
        stage receives the whole tile (the stage's barrier counts its bytes either way).
        A fitted tile width may leave a warp without a slice of B (:func:`.gemm_cluster.load_split`).
        """
        s_a, s_b = self._stages(stage_info)
        (used_a, rows_a), (used_b, rows_b) = load_split(self.geo, self.load_warps)
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % self.load_warps
        bar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr(), mem_space=cute.AddressSpace.smem,
                            assumed_align=8)
        piece_a, piece_b = load_pieces(self.geo, warp, self.load_warps)  # this warp's slice of A and of B
        # A: with a 1x2 cluster both CTAs need the same A tile; each brings half and multicasts it.
        self._slice(self.tma_a, self.g_a, s_a, used_a, rows_a, m_block * used_a * self.geo.cluster_n + piece_a,
                    piece_a, warp, k_block, bar, stage_info.stage_idx, self.geo.cluster_n > 1)
        # B: with a 2x1 cluster both CTAs need the same B tile; each brings half and multicasts it.
        self._slice(self.tma_b, self.g_b, s_b, used_b, rows_b, n_block * used_b * self.geo.cluster_m + piece_b,
                    piece_b, warp, k_block, bar, stage_info.stage_idx, self.geo.cluster_m > 1)

    @cute.jit
    def _slice(self, tma: Any, g: Any, staged: Any, used: cutlass.Constexpr[int], rows: cutlass.Constexpr[int],
               row_block: Any, piece: Any, warp: Any, k_block: Any, bar: Any, stage: Any,
               multicast: cutlass.Constexpr[bool]) -> None:
        """This load warp's slice of one operand, where it brings one: every warp when the operand splits over all
        of them (no branch), else the first ``used`` warps (:func:`.gemm_cluster.load_split`)."""
        if cutlass.const_expr(used == self.load_warps):
            self._bring(tma, g, staged, rows, row_block, piece, k_block, bar, stage, multicast)
        else:
            if warp < used:
                self._bring(tma, g, staged, rows, row_block, piece, k_block, bar, stage, multicast)

    @cute.jit
    def _bring(self, tma: Any, g: Any, staged: Any, rows: cutlass.Constexpr[int], row_block: Any, piece: Any,
               k_block: Any, bar: Any, stage: Any, multicast: cutlass.Constexpr[bool]) -> None:
        """TMA-load slice ``row_block`` (``rows`` rows) of k-block ``k_block`` of one operand into slice ``piece`` of
        its stage ``stage`` (multicast to every CTA of the cluster when the cluster shares this operand)."""
        tile_k = self.geo.tile_k
        dst = cute.flat_divide(staged[(None, None, stage)], (rows, tile_k))[(None, None, piece, 0)]
        src = cute.local_tile(g, (rows, tile_k), (row_block, k_block))
        t_s, t_g = cpasync.tma_partition(tma, 0, cute.make_layout(1), cute.group_modes(dst, 0, 2),
                                         cute.group_modes(src, 0, 2))
        if cutlass.const_expr(multicast):
            cute.copy(tma, t_g, t_s, tma_bar_ptr=bar, mcast_mask=multicast_mask(self.geo))
        else:
            cute.copy(tma, t_g, t_s, tma_bar_ptr=bar)

    @consumer_work(returns=acc, work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def clear(self, stage_info: StageInfo) -> cute.TensorSSA:
        """Zero accumulators for a new output tile."""
        return cute.full((self.geo.accumulators_per_thread,), 0.0, ACC_DTYPE)

    @consumer_work(returns=acc)
    @cute.jit
    def mma(self, stage_info: StageInfo, acc: cute.TensorSSA, *, tile: cutlass.Constexpr[int] = -1) -> cute.TensorSSA:
        """Issue this stage's WGMMAs (4 x k16 bf16, or 4 x k32 fp8) and wait until ``in_flight`` groups remain.

        Ping-pong (``tile`` 0 or 1): both consumers step through every stage of a
        work unit's ``2 * k_blocks``; WGMMAs are issued only on the stages of tile
        ``tile`` (see :meth:`_issue_own_tile`), and at most ``in_flight`` groups
        are outstanding on return on every iteration, so the lagged release stays correct.
        """
        mma_op = tiled_mma(self.geo)
        s_a, s_b = self._stages(stage_info)
        # The warpgroup's place in the tiled MMA (a ping-pong consumer is a tiled MMA of its own: always 0).
        wg = cute.arch.make_warp_uniform((cute.arch.thread_idx()[0] - self.consumer_thread0) // WARPGROUP_THREADS
                                         % self.geo.consumer_wgs)
        thr = mma_op.get_slice(wg * WARPGROUP_THREADS)
        frag_a = mma_op.make_fragment_A(thr.partition_A(s_a))
        frag_b = mma_op.make_fragment_B(thr.partition_B(s_b))
        flat = cute.make_rmem_tensor((self.geo.accumulators_per_thread,), ACC_DTYPE)
        flat.store(acc)
        frag_c = cute.make_tensor(flat.iterator, cute.make_layout(accumulator_shape(self.geo)))
        mma_op.set(warpgroup.Field.ACCUMULATE, True)
        if cutlass.const_expr(tile < 0):
            self._issue_and_commit(mma_op, frag_a, frag_b, frag_c, stage_info.stage_idx)
        else:
            self._issue_own_tile(stage_info, tile, mma_op, frag_a, frag_b, frag_c)
        return flat.load()

    @cute.jit
    def _issue_own_tile(self, stage_info: StageInfo, tile: cutlass.Constexpr[int], mma_op: Any, frag_a: Any,
                        frag_b: Any, frag_c: Any) -> None:
        """Ping-pong: this stage's WGMMAs, committed and waited for, only if it belongs to consumer ``tile``'s tile
        of the work unit (tile 0, the upper: the unit's first ``k_blocks`` iterations; tile 1, the lower: the
        rest); on the other tile's stages only a wait for every group.

        The commit and the wait sit inside the branch, after the last WGMMA. With the commit after the branch,
        ptxas closed the group at the branch's end and the commit became a second, empty group of its own
        (an injected ``warpgroup.arrive`` and a null ``HGMMA.64x8x16``, C7519), so "one group in flight" meant
        the empty one: every k-block's WGMMAs ran to completion before the next k-block's were issued. The
        other tile's stages wait for all groups: the first of them frees the previous (own) stage one k-block
        late, whose WGMMAs must have finished reading it.
        """
        i = cutlass.Int32(stage_info.loop_offset)
        own = i < self.k_blocks if cutlass.const_expr(tile == 0) else i >= self.k_blocks
        if own:
            self._issue_and_commit(mma_op, frag_a, frag_b, frag_c, stage_info.stage_idx)
        else:
            warpgroup.wait_group(0)

    @cute.jit
    def _issue_and_commit(self, mma_op: Any, frag_a: Any, frag_b: Any, frag_c: Any, stage: cutlass.Int32) -> None:
        """The k-block's WGMMAs on stage ``stage``, accumulating into ``frag_c``, committed as one group; returns
        once at most ``in_flight`` groups are outstanding."""
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(frag_a, mode=[2])):
            cute.gemm(mma_op, frag_c, frag_a[(None, None, kb, stage)], frag_b[(None, None, kb, stage)], frag_c)
        warpgroup.commit_group()
        warpgroup.wait_group(self.in_flight)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def drain(self, stage_info: StageInfo) -> None:
        """Wait for every WGMMA of the tile: all stages are read, the accumulators final."""
        warpgroup.wait_group(0)


__all__ = [
    "ACC_DTYPE",
    "IN_DTYPE",
    "OUT_DTYPE",
    "ROW_MAJOR",
    "GlobalOperands",
    "SmemOperands",
    "accumulator_shape",
    "in_dtype",
    "slice_layout",
    "smem_layouts",
    "swizzled",
    "tiled_mma",
]
