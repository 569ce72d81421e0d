"""Drawings fit the output's width with a switch to see them at full size, wherever they are shown."""

from __future__ import annotations

import re

import graphviz
import pytest

import ts_explore
from ts_explore.render.display import Drawing, fit_html, fitted, graph_mimebundle
from ts_explore.seed_examples import seed


def _fits(html: str) -> None:
    assert re.search(r'<svg style="max-width:100%;height:auto"', html), "the drawing scales to the output width"
    assert 'type="checkbox" class="ts-explore-full"' in html and "full size" in html
    scope = re.search(r'class="ts-explore-diagram (ts-fit-[0-9a-f]+)"', html).group(1)
    assert f".{scope} input.ts-explore-full:checked~.ts-explore-fit-body>svg{{max-width:none}}" in html


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
