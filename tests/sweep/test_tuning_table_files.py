"""Tuning table files: two tuners writing one table keep every row; a file that cannot be read is moved aside
with a warning naming both paths, never overwritten."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from pathlib import Path

import pytest

from ts_explore.gpu.tuning_table import MEASURED, TuningTable, UnreadableTableWarning

IDENTITY = ("hopper_gemm", "Fake GPU", "1.0")


def _row(shape: str, stages: int, tflops: float) -> dict:
    return {"shape": shape, "config": {"stages": stages}, "outcome": MEASURED, "tflops": tflops}


def _tuner(cache_dir: str, stages: int, barrier: mp.synchronize.Barrier) -> None:
    table = TuningTable(*IDENTITY, cache_dir=cache_dir)  # both read the table before either writes
    barrier.wait()
    for shape in ("256x256x64", "256x256x128", "512x512x64", "512x512x128"):
        table.put(_row(shape, stages, 100.0 * stages))
        time.sleep(0.01)


def test_two_tuners_writing_one_table_keep_all_eight_rows(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_tuner, args=(str(tmp_path), stages, barrier)) for stages in (4, 6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    table = TuningTable(*IDENTITY, cache_dir=tmp_path)
    assert len(table.rows) == 8, sorted(table.rows)
    assert {shape: p.config["stages"] for shape, p in table.picks().items()} == {
        s: 6 for s in ("256x256x64", "256x256x128", "512x512x64", "512x512x128")}
    assert not list(table.path.parent.glob("*.tmp"))


def test_rows_another_tuner_wrote_are_kept_by_the_next_put(tmp_path: Path) -> None:
    first, second = TuningTable(*IDENTITY, cache_dir=tmp_path), TuningTable(*IDENTITY, cache_dir=tmp_path)
    first.put(_row("256x256x64", 4, 400.0))
    second.put(_row("256x256x64", 6, 600.0))
    assert len(second.rows) == 2 and len(TuningTable(*IDENTITY, cache_dir=tmp_path).rows) == 2


@pytest.mark.parametrize("content, why", [
    (b'{"format": 1, "rows": [],}', "not valid JSON"),
    (b'{"format": 2, "rows": []}', "its format is 2"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not text"),
])
def test_an_unreadable_table_is_moved_aside_with_a_warning_not_overwritten(tmp_path: Path, content: bytes,
                                                                          why: str) -> None:
    path = tmp_path / "tuning" / "hopper_gemm.Fake_GPU.1.0.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.warns(UnreadableTableWarning, match=why) as caught:
        table = TuningTable(*IDENTITY, cache_dir=tmp_path)
    aside = [p for p in path.parent.iterdir() if ".unreadable-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == content
    message = str(caught[0].message)
    assert str(path) in message and str(aside[0]) in message
    assert table.rows == {} and not path.exists()
    table.put(_row("256x256x64", 4, 400.0))  # the next measurement starts a new table beside the old one
    assert json.loads(path.read_text())["rows"][0]["config"] == {"stages": 4} and aside[0].read_bytes() == content
