"""GPU tests: every test here is marked ``gpu`` and skips with a reason when no CUDA device is visible."""

from __future__ import annotations

import pytest

from ts_explore.launch import cuda_unavailable_reason


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = str(config.rootpath / "tests" / "gpu")
    reason = None
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.gpu)
            unavailable = reason if reason is not None else (cuda_unavailable_reason() or ("", ""))
            reason = unavailable
            if unavailable[0]:
                item.add_marker(pytest.mark.skip(reason=f"GPU test: {unavailable[1]}"))
