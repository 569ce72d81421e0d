"""Accumulators out through shared memory with stmatrix: the copy laid over a WGMMA's accumulators, and where each
value of a retiled thread's accumulators sits. Shared by the GEMM's epilogues (C) and the attention's (O).
"""

# No ``from __future__ import annotations`` here: the DSL reads annotations as objects.

from typing import Any

import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90
from cutlass.tensor_utils import LayoutEnum


def stmatrix_copy(mma: Any, out_dtype: Any, acc_dtype: Any) -> Any:
    """Registers -> row-major shared memory (stmatrix, 16 columns per block) laid over the tiled MMA ``mma``'s
    accumulators, converting ``acc_dtype`` values to ``out_dtype``."""
    store_atom = sm90.get_smem_store_op(LayoutEnum.ROW_MAJOR, out_dtype, acc_dtype)
    atom = cute.make_tiled_copy_C_atom(cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), out_dtype),
                                       mma)
    return cute.make_tiled_copy_S(store_atom, atom)


def source_index(v: int, nb: int, part: int, per_block: int, n_blocks: int) -> int:
    """Where value ``v`` of column block ``nb`` of part ``part`` sits in mode 0 of a thread's accumulators retiled
    for :func:`stmatrix_copy` (``((values, 16-column blocks), M blocks, 1)``): a part's ``n_blocks`` blocks (2 of
    a 32-column part, 1 of a 16-column one; all of them where the whole width is one part) follow the previous
    part's.

    >>> source_index(3, 1, 2, 8, 2), source_index(3, 0, 5, 8, 1)
    (43, 43)
    """
    return v + per_block * (part * n_blocks + nb)


__all__ = ["source_index", "stmatrix_copy"]
