"""What the explorer's status line and tabs say, read as a user reads them."""

from __future__ import annotations

import re

import pytest

from ts_explore.app.explorer import Explorer

OUTPUT_PX = 988  # the width of a notebook output in JupyterLab at 1500 px, where the drawings are fitted
SMALLEST_READABLE_PX = 9


def _smallest_text_px(svg_html: str, output_px: int = OUTPUT_PX) -> float:
    """The smallest font on screen once the drawing is scaled down to ``output_px`` (96 px per 72 pt)."""
    width_pt = float(re.search(r'<svg[^>]*\swidth="([0-9.]+)pt"', svg_html).group(1))
    scale = min(1.0, output_px / (width_pt * 96 / 72))
    sizes = [float(s) for s in re.findall(r'font-size="([0-9.]+)"', svg_html)]
    return min(sizes) * 96 / 72 * scale


@pytest.fixture(scope="module")
def quickstart() -> Explorer:
    """The quickstart's code cell: clc, no queue, then back to where it started."""
    ex = Explorer("persistent_copy", debounce_s=0)
    start = ex.config
    ex.set(queue="clc")
    ex.set(queue="none")
    ex.set(start)
    return ex


def test_back_to_the_start_shows_no_changes_against_earlier_settings(quickstart: Explorer) -> None:
    assert quickstart.state == "idle" and quickstart.config.queue.value == "static"
    assert quickstart.diff is None
    assert "changes since" not in quickstart.status.value
    quickstart.render("changes")
    assert "This is the last safe configuration" in quickstart.panes["changes"].value
    quickstart.controls["queue"].value = quickstart.controls["queue"].options[-1][1]  # the next change compares
    assert quickstart.diff is not None and "new task scheduler" in quickstart.diff.summary()


def test_the_drawing_shows_the_clc_scheduler_stages() -> None:
    ex = Explorer("persistent_copy", queue="clc", scheduler_stages=1, debounce_s=0)
    one = ex.dot
    ex.controls["scheduler_stages"].value = 3
    assert ex.dot != one, "changing the CLC scheduler stages left the drawing identical"
    assert "wq fetches tiles through 3 stages" in ex.dot and "through 1 stage\"" in one


def test_the_changes_tab_lists_each_line_once_and_its_drawing_is_readable() -> None:
    ex = Explorer("persistent_copy", debounce_s=0)
    ex.set(queue="clc")
    ex.render("changes")
    pane = ex.panes["changes"].value
    listing = re.search(r"<ul style='([^']*)'>(.*?)</ul>", pane, flags=re.S)
    assert listing is not None and "list-style:none" in listing.group(1), "a bullet in front of each +/-/* mark"
    assert "<code style='white-space:pre'>  * work tile loop" in listing.group(2), "nested lines keep their indent"
    assert _smallest_text_px(pane) >= SMALLEST_READABLE_PX, "the diff drawing's labels are too small to read"


def test_the_verdict_tab_says_its_status_once() -> None:
    ex = Explorer("persistent_copy", debounce_s=0)
    ex.render("verdict")
    head = re.search(r"<div style='font-weight:bold[^>]*>([^<]*)</div>", ex.panes["verdict"].value).group(1)
    assert head.startswith("SAFE: all ") and "safe:" not in head.lower().replace("safe: all", "", 1)
