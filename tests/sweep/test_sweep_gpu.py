"""On CUDA GPUs: a launch sweep runs one Dask worker per GPU, each cell compiled, checked and timed
there; a hanging kernel is a failed row and the next sweep on the same cluster works."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

SMALL = 1 << 22


@pytest.fixture(scope="module")
def gpu_sweeps() -> Iterator[None]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu"))  # hang_kernel, for the workers too
    from ts_explore.sweeps import shutdown

    yield
    shutdown()


def test_launch_sweep_one_worker_per_gpu(gpu_sweeps: None) -> None:
    import ts_explore
    from ts_explore.gpu.probe import probe

    grid = {"stages": [2, 4], "store_warps": [2, 4], "loader": ["tma", "threads"]}
    df = ts_explore.sweep("pipelined_copy", grid, base=ts_explore.scenarios.get("pipelined_copy").config(ctas=0),
                          launch=True, sizes=[SMALL], reps=5, cache=False, progress=False)
    assert len(df) == 8 and set(df["status"]) == {"safe"}, df[["status", "reason"]]
    assert set(df["launch"]) == {"ok"} and df["correct"].all()
    assert set(df["unit"]) == {"GB/s"} and (df["value"] > 10).all() and (df["ratio"] > 0).all()
    assert (df["compile_s"] >= 0).all() and (df["launched_elements"] == SMALL).all()
    assert df["worker"].nunique() == min(probe().devices, 8)  # one worker per GPU, all of them used


def test_a_hanging_kernel_is_a_failed_row_and_the_cluster_goes_on(gpu_sweeps: None) -> None:
    import hang_kernel

    import ts_explore

    hung = ts_explore.sweep(hang_kernel.SCENARIO, {"warps": [1]}, launch=True, sizes=[4], reps=1, timeout=20,
                            cache=False, progress=False)
    row = hung.iloc[0]
    assert row["status"] == "failed" and row["launch"] == "failed" and "[timeout]" in row["reason"], row.to_dict()
    after = ts_explore.sweep("pipelined_copy", {"stages": [2, 3]}, launch=True, sizes=[SMALL], reps=2, cache=False,
                             progress=False)
    assert set(after["launch"]) == {"ok"} and after["correct"].all()
