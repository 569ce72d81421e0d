"""Which exhaustive search a verification uses: ts-explore's own checker (default) or TS's BFS.

``verify(..., checker=...)`` picks one :class:`Engine`; every search run of
that verification - the ones TaskManager asks for while it checks, the
variants it skipped, the extra tile counts - goes through it, so a verdict is
proven by one engine and its scope says which.

``"auto"`` and ``"reduced"``: :mod:`ts_explore.check` with partial-order
reduction (finishes the 5-to-7-task schedules TS's BFS cannot); also when
TS's own search was switched off with ``exhaustive_deadlock_race_check=False``.
``"unreduced"``: the same engine visiting every interleaving (for comparison).
``"ts"``: TS's ``exhaustive_checker.check_all_interleavings``, the reference.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ..model.scope import TS_ENGINE

CHECKERS = ("auto", "reduced", "unreduced", "ts")
OWN_REDUCED = "ts-explore checker (partial-order reduced)"
OWN_UNREDUCED = "ts-explore checker (every interleaving)"


@dataclass(frozen=True)
class Engine:
    """One search engine behind TS's ``check_all_interleavings(tasks, **kwargs)`` interface."""

    name: str
    run: Callable[..., Any]
    own: bool  # results carry their counterexample paths (``.paths``) and count a cap as not safe


def engine_for(checker: str, *, progress: Callable[[int, float, float], None] | None = None,
               cancel: Any = None, max_states: int | None = None, cross_check: bool = False) -> Engine:
    """The engine ``checker`` names; a ValueError listing the choices for anything else.

    ``progress(states, states_per_s, elapsed_s)`` and ``cancel`` (anything with
    ``is_set()``, e.g. a ``threading.Event``) reach our engine; ``max_states``
    caps each of its runs (a capped run is never SAFE). ``cross_check`` runs
    the independent second search on each run of our engine too.
    """
    if checker not in CHECKERS:
        raise ValueError(f"verify(checker={checker!r}): pick one of {', '.join(CHECKERS)} ('auto' uses ts-explore's "
                         "own checker, 'ts' TS's exhaustive_checker)")
    if checker == "ts":
        return Engine(TS_ENGINE, _ts_check, own=False)
    from .own_checker import check_all_interleavings

    reduce = checker != "unreduced"
    options: dict[str, Any] = {"reduce": reduce, "progress": progress, "cancel": cancel, "cross_check": cross_check}
    if max_states is not None:
        options["max_states"] = max_states
    return Engine(OWN_REDUCED if reduce else OWN_UNREDUCED, functools.partial(_own_run, check_all_interleavings,
                                                                             options), own=True)


def _own_run(check: Callable[..., Any], options: dict[str, Any], tasks: Any, **kwargs: Any) -> Any:
    kwargs.pop("verbose", None)  # TS prints its path; ours returns it
    if "max_states" in options:
        kwargs["max_states"] = options["max_states"]
    return check(tasks, reduce=options["reduce"], progress=options["progress"], cancel=options["cancel"],
                 cross_check=options["cross_check"], **kwargs)


def _ts_check(tasks: Any, **kwargs: Any) -> Any:
    """TS's function, looked up at call time (verify calls it only while its own wrapper is not installed)."""
    return ec.check_all_interleavings(tasks, **kwargs)


__all__ = ["CHECKERS", "Engine", "OWN_REDUCED", "OWN_UNREDUCED", "engine_for"]
