"""The repair drawing: before and after side by side, the changed steps marked (golden DOT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ts_explore.render.repair import repair_graph

from repair_support import gallery_repairs

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "dot"


@pytest.mark.parametrize("name", ["missing_release", "cross_wait", "consumer_longer"])
def test_repair_drawing_matches_golden(name: str) -> None:
    import os

    dot = repair_graph(gallery_repairs(name)[0]).source
    path = GOLDEN / f"repair_{name}.dot"
    if os.environ.get("TS_EXPLORE_UPDATE_GOLDEN") == "1":
        path.write_text(dot, encoding="utf-8")
    assert path.exists(), "golden file missing; run with TS_EXPLORE_UPDATE_GOLDEN=1"
    assert dot == path.read_text(encoding="utf-8")


def test_the_inserted_and_moved_steps_are_marked() -> None:
    dot = repair_graph(gallery_repairs("missing_release")[0]).source
    assert "moved or inserted: smem.release" in dot and "before: Task Store" in dot and "after: Task Store" in dot
    moved = repair_graph(gallery_repairs("cross_wait")[0]).source
    assert moved.count("moves or goes: right.") == 3 and moved.count("moved or inserted: right.") == 3
