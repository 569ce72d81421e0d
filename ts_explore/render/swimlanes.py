"""Swimlanes: one lane per task, its HEAD + loop iterations + TAIL unrolled for the concrete domain.

Pure: lane views in (from :func:`ts_explore.analysis.unroll.lane_views`),
``graphviz.Digraph`` out. Done steps keep their colour and show the move
number ``t3`` at which the counterexample ran them; the blocked (or racing)
step has a red border; dashed red arrows point from a blocked step to the
step of another task that would free it.
"""

from __future__ import annotations

import functools
from typing import Sequence

import graphviz

from ..analysis.unroll import BLOCKED, DONE, LaneCell, LaneView
from ..model import Family
from ..model.verdict import CheckerStep
from . import style
from .labels import esc, html_label

Need = tuple[str, int, str, int, str]  # (task, step index) -> (task, step index), label


def _segment(step: CheckerStep) -> tuple[int, str, int]:
    return (step.tile, step.section.value, -1 if step.iteration is None else step.iteration)


def _segment_label(step: CheckerStep) -> str:
    text = step.section.value.upper() if step.iteration is None else f"iteration {step.iteration}"
    if step.section.value == "loop" and step.iteration is None:
        text = "loop"
    return f"tile {step.tile} · {text}" if step.tile else text


def cell_label(cell: LaneCell) -> str:
    """HTML-like label: resource.method, then stage (and part) and the move that ran it."""
    step = cell.step
    assert step is not None
    sub = step.stage.short + (f" ({step.part})" if step.part else "")
    if cell.time is not None:
        sub += f" · t{cell.time}"
    return html_label([f"<b>{esc(step.title)}</b>", f'<font point-size="8">{esc(sub)}</font>'])


def node_id(lane_no: int, index: int) -> str:
    """Stable node id of a lane step."""
    return f"l{lane_no}_{index}"


def _attrs(attrs: dict[str, str]) -> str:
    """``[k="v" ...]`` written directly: lanes have many nodes and graphviz's generic quoting is slow."""
    parts = []
    for key, value in attrs.items():
        if value.startswith("<") and value.endswith(">"):
            parts.append(f"{key}={value}")
        else:
            parts.append(f'{key}="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "[" + " ".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def _look(state: str, family: Family) -> str:
    """The (cached) colour attributes of a lane cell."""
    attrs = {"fillcolor": style.FAMILY_FILL[family], **style.LANE_STATE[state]}
    return _attrs(attrs)[1:-1]


def swimlanes(views: Sequence[LaneView], *, title: str = "", needs: Sequence[Need] = ()) -> graphviz.Digraph:
    """Draw lanes side by side (top to bottom), each a chain of steps from left to right."""
    g = graphviz.Digraph(name="swimlanes")
    g.attr("graph", label=title, **style.LANE_GRAPH)
    g.attr("node", **{**style.NODE_ATTRS, "fontsize": "10"})
    g.attr("edge", **style.EDGE_ATTRS)
    visible: set[tuple[str, int]] = set()
    for lane_no, view in enumerate(views):
        lane = graphviz.Digraph(name=f"cluster_lane{lane_no}")
        status = "finished" if view.finished else f"at step {view.cursor} of {view.length}"
        lane.attr(label=f"{view.task}  ({status})", **style.LANE_CLUSTER)
        order: list[str] = []
        groups: list[tuple[tuple[int, str, int] | None, list[LaneCell]]] = []
        for cell in view.cells:
            key = _segment(cell.step) if cell.step is not None else None
            if groups and key is not None and groups[-1][0] == key:
                groups[-1][1].append(cell)
            else:
                groups.append((key, [cell]))
        for seg_no, (key, cells) in enumerate(groups):
            if key is None:
                fid = f"l{lane_no}_f{seg_no}"
                lane.node(fid, f"... {cells[0].folded} more steps ...", **style.LANE_FOLD)
                order.append(fid)
                continue
            first = cells[0].step
            assert first is not None
            seg = graphviz.Digraph(name=f"cluster_l{lane_no}s{seg_no}")
            seg_attrs = {"label": _segment_label(first), "fontsize": "9", **style.SEGMENT_CLUSTER[first.section.value]}
            seg.body.append(f"\t\tgraph {_attrs(seg_attrs)}\n")
            for cell in cells:
                step = cell.step
                assert step is not None
                nid = node_id(lane_no, step.index)
                look = _look(cell.state, step.family)
                tip = f"{view.task}: {step.title} ({step.stage.value}, {step.where})"
                if cell.state == BLOCKED:
                    tip += " - blocked here"
                elif cell.state == DONE and cell.time is not None:
                    tip += f" - ran at move {cell.time}"
                seg.body.append(f"\t\t{nid} [label={cell_label(cell)} {_attrs({'tooltip': tip})[1:-1]} {look}]\n")
                order.append(nid)
                visible.add((view.task, step.index))
            lane.subgraph(seg)
        order_attrs = _attrs(dict(style.LANE_ORDER_EDGE))
        lane.body.extend(f"\t{a} -> {b} {order_attrs}\n" for a, b in zip(order, order[1:]))
        g.subgraph(lane)
    lane_of = {view.task: n for n, view in reversed(list(enumerate(views)))}
    for src_task, src_idx, dst_task, dst_idx, label in needs:
        if (src_task, src_idx) in visible and (dst_task, dst_idx) in visible:
            g.edge(
                node_id(lane_of[src_task], src_idx), node_id(lane_of[dst_task], dst_idx), label=label,
                **style.NEEDS_EDGE,
            )
    return g


__all__ = ["cell_label", "node_id", "swimlanes"]
