"""The tuning table: every measured (shape, config) of one scenario on one GPU and driver, and the pick per shape.

One JSON file per scenario, GPU name and driver version, under the user's
cache folder (:func:`ts_explore.gpu.user_cache.cache_root`: ``$TS_EXPLORE_CACHE_DIR``,
else ``$XDG_CACHE_HOME/ts-explore``, else ``~/.cache/ts-explore``) in ``tuning/``.
A row is written the moment it lands, so an interrupted tuning resumes where
it stopped. Every write holds an exclusive lock (``fcntl.flock`` on a
``.<table>.lock`` file beside it), reads the file again, merges its row in and
replaces the file atomically (a temporary file renamed over it): two tuners
on one table keep every row either measured, and a crash leaves the previous
table. A file this version cannot read (broken JSON, another format) is never
overwritten: it is renamed aside with an ``.unreadable-<time>`` suffix and a
warning names both paths.

A row's ``outcome``: ``measured`` (proven, launched, correct: it has TFLOP/s),
``wrong`` (launched, output differs from the reference), ``unproven`` (the
checker did not say SAFE: skipped, with its reason), ``refused`` (the scenario
or the launch gate refused it, with its reason). Rows of cells that failed
(a dying worker, a timeout) are not kept: a re-run measures them again.

>>> shape_text((4096, 4096, 1024))
'4096x4096x1024'
>>> file_name("hopper_gemm", "NVIDIA H200", "570.86.15")
'hopper_gemm.NVIDIA_H200.570.86.15.json'
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
import warnings
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEASURED, WRONG, UNPROVEN, REFUSED = "measured", "wrong", "unproven", "refused"
OUTCOMES = (MEASURED, WRONG, UNPROVEN, REFUSED)
FORMAT = 1  # the file layout's version; a file of another version is kept aside, never overwritten


class UnreadableTableWarning(UserWarning):
    """A tuning table's file could not be read; it was renamed aside (the message names both paths)."""


def shape_text(shape: tuple[int, ...]) -> str:
    """``(M, N, K)`` as the table's key, ``MxNxK``."""
    return "x".join(str(int(v)) for v in shape)


def config_text(values: Mapping[str, Any]) -> str:
    """A candidate in words: its settings that differ from the scenario's defaults (``defaults`` if none).

    >>> config_text({"tile": "t128x128", "stages": 6}), config_text({})
    ('tile=t128x128 stages=6', 'defaults')
    """
    return " ".join(f"{k}={v}" for k, v in values.items()) or "defaults"


def config_key(values: Mapping[str, Any]) -> str:
    """A candidate's identity in the table (its settings, sorted)."""
    return json.dumps(dict(values), sort_keys=True, default=str)


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in text.strip()) or "unknown"


def file_name(scenario: str, gpu: str, driver: str) -> str:
    """The table's file name: scenario, GPU name and driver version, made safe for a file system."""
    return f"{_safe(scenario)}.{_safe(gpu)}.{_safe(driver)}.json"


def tuning_dir(cache_dir: str | Path | None = None) -> Path:
    """Where tables live: ``cache_dir`` when given, else the user's ts-explore cache folder, in ``tuning/``."""
    from .user_cache import cache_root

    return (Path(cache_dir).expanduser() if cache_dir is not None else cache_root()) / "tuning"


@dataclass(frozen=True)
class Pick:
    """The fastest measured config for one shape: its settings, its words, TFLOP/s and ratio to the reference."""

    shape: str
    config: dict[str, Any]
    tflops: float
    ratio: float | None
    reference: str | None
    table: str  # the file name it comes from

    @property
    def text(self) -> str:
        return config_text(self.config)

    def describe(self) -> str:
        """``tuned: tile=t128x128 stages=6 (table <file>, measured 661 TFLOP/s)``."""
        return f"tuned: {self.text} (table {self.table}, measured {self.tflops:.0f} TFLOP/s)"


