"""Suite-wide fixtures: GPU tests skip with a reason on machines without a CUDA device."""

from __future__ import annotations

import functools
import os

import pytest


@functools.lru_cache(maxsize=1)
def cuda_device_reason() -> str | None:
    """None when a CUDA device is usable, else why not."""
    try:
        from cuda.bindings import driver  # type: ignore[import-not-found]
    except ImportError:
        try:
            from cuda import cuda as driver  # type: ignore[import-not-found,no-redef]
        except ImportError:
            return "cuda-python is not installed (pip install 'ts-explore[gpu]')"
    try:
        err, = driver.cuInit(0)[:1]
    except Exception as exc:  # cuda-python raises when the driver library is missing
        return f"no NVIDIA driver ({type(exc).__name__})"
    if int(err) != 0:
        return f"no CUDA driver/device (cuInit returned {int(err)})"
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        return "no CUDA device is visible"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or cuda_device_reason() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"GPU test: {reason}"))


@pytest.fixture(autouse=True, scope="session")
def _headless_matplotlib() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
