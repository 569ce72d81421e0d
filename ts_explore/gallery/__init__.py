"""A gallery of broken schedules, each with its fixed twin, for learning to debug deadlocks.

>>> from ts_explore import gallery, verify
>>> case = gallery.get("cross_wait")
>>> verify(**case.broken()).ok, verify(**case.fixed()).ok
(False, True)

Every call builds fresh resources and tasks (TS mutates what it verifies).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from ..reader import Recording
from . import deadlocks, rules


@dataclass(frozen=True)
class Case:
    """One broken schedule and its fix.

    ``build(broken, n)`` makes fresh tasks with an ``n``-iteration domain;
    ``expect`` are words the broken verdict's summary must contain.
    """

    name: str
    title: str
    cause: str
    fix: str
    expect: tuple[str, ...]
    build: Callable[[bool, int], dict[str, Any]]
    trip_count: int = 4
    recording: Callable[[], Recording] | None = None  # a record-time variant of the mistake

    def broken(self, trip_count: int | None = None) -> dict[str, Any]:
        """Fresh ``dict(tasks=..., resource_dependency_graph=...)`` with the mistake."""
        return self.build(True, self.trip_count if trip_count is None else trip_count)

    def fixed(self, trip_count: int | None = None) -> dict[str, Any]:
        """The same schedule with the mistake fixed."""
        return self.build(False, self.trip_count if trip_count is None else trip_count)

    def builder(self, broken: bool = True) -> Callable[[int], dict[str, Any]]:
        """``n -> dict`` for :func:`ts_explore.verification.trip_search.smallest_failing_trip_count`."""
        return partial(self.build, broken)


_CASES = (
    Case("cross_wait", "Cross wait",
         "Ping and Pong each wait for the other's commit before making their own.",
         "Let one side give first: Ping commits left before waiting on right.",
         ("deadlock", "cycle", "waits for a commit"), deadlocks.cross_wait),
    Case("cycle_of_three", "A cycle of three",
         "Alpha waits on Gamma, Gamma on Beta, Beta on Alpha; nobody commits first.",
         "Break the ring: Alpha commits a before it waits on c.",
         ("deadlock", "cycle", "Alpha", "Beta", "Gamma"), deadlocks.cycle_of_three),
    Case("missing_release", "Missing release",
         "Store never releases the one-stage buffer, so Load's second acquire finds no free slot.",
         "Release the slot after reading it.",
         ("deadlock", "free slot", "release"), deadlocks.missing_release),
    Case("consumer_longer", "Consumer loop longer than the producer's",
         "Store waits one more time than Load commits.",
         "Give both loops the same trip count.",
         ("deadlock", "no task commits"), deadlocks.consumer_longer),
    Case("producer_longer", "Producer loop longer than the consumer's",
         "Load commits one tile more than Store waits for: a tile is produced and never consumed.",
         "Give both loops the same trip count.",
         ("no wait consumes", "producer loop"), deadlocks.producer_longer),
    Case("self_wait", "Waiting for yourself",
         "Worker waits for a commit on scratch that only its own later step makes.",
         "Fill and commit the scratch slot before waiting on it.",
         ("deadlock", "Worker -> Worker"), deadlocks.self_wait),
    Case("dma_release_early", "Releasing a DMA-read buffer too early",
         "Mma releases smem_a before issuing the MMA that reads it asynchronously; "
         "the TMA could refill it mid-read.",
         "Release smem_a after the MMA work that reads it.",
         ("DMA", "ConsumerRelease"), rules.dma_release_early),
    Case("workqueue_in_loop", "WorkQueue bookkeeping inside the domain loop",
         "The tile advance runs every iteration instead of once per tile.",
         "Move try_wait/wait/get_and_advance_work_tile/release after the domain loop.",
         ("WorkQueue", "loop"), rules.workqueue_in_loop, recording=rules.workqueue_in_skippable),
    Case("pdl_launch_before_wait", "PDL launch before wait",
         "Producer lets the next grid launch before it waited for the previous grid.",
         "Call launch_griddep after wait_griddep (here: after the loop).",
         ("PDL", "launch_griddep", "before"), rules.pdl_launch_before_wait),
    Case("smem_alias_race", "Shared-memory aliasing race",
         "tile_a and tile_b use the same shared-memory bytes while both are live; nothing orders their writers.",
         "Give tile_b its own bytes (or order the writers through a pipeline).",
         ("race", "smem[0:1024]", "no pipeline orders them"), rules.smem_alias_race),
)

CASES: dict[str, Case] = {case.name: case for case in _CASES}
globals().update(CASES)  # gallery.cross_wait, ...: also reachable as ``ts_explore.gallery:cross_wait.broken``


def get(name: str) -> Case:
    """A gallery case by name."""
    try:
        return CASES[name]
    except KeyError:
        raise KeyError(f"no gallery case {name!r}; the gallery has: {', '.join(CASES)}") from None


__all__ = ["CASES", "Case", "get", *CASES]
