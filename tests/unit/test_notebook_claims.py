"""What the tutorials say about a scenario's kernel matches the catalog: no 'not built yet' for one that launches."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from ts_explore.scenarios import CATALOG

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
NOT_BUILT = re.compile(r"not built yet|refuses the scenario until|kernel[^.]*is the next step", re.I)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_tutorial_calls_a_launchable_kernel_unbuilt(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    launchable = [name for name, sc in CATALOG.items()
                  if sc.kernel is not None and (f'"{name}"' in text or f"`{name}`" in text)]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or not launchable:
            continue
        claim = NOT_BUILT.search(cell.source)
        assert claim is None, (f"{path.name} cell {i} says {claim.group(0)!r}, but {', '.join(launchable)} "
                               "has a kernel that launch runs")
