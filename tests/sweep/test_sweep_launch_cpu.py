"""Launch sweeps without a GPU: the cluster layout (one non-daemonic worker per GPU, each seeing its own
device), the launch columns for bandwidth and FLOP/s kernels, and the messages when launching is impossible."""

from __future__ import annotations

import multiprocessing as mp
import os
from types import SimpleNamespace
from typing import Any

import pytest

from sweep_scenarios import GALLERY
from ts_explore.sweeps import SweepError
from ts_explore.sweeps import cluster as cl
from ts_explore.sweeps.cell import measure


def _layout() -> tuple[str, bool, int]:
    """What a launch worker needs: its GPU, not being daemonic, and being able to start a child process."""
    ctx = mp.get_context("fork")  # the daemon check is the same for every start method; fork is quick
    child = ctx.Process(target=os.getpid)
    child.start()
    child.join(60)
    return os.environ.get("CUDA_VISIBLE_DEVICES", ""), mp.current_process().daemon, child.exitcode


def test_gpu_cluster_is_one_non_daemonic_worker_per_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import dask

    monkeypatch.setattr(cl, "visible_gpus", lambda: 2)
    with dask.config.set({"distributed.worker.daemon": True}):  # restore the default afterwards
        client = cl.start_cluster(launch=True)  # no GPU here: dask-cuda cannot start, the fallback does
        try:
            seen = client.run(_layout)
            allowed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
        finally:
            cluster = client.cluster
            client.close()
            cluster.close()
    assert sorted(v[0].split(",")[0] for v in seen.values()) == ["0", "1"]
    assert all(not daemon and code == 0 for _, daemon, code in seen.values())
    assert allowed == 0


def test_launch_needs_a_gpu_or_a_client(monkeypatch: pytest.MonkeyPatch) -> None:
    import ts_explore

    with pytest.raises(SweepError, match="launch=True needs a CUDA GPU"):
        ts_explore.sweep("pipelined_copy", {"stages": [2]}, launch=True, progress=False)
    with pytest.raises(SweepError, match="has no GPU kernel"):
        ts_explore.sweep(GALLERY, {"n": [1]}, launch=True, progress=False)
    with pytest.raises(SweepError, match="sizes= only applies to launch sweeps"):
        ts_explore.sweep("pipelined_copy", {"stages": [2]}, sizes=[1024], progress=False)


def test_sweep_says_how_to_install_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    import ts_explore

    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with pytest.raises(SweepError, match=r"pip install 'ts-explore\[sweep\]'"):
        ts_explore.sweep("pipelined_copy", {"stages": [2]}, progress=False)


def _run(gbps: float, ratio: float | None, tflops: Any = None) -> Any:
    ref = SimpleNamespace(label="cudaMemcpyAsync D2D")
    run = SimpleNamespace(gbps=gbps, elements=1 << 20, references=(ref,), ratio=lambda: ratio)
    if tflops is not None:
        run.tflops = tflops
    return run


def test_launch_columns_fit_bandwidth_and_flops_kernels() -> None:
    copy = measure(_run(3000.0, 0.75))
    assert (copy["metric"], copy["value"], copy["unit"], copy["ratio"]) == ("bandwidth", 3000.0, "GB/s", 0.75)
    assert copy["reference"] == "cudaMemcpyAsync D2D" and copy["launched_elements"] == 1 << 20
    gemm = measure(_run(10.0, 0.9, tflops=lambda: 650.0))
    assert (gemm["metric"], gemm["value"], gemm["unit"]) == ("throughput", 650.0, "TFLOP/s")
    rated = _run(10.0, 0.8)
    rated.rate, rated.unit, rated.label = 700.0, "TFLOP/s", "8192x8192x8192"  # a result that names its unit
    row = measure(rated)
    assert (row["metric"], row["value"], row["unit"], row["ratio"], row["size"]) == (
        "throughput", 700.0, "TFLOP/s", 0.8, "8192x8192x8192")
