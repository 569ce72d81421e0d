"""What a verification searched, and which searches an instance needs: the Verdict's :class:`Scope`.

Works on the :class:`~ts_explore.reader.instance.Instance` the reader read
once, and the runs the reader says it needs (TaskManager's loop restated in
:mod:`ts_explore.reader.instance`: each key assignment, the skipped-tile run
when a task has ``skip_if``, two tiles for a persistent schedule, or the
caller's ``verify(tiles=...)``): :func:`build_scope` names a needed run that
did not run, and says which counts a verdict covers: every number of work
tiles when the tile-loop search (:mod:`.tile_proof`) closed, or the caller's count.
"""

from __future__ import annotations

from typing import Any

from ..model.scope import TS_ENGINE, WORK_QUEUE_NOT_MODELLED, Abstraction, Scope
from ..model.interleaving import CreditModel
from ..model.verdict import ExhaustiveRun, run_scope
from ..reader.instance import Instance
from .tile_proof import MIXED_INERT, MIXED_UNPROVEN, TileProof, skipped_tiles_inert

OPAQUE_ASSUMPTION = ("each when_true/when_false key keeps one value for the whole run: TS searches every "
                     "assignment of the keys, not values that change from one iteration or tile to the next")
PYTHON_CONDITION = ("when_true/when_false given a plain Python value: the kernel runs the block unconditionally, "
                    "yet both branches were searched")


def same_call(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two checker calls search the same variant, assignment and tile count."""
    return (
        bool(a.get("skipped_tile")) == bool(b.get("skipped_tile"))
        and (a.get("opaque_assignment") or {}) == (b.get("opaque_assignment") or {})
        and int(a.get("num_tiles", 1)) == int(b.get("num_tiles", 1))
    )


def pooled_consumers(model: CreditModel | None) -> str | None:
    """The not-modelled sentence for pipelines that several consumer tasks read, or None when none is.

    TS counts a pipeline's consumer tasks together (every n-th wait takes a commit, every n-th release frees a
    slot, whoever waits or releases), and the search counts as TS does; the hardware gives each consumer its own
    phase and frees a slot once every consumer has released it. A consumer that waits on something else before
    releasing such a pipeline can hang on the GPU where the pooled count finds no deadlock.
    """
    shared = sorted(name for name, n in (model.consumers if model is not None else ()) if n > 1)
    if not shared:
        return None
    return (f"the hardware does not pool the consumers of {', '.join(shared)}: TS counts the consumer tasks of each "
            "together (every n-th wait takes a commit, every n-th release frees a slot, whoever releases), and the "
            "search counts as TS does, while on the GPU each consumer waits for its own phase and a slot is free "
            "once every consumer released it; so a consumer that waits on another pipeline before releasing one of "
            "these can hang while the search finds no deadlock (a tile-loop abstraction of a shared pool, where "
            "listed, is proven consumer by consumer)")


def build_scope(
    facts: Instance,
    runs: list[ExhaustiveRun],
    calls: list[dict[str, Any]],
    tm_kwargs: dict[str, Any],
    *,
    needed: list[dict[str, Any]] | tuple[dict[str, Any], ...],
    tiles: int | None,
    tile_proof: TileProof | None,
    instance: str | None,
    not_modelled: tuple[str, ...],
    unread: str = "",
    engine: str = TS_ENGINE,
) -> Scope:
    """The Verdict's scope from the tasks, the runs (and their checker ``calls``), the runs the instance
    ``needed`` (at TS's tile count, or at the caller's ``tiles``) and what the caller said."""
    searched = tm_kwargs.get("exhaustive_deadlock_race_check", True) is not False
    persistent = facts.persistent
    missing = tuple(_label(kw, persistent) for kw in (needed if searched else ())
                    if not any(same_call(kw, c) for c in calls))
    abstractions: list[Abstraction] = []
    skip = facts.skip
    covered = ""
    if persistent and searched and (tile_proof is not None or tiles is not None):
        searched_counts = {r.num_tiles for r in runs}
        if tiles is not None:
            covered = f"exactly {tiles} work tile{'' if tiles == 1 else 's'} (the caller's count, searched unrolled)"
        elif tile_proof is not None:
            sentence, proven = tile_proof.sentence, tile_proof.proven
            shown = any(not r.safe for r in runs)
            if tile_proof.failing and not shown and set(tile_proof.failing) <= searched_counts:
                sentence = (f"{sentence.split(';')[0]}, which the unrolled search at "
                            f"{', '.join(map(str, tile_proof.failing))} tiles did not reproduce")
            abstractions.append(Abstraction("tile-loop", sentence, proven))
            counted = ", ".join(map(str, sorted(searched_counts))) or "none"
            covered = ("every number of work tiles (tile-loop search)" if proven
                       else f"only the searched counts ({counted} work tiles)")
        if skip and (tiles is None or tiles > 1):
            inert = skipped_tiles_inert(facts)
            ok = inert and (tiles is None or set(range(1, tiles + 1)) <= searched_counts)
            abstractions.append(Abstraction("skipped-tile", MIXED_INERT if ok else MIXED_UNPROVEN, ok))
    extra = tuple(not_modelled)
    pooled = pooled_consumers(facts.credit_model)
    if pooled is not None:
        extra = (*extra, pooled)
    if facts.python_conditions:
        extra = (PYTHON_CONDITION, *extra)
    if persistent:
        extra = (WORK_QUEUE_NOT_MODELLED, *extra)
    scope = Scope(
        searched=searched, instance=instance or "", tasks=facts.trips,
        runs=tuple(run_scope(r) for r in runs), missing=missing,
        tiles=tuple(sorted({r.num_tiles for r in runs})) if persistent else (),
        tiles_per_cta=tiles if persistent else None, abstractions=tuple(abstractions),
        assumptions=(OPAQUE_ASSUMPTION,) if facts.opaque_keys else (), unread=unread,
        engine=engine, tiles_covered=covered,
    )
    return scope.extended(not_modelled=extra)


def _label(kwargs: dict[str, Any], persistent: bool) -> str:
    details = []
    if persistent:
        n = int(kwargs.get("num_tiles", 1))
        details.append(f"{n} tile{'' if n == 1 else 's'}")
    details += [f"{k}={v}" for k, v in (kwargs.get("opaque_assignment") or {}).items()]
    return ("skipped-tile" if kwargs.get("skipped_tile") else "normal") + (f" ({', '.join(details)})" if details else "")


__all__ = ["build_scope", "same_call"]
