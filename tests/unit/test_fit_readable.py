"""Fitted drawings stay readable: a wide swimlane scrolls in its own box instead of shrinking to 6 px text.

Notebooks 05, 08, 10 and 13 draw swimlanes and wait-for graphs several
thousand points wide; fitted to a notebook's width they were shown at a fifth
of their size. The drawing now shrinks no further than ``MIN_SCALE`` and
scrolls inside a box no taller than ``BOX_HEIGHT``, with "full size" or not.
"""

from __future__ import annotations

import re

import pytest

from ts_explore import deadlock_graph, gallery, swimlanes, verify
from ts_explore.render.display import BOX_HEIGHT, MIN_SCALE, graph_mimebundle, natural_width_px, to_svg
from ts_explore.scenarios import get

SMALLEST_TEXT_PX = 8  # what a label may shrink to at the most


def _drawings() -> dict[str, object]:
    v = verify(**gallery.get("cross_wait").broken())
    attention = get("hopper_attention")
    longer = verify(**attention.build(attention.config(
        fault="a consumer's loop runs one K/V block more than the loader's (deadlock)")).verify_kwargs())
    return {"05 swimlanes": swimlanes(v), "05 wait-for graph": deadlock_graph(v), "13 swimlanes": swimlanes(longer)}


DRAWINGS = _drawings()


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_the_smallest_label_stays_readable_however_narrow_the_output(name: str) -> None:
    graph = DRAWINGS[name]
    svg, html = to_svg(graph), graph_mimebundle(graph)["text/html"]
    view_w = float(re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+)', svg).group(1))
    smallest = min(float(f) for f in re.findall(r'font-size="([0-9.]+)"', svg))
    style = re.search(r'<svg[^>]*\sstyle="([^"]*)"', html).group(1)
    floor = float(re.search(r"min-width:([0-9.]+)px", style).group(1))
    assert smallest * floor / view_w >= SMALLEST_TEXT_PX - 0.1, f"{name}: labels shrink below {SMALLEST_TEXT_PX} px"
    assert floor <= natural_width_px(svg), "a small drawing is never enlarged"


def test_a_wide_drawing_scrolls_in_its_own_box_with_the_switch_ticked_or_not() -> None:
    html = graph_mimebundle(DRAWINGS["13 swimlanes"])["text/html"]
    box = re.search(r'<div class="ts-explore-fit-body" style="([^"]*)"', html).group(1)
    assert "overflow:auto" in box and f"max-height:{BOX_HEIGHT}" in box
    assert MIN_SCALE < 1 and "full size" in html
