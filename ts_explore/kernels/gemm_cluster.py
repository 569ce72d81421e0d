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


def load_slices(geo: Geometry, warps: int = LOAD_WARPS) -> tuple[int, int]:
    """Rows of A and of B each of ``warps`` load warps brings per stage (the shared operand is split over the
    cluster too: B over a 2x1 cluster's CTAs, A over a 1x2 cluster's)."""
    return geo.tile_m // (warps * geo.cluster_n), geo.tile_n // (warps * geo.cluster_m)


def load_pieces(geo: Geometry, warp: Any, load_warps: int) -> tuple[Any, Any]:
    """Which slice of A and of B load warp ``warp`` brings (traced inside the load body).

    Without a cluster each operand is cut into ``load_warps`` slices, one per
    warp. The operand a cluster shares (B in 2x1, A in 1x2) is cut into
    ``cluster size x load warps`` slices: CTA ``rank`` of the cluster brings
    the slices ``rank * load_warps + warp`` and multicasts them to both.
    """
    piece_a, piece_b = warp, warp
    if cutlass.const_expr(geo.cluster_size > 1):
        rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        if cutlass.const_expr(geo.cluster_n > 1):
            piece_a = rank * load_warps + warp
        else:
            piece_b = rank * load_warps + warp
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


__all__ = ["cluster_dims", "load_pieces", "load_slices", "multicast_mask", "tma_load_ops"]
