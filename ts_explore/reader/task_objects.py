"""The TS tasks a capture keeps, for the answers only they give once the capture is done.

TS's own BFS (``verify(checker="ts")``) runs ``check_all_interleavings`` on
the tasks themselves: the capture builds that runner
(:func:`.reference.reference_search`) and keeps it here. A persistent
schedule may need a search input at a tile count nobody could name before
the searches ran: the count at which a tile-loop finding is searched again
unrolled, and the counts the tile cross-check unrolls
(:func:`ts_explore.check.tile_cross.tile_bound` derives them from the
inputs). :meth:`TaskObjects.read` reads those, the same way the capture read
the others (:func:`.instance.search_inputs`). Nothing else after the capture
touches a TS object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..check.problem import SearchProblem
from ..model import TaskSet
from .capture import quiet_warnings
from .instance import Instance, SearchInput, Searched, search_inputs
from .schedule import NameOf
from .search_input import search_problem


@dataclass(frozen=True)
class TaskObjects:
    """The TS tasks of one capture, and TS's own search over them when it will run."""

    tasks: list[Any]
    task_set: TaskSet | None
    name_of: NameOf
    reference: Callable[[SearchInput], Searched] | None = None  # TS's own search, one run per call

    def read(self, instance: Instance, runs: list[dict[str, Any]], *, problems: bool = True
             ) -> tuple[tuple[SearchInput, ...], str]:
        """The search input of each run in ``runs`` (any tile count) and why a part could not be read ('' if read).

        ``problems=False`` leaves out our checker's input (TS's own search reads the tasks itself).
        """
        return search_inputs(self.tasks, self.task_set, instance, self.name_of, runs, problems=problems)

    def unrolled(self, kwargs: dict[str, Any], known: dict[int, SearchProblem]) -> Callable[[int], SearchProblem]:
        """Our checker's input of the run ``kwargs`` at ``n`` work tiles, for any ``n`` (``known``: the counts
        already captured); what TS raises when it cannot be read propagates."""

        def at(n: int) -> SearchProblem:
            if n not in known:
                with quiet_warnings():  # repeats of TaskManager's own warnings (this thread's only)
                    known[n] = search_problem(self.tasks, **{**kwargs, "num_tiles": n})
            return known[n]
        return at


__all__ = ["TaskObjects"]
