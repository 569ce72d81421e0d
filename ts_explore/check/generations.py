"""Completion generations in the tile-loop search: relative to the slowest task's period, stale ones merged.

TS tags a DMA consumer's reads with the generation of the commit that
follows them and clears them at the wait of the same generation; both
count per resource along a task's lane, so over many tiles they grow
without bound. The tile-loop search (:mod:`.tile_search`) keeps them
relative to the period of its slowest task's tile, and a generation below
the next wait generation of every unfinished task that clears the resource
can never be cleared: all such generations are one value, ``STALE``.
"""

from __future__ import annotations

from .held import Held
from .problem import UNTAGGED
from .tile_loop import TileLoop

STALE = -2  # a completion generation no future wait can clear (never a wait's generation, nor UNTAGGED)
assert STALE != UNTAGGED


class Generations:
    """Completion generations in the search's relative coordinates, and which ones are stale."""

    def __init__(self, loop: TileLoop) -> None:
        self.loop = loop
        self.advance = dict(loop.gen_advance)
        self.source = dict(loop.gen_source)
        self.active = bool(self.source)
        self.waiters: dict[int, list[int]] = {}
        for t, tables in enumerate(loop.tiles):
            for table in tables:
                for step in table:
                    if step.held is not None:
                        for r in step.held.clear_wait:
                            if t not in self.waiters.setdefault(r, []):
                                self.waiters[r].append(t)
        self._next: dict[tuple[int, int, int, int], int | None] = {}

    def _next_clear(self, task: int, index: int, cursor: int, res: int) -> int | None:
        """Generation (in tile ``index``'s epoch) of the next wait of ``task`` clearing ``res``'s reads."""
        key = (task, index, cursor, res)
        if key not in self._next:
            loop, found = self.loop, None
            idx, epochs, c = index, 0, cursor
            for _ in range(loop.prefix + loop.period + 1):
                table = loop.tiles[task][idx]
                hit = next((s for s in table[c:] if s.held is not None and res in s.held.clear_wait), None)
                if hit is not None:
                    found = hit.held.generation + epochs * self.advance.get(hit.resource, 0)
                    break
                nidx, step_epochs = loop.locate(idx, 1)
                epochs += step_epochs
                idx, c = nidx, 0
            self._next[key] = found
        return self._next[key]

    def live_floor(self, res: int, base: int, pos: list) -> float:
        """The smallest generation some unfinished task's future wait can still clear on ``res``."""
        best = float("inf")
        for t in self.waiters.get(res, ()):
            p = pos[t]
            if p is None:
                continue
            idx, epochs = self.loop.locate(base, p[0])
            g = self._next_clear(t, idx, p[1], res)
            if g is not None:
                best = min(best, g + epochs * self.advance.get(self.source.get(res, -1), 0))
        return best

    def normalise(self, held: Held, shift_epochs: int, base: int, pos: list) -> Held:
        """Generations moved back ``shift_epochs`` periods; those below every future wait's become ``STALE``."""
        if not self.active or not held:
            return held
        out: Held = {}
        for r, entries in held.items():
            if not any(e[3] >= 0 for e in entries):
                out[r] = entries
                continue
            floor = self.live_floor(r, base, pos)
            down = shift_epochs * self.advance.get(self.source.get(r, -1), 0)
            fixed = []
            for e in entries:
                g = e[3]
                if g >= 0:
                    g -= down
                    if g < floor:
                        g = STALE
                    e = (e[0], e[1], e[2], g)
                fixed.append(e)
            out[r] = fixed
        return out


__all__ = ["STALE", "Generations"]
