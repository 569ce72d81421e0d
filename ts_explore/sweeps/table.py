"""A sweep's rows as a pandas DataFrame: stable columns in a stable order, and files to keep them in.

Columns: every knob (swept ones first), then ``status``, ``reason``,
``states``, ``verify_s``; for launch sweeps ``launch``, ``launch_reason``,
``metric``, ``value``, ``unit``, ``ratio``, ``reference``, ``correct``,
``compile_s``, ``first_compile_s``, ``launched_elements`` (a knob may be called ``elements``), ``size``, ``gpu``, ``launch_s``; then
``worker``, ``elapsed_s``, ``cached``, ``key``. ``value`` with ``unit`` holds
GB/s for a copy and TFLOP/s for a kernel that reports FLOP/s, so one table
(and one heatmap) serves both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from .cell import STATUSES

RESULT_COLUMNS = ("status", "reason", "states", "verify_s")
LAUNCH_COLUMNS = ("launch", "launch_reason", "metric", "value", "unit", "ratio", "reference", "correct",
                  "compile_s", "first_compile_s", "launched_elements", "size", "gpu", "launch_s")
TRAILING_COLUMNS = ("worker", "elapsed_s", "cached", "key")


def columns(knob_names: Sequence[str], swept: Sequence[str], launch: bool) -> list[str]:
    """The column order of a sweep's table.

    >>> columns(["a", "b", "c"], ["c"], False)[:5]
    ['c', 'a', 'b', 'status', 'reason']
    """
    knobs = [*swept, *(n for n in knob_names if n not in swept)]
    return [*knobs, *RESULT_COLUMNS, *(LAUNCH_COLUMNS if launch else ()), *TRAILING_COLUMNS]


def frame(rows: Sequence[dict[str, Any]], knob_names: Sequence[str], *, swept: Sequence[str], launch: bool,
          scenario: str, cancelled: bool = False, total: int | None = None) -> Any:
    """The DataFrame of ``rows``; ``attrs`` say the scenario, the swept knobs, launch, cancelled, total cells."""
    import pandas as pd

    cols = columns(knob_names, swept, launch)
    df = pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)
    for name in knob_names:  # a refused cell may hold text where the others hold numbers: one type per column
        kinds = {type(v) for v in df[name] if v is not None and v == v}
        if len(kinds) > 1 and not kinds <= {int, float}:
            df[name] = [None if v is None else str(v) for v in df[name]]
    df["status"] = pd.Categorical(df["status"], categories=list(STATUSES))
    df.attrs.update({"scenario": scenario, "knobs": list(swept), "launch": launch, "cancelled": cancelled,
                     "total": len(rows) if total is None else total})
    return df


def write(df: Any, path: str | Path) -> Path:
    """Save a sweep's table as ``.csv`` or ``.parquet`` (by the file's suffix); ValueError otherwise."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        df.to_csv(path, index=False)
    elif suffix in (".parquet", ".pq"):
        try:
            df.to_parquet(path, index=False)
        except ImportError as exc:
            raise ValueError(f"writing {path.name} needs pyarrow: pip install pyarrow (or write a .csv)") from exc
    else:
        raise ValueError(f"cannot write {path.name!r}: use a .csv or .parquet file name")
    return path


def read(path: str | Path) -> Any:
    """Load a table :func:`write` saved."""
    import pandas as pd

    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return pd.read_parquet(path)
    return pd.read_csv(path)


__all__ = ["LAUNCH_COLUMNS", "RESULT_COLUMNS", "TRAILING_COLUMNS", "columns", "frame", "read", "write"]
