"""Graphviz only ever reads ASCII from us (``graphviz-pure`` warns on anything else), and draws the same text."""

from __future__ import annotations

from pathlib import Path

import graphviz
import pytest

import ts_explore
from ts_explore.render import display


@pytest.fixture()
def handed_to_graphviz(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every DOT text this package passes to Graphviz, recorded."""
    seen: list[str] = []

    class Recording(graphviz.Source):
        def __init__(self, source: str, *args, **kwargs) -> None:
            seen.append(source)
            super().__init__(source, *args, **kwargs)

    monkeypatch.setattr(display.graphviz, "Source", Recording)
    display._svg_for_source.cache_clear()
    return seen


def test_labels_with_non_ascii_text_reach_graphviz_as_ascii(handed_to_graphviz: list[str], tmp_path: Path) -> None:
    v = ts_explore.verify(**ts_explore.gallery.get("cross_wait").broken())
    drawing = ts_explore.deadlock_graph(v)  # its credit counts read "commits 0 · free slots 1"
    assert "·" in drawing.source, "precondition: a label holds a non-ASCII character"
    bundle = drawing._repr_mimebundle_()
    ts_explore.save(drawing, tmp_path / "deadlock.png")
    dot = ts_explore.save(drawing, tmp_path / "deadlock.dot")
    assert len(handed_to_graphviz) == 2 and all(s.isascii() for s in handed_to_graphviz)
    assert dot.read_text(encoding="utf-8").isascii()
    assert "·" in bundle["image/svg+xml"], "Graphviz draws the character the reference stands for"
