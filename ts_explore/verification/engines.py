"""Which exhaustive search a verification uses: ts-explore's own checker (default) or TS's BFS.

``verify(..., checker=...)`` picks one :class:`Engine`; every search run of
that verification (each variant, key assignment and tile count) goes
through its :meth:`Engine.search`, which takes a
:class:`~ts_explore.reader.instance.SearchInput` and returns a
:class:`~ts_explore.reader.instance.Searched`, so a verdict is proven by one engine and its scope says which.

``"auto"`` and ``"reduced"``: :mod:`ts_explore.check` with partial-order
reduction (finishes the 5-to-7-task schedules TS's BFS cannot); also when
TS's own search was switched off with ``exhaustive_deadlock_race_check=False``.
``"unreduced"``: the same engine visiting every interleaving (for comparison).
``"ts"``: TS's ``exhaustive_checker.check_all_interleavings``, the reference,
run by :func:`ts_explore.reader.ts_search.reference_search` (it needs the TS
objects, so the reader hands it in).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..check.cross import cross_check
from ..check.engine import DEFAULT_MAX_STATES, search
from ..check.problem import SearchProblem
from ..check.tile_cross import tile_cross_check
from ..model.scope import TS_ENGINE, TileCheck
from ..model.verdict import ExhaustiveRun
from ..reader.instance import Instance, SearchInput, Searched
from .findings import exhaustive_run

CHECKERS = ("auto", "reduced", "unreduced", "ts")
OWN_REDUCED = "ts-explore checker (partial-order reduced)"
OWN_UNREDUCED = "ts-explore checker (every interleaving)"


Reference = Callable[[SearchInput], Searched]


@dataclass(frozen=True)
class Engine:
    """One search engine: ``search(input, instance, reference)`` for every run of a verification."""

    name: str
    own: bool  # ts-explore's checker (a cap or cancel is never SAFE; progress and cancel reach it)
    options: tuple[tuple[str, Any], ...] = ()

    def search(self, inp: SearchInput, instance: Instance, reference: Reference | None = None) -> Searched:
        """Run one search; TS's engine runs through ``reference`` (the reader's runner of TS's BFS)."""
        if not self.own:
            if reference is None:
                raise ValueError("TS's search needs the TS objects: pass the reader's reference_search")
            return reference(inp)
        if inp.problem is None:
            raise ValueError("the search input could not be read")
        opts = dict(self.options)
        result = search(inp.problem, reduce=opts["reduce"], max_states=opts.get("max_states", DEFAULT_MAX_STATES),
                        progress=opts.get("progress"), cancel=opts.get("cancel"))
        both = None
        if opts.get("cross_check") and (result.complete or result.findings):  # a clean cap proves nothing anyway
            both = cross_check(inp.problem, first=result)
            if not both.agree:  # not a proof either way: no finding, and the run reads as not finished
                result = replace(result, deadlocks=(), races=(), pdl_violations=(), hit_cap=True)
        run = None
        model = inp.credit_model or instance.credit_model
        if inp.lanes is not None and model is not None:
            run = exhaustive_run(result, inp.problem, inp.lanes, model, variant=inp.variant,
                                 opaque=inp.opaque, num_tiles=inp.num_tiles, persistent=instance.persistent,
                                 engine=self.name, display=instance.display)
            if both is not None:
                run = replace(run, cross_checked=True, disagreement="" if both.agree else both.reason)
        counts = {"deadlock": len(result.deadlocks), "race": len(result.races),
                  "pdl-order": len(result.pdl_violations)}
        return Searched(inp, counts, result.states_explored, result.hit_cap or result.cancelled, run)


def cross_checks(engine: Engine) -> bool:
    """True when ``engine`` was asked for the independent cross-checks (``verify(..., cross_check=True)``)."""
    return bool(dict(engine.options).get("cross_check"))


def cross_check_tiles(runs: list[ExhaustiveRun],
                      variants: list[Callable[[int], SearchProblem | None]]) -> TileCheck | None:
    """Unroll a persistent schedule's tiles independently of the verification's tile plan, and compare.

    ``variants``: for each run the instance needs (variant and key
    assignment), its checker input at ``n`` work tiles (None: not readable).
    The answer of ``runs`` (what the verification searched) is compared with
    :func:`ts_explore.check.tile_cross.tile_cross_check`'s; a disagreement
    becomes one of the scope's reasons, so the verdict is INCONCLUSIVE. Only
    a clean, finished answer is unrolled (None is returned otherwise): only
    SAFE claims more tile counts than were searched, and a finding at a
    searched count is confirmed by the per-run cross-check.
    """
    first = frozenset(f.kind for r in runs for f in (*r.deadlocks, *r.races, *r.pdl_violations))
    complete = all(not r.hit_state_limit for r in runs)
    if first or not complete:
        return None

    def at(problem_of: Callable[[int], SearchProblem | None]) -> Callable[[int], SearchProblem]:
        memo: dict[int, SearchProblem] = {}

        def problem_at(n: int) -> SearchProblem:
            if n not in memo:
                problem = problem_of(n)
                if problem is None:
                    raise ValueError(f"the {n}-tile search input could not be read")
                memo[n] = problem
            return memo[n]
        return problem_at

    both = tile_cross_check([at(v) for v in variants], first, complete)
    return TileCheck(both.bound.tiles, both.bound.covers, both.bound.why, both.first, both.second, both.agree,
                     both.states, both.seconds, both.reason)


def engine_for(checker: str, *, progress: Callable[[int, float, float], None] | None = None,
               cancel: Any = None, max_states: int | None = None, cross_check: bool = False) -> Engine:
    """The engine ``checker`` names; a ValueError listing the choices for anything else.

    ``progress(states, states_per_s, elapsed_s)`` and ``cancel`` (anything with
    ``is_set()``, e.g. a ``threading.Event``) reach our engine; ``max_states``
    caps each of its runs (a capped run is never SAFE). ``cross_check`` also
    searches each run with the independent second engine
    (:func:`ts_explore.check.cross_check`); a disagreement leaves the run
    without findings and not finished, its ``disagreement`` naming both answers.
    """
    if checker not in CHECKERS:
        raise ValueError(f"verify(checker={checker!r}): pick one of {', '.join(CHECKERS)} ('auto' uses ts-explore's "
                         "own checker, 'ts' TS's exhaustive_checker)")
    if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int)):
        raise TypeError(f"verify(max_states={max_states!r}): give a whole number of states per search run, e.g. "
                        "max_states=1_000_000, or None for the default cap")
    if max_states is not None and max_states < 1:
        raise ValueError(f"verify(max_states={max_states}): a search run needs at least 1 state; give a positive "
                         "cap, e.g. max_states=1_000_000, or None for the default cap")
    if checker == "ts":
        return Engine(TS_ENGINE, own=False)
    reduce = checker != "unreduced"
    options: dict[str, Any] = {"reduce": reduce, "progress": progress, "cancel": cancel, "cross_check": cross_check}
    if max_states is not None:
        options["max_states"] = max_states
    return Engine(OWN_REDUCED if reduce else OWN_UNREDUCED, own=True, options=tuple(options.items()))


__all__ = ["CHECKERS", "Engine", "OWN_REDUCED", "OWN_UNREDUCED", "Reference", "cross_check_tiles", "cross_checks",
           "engine_for"]
