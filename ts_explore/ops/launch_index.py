"""A record per proven and compiled shape, so a new process launches a cached shape without the DSL.

Once the gate has proven a shape's class and its kernel is in the compile
cache, the op writes what a call needs under ``<cache root>/launches/``: the
shared library and symbol of the kernel, the grid, and the concrete config's
text. A later process calling the same shape reads the record and loads the
library through TVM-FFI: it neither imports ``cutlass`` (about 3 s on an H200
machine) nor the scenarios, plans or checker. The record's name is a digest
of the op, its config key, the exact shape and dtype, the GPU's SM count and
compute capability, the DSL version, the calling convention
(:data:`~.compile_cache.CALLING`) and the sources of both the kernel
(:data:`~.compile_cache.KERNEL_CODE`) and the proof
(:data:`~.compile_cache.PROOF_CODE`): a change to any of them misses, and the
call goes the long way (prove, load or compile), writing a new record. A
record is written only after the gate admitted the shape, so it never stands
for an unproven launch.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .compile_cache import CALLING, KERNEL_CODE, PROOF_CODE, cache_root, code_digest, dsl_version


def record_name(op: str, config: str, shape: tuple[int, ...], dtype: str, sms: int, cc: tuple[int, int]) -> str:
    """The digest naming one shape's record in this installation."""
    text = "\n".join((op, config, repr(tuple(shape)), dtype, str(sms), repr(tuple(cc)), dsl_version(), CALLING,
                      code_digest(KERNEL_CODE), code_digest(PROOF_CODE)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class LaunchIndex:
    """Records under ``root`` (default ``<cache root>/launches``, read at use)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        return self._root if self._root is not None else cache_root() / "launches"

    def get(self, name: str) -> dict[str, Any] | None:
        """The record ``name``, when it exists and its library is still there."""
        path = self.root / f"{name}.json"
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return record if Path(record.get("library", "")).exists() else None

    def put(self, name: str, record: dict[str, Any]) -> None:
        """Write ``record`` (a library path, a symbol, a grid, the config's text); a read-only folder is skipped."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f".{name}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(record))
            tmp.replace(self.root / f"{name}.json")
        except OSError:
            pass


INDEX = LaunchIndex()

__all__ = ["INDEX", "LaunchIndex", "record_name"]
