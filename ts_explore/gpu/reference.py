"""Host side of a launch: inputs, the exact expected outputs, and where results differ.

A *plan* turns (config, requested size) into a :class:`HostProblem`: numpy
inputs to upload, outputs to allocate (pre-filled with a sentinel, so writes
that should not happen show up), the expected outputs computed on the host,
the compiled function's argument list, and the bytes one launch reads and
writes. Plans for the built-in kernels live here; a user kernel module may
provide its own ``plan(cfg, size, sms)``.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import LaunchError

FILL = np.int32(-559038737)  # 0xDEADBEEF: what an output holds where nothing was written
MAX_ELEMENTS = 2**31 - 1


@dataclass
class HostProblem:
    """Everything the worker needs besides the compiled kernel."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, int]  # name -> int32 elements to allocate (filled with FILL; "flags" with 0)
    expected: dict[str, np.ndarray]
    args: tuple[Any, ...]  # buffer names (str) become device pointers; ints pass through; the stream is appended
    bytes_moved: int  # bytes read + written by one launch
    elements: int  # problem size in int32 elements (the x axis of bandwidth plots)
    grid: int
    shapes: dict[str, tuple[int, int]] = field(default_factory=dict)  # 2-D view of an output for heatmaps
    zero_filled: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mismatch:
    """Where an output differs from the host reference."""

    output: str
    count: int
    total: int
    first: tuple[tuple[int, int, int], ...]  # (index, expected, got) of the first few
    heatmap: np.ndarray | None  # mismatches per cell of a <=64x64 grid over the output's 2-D view

    @property
    def text(self) -> str:
        if not self.count:
            return f"{self.output}: all {self.total} elements match"
        shown = ", ".join(f"[{i}] expected {e} got {g}" for i, e, g in self.first)
        return f"{self.output}: {self.count} of {self.total} elements differ; first: {shown}"


@functools.lru_cache(maxsize=2)
def pattern(n: int, salt: int = 0) -> np.ndarray:
    """Deterministic, position-dependent int32 data (neighbours differ); read-only and cached per size."""
    out = np.arange(n, dtype=np.uint32)
    out *= np.uint32(2654435761)  # wraps mod 2**32
    out += np.uint32(12345 + salt)
    out = out.view(np.int32)
    out.flags.writeable = False
    return out


def compare(name: str, expected: np.ndarray, got: np.ndarray, shape: tuple[int, int] | None = None,
            keep: int = 8) -> Mismatch:
    """Exact comparison; counts, the first ``keep`` differences and a coarse heatmap."""
    wrong = expected != got
    count = int(wrong.sum())
    idx = np.flatnonzero(wrong)[:keep]
    first = tuple((int(i), int(expected[i]), int(got[i])) for i in idx)
    heat = None
    if count:
        rows, cols = shape if shape else _square(wrong.size)
        grid = np.zeros(rows * cols, dtype=bool)
        grid[: wrong.size] = wrong
        heat = _bin(grid.reshape(rows, cols), 64)
    return Mismatch(name, count, int(wrong.size), first, heat)


def _square(n: int) -> tuple[int, int]:
    cols = max(1, int(math.ceil(math.sqrt(n))))
    return int(math.ceil(n / cols)), cols


