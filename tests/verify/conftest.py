"""Shared fixtures for the verification tests: gallery verdicts (computed once) and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "verify"


@pytest.fixture(scope="session")
def gallery_verdicts():
    """``{case name: (broken verdict, fixed verdict)}`` for the whole gallery."""
    from ts_explore import gallery, verify

    return {name: (verify(**case.broken()), verify(**case.fixed())) for name, case in gallery.CASES.items()}


@pytest.fixture
def golden():
    """``golden(name, text)``: compare with tests/golden/verify/<name>; rewrite with TS_EXPLORE_UPDATE_GOLDEN=1."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("TS_EXPLORE_UPDATE_GOLDEN") == "1" or not path.exists():
            if os.environ.get("TS_EXPLORE_UPDATE_GOLDEN") != "1":
                pytest.fail(f"missing golden file {path.name}; run with TS_EXPLORE_UPDATE_GOLDEN=1 to create it")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"

    return check
