"""What a kernel module hands the launcher for one size: inputs, exact expected outputs, arguments.

Also the two shapes of per-CTA work the catalog's kernels have, as plan
instances: a strided domain (``range(b, count, grid)`` per CTA or thread, two
trip counts at most) and a uniform one.

>>> [(i.describe(), i.iterations) for i in strided_instances(10, 4, "tile")]
[('CTAs 0-1: 3 tiles', 3), ('CTAs 2-3: 2 tiles', 2)]
>>> [i.describe() for i in strided_instances(2, 4, "tile")]
['CTAs 0-1: 1 tile', 'CTAs 2-3: no work (0 tiles)']
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..model.plan import Instance

FILL = np.int32(-559038737)  # 0xDEADBEEF: what an output holds where nothing was written
MAX_ELEMENTS = 2**31 - 1


class SizeError(ValueError):
    """A problem size this kernel cannot take; the message names the fix."""


@dataclass
class HostProblem:
    """Everything the launch worker needs besides the compiled kernel."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, int]  # name -> int32 elements to allocate (filled with FILL; zero_filled ones with 0)
    expected: dict[str, np.ndarray]
    args: tuple[Any, ...]  # buffer names (str) become device pointers; ints pass through; the stream is appended
    bytes_moved: int  # bytes read + written by one launch
    elements: int  # problem size in int32 elements (the x axis of bandwidth plots)
    grid: int
    shapes: dict[str, tuple[int, int]] = field(default_factory=dict)  # 2-D view of an output for heatmaps
    zero_filled: tuple[str, ...] = ()


@dataclass
class DeviceProblem:
    """A problem whose data is made on the GPU (e.g. torch tensors), for kernels the host cannot check exactly.

    A kernel module provides ``device_problem(fn, cfg, plan, stream)`` instead of
    ``host_problem`` when its inputs are too large to check on the host (a GEMM):
    ``launch`` runs the compiled kernel once on ``stream``; ``check`` compares
    the output with a reference computed on the GPU and returns ``(wrong, total,
    first, heatmap)``; ``references`` are library calls doing the same work,
    timed beside the kernel in the same process.
    """

    launch: Any  # () -> None
    check: Any  # () -> (wrong elements, total, ((index, expected, got), ...), heatmap array or None)
    references: dict[str, Any]  # label -> () -> None
    flops: int
    bytes_moved: int
    elements: int  # output elements
    grid: int  # CTAs launched
    shape: str  # the problem in words, e.g. "8192x8192x8192"
    output: str = "C"
    args: tuple = ()  # what ``launch`` passes the compiled function (stream last); an instrumented build takes
    # these followed by its trace buffers
    outputs: Any = None  # () -> {name: host numpy array} of what the last launch wrote (launch(keep_output=True))


@functools.lru_cache(maxsize=2)
def pattern(n: int, salt: int = 0) -> np.ndarray:
    """Deterministic, position-dependent int32 data (neighbours differ); read-only and cached per size."""
    out = np.arange(n, dtype=np.uint32)
    out *= np.uint32(2654435761)  # wraps mod 2**32
    out += np.uint32(12345 + salt)
    out = out.view(np.int32)
    out.flags.writeable = False
    return out


def require_size(size: int) -> int:
    """``size`` as an int in 1..2**31-1 (int32 elements); SizeError naming the fix.

    Any count in that range launches: the copies handle a partial last vector
    or tile inside the kernel.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise SizeError(f"size {size!r} is not a whole number of int32 elements; pass e.g. 1 << 24")
    size = int(size)
    if not 0 < size <= MAX_ELEMENTS:
        raise SizeError(f"size {size} is not between 1 and {MAX_ELEMENTS} int32 elements; pick a size in that range")
    return size


def plural(n: int, noun: str) -> str:
    """``1 tile`` / ``3 tiles``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def work_text(n: int, noun: str) -> str:
    """``3 tiles``, or ``no work (0 tiles)`` for an empty instance."""
    return plural(n, noun) if n else f"no work (0 {noun}s)"


def strided_instances(count: int, workers: int, noun: str, *, per: int = 1,
                      view: Any = None) -> tuple[Instance, ...]:
    """Instances of ``for i in range(w, count, workers * per)`` over workers ``w`` (CTAs here).

    Worker ``w`` runs ``q + 1`` trips when ``w < r`` and ``q`` otherwise, with
    ``q, r = divmod(count, workers * per)`` (``per`` > 1 when each trip strides
    further, as the grid-stride copy's vectors in flight do). ``view(w)`` gives
    the representative's build view (default: ``{"block": w, "grid": workers}``).
    """
    step = workers * per
    q, r = divmod(max(0, count), step)
    groups = [(range(0, min(r, workers)), q + 1), (range(min(r, workers), workers), q)]
    make = view or (lambda w: {"block": w, "grid": workers})
    return tuple(Instance(ctas=(span,), view=make(span.start), work=work_text(trips, noun), iterations=trips)
                 for span, trips in groups if len(span))


def split_out(instances: tuple[Instance, ...], who: int, view: Callable[[int], Any],
              note: str) -> tuple[Instance, ...]:
    """Give worker ``who`` (a CTA or thread inside one instance's span) an instance of its own.

    Used for the worker that copies a partial last vector or tile: its schedule
    is its group's, but the plan names it, with ``note`` added to its work.
    ``view(w)`` is worker ``w``'s build view (each part keeps a member as its
    representative).

    >>> parts = split_out(strided_instances(10, 4, "tile"), 1, lambda b: {"block": b}, " (+ a 3-element tail)")
    >>> [(i.describe(), i.view["block"]) for i in parts]
    [('CTA 0: 3 tiles', 0), ('CTA 1: 3 tiles (+ a 3-element tail)', 1), ('CTAs 2-3: 2 tiles', 2)]
    """
    out: list[Instance] = []
    for inst in instances:
        span = inst.ctas[0]
        if who not in span or len(inst.ctas) != 1:
            out.append(inst)
            continue
        for part, extra in ((range(span.start, who), ""), (range(who, who + 1), note), (range(who + 1, span.stop), "")):
            if len(part):
                out.append(dataclasses.replace(inst, ctas=(part,), view=view(part.start), work=inst.work + extra))
    return tuple(out)


__all__ = [
    "FILL",
    "MAX_ELEMENTS",
    "DeviceProblem",
    "HostProblem",
    "SizeError",
    "pattern",
    "plural",
    "require_size",
    "split_out",
    "strided_instances",
    "work_text",
]
