"""The GEMM op's default config for a shape: this GPU's tuning-table pick when ``ts-explore tune`` measured one.

``ops.gemm(a, b)`` without a config runs ``tile='by shape'``. Where the
user tuned ``hopper_gemm`` (``ts-explore tune hopper_gemm --shapes ...``,
tables under ``<cache root>/tuning/``) and the table holds a pick for the
exact shape and dtype, the op runs that pick instead, as ``launch()`` does
(:func:`ts_explore.gpu.tuned.size_picks` chooses, here and there).

A launch record (:mod:`.launch_index`) must answer only for what decided
its config, so the record's name carries :func:`tables_digest`: a digest of
the bytes of every ``hopper_gemm`` table in the folder. Writing or changing
any table misses every record made before, and the next call chooses again.
Reading the digest costs a directory listing and a few kilobytes of JSON;
no DSL and no scenario are imported unless a table exists and a record
misses.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .compile_cache import cache_root

SCENARIO = "hopper_gemm"


def tables_digest(scenario: str = SCENARIO) -> str:
    """sha256 (16 hex digits) of the name and bytes of every tuning table of ``scenario``; ``""`` when none."""
    folder = cache_root() / "tuning"
    try:
        paths = sorted(folder.glob(f"{scenario}.*.json"))
    except OSError:
        return ""
    if not paths:
        return ""
    digest = hashlib.sha256()
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        digest.update(path.name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


def default_config(base: Any, shape: tuple[int, int, int], sms: int, tables: str) -> tuple[Any, str]:
    """The concrete config ``ops.gemm`` runs at ``shape`` without a config, and the table's words for it.

    ``base``: the op's default (``tile='by shape'``, the operands' dtype);
    ``tables``: :func:`tables_digest` (``""``: nothing tuned, the plan's pick).
    """
    if tables:
        from ..gpu.tuned import size_picks
        from . import compiled

        pick = size_picks(compiled.scenario(SCENARIO), base, (tuple(shape),))[0]
        if pick.note:
            return pick.config.resolved(tuple(shape), sms), pick.note
    return base.resolved(tuple(shape), sms), ""


__all__ = ["SCENARIO", "default_config", "tables_digest"]
