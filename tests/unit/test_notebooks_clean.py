"""Committed tutorials carry no outputs, and only deliberate failures carry a tag."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_tutorials() -> None:
    assert len(NOTEBOOKS) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stripped_and_tagged_sparingly(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        tags = set(cell.get("metadata", {}).get("tags", []))
        assert tags <= {"raises-exception"}, f"{path.name} cell {i}: unexpected tags {tags}"
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name} cell {i} has outputs"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
