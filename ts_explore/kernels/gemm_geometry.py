"""Pure arithmetic of the Hopper GEMM: its controls' values, one CTA's geometry (tile, stages, warpgroups,
shared memory, registers) and the problem sizes it takes.

One function per fact (design.md): the scenario's checks, the CPU view, the
kernel and the launcher all ask these. Nothing here needs a GPU or the DSL.
The order tiles are handed out in and the grid are
:mod:`.gemm_tile_scheduler`'s, the ``tile='by shape'`` pick is
:mod:`.gemm_tile_pick`'s, the cluster's split of the shared operand is
:mod:`.gemm_cluster`'s.

>>> g = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2)
>>> g.stage_bytes, g.accumulators_per_thread, g.epilogue_parts
(49152, 128, 8)
>>> g.smem_bytes <= SMEM_LIMIT
True
>>> tile_counts((1000, 4096, 512), g)
(8, 16)
>>> print(shape_refusal((256, 256, 100)))
K=100 is not a multiple of 8: the rows of A and B (K bf16 each) would break TMA's 16-byte stride alignment; pad K to 104
>>> f8 = Geometry(tile_m=128, tile_n=256, stages=4, consumer_wgs=2, dtype=DType.FP8)
>>> f8.tile_k, f8.stage_bytes, k_blocks(1000, f8.tile_k)
(128, 49152, 8)
>>> print(shape_refusal((256, 256, 1000), DType.FP8))  # doctest: +NORMALIZE_WHITESPACE
K=1000 is not a multiple of 16: the rows of A and B (K fp8 each) would break TMA's 16-byte stride alignment;
pad K to 1008
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

TILE_K = 64  # bf16 elements of K per stage: one 128-byte swizzle row (fp8: Geometry.tile_k, 128)
SWIZZLE_BYTES = 128  # a stage's rows are one 128-byte swizzle row of K, whatever the input type
EPILOGUE_N = 32  # output columns per epilogue part (registers -> shared memory -> global)
NARROW_EPILOGUE_N = 16  # ... of a fitted width that 32 does not divide (240: 15 parts); stmatrix x4 writes 16
WARPGROUP_THREADS = 128
LOAD_WARPS = 4  # the load task holds a whole warpgroup, so setmaxnreg can lower its registers
HANDOFF_LOAD_WARPS = 2  # with the hand-off epilogue the load task keeps warps 0-1 ...
STORE_WARPS = 2  # ... and the store task takes warps 2-3 of the same warpgroup (same register count)
SMEM_LIMIT = 227 * 1024  # Hopper's opt-in shared memory per CTA
MAX_ACCUMULATORS = 192  # fp32 accumulators per thread that still leave room in 232 registers (a 128x192 ping-pong tile)
TILE_SHAPES = ((128, 128), (128, 256), (256, 128), (64, 128), (64, 256), (128, 192), (256, 192))
H200_DENSE_BF16_TFLOPS = 989.0  # vendor datasheet, dense (no sparsity)
H200_DENSE_FP8_TFLOPS = 1979.0  # vendor datasheet, dense (no sparsity)
BF16_BYTES = 2


class DType(str, Enum):
    """Element type of A and B (C is always bf16, accumulation always fp32).

    fp8 is float8 e4m3 with one fp32 scale per tensor: C = (scale_a·scale_b)·(A·Bᵀ).
    """

    BF16 = "bf16"
    FP8 = "fp8 (e4m3, per-tensor scales)"

    @classmethod
    def of(cls, value: DType | str) -> DType:
        """``value`` as a DType: a member, its name or short name (``"fp8"``), or its value."""
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        for member in cls:
            if text in (member.name.lower(), member.short, member.value.lower()):
                return member
        raise ValueError(f"dtype {value!r} is not one of {', '.join(m.short for m in cls)}; use 'bf16' or 'fp8'")

    @property
    def bytes(self) -> int:
        return 2 if self is DType.BF16 else 1

    @property
    def short(self) -> str:
        return "bf16" if self is DType.BF16 else "fp8"

    @property
    def scale_args(self) -> int:
        """Kernel arguments after the three pointers that carry scales (scale_a, scale_b for fp8)."""
        return 0 if self is DType.BF16 else 2

    @property
    def peak_tflops(self) -> float:
        """The H200's dense tensor-core peak for this input type."""
        return H200_DENSE_BF16_TFLOPS if self is DType.BF16 else H200_DENSE_FP8_TFLOPS


