"""The results cache: one file per scenario and environment, rows appended as they arrive, failures not kept
(a re-run tries them again); lines it did not write are skipped with one warning naming the file and line,
a torn last line does not swallow the next row, and a cache that cannot be written never ends a sweep."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from ts_explore.sweeps.cache import CacheWarning, ResultCache, cache_root, source_identity

ENV = {"ts_explore": "0.1.0", "commit": "abc", "edits": "", "dsl": "4.8.1"}
KNOBS = {"stages": 2, "loader": "tma"}


def _row(status: str = "safe", states: int = 10) -> dict[str, Any]:
    return {"status": status, "reason": "" if status == "safe" else "deadlock", "states": states, "verify_s": 0.1,
            "worker": "w0", "elapsed_s": 0.2}


def _quiet(cache: ResultCache, key: str, knobs: dict[str, Any] | None = KNOBS) -> dict[str, Any] | None:
    """``cache.get`` with no warning allowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        return cache.get(key, knobs)


def test_rows_survive_a_new_process_and_a_torn_last_line(tmp_path: Path) -> None:
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    assert cache.put("k1", _row(), KNOBS)
    assert not cache.put("k2", {"status": "failed", "reason": "timed out"}, KNOBS)
    assert not cache.put("k3", {"status": "refused", "reason": "tile"}, KNOBS)
    with cache.path.open("a") as f:
        f.write('{"key": "k4", "knobs": {}, "row": {"status": "saf')  # the process died mid-write
    again = ResultCache("pipelined_copy", ENV, tmp_path)
    assert _quiet(again, "k1") == _row()  # a torn last line is expected after a crash: no warning
    assert again.get("k2") is None and again.get("k3") is None and again.get("k4") is None
    assert len(again) == 1


def test_the_row_appended_after_a_torn_line_is_kept(tmp_path: Path) -> None:
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    cache.put("k1", _row(), KNOBS)
    with cache.path.open("a") as f:
        f.write('{"key": "k2", "knobs": {}, "row": {"sta')  # killed mid-write
    resumed = ResultCache("pipelined_copy", ENV, tmp_path)
    assert resumed.put("k3", _row(states=7), KNOBS)  # the resumed sweep's first row
    later = ResultCache("pipelined_copy", ENV, tmp_path)
    assert _quiet(later, "k3") == _row(states=7)  # not glued to the torn line; and a torn line is no news
    assert _quiet(later, "k1") == _row() and len(later) == 2


