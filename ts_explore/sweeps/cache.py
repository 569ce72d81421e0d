"""Sweep results kept on disk, so a re-run computes only new cells and an interrupted sweep resumes.

One JSON-lines file per scenario and *environment*, which holds everything
that decides a row besides the cell's config: the ts-explore version and git
commit (plus a digest of uncommitted changes to the package), the DSL
version, the digest of the scenario's own code when it is user code
(:func:`ts_explore.sweeps.identity.scenario_code`: its functions, config
class and the user modules they use) and, for launches, the GPU name, its
driver and the launch options. A cell's key (:func:`.grid.cell_key`) adds
every knob's value. Edit a scenario and its old rows are no longer found.

Rows are appended as they arrive; a torn last line from a crash is skipped
when reading and ended before the next append. Lines that are not rows this
cache wrote are skipped with one warning naming the file and the line. Rows
that failed are not kept: a re-run tries them again.

The folder is ``$TS_EXPLORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ts-explore``,
else ``~/.cache/ts-explore``; sweeps go under ``sweeps/``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cell import INCONCLUSIVE, SAFE, UNSAFE


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


class CacheWarning(UserWarning):
    """The results cache could not be read or written in part; the sweep goes on and recomputes what it lacks."""


# What a kept row may hold: its status (failed and refused rows are never kept) and, in a launch sweep, its launch.
KEPT_STATUSES = frozenset({SAFE, UNSAFE, INCONCLUSIVE})
LAUNCH_STATES = frozenset({"ok", "wrong", "refused", "skipped"})
_LINE_STARTS = (b'{"key": "', b'{"environment": ')  # how every line this cache writes begins
_NUMBER_OR_NONE = ("states", "verify_s", "elapsed_s", "value", "ratio", "compile_s", "first_compile_s", "launch_s")


def row_problem(row: Any) -> str | None:
    """Why ``row`` is not a result this cache could have written (None: it is one).

    >>> row_problem({"status": "safe", "reason": "", "states": 3, "verify_s": 0.1}) is None
    True
    >>> row_problem({}), row_problem({"status": "maybe", "reason": ""})
    ('no status', "status 'maybe' is not one of inconclusive, safe, unsafe")
    """
    if not isinstance(row, dict):
        return f"a row is an object, got {type(row).__name__}"
    if "status" not in row:
        return "no status"
    if row["status"] not in KEPT_STATUSES:
        return f"status {row['status']!r} is not one of {', '.join(sorted(KEPT_STATUSES))}"
    if not isinstance(row.get("reason"), str):
        return "no reason text"
    for name in _NUMBER_OR_NONE:
        value = row.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"{name} is {type(value).__name__}, not a number"
    if "launch" in row and row["launch"] not in LAUNCH_STATES:
        return f"launch {row['launch']!r} is not one of {', '.join(sorted(LAUNCH_STATES))}"
    for name, value in row.items():
        if value is not None and not isinstance(value, (bool, int, float, str)):
            return f"{name} holds a {type(value).__name__}, not a scalar"
    return None


class ResultCache:
    """The rows of one (scenario, environment); ``get`` by cell key, ``put`` appends.

    Each line after the environment's holds a cell key, the cell's knob
    columns and its result columns. Reading skips (with one
    :class:`CacheWarning` naming the file and the first bad line) lines that
    are not UTF-8 or JSON, or whose row is not a result (:func:`row_problem`);
    ``get`` returns a row only when its stored knob columns equal the cell's,
    and never returns knob columns (the cell's own are the row's). A failing
    write warns once and turns writing off: the sweep still finishes.
    """

    def __init__(self, scenario: str, environment: Mapping[str, Any], root: Path | None = None) -> None:
        self.environment = dict(environment)
        digest = hashlib.sha256(json.dumps(self.environment, sort_keys=True, default=str).encode()).hexdigest()[:16]
        safe_name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in scenario)
        self.path = (root or cache_root()) / "sweeps" / f"{safe_name}-{digest}.jsonl"
        self._rows: dict[str, tuple[dict[str, Any], dict[str, Any]]] | None = None  # key -> (knobs, row)
        self.writable = True
        self.mismatched = 0  # rows whose knob columns were not their cell's (recomputed)

    def _warn(self, text: str) -> None:
        warnings.warn(f"sweep cache {self.path}: {text}", CacheWarning, stacklevel=4)

    def _load(self) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        if self._rows is not None:
            return self._rows
        self._rows = {}
        try:
            data = self.path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):  # nothing stored yet (a write says when it cannot store)
            return self._rows
        except OSError as exc:
            self._warn(f"cannot be read ({exc.strerror or exc}); every cell is computed again")
            return self._rows
        bad: list[tuple[int, str]] = []
        for number, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            problem, entry = _parse(raw)
            if problem is None and "environment" in entry and "key" not in entry:
                continue  # the file's first line
            if problem is not None and problem.startswith("not JSON") and raw.startswith(_LINE_STARTS):
                continue  # a line a crash cut short (the next append ended it): expected, nothing to say
            if problem is None:
                problem = _entry_problem(entry)
            if problem is not None:
                bad.append((number, problem))
                continue
            self._rows[entry["key"]] = (entry["knobs"], entry["row"])
        if bad:
            number, problem = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            self._warn(f"skipped line {number}: {problem}{more}; those cells are computed again (delete the file to "
                       "start it afresh)")
        return self._rows

    def get(self, key: str, knobs: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The stored result columns for a cell key, or None; with ``knobs``, only if they are the stored ones."""
        found = self._load().get(key)
        if found is None:
            return None
        stored_knobs, row = found
        if knobs is not None and dict(stored_knobs) != {k: _json_scalar(v) for k, v in knobs.items()}:
            self.mismatched += 1
            if self.mismatched == 1:
                self._warn(f"the row stored for key {key} describes another configuration ({stored_knobs}); it is "
                           "ignored and the cell computed again")
            return None
        return dict(row)

    def put(self, key: str, row: Mapping[str, Any], knobs: Mapping[str, Any] | None = None) -> bool:
        """Append a finished row (failed and refused rows are not kept); True when written.

        ``row`` holds the result columns, ``knobs`` the cell's knob columns.
        An ``OSError`` (a full disk, a read-only folder) warns once and stops
        further writes; it never ends the sweep.
        """
        if row.get("status") not in KEPT_STATUSES or not self.writable:
            return False
        knob_values = {k: _json_scalar(v) for k, v in (knobs or {}).items()}
        result = {k: _json_scalar(v) for k, v in row.items() if k not in knob_values}
        line = json.dumps({"key": key, "knobs": knob_values, "row": result}, default=_jsonable) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b", buffering=0) as f:
                size = f.seek(0, 2)
                head = b""
                if size == 0:
                    head = (json.dumps({"environment": self.environment}, default=str) + "\n").encode()
                else:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":
                        head = b"\n"  # end a torn last line first, or this row would be glued to it and lost
                f.write(head + line.encode("utf-8"))
        except OSError as exc:
            self.writable = False
            self._warn(f"cannot be written ({exc.strerror or exc}); the sweep goes on without storing its rows")
            return False
        self._load()[key] = (knob_values, result)
        return True

    def __len__(self) -> int:
        return len(self._load())

    def clear(self) -> None:
        """Forget every row of this scenario and environment."""
        self.path.unlink(missing_ok=True)
        self._rows = {}


def _parse(raw: bytes) -> tuple[str | None, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start + 1})", None
    try:
        entry = json.loads(text)
    except ValueError as exc:
        return f"not JSON ({exc.msg})", None
    if not isinstance(entry, dict):
        return f"not a JSON object ({type(entry).__name__})", None
    return None, entry


def _entry_problem(entry: dict[str, Any]) -> str | None:
    if not isinstance(entry.get("key"), str):
        return "no cell key"
    if not isinstance(entry.get("knobs"), dict):
        return "no knob columns"
    return row_problem(entry.get("row"))


def _json_scalar(value: Any) -> Any:
    """A value as it reads back from JSON (numpy scalars become Python ones; others stay)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalars
    return item() if callable(item) else str(value)


__all__ = ["CacheWarning", "ResultCache", "cache_root", "row_problem", "source_identity"]