class TileShape(str, Enum):
    """CTA tile (M x N x K) of the output and of one A/B stage (K as bf16's; an fp8 stage holds 128, see
    :attr:`Geometry.tile_k`)."""

    T128x128 = "128x128x64"
    T128x256 = "128x256x64"
    T256x128 = "256x128x64"
    T64x128 = "64x128x64"
    T64x256 = "64x256x64"
    T128x192 = "128x192x64"  # six epilogue parts; ping-pong: 192 accumulators per consumer thread
    T256x192 = "256x192x64"  # cooperative only: 192 accumulators per thread of two warpgroups
    BY_SHAPE = "by shape (the launch plan picks)"

    @property
    def mn(self) -> tuple[int, int]:
        if self is TileShape.BY_SHAPE:
            raise ValueError("tile 'by shape' has no size of its own; resolve the config for a shape first "
                             "(HopperGemm.resolved(shape, sms), or read the launch plan)")
        m, n, _ = self.value.split("x")
        return int(m), int(n)


class Cluster(str, Enum):
    """CTAs per cluster (M x N): with 2x1, two M-neighbours share one B tile through TMA multicast; with 1x2,
    two N-neighbours share one A tile."""

    C1x1 = "1x1"
    C2x1 = "2x1 (B multicast)"
    C1x2 = "1x2 (A multicast)"

    @property
    def m(self) -> int:
        """CTAs along M (they share B)."""
        return 2 if self is Cluster.C2x1 else 1

    @property
    def n(self) -> int:
        """CTAs along N (they share A)."""
        return 2 if self is Cluster.C1x2 else 1


class Raster(str, Enum):
    """Order in which output tiles are handed out (consecutive CTAs walk M or N)."""

    ALONG_M = "along M"
    ALONG_N = "along N"


class GemmMode(str, Enum):
    """How the consumer warpgroups share output tiles.

    COOPERATIVE: the warpgroups split one tile along M and run its mainloop and
    epilogue together. PINGPONG: each of two warpgroups owns whole tiles
    (alternate tiles of the CTA's stream); one's mainloop runs while the other
    stores its C, so the tensor cores do not idle during epilogues.
    """

    COOPERATIVE = "cooperative"
    PINGPONG = "ping-pong"


class Epilogue(str, Enum):
    """Who writes C out of a cooperative tile's accumulators.

    INLINE: the consumer warpgroups stage each part of C in shared memory and
    issue its TMA store themselves (the tensor cores idle meanwhile). HANDOFF:
    the consumers stage each part into a buffer of a pipeline and hand it to a
    store task (warps 2-3), which sends it with TMA and frees the buffer once
    the store has read it; the consumers go straight on to the next tile.
    """

    INLINE = "consumers store"
    HANDOFF = "a store task sends C"
    SHARED = "ping-pong consumers share the C buffers in turns"


class Release(str, Enum):
    """When the consumer frees an A/B stage, and how many WGMMA groups ``mma`` leaves in flight."""

    LAGGED = "one k-block late (1 WGMMA group in flight)"
    AFTER_WAIT = "after its WGMMA completes (none in flight)"
    PREMATURE = "right after issue (a race TS cannot see)"

    @property
    def in_flight(self) -> int:
        return 0 if self is Release.AFTER_WAIT else 1


