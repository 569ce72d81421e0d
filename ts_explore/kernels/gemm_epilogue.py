"""The Hopper GEMM's epilogues (``epilogue=``), with their kernel bodies: how C leaves the accumulators.

Both write each ``Geometry.epilogue_n``-column part of C from registers into a
shared-memory buffer (stmatrix; fp8: times scale_a·scale_b first) and send
it with a TMA store (:class:`_CBuffers`); they differ in who does what:

- ``epilogue=inline`` (and every ping-pong consumer): :class:`OutputTile`.
  The consumer warpgroups stage each part, meet at a named barrier, and one
  of their warps issues the store; the tensor cores idle meanwhile.
- ``epilogue=handoff``: :class:`HandoffBuffers`. The buffers are a pipeline:
  the consumers stage a part and commit it, and a store task (warps 2-3)
  waits for it, stores it and releases it once the store has read it, while
  the consumers start the next tile (``scenarios.gemm_handoff`` builds the tasks).
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources'
# ``cutlass.Constexpr`` field annotations as objects, not strings.

from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.memory import SmemAllocation
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    StageInfo,
    consumer_work,
    producer_work,
)

from .gemm_geometry import LOAD_WARPS, DType
from .gemm_mainloop import ACC_DTYPE, OUT_DTYPE, accumulator_shape, smem_layouts, swizzled, tiled_mma
from .stmatrix import source_index, stmatrix_copy


EPILOGUE_BARRIER_ID = 1  # named barrier among the consumer warpgroups (0 is __syncthreads)


def store_copy(geo: Any) -> Any:
    """The register -> shared memory copy of C (stmatrix, 16 columns per block) laid over the tile's WGMMA
    accumulators."""
    return stmatrix_copy(tiled_mma(geo), OUT_DTYPE, ACC_DTYPE)


@dataclass(kw_only=True)
class _CBuffers(MemoryResource):
    """Shared-memory buffers C goes out through: the part-writing and TMA-store bodies both epilogues share."""

    tma_c: Any = None
    g_c: Any = None
    geo: cutlass.Constexpr = None
    swap_mn: cutlass.Constexpr[bool] = False
    consumer_thread0: cutlass.Constexpr[int] = LOAD_WARPS * 32  # first thread of the warpgroups holding C
    scale: Any = None  # fp8: scale_a·scale_b (a kernel argument), applied before the bf16 conversion

    @cute.jit
    def _buffers(self, stage_info: StageInfo) -> Any:
        _, _, c = smem_layouts(self.geo)
        return swizzled(stage_info.context.smem_base.data_ptr(), self._alloc_c.offset, c)

    @cute.jit
    def _write(self, stage_info: StageInfo, acc: cute.TensorSSA, part: cutlass.Constexpr[int],
               buffer: Any, thread0: cutlass.Constexpr[int]) -> None:
        """Convert part ``part`` of this thread's accumulators to bf16 (fp8: times the scales), write it to
        buffer ``buffer`` with stmatrix, and fence so that a TMA store (async proxy) may read it (``thread0``:
        the first thread of the warpgroup(s) holding the accumulators)."""
        buffers = self._buffers(stage_info)
        r2s = store_copy(self.geo)
        thr = r2s.get_slice(cute.arch.thread_idx()[0] - thread0)
        dst = thr.partition_D(buffers)
        flat = cute.make_rmem_tensor((self.geo.accumulators_per_thread,), ACC_DTYPE)
        flat.store(acc)
        src = r2s.retile(cute.make_tensor(flat.iterator, cute.make_layout(accumulator_shape(self.geo))))
        # src is ((values, 16-column blocks), M blocks, 1); this part takes its column blocks for every M block.
        piece = cute.make_rmem_tensor(cute.shape(thr.partition_S(buffers))[:3], ACC_DTYPE)
        per_block = cute.size(piece, mode=[0])
        m_blocks = cute.size(piece, mode=[1])
        n_blocks = cute.size(piece, mode=[2])
        for v in cutlass.range_constexpr(per_block):
            for mb in cutlass.range_constexpr(m_blocks):
                for nb in cutlass.range_constexpr(n_blocks):
                    piece[(v, mb, nb)] = src[(source_index(v, nb, part, per_block, n_blocks), mb, 0)]
        out = cute.make_rmem_tensor(piece.shape, OUT_DTYPE)
        if cutlass.const_expr(self.geo.dtype is DType.FP8):
            out.store((piece.load() * self.scale).to(OUT_DTYPE))
        else:
            out.store(piece.load().to(OUT_DTYPE))
        cute.copy(r2s, out, dst[(None, None, None, buffer)])
        # The TMA store reads this buffer through the async proxy.
        cute.arch.fence_proxy("async.shared", space="cta")

    @cute.jit
    def _send(self, stage_info: StageInfo, part: Any, buffer: Any, unit_tile: cutlass.Constexpr[int]) -> None:
        """TMA-store buffer ``buffer`` to part ``part`` of the work tile's C (TMA clips the M and N tails) and
        commit it as one bulk group (the caller's single issuing warp calls this)."""
        tile = stage_info.work_tile.tile_idx
        m, n = tile[0], tile[1]
        if cutlass.const_expr(self.swap_mn):
            m, n = tile[1], tile[0]
        if cutlass.const_expr(unit_tile >= 0):
            m = m * 2 + unit_tile
        buffers = self._buffers(stage_info)
        g_tile = cute.local_tile(self.g_c, (self.geo.tile_m, self.geo.epilogue_n),
                                 (m, n * self.geo.epilogue_parts + part))
        t_s, t_g = cpasync.tma_partition(self.tma_c, 0, cute.make_layout(1),
                                         cute.group_modes(buffers[(None, None, buffer)], 0, 2),
                                         cute.group_modes(g_tile, 0, 2))
        cute.copy(self.tma_c, t_s, t_g)
        cute.arch.cp_async_bulk_commit_group()


@dataclass(kw_only=True)
class OutputTile(_CBuffers):
    """C in global memory, written part by part by the consumers: registers -> shared memory -> TMA store."""

    barrier_id: cutlass.Constexpr[int] = EPILOGUE_BARRIER_ID  # named barrier of this tile's warpgroup(s)
    unit_tile: cutlass.Constexpr[int] = -1  # ping-pong: which tile (0, 1) of the two-tile work unit this is
    _alloc_c: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        suffix = "" if self.unit_tile < 0 else str(self.unit_tile)
        self._alloc_c = SmemAllocation(f"c_buffers{suffix}", self.geo.epilogue_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc_c]

    @cute.jit
    def _sync(self) -> None:
        cute.arch.barrier(barrier_id=self.barrier_id, number_of_threads=self.geo.consumer_threads)

    @producer_work
    @cute.jit
    def stage(self, stage_info: StageInfo, acc: cute.TensorSSA, *, part: cutlass.Constexpr[int]) -> None:
        """Convert part ``part`` of the accumulators to bf16 (fp8: times the scales) and write it to its buffer."""
        self._write(stage_info, acc, part, part % self.geo.epilogue_buffers, self.consumer_thread0)
        self._sync()

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, *, part: cutlass.Constexpr[int]) -> None:
        """One warp sends the buffer to C (TMA clips the M and N tails), then frees the oldest buffer."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == self.consumer_thread0 // 32:
            self._send(stage_info, part, part % self.geo.epilogue_buffers, self.unit_tile)
            cute.arch.cp_async_bulk_wait_group(self.geo.epilogue_buffers - 1, read=True)
        self._sync()

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def flush(self, stage_info: StageInfo) -> None:
        """Before the CTA exits: every TMA store of C has completed."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == self.consumer_thread0 // 32:
            cute.arch.cp_async_bulk_wait_group(0)