@pytest.mark.parametrize("junk, problem", [
    (b"\xff\xfe garbage", "not UTF-8 text"),
    (b"[1, 2]", "not a JSON object"),
    (b"{}", "no cell key"),
    (json.dumps({"key": "k2", "row": _row()}).encode(), "no knob columns"),
    (json.dumps({"key": "k2", "knobs": KNOBS, "row": {}}).encode(), "no status"),
    (json.dumps({"key": "k2", "knobs": KNOBS, "row": {**_row(), "status": "probably"}}).encode(),
     "status 'probably' is not one of"),
    (json.dumps({"key": "k2", "knobs": KNOBS, "row": {**_row(), "status": "failed"}}).encode(), "status 'failed'"),
    (json.dumps({"key": "k2", "knobs": KNOBS, "row": {**_row(), "states": "many"}}).encode(), "states is str"),
    (json.dumps({"key": "k2", "knobs": KNOBS, "row": {**_row(), "launch": "maybe"}}).encode(), "launch 'maybe'"),
])
def test_a_bad_line_is_skipped_with_one_warning_naming_file_and_line(tmp_path: Path, junk: bytes,
                                                                     problem: str) -> None:
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    cache.put("k1", _row(), KNOBS)
    with cache.path.open("ab") as f:
        f.write(junk + b"\n")
    cache.put("k3", _row(states=3), KNOBS)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        again = ResultCache("pipelined_copy", ENV, tmp_path)
        assert again.get("k1", KNOBS) == _row() and again.get("k3", KNOBS) == _row(states=3)
        assert again.get("k2", KNOBS) is None  # junk is never a result
    messages = [str(w.message) for w in seen if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1, messages
    assert str(again.path) in messages[0] and "skipped line 3: " in messages[0] and problem in messages[0]


def test_a_row_stored_for_other_knobs_is_not_this_cells_and_never_relabels_it(tmp_path: Path) -> None:
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    cache.put("k1", {**_row(), "stages": 7}, KNOBS)  # a knob name among the results is not stored as a result
    assert cache.get("k1", KNOBS) == _row()
    with cache.path.open("a") as f:  # a line whose knob columns are another cell's
        f.write(json.dumps({"key": "k2", "knobs": {"stages": 9, "loader": "tma"}, "row": _row()}) + "\n")
    again = ResultCache("pipelined_copy", ENV, tmp_path)
    with pytest.warns(CacheWarning, match="describes another configuration"):
        assert again.get("k2", KNOBS) is None
    assert again.get("k1", KNOBS) == _row()


def test_a_cache_that_cannot_be_written_warns_once_and_keeps_going(tmp_path: Path) -> None:
    (tmp_path / "sweeps").write_text("a file where the cache's folder should be")
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert not cache.put("k1", _row(), KNOBS)
        assert not cache.put("k2", _row(), KNOBS)
        assert cache.get("k1", KNOBS) is None  # reading a cache that is not there is no error either
    messages = [str(w.message) for w in seen if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1 and "cannot be written" in messages[0] and "goes on" in messages[0]


def test_each_environment_has_its_own_rows(tmp_path: Path) -> None:
    base = ResultCache("pipelined_copy", ENV, tmp_path)
    base.put("k", _row(), KNOBS)
    for change in ({"dsl": "4.9.0"}, {"commit": "def"}, {"edits": "123"}, {"scenario_code": "0123abcd"},
                   {"gpu": "NVIDIA H200", "driver": "580.95", "sizes": (1 << 24,)}):
        other = ResultCache("pipelined_copy", {**ENV, **change}, tmp_path)
        assert other.path != base.path and other.get("k") is None
    assert ResultCache("persistent_copy", ENV, tmp_path).get("k") is None


def test_cache_folder_and_source_identity(cache_dir: Path) -> None:
    assert cache_root() == cache_dir  # TS_EXPLORE_CACHE_DIR (set by the suite's fixture)
    ident = source_identity()
    assert set(ident) == {"ts_explore", "commit", "edits", "dsl"} and ident["dsl"] == "4.8.1"


def test_a_sweep_found_in_the_cache_keeps_each_cells_own_knobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from ts_explore.sweeps import Sweep, engine

    def no_cluster(**kwargs: Any) -> Any:
        raise AssertionError("a sweep whose rows are all cached needs no cluster")

    monkeypatch.setattr(engine, "local_client", no_cluster)
    first = Sweep("pipelined_copy", {"stages": [1, 2]}, progress=False)
    first._open_cache(None)
    assert first.cache is not None
    for cell in first.cells:  # rows whose result columns claim other knob values, as an old or hand-edited file may
        first.cache.path.parent.mkdir(parents=True, exist_ok=True)
        with first.cache.path.open("a") as f:
            f.write(json.dumps({"key": cell.key, "knobs": cell.columns,
                                "row": {**_row(), "stages": 99, "store_warps": 99}}) + "\n")
    df = Sweep("pipelined_copy", {"stages": [1, 2]}, progress=False).run()
    assert df["stages"].tolist() == [1, 2] and set(df["store_warps"]) == {first.cells[0].columns["store_warps"]}
    assert df["cached"].all() and df["status"].tolist() == ["safe", "safe"]


def test_a_sweep_stopped_before_its_cells_ran_says_it_was_cancelled() -> None:
    from ts_explore.sweeps import Sweep

    run = Sweep("pipelined_copy", {"stages": [1, 2], "store_warps": [4, 64]}, progress=False, cache=False)
    run.cancel()  # the explorer's Stop, pressed before the sweep got going
    df = run.run()
    assert df.attrs["cancelled"] and set(df["status"]) == {"refused"} and df.attrs["total"] == 4
