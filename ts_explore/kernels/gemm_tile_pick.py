"""``tile='by shape'``: which tile, consumer warpgroups and cluster the Hopper GEMM takes for an (M, N, K).

One function decides (:func:`pick_tile`); the scenario's config resolves
itself through it, and the launch plan names its choice and why. Pure
arithmetic: nothing here needs a GPU or the DSL.

>>> pick_tile((1000, 1032, 520), sms=132).text
'128x128x64 with 2 consumer warpgroups in 2x1 clusters (B multicast): 72 tiles on 132 SMs (128x256x64 would make 40 \
tiles, under half of them)'
>>> pick_tile((8192, 8192, 8192), sms=132).tile.value
'128x256x64'
>>> pick_tile((8192, 8192, 8192), sms=132, pingpong=True).text
'128x192x64 ping-pong in 2 consumer warpgroups: 1376 work units of two tiles on 132 SMs'
"""

from __future__ import annotations

from dataclasses import dataclass

from .gemm_geometry import BF16_BYTES, TileShape

FILL_SHARE = 0.5  # the default tile is kept while its grid covers at least this share of the SMs
LINE_BYTES = 128  # an L2 cache line: a k-block's row of A or B (128 bytes) that starts off one straddles two


@dataclass(frozen=True)
class TilePick:
    """The tile (consumer warpgroups, cluster) :func:`pick_tile` chose for a shape, and why."""

    tile: TileShape
    consumer_wgs: int
    tiles: int  # output tiles (= CTAs of a one-tile-per-CTA grid) with this tile
    sms: int
    why: str
    cluster_m: int = 1  # 2: pairs of M-neighbours share B by TMA multicast
    pingpong: bool = False  # ``tiles`` counts work units of two tiles stacked along M

    @property
    def text(self) -> str:
        pair = " in 2x1 clusters (B multicast)" if self.cluster_m == 2 else ""
        if self.pingpong:
            return (f"{self.tile.value} ping-pong in {self.consumer_wgs} consumer warpgroups{pair}: {self.tiles} work "
                    f"unit{'s' if self.tiles != 1 else ''} of two tiles on {self.sms} SMs{self.why}")
        return (f"{self.tile.value} with {self.consumer_wgs} consumer warpgroup{'s' if self.consumer_wgs > 1 else ''}"
                f"{pair}: {self.tiles} tile{'s' if self.tiles != 1 else ''} on {self.sms} SMs{self.why}")


# (tile, consumer warpgroups) from the largest to the smallest; a 64-row tile is one warpgroup's WGMMA.
TILE_CANDIDATES = ((TileShape.T128x256, 2), (TileShape.T128x128, 2), (TileShape.T64x256, 1), (TileShape.T64x128, 1))
# Ping-pong: each of the two consumer warpgroups holds a whole tile, so at most 192 accumulators per thread;
# 128x192 (QuACK's sm_90 default) first, then the two 128-accumulator tiles.
PINGPONG_CANDIDATES = ((TileShape.T128x192, 2), (TileShape.T128x128, 2), (TileShape.T64x256, 2))


def rows_straddle_lines(k: int, elem_bytes: int = BF16_BYTES) -> bool:
    """Whether the rows of A and B (K elements of ``elem_bytes`` each) start off 128-byte lines.

    Row r of A starts r·K·b bytes in; unless K·b is a multiple of 128 most
    rows start mid-line, and every k-block's TMA read of a row (one 128-byte
    swizzle row) then touches two lines instead of one.

    >>> rows_straddle_lines(4136), rows_straddle_lines(4160), rows_straddle_lines(4160, 1)
    (True, False, True)
    """
    return (k * elem_bytes) % LINE_BYTES != 0


