"""TS's own exhaustive search as the reference engine (``verify(..., checker="ts")``).

:func:`reference_search` binds the TS tasks and returns the runner
:class:`~ts_explore.verification.engines.Engine` calls for each
:class:`~ts_explore.reader.instance.SearchInput`: it calls TS's
``check_all_interleavings`` with the run's keywords, and for a failing run
records the shortest paths TS prints (:func:`ts_search.run_with_paths`), so
the findings become the same model types our engine's do.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ..model.scope import TS_ENGINE
from . import ts_search as ck
from .capture import quiet
from .instance import Instance, SearchInput, Searched


def reference_search(tasks: list[Any], instance: Instance, *, stalled: bool = False
                     ) -> Callable[[SearchInput], Searched]:
    """TS's search over ``tasks``, one run per call; ``stalled``: the credit simulation failed, so record paths at once."""

    def run(inp: SearchInput) -> Searched:
        kwargs = dict(inp.kwargs)
        paths: list[Any] | None = None
        start = time.perf_counter()
        with quiet():  # TaskManager's own warnings are already kept; only this thread's are silenced
            if stalled:  # the search will fail too: take its paths in this same run
                result, paths = ck.run_with_paths(tasks, kwargs, ec.check_all_interleavings)
            else:
                result = ec.check_all_interleavings(tasks, **kwargs, verbose=False)
            seconds = time.perf_counter() - start
            counts = {"deadlock": len(result.deadlock_states), "race": len(result.race_states),
                      "pdl-order": len(result.pdl_order_states)}
            exhaustive = None
            if inp.lanes is not None and instance.credit_model is not None:
                if any(counts.values()) and paths is None:
                    paths = ck.capture_paths(tasks, kwargs, ec.check_all_interleavings)
                record = ck.RunRecord(kwargs, result, run_by="ts-explore", paths=paths, seconds=seconds)
                exhaustive = ck.convert_run(record, inp.lanes, instance.credit_model, list(instance.task_names),
                                            instance.display, paths or [], inp.opaque, instance.persistent)
        return Searched(inp, counts, result.states_explored, bool(result.hit_state_limit), exhaustive)

    return run


__all__ = ["TS_ENGINE", "reference_search"]
