"""tile='by shape' and this GPU's tuning table, on the CPU: a launch that chose nothing but the tile's pick (and
the input type) runs the table's pick for each shape the table has one for, and the launch plan's own 'by shape'
tile for the others; any other choice keeps the config the caller asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from ts_explore.gpu import tuned
from ts_explore.gpu.tuning_table import MEASURED, TuningTable
from ts_explore.kernels.gemm_geometry import DType, TileShape
from ts_explore.scenarios import get

SC = get("hopper_gemm")
GPU = ("Fake H200", "1.0")


@pytest.mark.parametrize("overrides, wanted", [
    ({"tile": "by shape"}, True), ({"tile": TileShape.BY_SHAPE, "dtype": "fp8"}, True),
    ({"tile": "by shape", "stages": 6}, False), ({"tile": "t128x128"}, False), ({"mode": "ping-pong"}, False),
])
def test_only_tile_by_shape_leaves_the_config_to_the_table(overrides: dict, wanted: bool) -> None:
    assert tuned.wants_table(SC, None, overrides, True) is wanted
    assert tuned.wants_table(SC, None, overrides, False) is False, "tuned=False turns the lookup off"
    assert tuned.wants_table(SC, SC.config(tile=TileShape.BY_SHAPE), {}, True), "a by-shape config, no overrides"


def test_by_shape_runs_the_tables_pick_where_it_has_one_and_its_own_pick_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tuned, "this_gpu", lambda: GPU)
    table = TuningTable(SC.name, *GPU, cache_dir=tmp_path)
    table.put({"shape": "5000x3080x4136", "config": {"tile": "t256x128", "swizzle": 8}, "outcome": MEASURED,
               "tflops": 480.0})
    table.put({"shape": "5000x3080x4136", "config": {"tile": "by_shape"}, "outcome": MEASURED, "tflops": 470.0})
    by_shape = SC.config(tile=TileShape.BY_SHAPE)
    picks = tuned.size_picks(SC, by_shape, ((5000, 3080, 4136), (1000, 1032, 520)), cache_dir=tmp_path)
    assert picks[0].config.tile is TileShape.T256x128 and picks[0].config.swizzle == 8
    assert "5000x3080x4136" in picks[0].note and "480" in picks[0].note, picks[0].note
    assert picks[1].config == by_shape and picks[1].note == "", "no row: the launch plan's own pick"
    fp8 = SC.config(tile=TileShape.BY_SHAPE, dtype=DType.FP8)
    table.put({"shape": "1000x1032x528", "config": {"tile": "t128x128", "dtype": "bf16"}, "outcome": MEASURED,
               "tflops": 200.0})
    assert tuned.size_picks(SC, fp8, ((1000, 1032, 528),), cache_dir=tmp_path)[0].config == fp8, \
        "a bf16 row is no pick for an fp8 launch"