@dataclass(frozen=True)
class Geometry:
    """What a config fixes about one CTA: tile, stages, warpgroups, cluster."""

    tile_m: int
    tile_n: int
    stages: int
    consumer_wgs: int
    cluster_m: int = 1  # CTAs along M sharing one B tile (TMA multicast)
    dtype: DType = DType.BF16  # A and B elements: a stage holds one 128-byte swizzle row of K per tile row
    pingpong: bool = False  # each consumer owns whole tiles; both read every stage of the one ring
    cluster_n: int = 1  # CTAs along N sharing one A tile (TMA multicast)
    handoff: bool = False  # a store task on warps 2-3 sends C; the load task keeps warps 0-1
    shared_epilogue: bool = False  # ping-pong: both consumers store through one set of C buffers, in turns

    def __post_init__(self) -> None:
        if self.cluster_m > 1 and self.cluster_n > 1:
            raise ValueError(f"a {self.cluster_m}x{self.cluster_n} cluster would multicast both A and B, which this "
                             "kernel does not do; use cluster_m=2 (2x1, B shared) or cluster_n=2 (1x2, A shared)")

    @property
    def cluster_size(self) -> int:
        """CTAs per cluster: each stage's barrier takes releases from all of them (both load halves land in each)."""
        return self.cluster_m * self.cluster_n

    @property
    def work_tile_m(self) -> int:
        """Rows of C one work unit of the tile scheduler covers (ping-pong: two tiles, one per consumer)."""
        return self.tile_m * (2 if self.pingpong else 1)

    @property
    def load_warps(self) -> int:
        """Warps that fill the ring: the whole load warpgroup (ping-pong too: one ring feeds both consumers), or
        its first two when the hand-off epilogue's store task holds the other two.

        >>> Geometry(128, 256, 4, 2).load_warps, Geometry(128, 256, 4, 2, handoff=True).load_warps
        (4, 2)
        """
        return HANDOFF_LOAD_WARPS if self.handoff else LOAD_WARPS

    @property
    def store_warp0(self) -> int:
        """First warp of the hand-off epilogue's store task (right after the load task's warps)."""
        return HANDOFF_LOAD_WARPS

    def consumer_view(self) -> Geometry:
        """What one ping-pong consumer's WGMMA and buffers see: a one-warpgroup tile (else the geometry itself)."""
        return Geometry(tile_m=self.tile_m, tile_n=self.tile_n, stages=self.stages, consumer_wgs=1,
                        cluster_m=self.cluster_m, cluster_n=self.cluster_n, dtype=self.dtype,
                        pingpong=True, shared_epilogue=self.shared_epilogue) if self.pingpong else self

    @property
    def tile_k(self) -> int:
        """Elements of K per stage: 64 bf16 or 128 fp8, one 128-byte swizzle row either way."""
        return SWIZZLE_BYTES // self.dtype.bytes

    @property
    def consumer_threads(self) -> int:
        return self.consumer_wgs * WARPGROUP_THREADS

    @property
    def threads(self) -> int:
        return LOAD_WARPS * 32 + self.consumer_threads

    @property
    def a_stage_bytes(self) -> int:
        return self.tile_m * self.tile_k * self.dtype.bytes

    @property
    def b_stage_bytes(self) -> int:
        return self.tile_n * self.tile_k * self.dtype.bytes

    @property
    def stage_bytes(self) -> int:
        """Bytes one A/B stage receives (what the stage's barrier waits for)."""
        return self.a_stage_bytes + self.b_stage_bytes

    @property
    def accumulators_per_thread(self) -> int:
        owners = WARPGROUP_THREADS if self.pingpong else self.consumer_threads
        return self.tile_m * self.tile_n // owners

    @property
    def epilogue_n(self) -> int:
        """Columns of C per epilogue part: EPILOGUE_N, or NARROW_EPILOGUE_N where 32 does not divide the tile.

        >>> Geometry(128, 256, 4, 2).epilogue_n, Geometry(128, 240, 4, 2).epilogue_parts
        (32, 15)
        """
        return EPILOGUE_N if self.tile_n % EPILOGUE_N == 0 else NARROW_EPILOGUE_N

    @property
    def epilogue_parts(self) -> int:
        """The tile's columns go out in parts of :attr:`epilogue_n`."""
        return self.tile_n // self.epilogue_n

    @property
    def epilogue_buffers(self) -> int:
        """Shared-memory buffers the epilogue rotates through: a divisor of the parts, so that part p of every
        tile takes buffer ``p % buffers`` and a tile's first part never lands in a buffer whose store from the
        previous tile may still be reading it (six parts of a 192-wide tile: 3 buffers, not 4).

        >>> Geometry(128, 256, 4, 2).epilogue_buffers, Geometry(128, 192, 5, 2).epilogue_buffers
        (4, 3)
        """
        if self.pingpong:
            return 2  # per consumer: the other's mainloop hides its store waits, and the ring needs the room
        if self.tile_m > 128:
            return 2
        return next(b for b in (4, 3, 2, 1) if self.epilogue_parts % b == 0)

    @property
    def epilogue_bytes(self) -> int:
        """Epilogue buffers of every consumer (ping-pong: each warpgroup has its own, so the two stores overlap;
        with ``shared_epilogue`` one set, which the consumers take in turns).

        >>> Geometry(128, 192, 4, 2, pingpong=True).epilogue_bytes, Geometry(128, 192, 5, 2, pingpong=True,
        ...     shared_epilogue=True).epilogue_bytes
        (32768, 16384)
        """
        per_tile = self.tile_m * self.epilogue_n * BF16_BYTES * self.epilogue_buffers
        return per_tile * (self.consumer_wgs if self.pingpong and not self.shared_epilogue else 1)

    @property
    def turn_barrier_bytes(self) -> int:
        """The shared epilogue's turn: a one-stage pipeline, two 8-byte mbarriers (none without it)."""
        return 16 if self.shared_epilogue else 0

    @property
    def smem_bytes(self) -> int:
        """A/B stages + epilogue buffers + two 8-byte mbarriers per stage (+ the shared epilogue's turn).

        >>> pp = Geometry(128, 128, 6, 2, pingpong=True)  # one ring of 32 KiB stages, 2 x 2 x 8 KiB buffers
        >>> pp.max_stages(), pp.smem_bytes <= SMEM_LIMIT, Geometry(64, 256, 2, 2, pingpong=True).max_stages()
        (6, True, 5)
        >>> turns = Geometry(128, 192, 5, 2, pingpong=True, shared_epilogue=True)  # 5 x 40 KiB + 2 x 8 KiB
        >>> turns.max_stages(), turns.smem_bytes, Geometry(128, 192, 4, 2, pingpong=True).max_stages()
        (5, 221280, 4)
        """
        return self.stages * (self.stage_bytes + 16) + self.epilogue_bytes + self.turn_barrier_bytes

    def max_stages(self) -> int:
        """A/B stages that fit in shared memory beside the epilogue buffers."""
        return (SMEM_LIMIT - self.epilogue_bytes - self.turn_barrier_bytes) // (self.stage_bytes + 16)


