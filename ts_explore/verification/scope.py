"""What a verification searched, and which searches an instance needs: the Verdict's :class:`Scope`.

Works on the :class:`~ts_explore.reader.instance.Instance` the reader read
once: :func:`needed_runs` restates TaskManager's loop (each key assignment,
the skipped-tile run when a task has ``skip_if``, two tiles for a persistent
schedule), :func:`coverage` and :func:`tile_counts` the extra tile counts a
persistent schedule needs (:mod:`ts_explore.analysis.tiles` says which and
why), so that SAFE covers every number of work tiles a CTA may run, or the
exact number the caller names with ``verify(tiles=...)``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..analysis.shared_pools import projection
from ..analysis.tiles import INDEPENDENT, INERT, MAX_TILES, MIXED_SENTENCES, TileCoverage, mixed_tiles, tile_coverage
from ..check.projection import project
from ..model.interleaving import CreditModel
from ..model.scope import TS_ENGINE, WORK_QUEUE_NOT_MODELLED, Abstraction, Scope
from ..model.verdict import ExhaustiveRun, run_scope
from ..reader.instance import Instance, SearchInput

OPAQUE_ASSUMPTION = ("each when_true/when_false key keeps one value for the whole run: TS searches every "
                     "assignment of the keys, not values that change from one iteration or tile to the next")
PYTHON_CONDITION = ("when_true/when_false given a plain Python value: the kernel runs the block unconditionally, "
                    "yet both branches were searched")


def needed_runs(instance: Instance, tm_kwargs: dict[str, Any], num_tiles: int | None = None) -> list[dict[str, Any]]:
    """The search runs an instance needs at one tile count (TaskManager's own loop, restated)."""
    tiles = num_tiles if num_tiles is not None else (2 if instance.persistent else 1)
    base = {"num_tiles": tiles, "assume_pdl_wait_completed": tm_kwargs.get("assume_pdl_wait_completed", False)}
    out = []
    for assignment in instance.assignments:
        out.append({**base, "opaque_assignment": assignment})
        if instance.skip:
            out.append({**base, "skipped_tile": True, "opaque_assignment": assignment})
    return out


def same_call(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two checker calls search the same variant, assignment and tile count."""
    return (
        bool(a.get("skipped_tile")) == bool(b.get("skipped_tile"))
        and (a.get("opaque_assignment") or {}) == (b.get("opaque_assignment") or {})
        and int(a.get("num_tiles", 1)) == int(b.get("num_tiles", 1))
    )


def coverage(instance: Instance, projections: bool = False) -> tuple[TileCoverage, str]:
    """The tile counts a persistent schedule needs (for every key assignment), and why tile kinds may mix
    (``projections``: the engine can search a shared pipeline's projections, see ``analysis.shared_pools``)."""
    model = instance.credit_model
    if model is None:
        raise ValueError(f"the credit pools could not be read: {instance.unread}")
    found: list[TileCoverage] = []
    mixed: list[str] = []
    for lanes, skipped in instance.one_tile_lanes:
        cov = tile_coverage(lanes, model, projections=projections)
        found.append(cov)
        mixed.append(mixed_tiles(cov, skipped, model))
    worst = next((c for c in found if not c.sufficient), None)
    if worst is None:
        worst = max(found, key=lambda c: len(c.tiles))
    kinds = set(mixed)
    return worst, INDEPENDENT if kinds == {INDEPENDENT} else INERT if kinds <= {INERT, INDEPENDENT} else ""


def tile_counts(plan: tuple[TileCoverage, str], tiles: int | None, skip: bool) -> tuple[int, ...]:
    """The tile counts to search: the plan's, or the caller's count (plus, with ``skip_if``, the shorter ones)."""
    cov, _ = plan
    if tiles is None:
        return cov.tiles
    if tiles == 0:
        return ()
    counts = {tiles}
    if skip and tiles > 1:  # mixed sequences reduce to runs of fewer normal tiles
        counts |= set(cov.tiles) if cov.sufficient else set(range(1, tiles + 1)) if tiles <= MAX_TILES else set()
    return tuple(sorted(counts))


def extra_tile_runs(instance: Instance, tm_kwargs: dict[str, Any], counts: tuple[int, ...],
                    done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs of the tile counts in ``counts`` that ``done`` does not cover yet (every variant and assignment)."""
    out: list[dict[str, Any]] = []
    for k in counts:
        for kwargs in needed_runs(instance, tm_kwargs, k):
            if not any(same_call(kwargs, r) for r in [*done, *out]):
                out.append(kwargs)
    return out


def build_scope(
    facts: Instance,
    runs: list[ExhaustiveRun],
    calls: list[dict[str, Any]],
    tm_kwargs: dict[str, Any],
    *,
    tiles: int | None,
    tile_plan: tuple[TileCoverage, str] | None,
    instance: str | None,
    not_modelled: tuple[str, ...],
    unread: str = "",
    engine: str = TS_ENGINE,
) -> Scope:
    """The Verdict's scope from the tasks, the runs (and their checker ``calls``) and what the caller said."""
    searched = tm_kwargs.get("exhaustive_deadlock_race_check", True) is not False
    persistent = facts.persistent
    needed: list[dict[str, Any]] = []
    if searched:
        needed = needed_runs(facts, tm_kwargs)
        if persistent and tiles is not None:
            needed = needed_runs(facts, tm_kwargs, tiles) if tiles > 0 else []
    missing = tuple(_label(kw, persistent) for kw in needed if not any(same_call(kw, c) for c in calls))
    abstractions: list[Abstraction] = []
    skip = facts.skip
    if persistent and searched and tile_plan is not None:
        cov, mixed = tile_plan
        searched_counts = {r.num_tiles for r in runs}
        if tiles is None and cov.sufficient and not set(cov.tiles) <= searched_counts:
            done = ", ".join(map(str, sorted(searched_counts))) or "no"
            abstractions.append(Abstraction("two-tile", f"searched {done} work tile(s) only: a failure ended the "
                                                        "search before the other tile counts", False))
        elif tiles is None:
            abstractions.append(Abstraction("two-tile", cov.sentence, cov.sufficient))
        if skip and (tiles is None or tiles > 1):
            shorter = (cov.sufficient and set(cov.tiles) <= searched_counts) or (
                tiles is not None and set(range(1, tiles + 1)) <= searched_counts)
            ok = mixed == INDEPENDENT or (mixed == INERT and shorter)
            abstractions.append(Abstraction("skipped-tile", MIXED_SENTENCES[mixed if ok else ""], ok))
    extra = tuple(not_modelled)
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
        engine=engine,
    )
    return scope.extended(not_modelled=extra)


def _label(kwargs: dict[str, Any], persistent: bool) -> str:
    details = []
    if persistent:
        n = int(kwargs.get("num_tiles", 1))
        details.append(f"{n} tile{'' if n == 1 else 's'}")
    details += [f"{k}={v}" for k, v in (kwargs.get("opaque_assignment") or {}).items()]
    return ("skipped-tile" if kwargs.get("skipped_tile") else "normal") + (f" ({', '.join(details)})" if details else "")


def projected(inputs: tuple[SearchInput, ...], plan: tuple[TileCoverage, str] | None,
              model: CreditModel | None) -> list[SearchInput]:
    """With a shared pipeline in the plan: each input's projections, one per consumer (else the inputs)."""
    pool = plan[0].shared if plan is not None else None
    if pool is None:
        return list(inputs)
    out = []
    for inp in inputs:
        if inp.problem is None or inp.lanes is None or model is None:
            raise ValueError(f"{pool.resource}'s projections need the checker's input of the whole task set")
        for keep in pool.consumers:
            drop = tuple(c for c in pool.consumers if c != keep)
            lanes, alone = projection(inp.lanes, model, pool, keep)
            out.append(replace(inp, problem=project(inp.problem, pool.resource, keep, drop), lanes=lanes,
                               alone=keep, credit_model=alone))
    return out


__all__ = ["build_scope", "coverage", "extra_tile_runs", "needed_runs", "projected", "same_call", "tile_counts"]
