"""2x1 and 1x2 clusters of the Hopper GEMM (``cluster=``): which operand the pair shares, how its load is split,
and the launch's cluster shape.

A 2x1 cluster pairs M-neighbours, which need the same B tile: each CTA
loads half of B's rows and multicasts them to both. A 1x2 cluster pairs
N-neighbours sharing A the same way. The load body
(:meth:`~.gemm_mainloop.SmemOperands.load`) picks its slice with
:func:`load_slices`; the host function takes its TMA operations from
:func:`tma_load_ops` and launches with :func:`cluster_dims`. Each stage's
barrier then expects the releases of both CTAs' consumers
(``scenarios.gemm_shared.ab_pipeline``).
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from .gemm_geometry import LOAD_WARPS, Geometry


def cluster_dims(geo: Geometry, *, persistent: bool, along_m: bool) -> tuple[int, int, int]:
    """Launch cluster shape matching :func:`launch_grid` (a grid without a queue walking N has x and y swapped)."""
    if geo.cluster_size == 1:
        return (1, 1, 1)
    cm, cn = geo.cluster_m, geo.cluster_n
    return (cm, cn, 1) if (persistent or along_m) else (cn, cm, 1)


def load_split(geo: Geometry, warps: int = LOAD_WARPS) -> tuple[tuple[int, int], tuple[int, int]]:
    """``((warps, rows), (warps, rows))``: how many of the ``warps`` load warps bring a slice of A, and of B, per
    stage, and the rows of each slice.

    A slice is whole 8-row swizzle atoms (a TMA box that starts mid-atom would break the 128-byte swizzle). The
    operand a cluster shares is cut over its CTAs too: B over a 2x1 cluster's, A over a 1x2 cluster's. Every tile
    of ``TILE_SHAPES`` splits over all the warps, as before fitted widths existed; a fitted width splits over the
    most warps whose slices come out whole - 240 rows (30 atoms): 3 slices of 80, or 3 x 2 of 40 in a 2x1
    cluster - and the other warps bring none of that operand. The stage's barrier does not mind: the task's
    leader warp arrives once for all of them, expecting the stage's bytes (``gemm_shared.ab_pipeline``).

    >>> load_split(Geometry(128, 256, 4, 2)), load_split(Geometry(128, 240, 4, 2, cluster_m=2))
    (((4, 32), (4, 64)), ((4, 32), (3, 40)))
    >>> load_split(Geometry(64, 144, 4, 1)), load_split(Geometry(64, 144, 4, 1, cluster_m=2), warps=2)
    (((4, 16), (3, 48)), ((2, 32), (1, 72)))
    """
    def split(rows: int, share: int) -> tuple[int, int]:
        atoms = rows // 8
        used = [d for d in range(warps, 0, -1) if rows % 8 == 0 and atoms % (d * share) == 0]
        if not used:
            raise ValueError(f"{rows} rows do not cut into whole 8-row swizzle atoms over {share} CTA(s); use a "
                             "tile width that is a multiple of 16")
        return used[0], rows // (used[0] * share)

    return split(geo.tile_m, geo.cluster_n), split(geo.tile_n, geo.cluster_m)


def load_slices(geo: Geometry, warps: int = LOAD_WARPS) -> tuple[int, int]:
    """Rows of A and of B each load warp that brings one brings per stage (:func:`load_split`)."""
    (_, rows_a), (_, rows_b) = load_split(geo, warps)
    return rows_a, rows_b


def load_pieces(geo: Geometry, warp: Any, load_warps: int) -> tuple[Any, Any]:
    """Which slice of A and of B load warp ``warp`` brings (traced inside the load body).

    Without a cluster each operand is cut into as many slices as :func:`load_split` uses warps for it, one per
    warp. The operand a cluster shares (B in 2x1, A in 1x2) is cut into ``cluster size x`` that many: CTA
    ``rank`` of the cluster brings the slices ``rank * used + warp`` and multicasts them to both. A warp at or
    past an operand's count brings none of it (the load body skips it).
    """
    (used_a, _), (used_b, _) = load_split(geo, load_warps)
    piece_a, piece_b = warp, warp
    if cutlass.const_expr(geo.cluster_size > 1):
        rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        if cutlass.const_expr(geo.cluster_n > 1):
            piece_a = rank * used_a + warp
        else:
            piece_b = rank * used_b + warp
    return piece_a, piece_b


def multicast_mask(geo: Geometry) -> Any:
    """The multicast mask of a shared operand's TMA load: every CTA of the cluster."""
    return cutlass.Int16((1 << geo.cluster_size) - 1)


def tma_load_ops(geo: Geometry) -> tuple[Any, Any]:
    """The TMA copy operations for A and B: the operand the cluster shares goes by multicast (A along a 1x2
    cluster, B along a 2x1 one), the other by a plain load."""
    a_op = cpasync.CopyBulkTensorTileG2SOp() if geo.cluster_n == 1 else \
        cpasync.CopyBulkTensorTileG2SMulticastOp()
    b_op = cpasync.CopyBulkTensorTileG2SOp() if geo.cluster_m == 1 else \
        cpasync.CopyBulkTensorTileG2SMulticastOp()
    return a_op, b_op


__all__ = ["cluster_dims", "load_pieces", "load_slices", "load_split", "multicast_mask", "tma_load_ops"]
