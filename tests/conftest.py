"""Suite-wide rules: tests under tests/gpu are marked ``gpu``; GPU tests skip with the reason
when this machine cannot launch (no cuda-python, no driver, no device); ``soak`` tests run only
in the soak tier (``TS_EXPLORE_SOAK=1``, see tests/tiers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite keeps its own cache folder: the user's sweep results and tuning tables (which ``launch`` reads
    to pick a tuned config) neither change what the tests launch nor receive the tests' rows."""
    before = os.environ.get("TS_EXPLORE_CACHE_DIR")
    os.environ["TS_EXPLORE_CACHE_DIR"] = str(tmp_path_factory.mktemp("ts-explore-cache"))
    yield
    if before is None:
        os.environ.pop("TS_EXPLORE_CACHE_DIR", None)
    else:
        os.environ["TS_EXPLORE_CACHE_DIR"] = before
