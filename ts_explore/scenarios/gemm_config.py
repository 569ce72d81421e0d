"""The Hopper GEMM's controls: :class:`HopperGemm` (every knob and the CPU view's instance) and the faults
that can be planted (:class:`GemmFault`).

Each control selects a technique of its own module: ``mode`` the consumers'
schedule (:mod:`.gemm_cooperative`, :mod:`.gemm_pingpong`), ``epilogue``
the hand-off (:mod:`.gemm_handoff`), ``cluster`` / ``dtype`` /
``persistence`` / ``tile='by shape'`` the kernel's
(``kernels.gemm_cluster``, ``gemm_fp8``, ``gemm_tile_scheduler``,
``gemm_tile_pick``); ``tile_n`` narrows the tile to a fitted width
(:mod:`.gemm_fitted` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from ..kernels.gemm_geometry import Cluster, DType, Epilogue, GemmMode, Geometry, Raster, Release, TileShape
from ..kernels.gemm_tile_pick import pick_tile
from ..kernels.gemm_tile_scheduler import launch_grid
from ..model import QueueKind
from ..model.plan import DeviceLimits
from .base import knob


class GemmFault(str, Enum):
    """A mistake to plant when learning to debug the ping-pong order or the hand-off epilogue."""

    NONE = "none"
    PINGPONG_BROKEN = ("mma0's k-loop runs one stage past its work unit: after the last unit it waits for a "
                       "stage the loader never fills (deadlock)")
    HANDOFF_EARLY_RELEASE = ("the store task releases each C buffer right after issuing its TMA store, while the "
                             "store may still read it (a race TS cannot see; the async-read rule reports it)")
    HANDOFF_EXTRA_PART = ("the store task waits for one part of C more per tile than the consumers hand over: after "
                          "the last tile it waits for a buffer no one fills (deadlock)")
    SHARED_EARLY_TURN = ("mma1 hands the shared C buffers back to mma0 right after issuing its last TMA store, "
                         "while the store may still read them: mma0 writes its next tile under it (a race TS "
                         "cannot see; the async-read rule reports it)")
    FITTED_FULL_WIDTH_BYTES = ("each A/B stage's barrier expects the bytes of the tile's own width while the loads "
                               "bring the narrowed one: its transaction count never reaches zero and the consumers "
                               "wait forever (TS's check of the stage's bytes reports it)")

    @property
    def needs(self) -> str:
        """The setting this fault is planted in: 'mode=ping-pong', 'epilogue=handoff' (NONE: '')."""
        if self is GemmFault.PINGPONG_BROKEN:
            return "mode=ping-pong"
        if self is GemmFault.SHARED_EARLY_TURN:
            return "epilogue=shared"
        if self is GemmFault.FITTED_FULL_WIDTH_BYTES:
            return "tile_n=<a narrowed width>"
        return "" if self is GemmFault.NONE else "epilogue=handoff"


@dataclass(frozen=True)
class HopperGemm:
    """Knobs of the GEMM schedule, plus the (M, N, K) instance the CPU view records."""

    tile: TileShape = TileShape.T128x256
    tile_n: int = knob(0, min=0, max=240, step=16, label="N tile width (0: the tile's own)",
                       help="narrows the tile to this many columns (a multiple of 16) so that the last column of "
                            "tiles holds less padding, e.g. N=3080 in 13 columns of 240 instead of 256; "
                            "'by shape' sets it where its model predicts a gain")
    stages: int = knob(4, min=2, max=8, label="A/B stages", help="bounded by 227 KiB of shared memory")
    consumer_wgs: int = knob(2, min=1, max=2, label="consumer warpgroups")
    persistence: QueueKind = QueueKind.STATIC
    cluster: Cluster = Cluster.C1x1
    raster: Raster = Raster.ALONG_M
    swizzle: int = knob(1, min=1, max=16, label="tile swizzle (group size)",
                        help="static persistence hands tiles out S columns (rows along N) at a time, so CTAs "
                             "busy at once share operand tiles in L2; 1: plain raster order")
    release: Release = Release.LAGGED
    dtype: DType = DType.BF16
    mode: GemmMode = knob(GemmMode.COOPERATIVE, label="consumer mode",
                          help="cooperative: the warpgroups split each tile; ping-pong: each owns alternate whole "
                               "tiles, one's mainloop runs under the other's epilogue")
    epilogue: Epilogue = knob(Epilogue.INLINE, label="epilogue",
                              help="consumers store: the consumer warpgroups send C themselves while the tensor "
                                   "cores idle; a store task sends C (cooperative): they hand each part of C in a "
                                   "shared-memory buffer to a store task (warps 2-3) and go on to the next tile; "
                                   "shared in turns (ping-pong): both consumers store through one set of buffers, "
                                   "handed over by a turn pipeline, so the A/B ring takes one stage more")
    fault: GemmFault = knob(GemmFault.NONE, label="fault (for debugging)",
                            help="a deliberate mistake: the verifier reports it with a counterexample")
    m: int = knob(512, min=1, max=65536, label="M (CPU view)")
    n: int = knob(512, min=8, max=65536, step=8, label="N (CPU view)")
    k: int = knob(256, min=8, max=65536, step=8, label="K (CPU view)",
                  help="the verifier unrolls K/64 (fp8: K/128) k-blocks per tile; keep it to a few")
    ctas: int = knob(0, min=0, max=4096, label="persistent CTAs (CPU view)", help="0: one per SM of an H200")
    block: int = knob(0, min=0, max=65535, label="view as CTA")

    def resolved(self, shape: tuple[int, int, int] | None = None, sms: int | None = None) -> HopperGemm:
        """This config with ``tile='by shape'`` replaced by the tile :func:`pick_tile` picks (else itself).

        With ``mode=ping-pong`` the pick is among the ping-pong tiles (128x192 first). The pick also sets the
        N width (``tile_n``: a fitted width, or 0 for the tile's own), the
        consumer warpgroups (a 64-row tile is one
        warpgroup's WGMMA) and the cluster (2x1 B multicast for a small grid of
        128-row tiles or rows of A and B that straddle 128-byte lines; otherwise
        this config's own cluster, 1x2 included), and
        keeps the stages within shared memory.
        Default shape and SMs: the CPU view's (M, N, K) and its CTAs (an H200's SMs).
        """
        if self.tile is not TileShape.BY_SHAPE:
            return self
        pingpong = self.mode is GemmMode.PINGPONG
        pick = pick_tile(tuple(shape) if shape is not None else self.shape,
                         sms or self.ctas or DeviceLimits.h200().sms, self.dtype.bytes, pingpong=pingpong)
        tm, tn = pick.tile.mn
        most = Geometry(tile_m=tm, tile_n=pick.tile_n or tn, stages=2, consumer_wgs=pick.consumer_wgs,
                        dtype=self.dtype, pingpong=pingpong,
                        shared_epilogue=self.epilogue is Epilogue.SHARED).max_stages()
        return replace(self, tile=pick.tile, tile_n=pick.tile_n, consumer_wgs=pick.consumer_wgs,
                       stages=min(self.stages, most),
                       cluster=Cluster.C2x1 if pick.cluster_m == 2 else self.cluster)

    def geometry(self) -> Geometry:
        cfg = self.resolved()
        tm, tn = cfg.tile.mn
        return Geometry(tile_m=tm, tile_n=cfg.tile_n or tn, stages=cfg.stages, consumer_wgs=cfg.consumer_wgs,
                        cluster_m=cfg.cluster.m, cluster_n=cfg.cluster.n, dtype=cfg.dtype,
                        pingpong=cfg.mode is GemmMode.PINGPONG, handoff=cfg.epilogue is Epilogue.HANDOFF,
                        shared_epilogue=cfg.epilogue is Epilogue.SHARED)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def grid(self) -> tuple[int, int, int]:
        """The CUDA grid of the CPU view's instance."""
        return launch_grid(self.shape, self.geometry(), persistent=self.persistence is QueueKind.STATIC,
                           along_m=self.raster is Raster.ALONG_M, sms=self.ctas or DeviceLimits.h200().sms)

    def ctas_launched(self) -> int:
        x, y, z = self.grid()
        return x * y * z


__all__ = ["GemmFault", "HopperGemm"]