@dataclass(kw_only=True)
class HandoffBuffers(_CBuffers):
    """The epilogue buffers as a pipeline: the consumers fill one part of C per stage, a store task sends it.

    Producer side (every consumer thread): acquire a free buffer, ``stage`` a
    part of the accumulators into it, commit (each thread's commit is an
    arrival, so the buffer is full once all consumer threads wrote and fenced;
    no named barrier). Consumer side (the store task): wait, ``store`` (one
    warp issues the TMA store and waits until at most ``in_flight`` stores
    are still reading shared memory), release a buffer only once its store
    has read it; ``drain`` waits for every read, ``flush`` for every write.
    """

    store_warp: cutlass.Constexpr[int] = 2  # the one warp of the store task that issues TMA stores
    in_flight: cutlass.Constexpr[int] = 1  # TMA stores left reading shared memory when ``store`` returns
    _alloc_c: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._alloc_c = SmemAllocation("c_buffers", self.geo.epilogue_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc_c]

    @producer_work
    @cute.jit
    def stage(self, stage_info: StageInfo, acc: cute.TensorSSA, *, part: cutlass.Constexpr[int]) -> None:
        """Write part ``part`` of the accumulators into the acquired buffer (the commit hands it over)."""
        self._write(stage_info, acc, part, stage_info.stage_idx, self.consumer_thread0)

    @consumer_work
    @cute.jit
    def store(self, stage_info: StageInfo) -> None:
        """Send the waited-for buffer to its part of the tile's C (the part is the store task's k-loop offset);
        return once at most ``in_flight`` stores still read shared memory (so the buffer before it may be
        released)."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == self.store_warp:
            self._send(stage_info, cutlass.Int32(stage_info.loop_offset), stage_info.stage_idx, -1)
            cute.arch.cp_async_bulk_wait_group(self.in_flight, read=True)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def drain(self, stage_info: StageInfo) -> None:
        """Wait until every TMA store has read its buffer (all of them may be released)."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == self.store_warp:
            cute.arch.cp_async_bulk_wait_group(0, read=True)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def flush(self, stage_info: StageInfo) -> None:
        """Before the CTA exits: every TMA store of C has completed (written global memory)."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == self.store_warp:
            cute.arch.cp_async_bulk_wait_group(0)


@dataclass(kw_only=True)
class TurnBuffers(_CBuffers):
    """One set of epilogue buffers the two ping-pong consumers take in turns, as a one-stage pipeline.

    The stage *is* the turn: mma0 (the producer, threads from
    ``consumer_thread0``) acquires it, writes and stores its tile's parts,
    waits until its stores have read the buffers (``drain0``) and commits;
    mma1 (the consumer, threads from ``thread0_1``) waits for it, does the
    same with ``*1`` steps and releases it, which hands the buffers back to
    mma0 for its next tile. Each side syncs its own warpgroup at its named
    barrier (``barrier_id``, ``barrier_id + 1``) between writing a part and
    storing it, and rotates the part through the buffers as ``OutputTile`` does.
    """

    barrier_id: cutlass.Constexpr[int] = EPILOGUE_BARRIER_ID  # mma0's; mma1's is the next one
    thread0_1: cutlass.Constexpr[int] = 2 * LOAD_WARPS * 32  # first thread of mma1 (warps 8-11)
    _alloc_c: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._alloc_c = SmemAllocation("c_buffers", self.geo.epilogue_bytes, alignment=1024)

    def get_smem_requirements(self) -> list:
        return [self._alloc_c]

    @cute.jit
    def _part(self, stage_info: StageInfo, acc: cute.TensorSSA, part: cutlass.Constexpr[int],
              side: cutlass.Constexpr[int]) -> None:
        """Consumer ``side``'s part ``part``: write it, meet at the side's barrier, one warp stores it and waits
        until the buffer the next part takes has been read, meet again."""
        thread0 = self.consumer_thread0 if side == 0 else self.thread0_1
        buffer = part % self.geo.epilogue_buffers
        self._write(stage_info, acc, part, buffer, thread0)
        cute.arch.barrier(barrier_id=self.barrier_id + side, number_of_threads=self.geo.consumer_threads)
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == thread0 // 32:
            self._send(stage_info, part, buffer, side)
            cute.arch.cp_async_bulk_wait_group(self.geo.epilogue_buffers - 1, read=True)
        cute.arch.barrier(barrier_id=self.barrier_id + side, number_of_threads=self.geo.consumer_threads)

    @cute.jit
    def _wait_reads(self, side: cutlass.Constexpr[int], reads_only: cutlass.Constexpr[bool]) -> None:
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == (self.consumer_thread0 if side == 0 else self.thread0_1) // 32:
            cute.arch.cp_async_bulk_wait_group(0, read=reads_only)

    @producer_work
    @cute.jit
    def store0(self, stage_info: StageInfo, acc: cute.TensorSSA, *, part: cutlass.Constexpr[int]) -> None:
        """mma0's part ``part`` of its tile (the upper one of the unit) through the shared buffers."""
        self._part(stage_info, acc, part, 0)

    @producer_work
    @cute.jit
    def drain0(self, stage_info: StageInfo) -> None:
        """mma0's issuing warp waits until its stores have read the buffers (its commit then hands them over)."""
        self._wait_reads(0, True)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def flush0(self, stage_info: StageInfo) -> None:
        """Before the CTA exits: mma0's TMA stores of C have completed."""
        self._wait_reads(0, False)

    @consumer_work
    @cute.jit
    def store1(self, stage_info: StageInfo, acc: cute.TensorSSA, *, part: cutlass.Constexpr[int]) -> None:
        """mma1's part ``part`` of its tile (the lower one of the unit) through the shared buffers."""
        self._part(stage_info, acc, part, 1)

    @consumer_work
    @cute.jit
    def drain1(self, stage_info: StageInfo) -> None:
        """mma1's issuing warp waits until its stores have read the buffers (its release then hands them back)."""
        self._wait_reads(1, True)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def flush1(self, stage_info: StageInfo) -> None:
        """Before the CTA exits: mma1's TMA stores of C have completed."""
        self._wait_reads(1, False)


__all__ = ["EPILOGUE_BARRIER_ID", "HandoffBuffers", "OutputTile", "TurnBuffers", "source_index", "store_copy"]
