"""Turn Digraphs into SVG / files / notebook MIME bundles, with a render cache.

When the Graphviz ``dot`` program is missing, nothing here raises inside a
notebook display: the bundle falls back to the DOT text plus install advice.
"""

from __future__ import annotations

import functools
import hashlib
import html
import re
from pathlib import Path
from typing import Any

import graphviz

DOT_MISSING = (
    "Graphviz's `dot` program was not found, so the diagram is shown as DOT text. "
    "Install it (Debian/Ubuntu: `sudo apt-get install graphviz`; conda: "
    "`conda install graphviz`) and re-run the cell."
)

SUFFIX_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
TEXT_SUFFIXES = (".dot", ".gv")


def ascii_dot(source: str) -> str:
    """DOT text with every non-ASCII character as a numeric character reference, which Graphviz draws the same.

    Every Graphviz build reads it alike (``graphviz-pure`` warns on non-ASCII
    labels); it is what this module hands to Graphviz.

    >>> ascii_dot('a [label="tile 1 · loop"]')
    'a [label="tile 1 &#183; loop"]'
    """
    return source.encode("ascii", "xmlcharrefreplace").decode("ascii")


@functools.lru_cache(maxsize=256)
def _svg_for_source(source: str, engine: str) -> str:
    return graphviz.Source(ascii_dot(source), engine=engine).pipe(format="svg", encoding="utf-8")


def to_svg(graph: graphviz.Digraph) -> str:
    """SVG text for a graph (cached by DOT source)."""
    return _svg_for_source(graph.source, graph.engine)


def _inline(svg: str, source: str) -> str:
    """Strip the XML prolog and make element ids unique to this graph."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    prefix = "g" + hashlib.sha1(source.encode()).hexdigest()[:8] + "_"
    body = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', body)
    return body


FIT_CSS = (
    ".{scope} .ts-explore-fit-body{{overflow:auto}}"
    ".{scope} .ts-explore-fit-body>svg{{max-width:100%;height:auto}}"
    # !important: the svg also carries an inline max-width, which beats any rule that is not
    ".{scope} input.ts-explore-full:checked~.ts-explore-fit-body>svg{{max-width:none!important}}"
    ".{scope} label{{font:11px sans-serif;color:#555;cursor:pointer;user-select:none}}"
)
MIN_SCALE = 0.75  # a fitted drawing shrinks no further: Graphviz's 8 pt labels stay 8 px (1 pt = 4/3 px)
BOX_HEIGHT = "80vh"  # the drawing scrolls in a box no taller than this, so its sideways scrollbar is in view
_SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([0-9.]+)(pt|px)?"')


def natural_width_px(svg: str) -> float | None:
    """The SVG's own width in CSS pixels (Graphviz writes points), None when it states none.

    >>> natural_width_px('<svg width="300pt" height="10pt">')
    400.0
    """
    m = _SVG_WIDTH.search(svg)
    if m is None:
        return None
    return float(m.group(1)) * (4 / 3 if m.group(2) in (None, "pt") else 1)


def fit_html(svg: str, source: str) -> str:
    """Inline SVG that scales down to the output's width, but not below readable, with a "full size" switch.

    The drawing keeps its aspect ratio and shrinks to the output's width down
    to :data:`MIN_SCALE` of its natural size (a long swimlane would otherwise
    be drawn at a fifth, its labels a few pixels tall); wider than that, it
    scrolls inside its own box, at most :data:`BOX_HEIGHT` tall, so both
    scrollbars stay on screen. Ticking the switch shows it at its natural size
    in the same box. Pure HTML + CSS: works inside widgets and plain outputs.
    """
    body = _inline(svg, source)
    scope = "ts-fit-" + hashlib.sha1(source.encode()).hexdigest()[:10]
    width = natural_width_px(svg)
    floor = f";min-width:{width * MIN_SCALE:.0f}px" if width else ""
    # inline styles keep the drawing inside the output and readable even where <style> is stripped
    body = body.replace("<svg ", f'<svg style="max-width:100%;height:auto{floor}" ', 1)
    return (
        f'<div class="ts-explore-diagram {scope}"><style>{FIT_CSS.format(scope=scope)}</style>'
        f'<input type="checkbox" class="ts-explore-full" id="{scope}-full">'
        f'<label for="{scope}-full" title="show the drawing at its natural size (it scrolls in its box)">'
        " full size</label>"
        f'<div class="ts-explore-fit-body" style="overflow:auto;max-height:{BOX_HEIGHT}">{body}</div></div>'
    )


def graph_mimebundle(graph: graphviz.Digraph, text: str | None = None) -> dict[str, Any]:
    """A notebook bundle: inline SVG as HTML fitted to the output's width (links and tooltips work), SVG and text."""
    plain = text if text is not None else graph.source
    try:
        svg = to_svg(graph)
    except graphviz.ExecutableNotFound:
        return {
            "text/plain": f"{DOT_MISSING}\n\n{graph.source}",
            "text/html": f"<div class='ts-explore-nodot'><b>{html.escape(DOT_MISSING)}</b>"
            f"<pre>{html.escape(graph.source)}</pre></div>",
        }
    return {"text/html": fit_html(svg, graph.source), "image/svg+xml": svg, "text/plain": plain}


class Drawing(graphviz.Digraph):
    """A ``graphviz.Digraph`` that displays fitted to the notebook's width, with a full-size switch.

    Everything else is graphviz's own (``.source``, ``.render``, ``.pipe``);
    :func:`fitted` turns any Digraph into one.
    """

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict[str, Any]:
        bundle = graph_mimebundle(self)
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle


def fitted(graph: graphviz.Digraph) -> Drawing:
    """``graph`` as a :class:`Drawing` (same DOT source)."""
    if isinstance(graph, Drawing):
        return graph
    drawing = Drawing(name=graph.name, comment=graph.comment, filename=graph.filename, directory=graph.directory,
                      format=graph.format, engine=graph.engine, encoding=graph.encoding, strict=graph.strict,
                      graph_attr=dict(graph.graph_attr), node_attr=dict(graph.node_attr),
                      edge_attr=dict(graph.edge_attr), body=list(graph.body))
    return drawing


def mimebundle(model: Any, text: str | None = None) -> dict[str, Any]:
    """Bundle for a model object: schedule trees, tasks and task sets draw their tree."""
    from .tree import schedule_graph

    return graph_mimebundle(schedule_graph(model), text=text)


def save_graph(graph: graphviz.Digraph, path: str | Path) -> Path:
    """Write a graph to ``path``; the suffix picks the format (.svg .png .pdf .dot .gv)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        path.write_text(ascii_dot(graph.source), encoding="utf-8")
        return path
    fmt = SUFFIX_FORMATS.get(suffix)
    if fmt is None:
        raise ValueError(
            f"cannot tell the format from {path.name!r}: use one of "
            f"{', '.join([*SUFFIX_FORMATS, *TEXT_SUFFIXES])}"
        )
    try:
        data = graphviz.Source(ascii_dot(graph.source), engine=graph.engine).pipe(format=fmt)
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(DOT_MISSING) from exc
    path.write_bytes(data)
    return path


__all__ = ["BOX_HEIGHT", "DOT_MISSING", "MIN_SCALE", "Drawing", "ascii_dot", "fit_html", "fitted", "graph_mimebundle",
           "mimebundle", "natural_width_px", "save_graph", "to_svg"]
