"""The Hopper attention forward's epilogue, with its kernel body: O and the log-sum-exp of each row (``OutTile``).

Each consumer warpgroup adds its quads' row sums, divides O by them and
stores the rows before ``seqlen_q`` with their LSE, straight from registers.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

import math
from dataclasses import dataclass
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling.resources import MemoryResource, StageInfo, producer_work

from .attention_softmax import L, M, STAT_SLOTS
from .attention_tiles import ACC_DTYPE, IN_DTYPE, WG_ROWS, consumer_thread, o_count, q_tile_index, work_coord


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
        n_o = o_count(geo)
        acc = cute.make_rmem_tensor((n_o,), ACC_DTYPE)
        acc.store(acc_o)
        st = cute.make_rmem_tensor((STAT_SLOTS,), ACC_DTYPE)
        st.store(stats)
        _, t = consumer_thread()
        lane = t % 32
        tile = work_coord(stage_info.work_tile.tile_idx, self.order)
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


__all__ = ["OutTile"]
