"""What the attention scenario's CPU view records and says: the persistent CTA whose walk it records, the
ping-pong ring's turn names, and the notes beside the drawings.

Kept apart from the knobs and the build (:mod:`.attention`) so each stays one job; nothing here builds TS objects.
"""

from __future__ import annotations

from typing import Any

from ..kernels.attention_geometry import SMEM_LIMIT, Persistence
from . import attention_store as o_store
from .base import BuildContext
from .common import instance_value

PERSISTENT_CTAS = 132  # an H200's SMs: the CPU view's static persistent grid


def turn_names(consumers: int) -> list[str]:
    """Ping-pong's ring: ``turn<c><c+1>`` is how consumer ``c`` hands the turn to the next (``turn01``, ``turn10``
    for two; ``turn01``, ``turn12``, ``turn20`` for three)."""
    return [f"turn{c}{(c + 1) % consumers}" for c in range(consumers)]


def recorded_walk(cfg: Any, ctx: BuildContext) -> tuple[int, ...] | None:
    """On the CPU under static persistence: the K/V blocks of each tile the recorded CTA walks (None otherwise).

    A plan instance names its CTAs' walk (``extra["walk"]``); the config's own
    view records the CTA that runs the viewed Q tile.
    """
    if ctx.on_gpu or cfg.persistence is not Persistence.STATIC:
        return None
    if ctx.instance and "kv_blocks" in ctx.instance.get("extra", {}):
        return instance_value(ctx, "walk", None)
    return instance_value(ctx, "walk", cfg.viewed_walk)


def mixed_walk(walk: tuple[int, ...] | None) -> bool:
    """A walk whose tiles have different K/V loop lengths (causal under static persistence, beyond one wave)."""
    return walk is not None and len(set(walk)) > 1


def _walk_text(walk: tuple[int, ...]) -> str:
    """A walk in words: ``3 tiles of 4, 3, 1 K/V blocks`` (runs of one length shortened)."""
    if len(set(walk)) == 1:
        return f"{len(walk)} tile{'s' if len(walk) != 1 else ''} of {walk[0]} K/V blocks"
    shown = ", ".join(map(str, walk[:6])) + (", ..." if len(walk) > 6 else "")
    return f"{len(walk)} tiles of {shown} K/V blocks ({sum(walk)} in all)"


def notes(cfg: Any, geo: Any, walk: tuple[int, ...] | None = None) -> tuple[str, ...]:
    """The CPU view's notes: the instance, shared memory and registers, what the rules check, each technique on,
    and under static persistence the recorded CTA's walk and whether a search covers it."""
    mask = "causal (bottom-right aligned)" if cfg.causal else "non-causal"
    notes = [
        f"CPU view: Q[{cfg.batch}, {cfg.seqlen_q}, {cfg.heads}, {cfg.head_dim}] against K/V[{cfg.batch}, "
        f"{cfg.seqlen_kv}, {cfg.heads}, {cfg.head_dim}], {mask}: {cfg.work_tiles} work tiles of {cfg.tile_q} rows; "
        f"Q tile {cfg.q_tile} visits {cfg.kv_blocks} K/V blocks of {cfg.tile_k}",
        f"Q {geo.q_bytes // 1024} KiB + {cfg.stages} K and {cfg.stages} V stages x {geo.kv_stage_bytes // 1024} KiB "
        f"+ O {geo.out_bytes // 1024} KiB + barriers = {geo.smem_bytes} B of {SMEM_LIMIT} B shared memory; "
        f"{geo.register_floats} fp32 of S and O per consumer thread",
        "TS does not model WGMMA's asynchronous shared-memory reads; the async-read rule checks the K releases "
        "(S GEMM) and the V releases (P·V GEMM)",
    ]
    if cfg.tma_store:
        notes.append(o_store.note(cfg))
    if cfg.pingponging:
        ring = ", ".join(turn_names(cfg.consumer_wgs))
        notes.append(f"ping-pong: the consumers hand the right to issue WGMMA on in a ring through {ring} (mbarrier "
                     "pipelines, so TS checks the order)")
    if cfg.persistence is Persistence.STATIC:
        order = "tiles longest first, every other wave backwards; " if cfg.causal else "tiles; "
        walks = (f"the recorded CTA walks {_walk_text(walk)}" if walk
                 else f"each walks tiles of {cfg.kv_blocks} K/V blocks")
        notes.append(f"static persistence: {min(PERSISTENT_CTAS, cfg.work_tiles)} CTAs walk {cfg.work_tiles} work "
                     + order + walks)
        if mixed_walk(walk):
            notes.append("its tiles differ in K/V loop length, and TS's tile loop repeats one length: no search "
                         "covers this walk, so the verdict is INCONCLUSIVE (a walk of tiles of one length each, "
                         "such as every CTA of a grid with one wave of tiles, is proven for every number of "
                         "tiles)")
    return tuple(notes)


__all__ = ["PERSISTENT_CTAS", "mixed_walk", "notes", "recorded_walk", "turn_names"]