def straddle_note(shape: tuple[int, int, int], elem_bytes: int = BF16_BYTES) -> str | None:
    """What a launch at ``shape`` should know about its operand rows (None when they are line-aligned)."""
    k = shape[2]
    if not rows_straddle_lines(k, elem_bytes):
        return None
    aligned = -(-k * elem_bytes // LINE_BYTES) * LINE_BYTES // elem_bytes
    return (f"rows of A and B are K={k} x {elem_bytes} B = {k * elem_bytes} B, not a multiple of {LINE_BYTES}: "
            "each k-block's TMA row reads straddle two L2 lines (on an H200 this cost 20 % at 5000x3080x4136); "
            f"2x1 clusters, which multicast B, win most of it back; K={aligned} would not straddle")


def pick_tile(shape: tuple[int, int, int], sms: int, elem_bytes: int = BF16_BYTES, pingpong: bool = False) -> TilePick:
    """The tile for (M, N, K) on ``sms`` multiprocessors: the one function behind ``tile='by shape'``.

    The large 128x256 tile is kept while its grid covers at least
    :data:`FILL_SHARE` of the SMs. Below that most SMs would idle, so the
    smaller tiles compete on their modelled time: waves of CTAs
    (``ceil(tiles / sms)``) times the work of one tile (its area; K is common
    to all, so it drops out); ties go to the larger tile (fewer operand
    re-reads). The choice depends on M, N and the SM count only. A small
    grid of 128-row tiles also pairs M-neighbours in 2x1 clusters that share B
    by multicast: each SM then reads a quarter less per k-block, and reading
    is what bounds one tile's time when each SM has only one (measured on an
    H200 at 1000x1032x520: 0.74x torch.matmul without, 0.85x with).

    K enters in one place: when the rows of A and B (K elements of
    ``elem_bytes``) straddle 128-byte lines (:func:`rows_straddle_lines`), the
    large tile also runs in 2x1 clusters. Each k-block's row reads then touch
    two lines, and multicasting B halves how many rows each SM reads (measured
    on an H200 at 5000x3080x4136: 0.75x torch.matmul without, 0.89x with; at
    K=4160, whose rows are aligned, 0.94x either way).

    >>> pick_tile((64, 64, 64), 132).tile.value  # one tile either way: the smallest wastes least
    '64x128x64'
    >>> pick_tile((8192, 1024, 64), 132).tile.value
    '128x256x64'
    >>> pick_tile((5000, 3080, 4136), 132).text  # doctest: +NORMALIZE_WHITESPACE
    '128x256x64 with 2 consumer warpgroups in 2x1 clusters (B multicast): 520 tiles on 132 SMs (rows of 8272 B
    straddle 128-byte lines)'

    ``pingpong=True`` picks for ``mode=ping-pong`` by the same rule, from
    :data:`PINGPONG_CANDIDATES` and counting work units (two tiles stacked
    along M, one per consumer) instead of tiles: 128x192 while its units cover
    half the SMs, else the cheapest of the three.

    >>> pick_tile((1000, 1032, 520), 132, pingpong=True).text  # doctest: +NORMALIZE_WHITESPACE
    '128x128x64 ping-pong in 2 consumer warpgroups in 2x1 clusters (B multicast): 36 work units of two tiles on
    132 SMs (128x192x64 would make 24 work units, under half of them)'
    """
    candidates = PINGPONG_CANDIDATES if pingpong else TILE_CANDIDATES
    rows = 2 if pingpong else 1  # a ping-pong work unit stacks two tiles along M

    def count(tile: TileShape) -> int:
        tm, tn = tile.mn
        return -(-shape[0] // (rows * tm)) * -(-shape[1] // tn)

    default, wgs = candidates[0]
    big = count(default)
    unit = "work unit" if pingpong else "tile"
    if big >= FILL_SHARE * sms:
        if rows_straddle_lines(shape[2], elem_bytes):
            return TilePick(default, wgs, big, sms, f" (rows of {shape[2] * elem_bytes} B straddle {LINE_BYTES}-byte "
                            "lines)", cluster_m=2, pingpong=pingpong)
        return TilePick(default, wgs, big, sms, "", pingpong=pingpong)

    def cost(candidate: tuple[TileShape, int]) -> int:
        tm, tn = candidate[0].mn
        return -(-count(candidate[0]) // sms) * rows * tm * tn

    best = min(candidates, key=cost)  # min keeps the first (largest) of equal costs
    return TilePick(best[0], best[1], count(best[0]), sms,
                    f" ({default.value} would make {big} {unit}{'s' if big != 1 else ''}, under half of them)",
                    cluster_m=2 if best[0].mn[0] == 128 else 1, pingpong=pingpong)


__all__ = ["FILL_SHARE", "LINE_BYTES", "PINGPONG_CANDIDATES", "TILE_CANDIDATES", "TilePick", "pick_tile",
           "rows_straddle_lines",
           "straddle_note"]
