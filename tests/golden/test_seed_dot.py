"""Golden DOT for every schedule of the user's guide; every DOT renders with `dot`."""

from __future__ import annotations

import subprocess

import pytest

import ts_explore
from ts_explore.seed_examples.seed import SEED


@pytest.mark.parametrize("name", sorted(SEED))
def test_seed_schedule_dot_is_golden_and_renders(name: str, golden) -> None:
    rec = SEED[name]()
    assert rec.ok, rec.error
    dot = ts_explore.schedule_graph(rec).source
    assert dot == ts_explore.schedule_graph(SEED[name]()).source, "same schedule must give the same DOT"
    golden(f"dot/{name}.dot", dot)
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    assert "<svg" in svg
