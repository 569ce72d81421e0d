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


@functools.lru_cache(maxsize=256)
def _svg_for_source(source: str, engine: str) -> str:
    return graphviz.Source(source, engine=engine).pipe(format="svg", encoding="utf-8")


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


def graph_mimebundle(graph: graphviz.Digraph, text: str | None = None) -> dict[str, Any]:
    """A notebook bundle: inline SVG as HTML (links and tooltips work) plus SVG and text."""
    plain = text if text is not None else graph.source
    try:
        svg = to_svg(graph)
    except graphviz.ExecutableNotFound:
        return {
            "text/plain": f"{DOT_MISSING}\n\n{graph.source}",
            "text/html": f"<div class='ts-explore-nodot'><b>{html.escape(DOT_MISSING)}</b>"
            f"<pre>{html.escape(graph.source)}</pre></div>",
        }
    return {
        "text/html": f'<div class="ts-explore-diagram" style="overflow:auto">{_inline(svg, graph.source)}</div>',
        "image/svg+xml": svg,
        "text/plain": plain,
    }


def mimebundle(model: Any, text: str | None = None) -> dict[str, Any]:
    """Bundle for a model object: schedule trees, tasks and task sets draw their tree."""
    from .tree import schedule_graph

    return graph_mimebundle(schedule_graph(model), text=text)


def save_graph(graph: graphviz.Digraph, path: str | Path) -> Path:
    """Write a graph to ``path``; the suffix picks the format (.svg .png .pdf .dot .gv)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        path.write_text(graph.source, encoding="utf-8")
        return path
    fmt = SUFFIX_FORMATS.get(suffix)
    if fmt is None:
        raise ValueError(
            f"cannot tell the format from {path.name!r}: use one of "
            f"{', '.join([*SUFFIX_FORMATS, *TEXT_SUFFIXES])}"
        )
    try:
        data = graphviz.Source(graph.source, engine=graph.engine).pipe(format=fmt)
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(DOT_MISSING) from exc
    path.write_bytes(data)
    return path


__all__ = ["DOT_MISSING", "graph_mimebundle", "mimebundle", "save_graph", "to_svg"]
