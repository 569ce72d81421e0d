"""Golden-file comparison: ``golden(relpath, text)``; set TS_EXPLORE_UPDATE_GOLDEN=1 to rewrite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    def check(relpath: str, text: str) -> None:
        path = HERE / relpath
        if os.environ.get("TS_EXPLORE_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden file {relpath} is missing; run with TS_EXPLORE_UPDATE_GOLDEN=1 to create it")
        assert text == path.read_text(encoding="utf-8"), (
            f"output differs from golden {relpath} (TS_EXPLORE_UPDATE_GOLDEN=1 to accept)"
        )

    return check
