"""The results cache: one file per scenario and environment, rows appended as they arrive, torn lines
skipped, failures not kept (a re-run tries them again)."""

from __future__ import annotations

from pathlib import Path

from ts_explore.sweeps.cache import ResultCache, cache_root, source_identity

ENV = {"ts_explore": "0.1.0", "commit": "abc", "edits": "", "dsl": "4.8.1"}


def test_rows_survive_a_new_process_and_a_torn_last_line(tmp_path: Path) -> None:
    cache = ResultCache("pipelined_copy", ENV, tmp_path)
    assert cache.put("k1", {"status": "safe", "states": 10})
    assert not cache.put("k2", {"status": "failed", "reason": "timed out"})
    assert not cache.put("k3", {"status": "refused", "reason": "tile"})
    with cache.path.open("a") as f:
        f.write('{"key": "k4", "row": {"status": "saf')  # the process died mid-write
    again = ResultCache("pipelined_copy", ENV, tmp_path)
    assert again.get("k1") == {"status": "safe", "states": 10}
    assert again.get("k2") is None and again.get("k3") is None and again.get("k4") is None
    assert len(again) == 1


def test_each_environment_has_its_own_rows(tmp_path: Path) -> None:
    base = ResultCache("pipelined_copy", ENV, tmp_path)
    base.put("k", {"status": "safe"})
    for change in ({"dsl": "4.9.0"}, {"commit": "def"}, {"edits": "123"},
                   {"gpu": "NVIDIA H200", "driver": "580.95", "sizes": (1 << 24,)}):
        other = ResultCache("pipelined_copy", {**ENV, **change}, tmp_path)
        assert other.path != base.path and other.get("k") is None
    assert ResultCache("persistent_copy", ENV, tmp_path).get("k") is None


def test_cache_folder_and_source_identity(cache_dir: Path) -> None:
    assert cache_root() == cache_dir  # TS_EXPLORE_CACHE_DIR (set by the suite's fixture)
    ident = source_identity()
    assert set(ident) == {"ts_explore", "commit", "edits", "dsl"} and ident["dsl"] == "4.8.1"
