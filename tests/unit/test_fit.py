"""Drawings fit the output's width with a switch to see them at full size, wherever they are shown."""

from __future__ import annotations

import re

import graphviz
import pytest

import ts_explore
from ts_explore.render.display import Drawing, fit_html, fitted, graph_mimebundle
from ts_explore.seed_examples import seed


def _declarations(text: str) -> dict[str, tuple[str, bool]]:
    """``{property: (value, important)}`` of a CSS declaration block."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, value = part.partition(":")
        important = "!important" in value
        out[name.strip()] = (value.replace("!important", "").strip(), important)
    return out


def svg_max_width(html: str, *, checked: bool) -> str | None:
    """The SVG's effective ``max-width`` under the CSS cascade, with the "full size" switch ticked or not.

    Inline declarations beat stylesheet rules unless a rule is ``!important``;
    among rules, the later one of the same specificity wins (ours share one).
    """
    scope = re.search(r'class="ts-explore-diagram (ts-fit-[0-9a-f]+)"', html).group(1)
    sheet = re.search(r"<style>(.*?)</style>", html, flags=re.S).group(1)
    rule_value: tuple[str, bool] | None = None
    for selector, block in re.findall(r"([^{}]+)\{([^}]*)\}", sheet):
        selector = selector.strip()
        if not selector.startswith(f".{scope} ") or not selector.endswith(">svg"):
            continue
        if ":checked" in selector and not checked:
            continue
        found = _declarations(block).get("max-width")
        if found is not None and (rule_value is None or found[1] or not rule_value[1]):
            rule_value = found
    inline = re.search(r'<svg[^>]*\sstyle="([^"]*)"', html)
    inline_value = _declarations(inline.group(1)).get("max-width") if inline else None
    if rule_value is not None and (inline_value is None or rule_value[1]):
        return rule_value[0]
    return inline_value[0] if inline_value is not None else None


def _fits(html: str) -> None:
    assert 'type="checkbox" class="ts-explore-full"' in html and "full size" in html
    assert svg_max_width(html, checked=False) == "100%", "the drawing scales to the output width"
    assert svg_max_width(html, checked=True) == "none", "ticking 'full size' shows the natural width"
    assert re.search(r'<svg[^>]*height:auto', html), "the aspect ratio is kept when scaled"


def test_the_full_size_switch_wins_over_the_inline_width() -> None:
    """An inline ``max-width`` on the SVG (kept where a stylesheet is stripped) must not pin the drawing."""
    html = fit_html('<svg width="3512pt" height="200pt" viewBox="0 0 3512 200"></svg>', "wide")
    assert svg_max_width(html, checked=False) == "100%"
    assert svg_max_width(html, checked=True) == "none"
    plain = html.replace("!important", "")  # what the page had before: the switch did nothing
    assert svg_max_width(plain, checked=True) == "100%"


def test_fitted_keeps_the_source_and_displays_fitted() -> None:
    g = graphviz.Digraph("g")
    g.attr(label="a title")
    g.edge("a", "b")
    d = fitted(g)
    assert isinstance(d, Drawing) and isinstance(d, graphviz.Digraph) and d.source == g.source
    _fits(d._repr_mimebundle_()["text/html"])
    assert set(d._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}


def test_two_drawings_on_one_page_do_not_share_a_switch() -> None:
    a, b = graphviz.Digraph("a"), graphviz.Digraph("b")
    a.node("x")
    b.node("y")
    ids = [re.search(r'id="(ts-fit-[0-9a-f]+)-full"', graph_mimebundle(g)["text/html"]).group(1) for g in (a, b)]
    assert ids[0] != ids[1]


@pytest.mark.parametrize("draw", ["schedule_graph", "dependency_graph", "deadlock_graph", "swimlanes", "recording"])
def test_every_public_drawing_fits(draw: str) -> None:
    v = ts_explore.verify(**ts_explore.gallery.get("cross_wait").broken())
    rec = seed.static_persistent()
    obj = {
        "schedule_graph": lambda: ts_explore.schedule_graph(rec),
        "dependency_graph": lambda: ts_explore.dependency_graph(v.task_set),
        "deadlock_graph": lambda: ts_explore.deadlock_graph(v),
        "swimlanes": lambda: ts_explore.swimlanes(v),
        "recording": lambda: rec,
    }[draw]()
    _fits(obj._repr_mimebundle_()["text/html"])


def test_the_explorer_panes_fit(tmp_path) -> None:
    ex = ts_explore.Explorer("persistent_copy", queue="clc", debounce_s=0)
    _fits(ex.panes["schedule"].value)
    assert fit_html("<svg width='1pt'></svg>", "x").count("<svg") == 1
