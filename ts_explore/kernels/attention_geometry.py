"""Sizes of the Hopper attention schedule: shared memory per CTA, registers, and K/V blocks per Q tile.

Pure integer arithmetic (no TS, no DSL) so the checks, the notes and the
tests agree on one rule each. The causal mask is aligned to the bottom-right
corner (query row ``i`` sees keys ``j <= i + seqlen_kv - seqlen_q``), as
FlashAttention does when the two lengths differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..model.plan import DeviceLimits


class Persistence(str, Enum):
    """How CTAs meet work tiles: one CTA per (Q tile, head, batch), or a static persistent walk."""

    NONE = "none"
    STATIC = "static"


BYTES_BF16 = 2
WGMMA_ROWS = 64  # rows of one WGMMA atom: a consumer warpgroup owns a multiple of them
HEAD_DIMS = (64, 128)  # what the schedule's tiles are laid out for
SMEM_LIMIT = DeviceLimits.h200().smem_per_cta  # 227 KiB: Hopper's opt-in shared memory per CTA
MAX_REGISTER_FLOATS = 160  # fp32 of S and O per consumer thread that leave room for P and addresses in 240
LOAD_REGISTERS = 24  # setmaxnreg of the load warpgroup (the loader and the store task)
# setmaxnreg of each consumer warpgroup, and the fp32 of S and O that leave room for P and addresses, by the number
# of consumer warpgroups: 24 x 128 + 240 x 256 and 24 x 128 + 160 x 384 both stay within 64 K registers
MMA_REGISTERS = {1: (240, MAX_REGISTER_FLOATS), 2: (240, MAX_REGISTER_FLOATS), 3: (160, 96)}
BARRIER_BYTES = 1024  # mbarriers of the Q, K, V and turn pipelines, rounded up to one aligned block


@dataclass(frozen=True)
class Geometry:
    """The tile shape of one CTA and what it costs."""

    tile_q: int
    tile_k: int
    head_dim: int
    stages: int
    consumer_wgs: int

    @property
    def rows_per_wg(self) -> int:
        """Q rows each consumer warpgroup owns (its Q tile)."""
        return self.tile_q // self.consumer_wgs

    @property
    def q_bytes(self) -> int:
        return self.tile_q * self.head_dim * BYTES_BF16

    @property
    def kv_stage_bytes(self) -> int:
        """One K block (or one V block)."""
        return self.tile_k * self.head_dim * BYTES_BF16

    @property
    def out_bytes(self) -> int:
        """O through shared memory before its TMA store (bf16, the whole CTA tile)."""
        return self.tile_q * self.head_dim * BYTES_BF16

    @property
    def smem_bytes(self) -> int:
        """Q + K stages + V stages + the O buffer + barriers."""
        return self.q_bytes + 2 * self.stages * self.kv_stage_bytes + self.out_bytes + BARRIER_BYTES

    def max_stages(self) -> int:
        """The most K/V stages that fit beside Q and O in 227 KiB (0 when not even one does)."""
        room = SMEM_LIMIT - self.q_bytes - self.out_bytes - BARRIER_BYTES
        return max(0, room // (2 * self.kv_stage_bytes))

    @property
    def register_floats(self) -> int:
        """fp32 values of S (rows x tile_k) and O (rows x head_dim) each consumer thread holds."""
        return self.rows_per_wg * (self.tile_k + self.head_dim) // 128

    @property
    def mma_registers(self) -> int:
        """setmaxnreg of each consumer warpgroup: 240 beside one or two others, 160 with three consumers."""
        return MMA_REGISTERS[self.consumer_wgs][0]

    @property
    def max_register_floats(self) -> int:
        """The fp32 of S and O a consumer thread may hold and still have room for P and addresses."""
        return MMA_REGISTERS[self.consumer_wgs][1]


def q_tiles(seqlen_q: int, tile_q: int) -> int:
    """Q tiles of one (batch, head): the last one may be a tail.

    >>> q_tiles(1000, 128)
    8
    """
    return -(-seqlen_q // tile_q)


def kv_blocks(seqlen_q: int, seqlen_kv: int, tile_q: int, tile_k: int, q_tile: int, causal: bool) -> int:
    """K/V blocks Q tile ``q_tile`` visits: all of them, or (causal) those with a key some row of it sees.

    >>> kv_blocks(512, 512, 128, 128, 0, causal=False)
    4
    >>> [kv_blocks(512, 512, 128, 128, m, causal=True) for m in range(4)]
    [1, 2, 3, 4]
    >>> kv_blocks(256, 1024, 128, 128, 0, causal=True)  # bottom-right aligned: row 0 sees keys 0..768
    7
    >>> kv_blocks(1024, 256, 128, 128, 0, causal=True)  # rows 0..127 see no key at all
    0
    """
    total = -(-seqlen_kv // tile_k)
    if not causal:
        return total
    last_row = min((q_tile + 1) * tile_q, seqlen_q) - 1
    last_key = last_row + seqlen_kv - seqlen_q  # the furthest key the tile's last row may see
    if last_key < 0:
        return 0
    return min(total, last_key // tile_k + 1)


def snake(tile: int, total: int, grid: int, minimum: Any = min) -> int:
    """Which tile of the longest-first order a static persistent grid runs as scheduler tile ``tile``.

    The scheduler hands CTA ``c`` the tiles ``c, c + grid, ...``; taken as
    they are, CTA 0 gets the longest tile of every wave and the last CTA the
    shortest. Every other wave is therefore walked backwards (over the tiles it
    has, the last wave may be short), so a CTA that took a long tile in one
    wave takes a short one in the next. Only ``+ - * // %`` and ``minimum``, so
    the kernel runs this very function on its Int32 values (``minimum=cutlass.min``).

    >>> [snake(t, 7, 3) for t in range(7)]
    [0, 1, 2, 5, 4, 3, 6]
    """
    wave = tile // grid
    pos = tile - wave * grid
    width = minimum(grid, total - wave * grid)
    return wave * grid + pos + (wave % 2) * (width - 1 - 2 * pos)


L2_GROUP_BYTES = 24 << 20  # K and V of the (head, batch) pairs a causal grid works on at once: under half the L2


def by_q_tile(tile: int, heads: int, tiles: int) -> tuple:
    """``(head, batch, z)`` of work tile ``tile`` when the Q tiles of one (head, batch) follow each other.

    The grid hands tiles out in this order, so the CTAs busy at once share
    the K and V of one or two heads, which stay in L2; taken head by head (the
    scheduler's own order) every busy CTA read a different head's K and V and
    L2 missed half its reads (Nsight Compute on an H100, hd128 8k: 48 % L2 hits,
    52 % of DRAM bandwidth, against FlashAttention-4's 99 % and 5 %). Only
    ``+ - * // %``, so the kernel runs it on Int32 values.

    >>> [by_q_tile(t, 2, 3) for t in range(4)]
    [(0, 0, 0), (0, 0, 1), (0, 0, 2), (1, 0, 0)]
    """
    rest = tile // tiles
    return rest % heads, rest // heads, tile - rest * tiles


def l2_group(seqlen_kv: Any, head_dim: int, maximum: Any = max) -> Any:
    """(head, batch) pairs whose K and V fit in :data:`L2_GROUP_BYTES` together (at least one).

    >>> l2_group(8192, 128), l2_group(1024, 128), l2_group(65536, 128)
    (6, 48, 1)
    """
    return maximum(1, L2_GROUP_BYTES // (head_dim * 2 * BYTES_BF16) // seqlen_kv)  # no Int32 product to overflow


def grouped_longest_first(tile: int, pairs: int, tiles: int, group: int, minimum: Any = min) -> tuple:
    """``(pair, z)`` of work tile ``tile`` of a causal grid: ``group`` (head, batch) pairs at a time, each group's
    Q tiles longest first (``z`` 0 is the last, longest Q tile), the group's pairs side by side.

    Longest first keeps short tiles for the end, where they fill the last
    wave; grouping keeps the pairs busy at once few enough that their K and V
    stay in L2. With one group (``group`` >= ``pairs``) it is the plain
    longest-first order, pairs fastest.

    >>> [grouped_longest_first(t, 3, 2, 2) for t in range(6)]
    [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    >>> [grouped_longest_first(t, 2, 2, 5) for t in range(4)]
    [(0, 0), (1, 0), (0, 1), (1, 1)]
    """
    span = group * tiles
    first = (tile // span) * group
    width = minimum(group, pairs - first)
    within = tile - first * tiles
    z = within // width
    return first + within - z * width, z


def tile_blocks(seqlen_q: int, seqlen_kv: int, tile_q: int, tile_k: int, per_q_tile: int, causal: bool,
                tile: int) -> int:
    """K/V blocks of work tile ``tile`` of the longest-first order.

    The ``per_q_tile`` (heads x batches) work tiles of one Q tile are
    consecutive; causal, the last Q tile comes first, so the order is
    longest first (the kernel's :func:`~.attention_tiles.q_tile_index`).

    >>> [tile_blocks(512, 512, 128, 128, 2, True, t) for t in range(8)]
    [4, 4, 3, 3, 2, 2, 1, 1]
    """
    z = tile // per_q_tile
    m = q_tiles(seqlen_q, tile_q) - 1 - z if causal else z
    return kv_blocks(seqlen_q, seqlen_kv, tile_q, tile_k, m, causal)


def cta_walk(seqlen_q: int, seqlen_kv: int, tile_q: int, tile_k: int, per_q_tile: int, causal: bool, ctas: int,
             cta: int) -> tuple[int, ...]:
    """K/V blocks of each work tile CTA ``cta`` of a static persistent grid of ``ctas`` visits, in order.

    The static scheduler hands CTA ``c`` the tiles ``c, c + ctas, ...``;
    causal, the kernel takes them in :func:`snake` order over the longest-first
    order, so the CTAs' totals come out nearly equal.

    >>> cta_walk(512, 512, 128, 128, 2, True, 3, 0), cta_walk(512, 512, 128, 128, 2, True, 3, 2)
    ((4, 2, 1), (3, 3))
    """
    total = q_tiles(seqlen_q, tile_q) * per_q_tile
    return tuple(tile_blocks(seqlen_q, seqlen_kv, tile_q, tile_k, per_q_tile, causal,
                             snake(t, total, ctas) if causal else t) for t in range(cta, total, ctas))


def flops(batch: int, heads: int, seqlen_q: int, seqlen_kv: int, head_dim: int, causal: bool) -> int:
    """FLOPs counted as FlashAttention counts them: 4·b·h·sq·skv·d, halved for causal.

    >>> flops(1, 1, 128, 128, 64, causal=True)
    2097152
    """
    full = 4 * batch * heads * seqlen_q * seqlen_kv * head_dim
    return full // 2 if causal else full


__all__ = [
    "HEAD_DIMS", "L2_GROUP_BYTES", "LOAD_REGISTERS", "MAX_REGISTER_FLOATS", "MMA_REGISTERS", "SMEM_LIMIT", "Geometry",
    "Persistence", "by_q_tile",
    "cta_walk", "flops", "grouped_longest_first", "kv_blocks", "l2_group", "q_tiles", "snake", "tile_blocks"]
