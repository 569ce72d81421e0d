"""save(obj, path) writes the format its suffix names, and says which suffixes exist."""

from __future__ import annotations

import pytest

import ts_explore
from ts_explore.seed_examples import seed


@pytest.mark.parametrize("suffix,magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"), (".pdf", b"%PDF"), (".dot", b"digraph")])
def test_save_by_suffix(tmp_path, suffix: str, magic: bytes) -> None:
    out = ts_explore.save(seed.reference_shape(), tmp_path / f"tree{suffix}")
    assert out.read_bytes().startswith(magic)


def test_save_accepts_digraphs_and_rejects_unknown_suffix(tmp_path) -> None:
    graph = ts_explore.schedule_graph(seed.guarded().schedule)
    assert ts_explore.save(graph, tmp_path / "g.gv").read_text().startswith("digraph")
    with pytest.raises(ValueError, match=r"\.svg, \.png, \.pdf, \.dot, \.gv"):
        ts_explore.save(graph, tmp_path / "g.jpeg")
