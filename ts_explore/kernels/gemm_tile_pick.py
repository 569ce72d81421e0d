"""``tile='by shape'``: which tile, consumer warpgroups and cluster the Hopper GEMM takes for an (M, N, K).

One function decides (:func:`pick_tile`); the scenario's config resolves
itself through it, and the launch plan names its choice and why. Pure
arithmetic: nothing here needs a GPU or the DSL.

>>> pick_tile((1000, 1032, 520), sms=132).text  # doctest: +NORMALIZE_WHITESPACE
'64x144x64 (64x256x64 narrowed to fit N) with 1 consumer warpgroup in 2x1 clusters (B multicast): 128 tiles on 132
SMs (128x256x64 would make 40 tiles, under half of them; N=1032 in 8 columns of 144 fills one wave)'
>>> pick_tile((8192, 8192, 8192), sms=132).tile.value
'128x256x64'
>>> pick_tile((8192, 8192, 8192), sms=132, pingpong=True).text
'128x192x64 ping-pong in 2 consumer warpgroups: 1376 work units of two tiles on 132 SMs'
"""

from __future__ import annotations

from dataclasses import dataclass

from .gemm_geometry import BF16_BYTES, TileShape

FILL_SHARE = 0.5  # the default tile is kept while its grid covers at least this share of the SMs
FIT_STEP = 16  # a fitted width is whole 16-column epilogue parts, and B halves of whole 8-row atoms in a 2x1 cluster
FIT_RANGE = (128, 256)  # fitted widths lie strictly between: they trim N's tail, never make a thin tile
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
    tile_n: int = 0  # a fitted width the tile is narrowed to (0: the tile's own)

    @property
    def name(self) -> str:
        """``128x256x64``, or a narrowed one: ``128x240x64 (128x256x64 narrowed to fit N)``."""
        if not self.tile_n:
            return self.tile.value
        k = self.tile.value.rsplit("x", 1)[1]
        return f"{self.tile.mn[0]}x{self.tile_n}x{k} ({self.tile.value} narrowed to fit N)"

    @property
    def text(self) -> str:
        pair = " in 2x1 clusters (B multicast)" if self.cluster_m == 2 else ""
        if self.pingpong:
            return (f"{self.name} ping-pong in {self.consumer_wgs} consumer warpgroups{pair}: {self.tiles} work "
                    f"unit{'s' if self.tiles != 1 else ''} of two tiles on {self.sms} SMs{self.why}")
        return (f"{self.name} with {self.consumer_wgs} consumer warpgroup{'s' if self.consumer_wgs > 1 else ''}"
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


def fitted_width(n: int, columns: int) -> int:
    """The narrowest multiple of :data:`FIT_STEP` that covers N in ``columns`` columns of tiles.

    >>> fitted_width(3080, 13), fitted_width(1032, 8), fitted_width(4096, 16)
    (240, 144, 256)
    """
    return -(-n // (columns * FIT_STEP)) * FIT_STEP


def narrowed(n: int, width: int) -> int:
    """The fitted width for N's columns of ``width``-wide tiles: the same number of columns, the least padding
    (0 when no width inside :data:`FIT_RANGE` does better than ``width``).

    >>> narrowed(3080, 256), narrowed(4096, 256), narrowed(4104, 256), narrowed(200, 256)
    (240, 0, 0, 208)
    """
    fit = fitted_width(n, -(-n // width))
    return fit if FIT_RANGE[0] < fit < min(width, FIT_RANGE[1]) else 0


def fit_note(n: int, width: int, fit: int) -> str:
    """What narrowing ``width``-wide tiles to ``fit`` does to N's padding."""
    columns = -(-n // fit)

    def pad(w: int) -> str:
        return f"{100 * (columns * w - n) / (columns * w):.1f} %"

    return f"N={n} in {columns} columns of {fit}, not {width}: {pad(fit)} padding, not {pad(width)}"


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

    **Fitted widths** (cooperative tiles only) cut what N's tail wastes. A
    tile's last column holds ``columns x width - N`` columns of padding that
    WGMMA multiplies all the same; the large tile is narrowed to the least
    multiple of :data:`FIT_STEP` that covers N in as many columns
    (:func:`narrowed`): same grid, less work per tile. On a small grid the
    64- and 128-row tiles also compete at every fitted width inside
    :data:`FIT_RANGE`, by the same cost, counting M-neighbour pairs whole; a
    fitted width wins only where it is cheaper than every standard tile: it
    lets more SMs work at once (1000x1032: 128 tiles of 64x144 instead of 72
    of 128x128, each about half the work). A fitted pick runs in 2x1
    clusters: its B is most of a stage, so the multicast halves most of what
    each SM reads.

    K enters in one place: when the rows of A and B (K elements of
    ``elem_bytes``) straddle 128-byte lines (:func:`rows_straddle_lines`), the
    large tile also runs in 2x1 clusters. Each k-block's row reads then touch
    two lines, and multicasting B halves how many rows each SM reads (measured
    on an H200 at 5000x3080x4136: 0.75x torch.matmul without, 0.89x with; at
    K=4160, whose rows are aligned, 0.94x either way).

    >>> pick_tile((64, 64, 64), 132).tile.value  # one tile either way: the smallest wastes least
    '64x128x64'
    >>> pick_tile((8192, 1024, 64), 132).tile.value, pick_tile((4096, 6144, 4096), 132).text
    ('128x256x64', '128x256x64 with 2 consumer warpgroups: 768 tiles on 132 SMs')
    >>> pick_tile((5000, 3080, 4136), 132).text  # doctest: +NORMALIZE_WHITESPACE
    '128x240x64 (128x256x64 narrowed to fit N) with 2 consumer warpgroups in 2x1 clusters (B multicast): 520 tiles
    on 132 SMs (N=3080 in 13 columns of 240, not 256: 1.3 % padding, not 7.5 %; rows of 8272 B straddle 128-byte
    lines)'

    ``pingpong=True`` picks for ``mode=ping-pong`` by the same rule, from
    :data:`PINGPONG_CANDIDATES` and counting work units (two tiles stacked
    along M, one per consumer) instead of tiles: 128x192 while its units cover
    half the SMs, else the cheapest of the three; no fitted widths (each
    consumer's two epilogue buffers take the parts in pairs).

    >>> pick_tile((1000, 1032, 520), 132, pingpong=True).text  # doctest: +NORMALIZE_WHITESPACE
    '128x128x64 ping-pong in 2 consumer warpgroups in 2x1 clusters (B multicast): 36 work units of two tiles on
    132 SMs (128x192x64 would make 24 work units, under half of them)'
    """
    candidates = PINGPONG_CANDIDATES if pingpong else TILE_CANDIDATES
    rows = 2 if pingpong else 1  # a ping-pong work unit stacks two tiles along M
    m, n = shape[0], shape[1]

    def count(tile: TileShape, width: int = 0, pairs: bool = False) -> int:
        tm, tn = tile.mn
        along_m = -(-m // (rows * tm))
        return (along_m + (along_m % 2 if pairs else 0)) * -(-n // (width or tn))

    default, wgs = candidates[0]
    big = count(default)
    unit = "work unit" if pingpong else "tile"
    if big >= FILL_SHARE * sms:
        fit = 0 if pingpong else narrowed(n, default.mn[1])
        why = [fit_note(n, default.mn[1], fit)] if fit else []
        straddle = rows_straddle_lines(shape[2], elem_bytes)
        if straddle:
            why.append(f"rows of {shape[2] * elem_bytes} B straddle {LINE_BYTES}-byte lines")
        return TilePick(default, wgs, big, sms, f" ({'; '.join(why)})" if why else "", cluster_m=2 if straddle else 1,
                        pingpong=pingpong, tile_n=fit)

    options = [(tile, w, 0) for tile, w in candidates] + ([] if pingpong else fitted_options(n))

    def cost(option: tuple[TileShape, int, int]) -> int:
        tile, _, width = option
        return -(-count(tile, width, pairs=width > 0) // sms) * rows * tile.mn[0] * (width or tile.mn[1])

    best, best_wgs, fit = min(options, key=cost)  # min keeps the first (a standard tile, the largest) of equal costs
    why = f" ({default.value} would make {big} {unit}{'s' if big != 1 else ''}, under half of them"
    if fit:
        one_wave = count(best, fit, pairs=True) <= sms
        why += f"; N={n} in {-(-n // fit)} columns of {fit}{' fills one wave' if one_wave else ''}"
    return TilePick(best, best_wgs, count(best, fit), sms, why + ")",
                    cluster_m=2 if best.mn[0] == 128 or fit else 1, pingpong=pingpong, tile_n=fit)


def fitted_options(n: int) -> list[tuple[TileShape, int, int]]:
    """``(tile, consumer warpgroups, fitted width)`` of the 128- and 64-row tiles at every fitted width inside
    :data:`FIT_RANGE` (narrowed from the 256-wide tile of each row count).

    >>> sorted({w for _, _, w in fitted_options(1032)})
    [144, 160, 176, 208]
    """
    widths = sorted({fitted_width(n, c) for c in range(max(1, n // FIT_RANGE[1]), n // FIT_RANGE[0] + 2)},
                    reverse=True)
    return [(tile, wgs, w) for tile, wgs in ((TileShape.T128x256, 2), (TileShape.T64x256, 1)) for w in widths
            if FIT_RANGE[0] < w < FIT_RANGE[1]]


__all__ = ["FILL_SHARE", "FIT_RANGE", "FIT_STEP", "LINE_BYTES", "PINGPONG_CANDIDATES", "TILE_CANDIDATES", "TilePick",
           "fit_note", "fitted_options", "fitted_width", "narrowed", "pick_tile", "rows_straddle_lines",
           "straddle_note"]
