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


def test_save_into_a_missing_folder_says_so(tmp_path) -> None:
    target = tmp_path / "no" / "such" / "tree.svg"
    with pytest.raises(FileNotFoundError, match=r"the folder .*such does not exist; create it first"):
        ts_explore.save(seed.reference_shape(), target)
    assert not target.parent.exists()
