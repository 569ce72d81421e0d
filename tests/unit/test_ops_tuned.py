"""The GEMM op's default config follows this GPU's tuning tables, and nothing remembered outlives a table change."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from ts_explore.ops.tuned import default_config, tables_digest


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(tmp_path))
    return tmp_path


def _table(cache: Path, name: str, text: str) -> Path:
    folder = cache / "tuning"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_no_table_means_no_digest_and_the_plans_pick(cache: Path) -> None:
    from ts_explore.kernels.gemm_geometry import TileShape
    from ts_explore.ops import compiled

    assert tables_digest() == ""
    base = compiled.default_gemm_config()
    cfg, note = default_config(base, (1000, 1032, 520), 132, "")
    assert note == "" and cfg.tile is not TileShape.BY_SHAPE
    assert cfg == base.resolved((1000, 1032, 520), 132)


def test_the_digest_changes_with_any_gemm_table_and_only_with_those(cache: Path) -> None:
    first = _table(cache, "hopper_gemm.NVIDIA_H200.580.json", '{"format": 1, "rows": {}}')
    one = tables_digest()
    assert one
    _table(cache, "hopper_attention.NVIDIA_H200.580.json", '{"format": 1, "rows": {}}')
    assert tables_digest() == one  # another scenario's table decides nothing here
    first.write_text('{"format": 1, "rows": {"x": 1}}')
    two = tables_digest()
    assert two not in ("", one)
    _table(cache, "hopper_gemm.NVIDIA_H100.570.json", "{}")
    assert tables_digest() not in (one, two)


def test_a_launch_record_made_before_a_table_changed_is_not_found_after(cache: Path) -> None:
    from ts_explore.ops.launch_index import record_name

    def name() -> str:
        digest = tables_digest()
        return record_name("gemm", f"default tuning {digest}" if digest else "default", (1000, 1032, 520), "bf16",
                           132, (9, 0))

    before = name()
    _table(cache, "hopper_gemm.NVIDIA_H200.580.json", '{"format": 1, "rows": {}}')
    assert name() != before


def test_tune_makes_a_loaded_gemm_op_forget_its_default_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    from ts_explore.tuning import run

    calls: list[str] = []
    fake = types.ModuleType("ts_explore.ops.gemm_op")
    fake.forget_defaults = lambda: calls.append("forgot")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ts_explore.ops.gemm_op", fake)
    run._forget_op_defaults()
    assert calls == ["forgot"]
    monkeypatch.delitem(sys.modules, "ts_explore.ops.gemm_op")
    run._forget_op_defaults()  # not loaded: nothing to forget, and torch is not imported for it
    assert calls == ["forgot"]
