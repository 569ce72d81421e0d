"""Pure renderers: model in, ``graphviz.Digraph`` out, plus SVG/file output helpers."""

from __future__ import annotations

from .deps import dependency_graph
from .display import graph_mimebundle, save_graph, to_svg
from .tree import schedule_graph

__all__ = ["dependency_graph", "graph_mimebundle", "save_graph", "schedule_graph", "to_svg"]
