"""The Hopper GEMM's fitted tile widths (``tile_n``): a cooperative tile narrowed so that N's tail wastes less.

A tile's last column of C holds ``columns x width - N`` columns of padding
that TMA reads as zeros and WGMMA multiplies all the same. At N=3080 the
13 columns of a 256-wide tile cover 3328 columns, 7.5 % padding, in every
one of the 520 tiles' last column; 13 columns of 240 cover 3120, 1.3 %:
the same grid, each tile 1/16 less work and 1/24 fewer bytes per stage.
``tile='by shape'`` picks a fitted width where its model predicts a gain
(``kernels.gemm_tile_pick``: the large tile narrowed, or on a small grid a
64-row tile whose fitted width lets one wave hold every tile).

The schedule is the cooperative one (:mod:`.gemm_cooperative`), with two
changes of geometry and none of synchronisation:

- C goes out in 16-column parts where 32 does not divide the width
  (``Geometry.epilogue_n``: 240 in 15 parts through 3 buffers);
- B's rows are cut into slices of whole 8-row swizzle atoms over as many
  load warps as cut them evenly (``kernels.gemm_cluster.load_split``: 240
  rows in 3 slices of 80, or 3 per CTA of 40 in a 2x1 cluster), so a load
  warp may bring none of B. The stage's barrier takes one arrival of the
  load task's leader warp, expecting the stage's bytes; TS checks those
  against the bytes per load warp, and the planted fault
  ``FITTED_FULL_WIDTH_BYTES`` (the barrier expecting the unnarrowed width's
  bytes, which no load brings: a hang) is what that check reports.

No CTA waits for another: each output tile is one CTA's whole (its full K,
its own C), as without a fitted width, so no reduction or flag between CTAs
exists that could wait on one not resident. The only sharing between CTAs is
a 2x1 or 1x2 cluster's multicast into both CTAs' stages, as before; the
hardware makes a cluster's CTAs resident together.
"""

from __future__ import annotations

from ..kernels.gemm_cluster import load_split
from ..kernels.gemm_geometry import Epilogue, GemmMode, Geometry, TileShape
from ..kernels.gemm_tile_pick import FIT_STEP
from .common import require
from .gemm_config import GemmFault, HopperGemm

LOADS_SCOPE_NOTE = (
    "TS checks each A/B stage's declared bytes (num_bytes against the bytes per load warp), not which rows each "
    "warp's TMA copies bring: with a fitted width a load warp may bring none of B; that the slices cover the tile "
    "is the kernel's arithmetic (kernels.gemm_cluster.load_split)"
)


def check(cfg: HopperGemm) -> None:
    """What a narrowed tile needs: a named cooperative tile of 64 or 128 rows, a width that is a multiple of 16
    below the tile's own."""
    if not cfg.tile_n:
        return
    require(cfg.tile is not TileShape.BY_SHAPE,
            f"tile_n={cfg.tile_n} narrows a named tile; tile='by shape' picks its own width",
            "use tile_n=0 with tile='by shape', or name the tile to narrow", "tile_n")
    tm, tn = cfg.tile.mn
    require(cfg.tile_n % FIT_STEP == 0 and 0 < cfg.tile_n < tn,
            f"tile_n={cfg.tile_n} does not narrow tile {cfg.tile.value}: a fitted width is a multiple of {FIT_STEP} "
            f"below the tile's own {tn} (whole 16-column parts of C, whole 8-row atoms of B in each CTA of a cluster)",
            f"use tile_n in {FIT_STEP}, {2 * FIT_STEP}, ..., {tn - FIT_STEP}, or 0 for the tile's own width", "tile_n")
    require(tm <= 128,
            f"tile_n narrows the 64- and 128-row tiles; tile {cfg.tile.value}'s {tm} rows rotate C through two "
            "buffers, which an odd count of 16-column parts does not divide", "use a 128x256 or 64x256 tile", "tile")
    require(cfg.mode is GemmMode.COOPERATIVE and cfg.epilogue is not Epilogue.SHARED,
            "tile_n narrows cooperative tiles; each ping-pong consumer's two C buffers take the parts in pairs, "
            "which an odd count of 16-column parts does not fill", "use mode=cooperative with tile_n", "mode")


def is_fitted(cfg: HopperGemm) -> bool:
    """Whether ``cfg`` (resolved) runs a narrowed tile, set by hand or by the 'by shape' pick."""
    return bool(cfg.tile_n)


def full_width_stage_bytes(cfg: HopperGemm, geo: Geometry) -> int:
    """The stage bytes the planted ``FITTED_FULL_WIDTH_BYTES`` makes the barrier expect: the unnarrowed tile's."""
    return Geometry(geo.tile_m, cfg.tile.mn[1], geo.stages, geo.consumer_wgs, dtype=geo.dtype).stage_bytes


def planted(cfg: HopperGemm) -> bool:
    return cfg.fault is GemmFault.FITTED_FULL_WIDTH_BYTES


def notes(cfg: HopperGemm, geo: Geometry) -> list[str]:
    """What the CPU view says about a fitted width (nothing without one)."""
    if not is_fitted(cfg):
        return []
    (_, rows_a), (used_b, rows_b) = load_split(geo, geo.load_warps)
    columns = -(-cfg.n // geo.tile_n)
    out = [f"fitted width: tile {cfg.tile.value} narrowed to {geo.tile_m} x {geo.tile_n}; the CPU view's N={cfg.n} "
           f"in {columns} column{'s' if columns != 1 else ''} of {geo.tile_n} ({columns * geo.tile_n - cfg.n} "
           f"of padding); C goes out in {geo.epilogue_parts} parts of {geo.epilogue_n} columns through "
           f"{geo.epilogue_buffers} buffers; each stage's B comes in {used_b * geo.cluster_m} slice"
           f"{'s' if used_b * geo.cluster_m != 1 else ''} of {rows_b} rows"
           + (f" ({used_b} load warps of {geo.load_warps} bring B)" if used_b < geo.load_warps else "")
           + f", A in slices of {rows_a}"]
    if planted(cfg) and not geo.handoff:  # the hand-off's notes name any planted fault
        out.append(f"planted fault: {cfg.fault.value}")
    return out


__all__ = ["LOADS_SCOPE_NOTE", "check", "full_width_stage_bytes", "is_fitted", "notes", "planted"]
