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
UNROUTED_COLOR: Final = "#b45f06"  # an output no later step uses: badge and text
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

# Verification drawings: swimlanes (one lane per task) and wait-for graphs.
LANE_GRAPH: Final = {"rankdir": "LR", "fontname": FONT, "fontsize": "12", "nodesep": "0.15", "ranksep": "0.12",
                     "labelloc": "t", "labeljust": "l"}
LANE_CLUSTER: Final = {"color": "#444444", "style": "rounded", "fontcolor": "#222222"}
SEGMENT_CLUSTER: Final[dict[str, dict[str, str]]] = {
    "head": {"color": "#888888", "style": "rounded,filled", "fillcolor": "#f7f7f7", "fontcolor": "#666666"},
    "loop": {"color": "#1f5fa8", "style": "rounded,filled", "fillcolor": "#f3f8fe", "fontcolor": "#1f5fa8"},
    "tail": {"color": "#888888", "style": "rounded,filled", "fillcolor": "#f7f7f7", "fontcolor": "#666666"},
}
# Per lane-cell state; "done" and "next" cells keep their family fill colour.
LANE_STATE: Final[dict[str, dict[str, str]]] = {
    "done": {"style": "rounded,filled", "color": "#666666"},
    "next": {"style": "rounded,filled,bold", "color": "#1f6fd1", "penwidth": "2.5"},
    "pending": {"style": "rounded,filled", "fillcolor": "#ffffff", "color": "#bbbbbb", "fontcolor": "#888888"},
    "blocked": {"style": "rounded,filled,bold", "color": BLOCKED_BORDER, "penwidth": BLOCKED_PENWIDTH},
    "offending": {"style": "rounded,filled,bold", "color": BLOCKED_BORDER, "penwidth": BLOCKED_PENWIDTH},
}
LANE_FOLD: Final = {"shape": "plaintext", "fontcolor": "#888888", "fontsize": "9"}
LANE_ORDER_EDGE: Final = {"color": "#c0c0c0", "arrowsize": "0.4"}
NEEDS_EDGE: Final = {"color": BLOCKED_BORDER, "fontcolor": BLOCKED_BORDER, "style": "dashed",
                     "constraint": "false", "fontsize": "9"}

WAIT_TASK: Final = {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff", "color": "#444444"}
WAIT_TASK_BLOCKED_FILL: Final = "#fdecea"
WAIT_CREDIT: Final = {"shape": "ellipse", "style": "filled", "color": "#555555"}
CREDIT_FILL: Final[dict[str, str]] = {"commit": FAMILY_FILL[Family.COMMIT], "empty": FAMILY_FILL[Family.RELEASE]}
WAIT_EDGE: Final = {"color": "#555555", "fontcolor": "#555555"}
CYCLE_EDGE: Final = {"color": BLOCKED_BORDER, "fontcolor": BLOCKED_BORDER, "penwidth": "2.5"}
NOTE_NODE: Final = {"shape": "note", "style": "filled", "fillcolor": "#fff8e1", "color": "#b08900", "fontsize": "10"}
ALIAS_EDGE: Final = {"color": BLOCKED_BORDER, "fontcolor": BLOCKED_BORDER, "dir": "none", "style": "bold",
                     "penwidth": "2"}
RESOURCE_NODE: Final = {"shape": "box3d", "style": "filled", "fillcolor": RESOURCE_FILL_PIPELINED, "color": "#555555"}

# Verdict table (HTML) colours.
PASS_COLOR: Final = "#2e7d32"
FAIL_COLOR: Final = "#c62828"
WARN_COLOR: Final = "#b08900"
CHANGED_CELL_FILL: Final = "#ffe08a"

__all__ = [
    "ALIAS_EDGE",
    "BLOCKED_BORDER",
    "BLOCKED_PENWIDTH",
    "CHANGED_CELL_FILL",
    "CLUSTER",
    "CONDITION_EDGE",
    "CREDIT_FILL",
    "CYCLE_EDGE",
    "DEP_EDGE_COLOR",
    "DIFF_ADDED",
    "DIFF_MOVED",
    "DIFF_PENWIDTH",
    "DIFF_REMOVED",
    "EDGE_ATTRS",
    "FAIL_COLOR",
    "FAMILY_FILL",
    "FAMILY_LEGEND",
    "FONT",
    "GRAPH_ATTRS",
    "LANE_CLUSTER",
    "LANE_FOLD",
    "LANE_GRAPH",
    "LANE_ORDER_EDGE",
    "LANE_STATE",
    "NEEDS_EDGE",
    "NODE_ATTRS",
    "NOTE_NODE",
    "ORDER_EDGE",
    "PASS_COLOR",
    "RESOURCE_FILL",
    "RESOURCE_FILL_BARRIER",
    "RESOURCE_FILL_PIPELINED",
    "RESOURCE_FILL_QUEUE",
    "RESOURCE_NODE",
    "ROUTE_EDGE",
    "SEGMENT_CLUSTER",
    "UNROUTED_COLOR",
    "WAIT_CREDIT",
    "WAIT_EDGE",
    "WAIT_TASK",
    "WAIT_TASK_BLOCKED_FILL",
    "WARN_COLOR",
]
