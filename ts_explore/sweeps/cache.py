"""Sweep results kept on disk, so a re-run computes only new cells and an interrupted sweep resumes.

One JSON-lines file per scenario and *environment*: the ts-explore version and
git commit (plus a digest of uncommitted changes to the package), the DSL
version and, for launches, the GPU name, its driver and the launch options.
Rows are appended (and flushed) as they arrive; a torn last line from a crash
is skipped when reading. Rows that failed are not kept: a re-run tries them
again.

The folder is ``$TS_EXPLORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ts-explore``,
else ``~/.cache/ts-explore``; sweeps go under ``sweeps/``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cell import FAILED, REFUSED


@functools.lru_cache(maxsize=1)
def source_identity() -> dict[str, str]:
    """ts-explore's version, its git commit (``unknown`` outside a checkout) and a digest of local edits."""
    from .. import __version__

    package = Path(__file__).resolve().parents[1]
    commit, edits = "unknown", ""
    try:
        top = subprocess.run(["git", "-C", str(package), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        if top.returncode == 0:
            commit = top.stdout.strip()
            diff = subprocess.run(["git", "-C", str(package), "diff", "HEAD", "--", "."], capture_output=True,
                                  timeout=20)
            if diff.stdout:
                edits = hashlib.sha256(diff.stdout).hexdigest()[:12]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"ts_explore": __version__, "commit": commit, "edits": edits, "dsl": _dsl_version()}


def _dsl_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return "unknown"


def cache_root() -> Path:
    """The user's cache folder for ts-explore (:func:`ts_explore.gpu.user_cache.cache_root`, the one rule)."""
    from ..gpu.user_cache import cache_root as root

    return root()


class ResultCache:
    """The rows of one (scenario, environment); ``get`` by cell key, ``put`` appends."""

    def __init__(self, scenario: str, environment: Mapping[str, Any], root: Path | None = None) -> None:
        self.environment = dict(environment)
        digest = hashlib.sha256(json.dumps(self.environment, sort_keys=True, default=str).encode()).hexdigest()[:16]
        safe_name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in scenario)
        self.path = (root or cache_root()) / "sweeps" / f"{safe_name}-{digest}.jsonl"
        self._rows: dict[str, dict[str, Any]] | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._rows is None:
            self._rows = {}
            try:
                with self.path.open(encoding="utf-8") as f:
                    for line in f:
                        try:
                            entry = json.loads(line)
                        except ValueError:
                            continue  # a torn line from an interrupted write
                        if isinstance(entry, dict) and "key" in entry and isinstance(entry.get("row"), dict):
                            self._rows[entry["key"]] = entry["row"]
            except FileNotFoundError:
                pass
        return self._rows

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored row for a cell key, or None."""
        row = self._load().get(key)
        return dict(row) if row is not None else None

    def put(self, key: str, row: Mapping[str, Any]) -> bool:
        """Append a finished row (failed and refused rows are not kept); True when written."""
        if row.get("status") in (FAILED, REFUSED):
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "row": dict(row)}, default=_jsonable) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            if f.tell() == 0:
                f.write(json.dumps({"environment": self.environment}) + "\n")
            f.write(line)
            f.flush()
        self._load()[key] = dict(row)
        return True

    def __len__(self) -> int:
        return len(self._load())

    def clear(self) -> None:
        """Forget every row of this scenario and environment."""
        self.path.unlink(missing_ok=True)
        self._rows = {}


def _jsonable(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalars
    return item() if callable(item) else str(value)


__all__ = ["ResultCache", "cache_root", "source_identity"]
