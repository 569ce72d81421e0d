"""On CUDA GPUs: tuning measures the quick candidates at two GEMM shapes on the sweep's cluster (one worker per
GPU), picks a proven, correct config per shape, resumes without measuring again, and launch runs each shape's
pick and says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("distributed", reason="tuning runs on the sweep's Dask cluster: pip install 'ts-explore[sweep]'")

SHAPES = [(2048, 2048, 1024), (1000, 1032, 520)]  # a full-tile shape and one with tails in M, N and K


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(tmp_path))
    from ts_explore.sweeps import shutdown

    yield tmp_path
    shutdown()


def test_tune_then_launch_uses_each_shapes_pick(cache: Path) -> None:
    import ts_explore
    from ts_explore.gpu.tuned import this_gpu

    table = ts_explore.tune("hopper_gemm", shapes=[f"{m}x{n}x{k}" for m, n, k in SHAPES], configs="quick",
                            reps=10, progress=False)
    assert table.path.parent == cache / "tuning" and table.gpu == this_gpu()[0]
    df = table.frame()
    assert len(df) == 2 * 3 and set(df["outcome"]) == {"measured"}, df[["shape", "config", "outcome", "reason"]]
    assert (df["tflops"] > 1).all() and df["picked"].sum() == 2
    assert set(df["gpu"]) == {table.gpu} and set(table.last_run["launch"]) == {"ok"}  # measured on this GPU model
    again = ts_explore.tune("hopper_gemm", shapes=[f"{m}x{n}x{k}" for m, n, k in SHAPES], configs="quick",
                            progress=False)
    assert again.last_run is None and len(again.rows) == 6  # nothing measured twice
    result = ts_explore.launch("hopper_gemm", sizes=SHAPES, reps=5)
    assert result.ok and [r.shape for r in result.runs] == [f"{m}x{n}x{k}" for m, n, k in SHAPES]
    for (m, n, k), note in zip(SHAPES, result.tuned):
        pick = table.pick((m, n, k))
        assert note == f"{m}x{n}x{k}: {pick.describe()}" and note in result.summary()
    assert ts_explore.launch("hopper_gemm", sizes=SHAPES[:1], reps=5, tuned=False).tuned == ()
