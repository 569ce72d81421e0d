"""Compiled kernels, kept per (scenario, config, architecture, instrumentation) for the life of the worker.

Sizes are runtime arguments of every catalog kernel, so one compile serves
every size; a relaunch of a cached config only pays a dictionary lookup. The
key includes the trace spec (an instrumented kernel is another kernel) and
whether the build was forced past the verifier.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Compiled:
    """A compiled host function, what compiling it cost, and the task set its kernel was traced from."""

    fn: Any
    compile_s: float
    task_set: Any = None  # TaskSet captured while tracing the kernel (decodes step ids of instrumented runs)


class CompileCache:
    """``get(key, compile)`` compiles once per key and returns (Compiled, seconds spent now, hit)."""

    def __init__(self) -> None:
        self._entries: dict[Any, Compiled] = {}

    def get(self, key: Any, compile: Callable[[], Any]) -> tuple[Compiled, float, bool]:
        """``compile()`` returns the function, or ``(function, task_set)``."""
        start = time.perf_counter()
        entry = self._entries.get(key)
        if entry is not None:
            return entry, time.perf_counter() - start, True
        made = compile()
        fn, task_set = made if isinstance(made, tuple) else (made, None)
        spent = time.perf_counter() - start
        entry = Compiled(fn, spent, task_set)
        self._entries[key] = entry
        return entry, spent, False

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


__all__ = ["CompileCache", "Compiled"]
