"""The Hopper GEMM's tile scheduler, host side: work units, the order CTAs take them in, the grid that walks them.

The static persistent scheduler (``utils.PersistentTileSchedulerParams``)
hands out *work units*: one output tile, two stacked along M for ping-pong,
one per cluster of CTAs, in groups of ``swizzle`` columns (or rows) so that
the CTAs busy at once share operand tiles in L2. Without a queue the grid
itself is the order. These functions say, for a shape and a
:class:`~.gemm_geometry.Geometry`, how many units there are, which CTA takes
which tile and what grid to launch; the kernel's host function, the launch
plan and the tile-order drawing all ask them. Pure arithmetic.
"""

from __future__ import annotations

from .gemm_geometry import Geometry, tile_counts


def work_tile_counts(shape: tuple[int, int, int], geo: Geometry) -> tuple[int, int]:
    """Work units of the tile scheduler along M and N (ping-pong: a unit is two tiles stacked along M).

    >>> work_tile_counts((1000, 1024, 64), Geometry(128, 128, 5, 2, pingpong=True))
    (4, 8)
    """
    m, n, _ = shape
    return -(-m // geo.work_tile_m), -(-n // geo.tile_n)


def work_units(shape: tuple[int, int, int], geo: Geometry, swizzle: int = 1, along_m: bool = True) -> int:
    """Work tiles the static persistent scheduler hands out: cluster tiles, padded to whole swizzle groups.

    With ``swizzle`` S > 1 the tile columns (along M; rows along N) are
    grouped S at a time and padded to a multiple of S; a padded tile lies
    outside C, so its loads read zeros and its stores are dropped. A cluster
    takes one work tile for its CTAs (2x1: two M-neighbours, 1x2: two N-neighbours).

    >>> g = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2)
    >>> work_units((1000, 1048, 64), g), work_units((1000, 1048, 64), g, swizzle=3)
    (40, 48)
    >>> work_units((1000, 1048, 64), Geometry(128, 256, 4, 2, cluster_n=2))  # 8 x 3 pairs of N-neighbours
    24
    """
    tm, tn = work_tile_counts(shape, geo)
    mc, nc = -(-tm // geo.cluster_m), -(-tn // geo.cluster_n)
    if swizzle > 1:
        if along_m:
            nc = -(-nc // swizzle) * swizzle
        else:
            mc = -(-mc // swizzle) * swizzle
    return mc * nc


def tile_order(shape: tuple[int, int, int], geo: Geometry, swizzle: int = 1, along_m: bool = True) -> list[list[int]]:
    """The hand-out index of each output tile (rows: tiles along M, columns: along N), as the scheduler walks them.

    Plain order (``swizzle=1``) walks down M, column after column (along N:
    across N, row after row); with ``swizzle`` S it walks S columns at a time,
    row by row down M, then the next S columns (along N: S rows at a time),
    so the CTAs busy at once share fewer B (A) tiles, which stay in L2.
    Persistent CTA (cluster) ``c`` of ``C`` takes the tiles numbered
    ``c, c + C, ...``. A 2x1 cluster's two M-neighbours share one number, a
    1x2 cluster's two N-neighbours too.

    >>> tile_order((512, 1024, 64), Geometry(128, 256, 4, 2), swizzle=2)
    [[0, 1, 8, 9], [2, 3, 10, 11], [4, 5, 12, 13], [6, 7, 14, 15]]
    >>> tile_order((512, 1024, 64), Geometry(128, 256, 4, 2))
    [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    >>> tile_order((512, 1024, 64), Geometry(128, 256, 4, 2, cluster_n=2))
    [[0, 0, 4, 4], [1, 1, 5, 5], [2, 2, 6, 6], [3, 3, 7, 7]]
    """
    tm, tn = tile_counts(shape, geo)
    cm = geo.cluster_m * (2 if geo.pingpong else 1)  # tiles along M that share one hand-out number
    cn = geo.cluster_n  # tiles along N that share one
    mc, nc = -(-tm // cm), -(-tn // cn)

    def index(m: int, n: int) -> int:
        if swizzle == 1:
            return m + n * mc if along_m else n + m * nc
        if along_m:
            return m * swizzle + n % swizzle + (n // swizzle) * swizzle * mc
        return m % swizzle + (m // swizzle) * swizzle * nc + n * swizzle

    return [[index(row // cm, col // cn) for col in range(tn)] for row in range(tm)]


def launch_grid(shape: tuple[int, int, int], geo: Geometry, *, persistent: bool, along_m: bool,
                sms: int) -> tuple[int, int, int]:
    """The CUDA grid: one CTA per tile, or one persistent CTA per SM (clusters kept whole).

    Without a queue the grid's x walks the raster direction; a cluster spans
    ``cluster_m`` consecutive M tiles (or ``cluster_n`` N tiles), so that
    count is rounded up to it: the extra CTA of an odd count lies outside C
    and only loads its half of the shared tile for its partner. A persistent
    grid is ``(cluster_m, cluster_n, clusters)``, the static scheduler's shape.

    >>> pair_n = Geometry(128, 256, 4, 2, cluster_n=2)
    >>> launch_grid((1000, 1000, 64), pair_n, persistent=False, along_m=True, sms=132)
    (8, 4, 1)
    >>> launch_grid((8192, 8192, 64), pair_n, persistent=True, along_m=True, sms=132)
    (1, 2, 66)
    """
    tm, tn = work_tile_counts(shape, geo)
    cm, cn = geo.cluster_m, geo.cluster_n
    tm, tn = -(-tm // cm) * cm, -(-tn // cn) * cn
    if not persistent:
        return (tm, tn, 1) if along_m else (tn, tm, 1)
    c = geo.cluster_size
    clusters = min(tm * tn // c, max(1, sms // c))
    return (cm, cn, clusters)


__all__ = ["launch_grid", "tile_order", "work_tile_counts", "work_units"]
