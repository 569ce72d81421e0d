"""A persistent schedule's work-tile loop as plain data: one step table per tile phase.

TS checks a persistent schedule by repeating each task's expanded schedule
(HEAD + loop + TAIL) ``num_tiles`` times and numbering pipeline slots,
credit keys and completion generations over the concatenation. Tile ``k``'s
steps are therefore tile 0's with those numbers moved on: a ring of ``S``
stages used ``u`` times per tile starts tile ``k`` at slot ``(k*u) mod S``.
The tables repeat with a period ``P`` (dividing the lcm of the stage
counts), possibly after a one-tile prefix (the first tile has no previous
tile to look back on), and completion generations grow by a fixed amount
per period. :class:`TileLoop` holds exactly that, read from TS by
:func:`ts_explore.reader.tile_loop.tile_loop`; :mod:`.tile_search` searches it
as a cycle.

>>> from ts_explore.check.problem import Step
>>> s = Step(resource=0, stage="ProducerWork")
>>> loop = TileLoop(SearchProblem(("t",), ((s,),), ("smem",), ()), ((((s,),),)), prefix=0, period=1)
>>> loop.locate(0, 5), loop.tile_length(0)
((0, 5), 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from .problem import SearchProblem, Step


@dataclass(frozen=True)
class TileLoop:
    """Each task's tile tables, the prefix/period that maps a tile index to a table, and generation advances.

    ``tiles[t][i]`` is task ``t``'s lane for the tiles whose table index is
    ``i`` (:meth:`locate`); every table of a task has the same length.
    ``problem`` carries the credit counters, tallies, alias tables and run
    options shared by every tile (its lanes are tile 0's). ``gen_advance``
    maps a resource whose commits and waits carry completion generations to
    how much those generations grow per period; ``gen_source`` maps a
    DMA-read resource to the resource whose commits tag its reads.
    """

    problem: SearchProblem
    tiles: tuple[tuple[tuple[Step, ...], ...], ...]
    prefix: int
    period: int
    gen_advance: tuple[tuple[int, int], ...] = ()
    gen_source: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.period < 1 or self.prefix < 0:
            raise ValueError(f"a tile loop needs period >= 1 and prefix >= 0, got {self.period} and {self.prefix}")
        if len(self.tiles) != len(self.problem.tasks):
            raise ValueError(f"{len(self.tiles)} tile tables for {len(self.problem.tasks)} tasks")
        for t, tables in enumerate(self.tiles):
            if len(tables) != self.prefix + self.period:
                raise ValueError(f"task {self.problem.tasks[t]!r} has {len(tables)} tile tables, expected "
                                 f"{self.prefix + self.period}")
            if len({len(lane) for lane in tables}) > 1:
                raise ValueError(f"task {self.problem.tasks[t]!r} has tiles of different lengths")

    def locate(self, base: int, offset: int) -> tuple[int, int]:
        """The table index of tile ``base + offset`` and how many periods past ``base``'s its generations are.

        ``base`` is a tile index below ``prefix + period`` standing for every
        tile of the same phase; the periods are counted from ``base``'s.
        """
        x = base + offset
        if x < self.prefix:
            return x, 0
        return self.prefix + (x - self.prefix) % self.period, (x - self.prefix) // self.period

    def tile_length(self, task: int) -> int:
        """Steps per tile of ``task``."""
        return len(self.tiles[task][0])


__all__ = ["TileLoop"]
