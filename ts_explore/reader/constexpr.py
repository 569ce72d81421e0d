"""``cutlass.range_constexpr`` outside a JIT trace: an explicit switch, off unless asked for.

Inside ``@cute.jit`` the DSL's preprocessor rewrites ``range_constexpr`` loops
into trace-time unrolled Python loops and never calls the function; called
anywhere else it raises "range_constexpr should be preprocessed by
preprocessor". A ``@schedule`` function is called on the CPU (that is how TS
records it), so the guide's schedules that unroll with ``range_constexpr``
need it to behave as ``range`` there. That is what this switch does, for
every reference to the function (``cutlass.range_constexpr`` or a name
imported from it), by giving the one function object a ``range`` body while
the switch is on:

>>> with range_constexpr_on_cpu():                     # doctest: +SKIP
...     sched = my_schedule(tmem, gmem, wq)            # calls range_constexpr
...     task = Task(..., schedule=sched)

``%load_ext ts_explore`` turns it on for the notebook (``%unload_ext`` turns
it off); :func:`ts_explore.record` turns it on while it records. Importing
ts_explore never does. Inside a JIT nothing changes: the preprocessor still
rewrites the loops before they could call the function.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

from cutlass.base_dsl import ast_helpers

_FUNCTION = ast_helpers.range_constexpr
_ORIGINAL = _FUNCTION.__code__
_LOCK = threading.RLock()
_holders = 0  # nested `with` blocks plus the notebook extension


def _cpu_range(*args: Any) -> range:
    # runs with the DSL module's globals, where ``range`` is the DSL's own: reach the builtins explicitly
    import builtins

    return builtins.range(*builtins.map(builtins.int, args))


def enable() -> None:
    """Turn the switch on (counted: every ``enable`` needs its ``disable``)."""
    global _holders
    with _LOCK:
        _holders += 1
        _FUNCTION.__code__ = _cpu_range.__code__


def disable() -> None:
    """Undo one :func:`enable`; the DSL's own behaviour is back when none is left."""
    global _holders
    with _LOCK:
        _holders = max(0, _holders - 1)
        if _holders == 0:
            _FUNCTION.__code__ = _ORIGINAL


def is_enabled() -> bool:
    """True while ``range_constexpr`` works as ``range`` outside a JIT."""
    return _FUNCTION.__code__ is not _ORIGINAL


@contextlib.contextmanager
def range_constexpr_on_cpu() -> Iterator[None]:
    """Let ``cutlass.range_constexpr`` run as ``range`` outside a JIT for the ``with`` block."""
    enable()
    try:
        yield
    finally:
        disable()


__all__ = ["disable", "enable", "is_enabled", "range_constexpr_on_cpu"]