class TuningTable:
    """The rows of one (scenario, GPU, driver) table; ``put`` writes through to the file."""

    def __init__(self, scenario: str, gpu: str, driver: str, cache_dir: str | Path | None = None) -> None:
        self.scenario, self.gpu, self.driver = scenario, gpu, driver
        self.path = tuning_dir(cache_dir) / file_name(scenario, gpu, driver)
        self.rows: dict[str, dict[str, Any]] = {}
        self.last_run: Any = None  # tune(): the sweep's DataFrame of the cells it ran this time (failed ones too)
        self._read()

    @staticmethod
    def row_key(shape: str, values: Mapping[str, Any]) -> str:
        return f"{shape}|{config_key(values)}"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the table's lock file exclusively (other processes and threads writing it wait)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(f".{self.path.name}.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> None:
        """This table's rows from its file (none yet: empty); an unreadable file is set aside first."""
        if not self.path.exists():
            return
        with self._locked():
            self.rows = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        """The file's rows (the lock held); a file that is not a table of this format is renamed aside."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except UnicodeDecodeError:
            return self._set_aside("it is not text")
        try:
            data = json.loads(text)
        except ValueError as exc:
            return self._set_aside(f"it is not valid JSON ({exc})")
        if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
            return self._set_aside("it holds no tuning rows")
        if data.get("format") != FORMAT:
            return self._set_aside(f"its format is {data.get('format')!r}; this version reads format {FORMAT}")
        rows = {}
        for row in data["rows"]:
            if isinstance(row, dict) and row.get("outcome") in OUTCOMES and "shape" in row:
                rows[self.row_key(row["shape"], row.get("config") or {})] = row
        return rows

    def _set_aside(self, why: str) -> dict[str, dict[str, Any]]:
        """Rename the unreadable file out of the way (never overwrite it) and say so; no rows."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        aside = self.path.with_name(f"{self.path.name}.unreadable-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.path.name}.unreadable-{stamp}-{n}")
        os.replace(self.path, aside)
        warnings.warn(f"tuning table {self.path} could not be read ({why}); it was moved to {aside} and a new "
                      "table is started; move it back once it is fixed, or delete it", UnreadableTableWarning,
                      stacklevel=4)
        return {}

    def has(self, shape: str, values: Mapping[str, Any]) -> bool:
        """Whether this (shape, config) has a row already (a re-run skips it)."""
        return self.row_key(shape, values) in self.rows

    def put(self, row: Mapping[str, Any]) -> None:
        """Keep ``row`` (with ``shape``, ``config``, ``outcome``) and write it to the file at once.

        Under the table's lock the file is read again and the row merged in, so
        rows another tuner wrote meanwhile are kept (and show up in ``rows``).
        """
        if row.get("outcome") not in OUTCOMES:
            raise ValueError(f"a tuning row's outcome is one of {', '.join(OUTCOMES)}; got {row.get('outcome')!r}")
        kept = {**row, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        key = self.row_key(row["shape"], row.get("config") or {})
        with self._locked():
            self.rows = {**self._load(), key: kept}
            self._write()

    def clear(self) -> None:
        """Forget every row (``--fresh``); the file goes too."""
        with self._locked():
            self.rows = {}
            self.path.unlink(missing_ok=True)

    def save(self) -> None:
        """Write every row held here, merged with the rows the file has now (those held here win)."""
        with self._locked():
            self.rows = {**self._load(), **self.rows}
            self._write()

    def _write(self) -> None:
        """Replace the file atomically with ``rows`` and their picks (the lock held)."""
        picks = {shape: {"config": p.config, "text": p.text, "tflops": p.tflops, "ratio": p.ratio}
                 for shape, p in self.picks().items()}
        data = {"format": FORMAT, "scenario": self.scenario, "gpu": self.gpu, "driver": self.driver,
                "picks": picks, "rows": list(self.rows.values())}
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(data, indent=1, default=str) + "\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def picks(self, matching: Mapping[str, Collection[str]] | None = None) -> dict[str, Pick]:
        """Per shape, the measured (proven and correct) config with the highest TFLOP/s.

        ``matching``: per setting, the spellings (lower case) a row may give it
        when it sets it at all (e.g. the launch's ``dtype``: a faster fp8 row is
        no pick for a bf16 launch).
        """
        best: dict[str, Pick] = {}
        for row in self.rows.values():
            if row["outcome"] != MEASURED or row.get("tflops") is None:
                continue
            config = row.get("config") or {}
            if any(k in config and str(config[k]).lower() not in ok for k, ok in (matching or {}).items()):
                continue
            shape = row["shape"]
            if shape not in best or float(row["tflops"]) > best[shape].tflops:
                best[shape] = Pick(shape, dict(row.get("config") or {}), float(row["tflops"]), row.get("ratio"),
                                   row.get("reference"), self.path.name)
        return best

    def pick(self, shape: tuple[int, ...] | str) -> Pick | None:
        """The pick for ``shape`` (a tuple or ``MxNxK``), or None when nothing was measured for it."""
        return self.picks().get(shape if isinstance(shape, str) else shape_text(shape))

    def frame(self) -> Any:
        """Every row as a pandas DataFrame (one row per shape and candidate; ``picked`` marks each shape's pick)."""
        import pandas as pd

        picks = {(p.shape, config_key(p.config)) for p in self.picks().values()}
        cols = ["shape", "config", "outcome", "tflops", "ratio", "reference", "reason", "picked", "gpu", "worker",
                "recorded_at"]
        rows = [{**{c: r.get(c) for c in cols}, "config": config_text(r.get("config") or {}),
                 "picked": (r["shape"], config_key(r.get("config") or {})) in picks} for r in self.rows.values()]
        df = pd.DataFrame(rows, columns=cols).sort_values(["shape", "tflops"], ascending=[True, False],
                                                          na_position="last", kind="stable")
        df.attrs.update({"scenario": self.scenario, "gpu": self.gpu, "driver": self.driver, "path": str(self.path)})
        return df.reset_index(drop=True)

    def summary(self) -> str:
        """One line per shape: its pick (or why there is none)."""
        lines = [f"tuning table {self.path} ({self.scenario} on {self.gpu}, driver {self.driver}): "
                 f"{len(self.rows)} rows"]
        picks = self.picks()
        for shape in sorted({r["shape"] for r in self.rows.values()}, key=_shape_order):
            p = picks.get(shape)
            lines.append(f"  {shape}: " + (f"{p.text}: {p.tflops:.1f} TFLOP/s"
                                           + (f" = {p.ratio:.3f}x {p.reference}" if p.ratio else "")
                                           if p else "no proven, correct config measured"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return self.frame()._repr_html_()


def _shape_order(shape: str) -> tuple[int, ...]:
    return tuple(int(v) for v in shape.split("x"))


def find(scenario: str, gpu: str, driver: str, cache_dir: str | Path | None = None) -> TuningTable | None:
    """The table of this scenario, GPU and driver when its file exists (None otherwise; nothing is created)."""
    if not (tuning_dir(cache_dir) / file_name(scenario, gpu, driver)).exists():
        return None
    return TuningTable(scenario, gpu, driver, cache_dir)


__all__ = ["MEASURED", "OUTCOMES", "Pick", "REFUSED", "TuningTable", "UNPROVEN", "UnreadableTableWarning", "WRONG",
           "config_key",
           "config_text", "file_name", "find", "shape_text", "tuning_dir"]
