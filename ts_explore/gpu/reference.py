"""Where a launch's outputs differ from the exact expected ones (a kernel module's ``host_problem``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernels.host import FILL, HostProblem, pattern

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


__all__ = ["FILL", "HostProblem", "Mismatch", "compare", "pattern"]
