"""Compiled kernels, kept per (scenario, config, architecture) for the life of the worker.

Sizes are runtime arguments of every catalog kernel, so one compile serves
every size; a relaunch of a cached config only pays a dictionary lookup.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Compiled:
    """A compiled host function and what compiling it cost."""

    fn: Any
    compile_s: float


class CompileCache:
    """``get(key, compile)`` compiles once per key and returns (Compiled, seconds spent now, hit)."""

    def __init__(self) -> None:
        self._entries: dict[Any, Compiled] = {}

    def get(self, key: Any, compile: Callable[[], Any]) -> tuple[Compiled, float, bool]:
        start = time.perf_counter()
        entry = self._entries.get(key)
        if entry is not None:
            return entry, time.perf_counter() - start, True
        fn = compile()
        spent = time.perf_counter() - start
        entry = Compiled(fn, spent)
        self._entries[key] = entry
        return entry, spent, False

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


__all__ = ["CompileCache", "Compiled"]