def _bin(grid: np.ndarray, cells: int) -> np.ndarray:
    """Sum a boolean grid into at most ``cells`` x ``cells`` counts."""
    rows, cols = grid.shape
    br, bc = max(1, math.ceil(rows / cells)), max(1, math.ceil(cols / cells))
    padded = np.zeros((math.ceil(rows / br) * br, math.ceil(cols / bc) * bc), dtype=np.int64)
    padded[:rows, :cols] = grid
    return padded.reshape(padded.shape[0] // br, br, padded.shape[1] // bc, bc).sum(axis=(1, 3))


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise LaunchError("bad_size", message)


def _size_ok(size: int, multiple: int, what: str) -> int:
    _need(0 < size <= MAX_ELEMENTS, f"size {size} is not between 1 and {MAX_ELEMENTS} int32 elements; "
          "pick a smaller size")
    _need(size % multiple == 0, f"size {size} is not a multiple of the {what} ({multiple} elements); "
          f"use e.g. {max(multiple, size // multiple * multiple)}")
    return size


def grid_stride_plan(cfg: Any, size: int, sms: int) -> HostProblem:
    from ..scenarios.common import auto_ctas

    n = _size_ok(size, cfg.vector, "vector width")
    src = pattern(n)
    grid = cfg.ctas or auto_ctas(cfg.threads, sms)
    return HostProblem({"src": src}, {"dst": n}, {"dst": src}, ("src", "dst", n, grid), 8 * n, n, grid)


def pipelined_plan(cfg: Any, size: int, sms: int) -> HostProblem:
    n = _size_ok(size, cfg.tile, "tile")
    tiles = n // cfg.tile
    per_sm = max(1, min(2048 // cfg.threads, (228 * 1024) // (cfg.smem_bytes + 1024)))
    grid = min(tiles, cfg.ctas or sms * per_sm)
    src = pattern(n)
    return HostProblem({"src": src}, {"dst": n}, {"dst": src}, ("src", "dst", n, grid), 8 * n, n, grid,
                       shapes={"dst": (tiles, cfg.tile)})


def persistent_plan(cfg: Any, size: int, sms: int) -> HostProblem:
    from ..scenarios.common import auto_ctas

    n = _size_ok(size, cfg.tile, "tile")
    logical = n // cfg.tile
    total = logical + cfg.overlaunch
    if cfg.queue.value == "static":
        grid = min(total, cfg.ctas or auto_ctas(cfg.threads_per_cta, sms))
    else:
        grid = total
    src = pattern(n)
    expected = src.reshape(logical, cfg.tile).copy()
    skipped = [t for t in range(logical) if cfg.skipped(t, logical)]
    expected[skipped] = FILL
    copied = logical - len(skipped)
    return HostProblem({"src": src}, {"dst": n}, {"dst": expected.reshape(-1)},
                       ("src", "dst", n, logical, total, grid), 8 * copied * cfg.tile, n, grid,
                       shapes={"dst": (logical, cfg.tile)})


def varlen_plan(cfg: Any, size: int, sms: int) -> HostProblem:
    from ..scenarios.common import auto_ctas

    _need(0 < size <= MAX_ELEMENTS, f"size {size} must be positive; pick the packed elements wanted")
    mean = max(1.0, sum(cfg.lengths) / len(cfg.lengths))
    segments = max(1, round(size / mean))
    lengths = np.fromiter(itertools.islice(itertools.cycle(cfg.lengths), segments), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    width = cfg.max_len
    packed = pattern(int(offsets[-1]) + 1)
    padded = np.full((segments, width), FILL, dtype=np.int32)
    for row, (start, length) in enumerate(zip(offsets[:-1], lengths)):
        padded[row, :length] = packed[start:start + length]
    grid = min(segments, cfg.ctas or auto_ctas(cfg.threads, sms)) if cfg.queue.value == "static" else segments
    return HostProblem({"packed": packed, "offsets": offsets}, {"padded": segments * width},
                       {"padded": padded.reshape(-1)}, ("packed", "padded", "offsets", segments, width, grid),
                       8 * int(offsets[-1]), int(offsets[-1]), grid, shapes={"padded": (segments, width)})


def guards_plan(cfg: Any, size: int, sms: int) -> HostProblem:
    from cutlass.experimental.task_scheduling.enums import Every

    from ..kernels.guards import EVERY, FIRST, LAST, MARKED

    _need(0 < size <= MAX_ELEMENTS, f"size {size} must be positive")
    width = cfg.width
    rows = max(1, math.ceil(size / width))
    src = pattern(rows * width).reshape(rows, width) % 1000
    out = np.full((rows, width), FILL, dtype=np.int32)
    flags = np.zeros((rows, width), dtype=np.int32)
    its = cfg.iterations()
    every = Every(cfg.every_period, cfg.every_start)
    for k, offset in enumerate(its):
        out[:, offset] = src[:, offset]
        bits = (FIRST if cfg.first and k == 0 else 0) | (LAST if cfg.last and k == len(its) - 1 else 0)
        bits |= EVERY if cfg.every and every.fires(k, len(its)) else 0
        flags[:, offset] |= bits
        if cfg.when:
            flags[:, offset] |= np.where(src[:, offset] % cfg.modulus == 0, MARKED, 0).astype(np.int32)
    return HostProblem({"src": src.reshape(-1).astype(np.int32)}, {"out": rows * width, "flags": rows * width},
                       {"out": out.reshape(-1), "flags": flags.reshape(-1)}, ("src", "out", "flags", rows),
                       8 * rows * len(its), rows * width, rows,
                       shapes={"out": (rows, width), "flags": (rows, width)}, zero_filled=("flags",))


PLANS: dict[str, Callable[[Any, int, int], HostProblem]] = {
    "ts_explore.kernels.grid_stride": grid_stride_plan,
    "ts_explore.kernels.pipelined": pipelined_plan,
    "ts_explore.kernels.persistent": persistent_plan,
    "ts_explore.kernels.varlen": varlen_plan,
    "ts_explore.kernels.guards": guards_plan,
}


def plan_for(kernel_module: str) -> Callable[[Any, int, int], HostProblem]:
    """The plan of a built-in kernel, or the ``plan`` function a user kernel module defines."""
    if kernel_module in PLANS:
        return PLANS[kernel_module]
    import importlib

    module = importlib.import_module(kernel_module)
    plan = getattr(module, "plan", None)
    if plan is None:
        raise LaunchError("no_kernel", f"kernel module {kernel_module} defines no plan(cfg, size, sms); add one "
                          "that returns a ts_explore.gpu.reference.HostProblem")
    return plan


__all__ = ["FILL", "HostProblem", "Mismatch", "PLANS", "compare", "pattern", "plan_for"]
