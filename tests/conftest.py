"""Suite-wide rules: tests under tests/gpu are marked ``gpu``; GPU tests skip with the reason
when this machine cannot launch (no cuda-python, no driver, no device); ``soak`` tests run only
in the soak tier (``TS_EXPLORE_SOAK=1``, see tests/tiers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tiers import SOAK_VARIABLE, soak

GPU_DIR = Path(__file__).parent / "gpu"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unavailable: tuple[str, str] | None = None
    checked = False
    soaking = soak()
    for item in items:
        if Path(item.path).is_relative_to(GPU_DIR):
            item.add_marker(pytest.mark.gpu)
        if "soak" in item.keywords and not soaking:
            item.add_marker(pytest.mark.skip(reason=f"soak tier: set {SOAK_VARIABLE}=1 to run it"))
        if "gpu" not in item.keywords:
            continue
        if not checked:
            from ts_explore.gpu import cuda_unavailable_reason

            unavailable, checked = cuda_unavailable_reason(), True
        if unavailable is not None:
            item.add_marker(pytest.mark.skip(reason=f"GPU test: {unavailable[1]}"))


@pytest.fixture(autouse=True, scope="session")
def _headless_matplotlib() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
