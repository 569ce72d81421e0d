"""One place for every colour, shape and font the diagrams use."""

from __future__ import annotations

from typing import Final

from ..model import BlockKind, Family

FONT: Final = "Helvetica"

# Fill colour per step family: producer sync in oranges, consumer sync in blues,
# work in green/violet, bookkeeping in yellow/grey/pink.
FAMILY_FILL: Final[dict[Family, str]] = {
    Family.ACQUIRE: "#fde2c4",
    Family.COMMIT: "#f6b26b",
    Family.WAIT: "#d4e6f9",
    Family.RELEASE: "#93c1ec",
    Family.PRODUCER_WORK: "#cdeccb",
    Family.CONSUMER_WORK: "#e3d7f6",
    Family.AUX: "#ededed",
    Family.QUEUE: "#fff2a8",
    Family.BARRIER: "#f9cde0",
}

FAMILY_LEGEND: Final[dict[Family, str]] = {
    Family.ACQUIRE: "try_acquire / acquire",
    Family.COMMIT: "commit",
    Family.WAIT: "try_wait / wait",
    Family.RELEASE: "release",
    Family.PRODUCER_WORK: "producer work",
    Family.CONSUMER_WORK: "consumer work",
    Family.AUX: "auxiliary work",
    Family.QUEUE: "WorkQueue op",
    Family.BARRIER: "barrier (PDL)",
}

# (border colour, style, fill) per cluster kind.
CLUSTER: Final[dict[str, tuple[str, str, str]]] = {
    "task": ("#444444", "rounded", "#ffffff"),
    "work_tile_loop": ("#b08900", "rounded,bold,filled", "#fffbea"),
    "domain_loop": ("#1f5fa8", "rounded,bold,filled", "#f3f8fe"),
    "head": ("#888888", "rounded,filled", "#f7f7f7"),
    "tail": ("#888888", "rounded,filled", "#f7f7f7"),
    BlockKind.SKIPPABLE.value: ("#7f7f7f", "rounded,dashed", "#ffffff"),
    BlockKind.FIRST_ITER.value: ("#2e8b57", "rounded,dotted,bold", "#ffffff"),
    BlockKind.LAST_ITER.value: ("#2e8b57", "rounded,dotted,bold", "#ffffff"),
    BlockKind.EVERY.value: ("#2e8b57", "rounded,dotted,bold", "#ffffff"),
    BlockKind.WHEN_TRUE.value: ("#8e44ad", "rounded,dashed,bold", "#ffffff"),
    BlockKind.WHEN_FALSE.value: ("#8e44ad", "rounded,dashed,bold", "#ffffff"),
}

ORDER_EDGE: Final = {"color": "#a0a0a0", "arrowsize": "0.5"}
ROUTE_EDGE: Final = {
    "color": "#1f6fd1",
    "fontcolor": "#1f6fd1",
    "penwidth": "1.6",
    "style": "bold",
    "constraint": "false",
    "fontsize": "9",
}
CONDITION_EDGE: Final = {
    "color": "#8e44ad",
    "fontcolor": "#8e44ad",
    "style": "dashed",
    "constraint": "false",
    "fontsize": "9",
}

BLOCKED_BORDER: Final = "#d62728"
BLOCKED_PENWIDTH: Final = "3"

GRAPH_ATTRS: Final = {
    "rankdir": "TB",
    "fontname": FONT,
    "fontsize": "12",
    "compound": "true",
    "nodesep": "0.25",
    "ranksep": "0.3",
    "labelloc": "t",
}
NODE_ATTRS: Final = {
    "shape": "box",
    "style": "rounded,filled",
    "fontname": FONT,
    "fontsize": "11",
    "margin": "0.08,0.04",
}
EDGE_ATTRS: Final = {"fontname": FONT, "fontsize": "9"}

# Resource nodes in the dependency graph.
RESOURCE_FILL: Final = "#f2f2f2"
RESOURCE_FILL_PIPELINED: Final = "#e6f0fb"
RESOURCE_FILL_QUEUE: Final = "#fff2a8"
RESOURCE_FILL_BARRIER: Final = "#f9cde0"
DEP_EDGE_COLOR: Final[dict[str, str]] = {
    "data": "#333333",
    "ordering": "#c0392b",
    "ping-pong": "#8e44ad",
    "work-queue": "#b08900",
}

# Schedule diff against the last safe configuration: (border, fill) per change.
DIFF_ADDED: Final = ("#1a7f37", "#d2f4d3")
DIFF_MOVED: Final = ("#c26a00", "#ffe3bf")
DIFF_REMOVED: Final = ("#b42318", "#ffffff")
DIFF_PENWIDTH: Final = "2.5"

__all__ = [
    "BLOCKED_BORDER",
    "BLOCKED_PENWIDTH",
    "CLUSTER",
    "CONDITION_EDGE",
    "DEP_EDGE_COLOR",
    "DIFF_ADDED",
    "DIFF_MOVED",
    "DIFF_PENWIDTH",
    "DIFF_REMOVED",
    "EDGE_ATTRS",
    "FAMILY_FILL",
    "FAMILY_LEGEND",
    "FONT",
    "GRAPH_ATTRS",
    "NODE_ATTRS",
    "ORDER_EDGE",
    "RESOURCE_FILL",
    "RESOURCE_FILL_BARRIER",
    "RESOURCE_FILL_PIPELINED",
    "RESOURCE_FILL_QUEUE",
    "ROUTE_EDGE",
]