def tile_counts(shape: tuple[int, int, int], geo: Geometry) -> tuple[int, int]:
    """Output tiles along M and N (tails count as whole tiles)."""
    m, n, _ = shape
    return -(-m // geo.tile_m), -(-n // geo.tile_n)


def k_blocks(k: int, tile_k: int = TILE_K) -> int:
    """K-blocks of ``tile_k`` (a Geometry's ``tile_k``; bf16's by default); a tail block is read zero-padded by TMA."""
    return -(-k // tile_k)


def flops(shape: tuple[int, int, int]) -> int:
    m, n, k = shape
    return 2 * m * n * k


def bytes_moved(shape: tuple[int, int, int], dtype: DType = DType.BF16) -> int:
    """Compulsory traffic: read A and B once (``dtype``), write C once (bf16)."""
    m, n, k = shape
    return dtype.bytes * (m * k + n * k) + BF16_BYTES * m * n


def shape_refusal(shape: tuple[int, int, int], dtype: DType = DType.BF16) -> str | None:
    """Why the kernel cannot take this (M, N, K) with ``dtype`` inputs, or None.

    TMA needs every global row stride to be a multiple of 16 bytes: A and B
    rows hold K values of ``dtype`` (so K % 8 for bf16, K % 16 for fp8), C
    rows hold N bf16.
    """
    m, n, k = shape
    if min(m, n, k) < 1:
        return f"(M, N, K)=({m}, {n}, {k}) has an empty dimension; use positive sizes"
    if max(m, n, k) >= 2**31 or m * k >= 2**31 or n * k >= 2**31 or m * n >= 2**31:
        return f"(M, N, K)=({m}, {n}, {k}) needs 64-bit indexing; keep each matrix under 2^31 elements"
    step = 16 // dtype.bytes
    if k % step:
        return (f"K={k} is not a multiple of {step}: the rows of A and B (K {dtype.short} each) would break TMA's "
                f"16-byte stride alignment; pad K to {k + step - k % step}")
    if n % 8:
        return (f"N={n} is not a multiple of 8: the rows of C (N bf16 each) would break TMA's "
                f"16-byte stride alignment; pad N to {n + 8 - n % 8}")
    return None


__all__ = [
    "BF16_BYTES",
    "Cluster",
    "DType",
    "EPILOGUE_N",
    "Epilogue",
    "GemmMode",
    "Geometry",
    "H200_DENSE_BF16_TFLOPS",
    "H200_DENSE_FP8_TFLOPS",
    "HANDOFF_LOAD_WARPS",
    "LOAD_WARPS",
    "MAX_ACCUMULATORS",
    "NARROW_EPILOGUE_N",
    "Raster",
    "Release",
    "SMEM_LIMIT",
    "STORE_WARPS",
    "SWIZZLE_BYTES",
    "TILE_K",
    "TILE_SHAPES",
    "TileShape",
    "WARPGROUP_THREADS",
    "bytes_moved",
    "flops",
    "k_blocks",
    "shape_refusal",
    "tile_counts",
]
