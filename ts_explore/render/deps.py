"""Draw the resource dependency graph: resources, pipelines, and the tasks behind each edge."""

from __future__ import annotations

import graphviz

from ..model import ResourceInfo, TaskSet
from . import style
from .labels import esc, html_label


def resource_label(res: ResourceInfo) -> str:
    rows = [f"<b>{esc(res.name)}</b>", f'<font point-size="9">{esc(res.type_name)}</font>']
    if res.pipeline:
        rows.append(f'<font point-size="9">{esc(res.pipeline)} &#183; {res.stages} stages</font>')
    if res.queue_kind is not None:
        rows.append(f'<font point-size="9">{esc(res.queue_kind.value)} work queue</font>')
    if res.is_barrier:
        rows.append('<font point-size="9">barrier</font>')
    if res.smem_bytes:
        rows.append(f'<font point-size="9">SMEM {res.smem_bytes} B</font>')
    if res.variables:
        rows.append(f'<font point-size="9" color="#1f6fd1">vars: {esc(", ".join(res.variables))}</font>')
    return html_label(rows)


def _fill(res: ResourceInfo) -> str:
    if res.queue_kind is not None:
        return style.RESOURCE_FILL_QUEUE
    if res.is_barrier:
        return style.RESOURCE_FILL_BARRIER
    if res.pipeline:
        return style.RESOURCE_FILL_PIPELINED
    return style.RESOURCE_FILL


def dependency_graph(task_set: TaskSet) -> graphviz.Digraph:
    """Resources as nodes; ``upstream -> downstream`` edges labelled with backing tasks and kind."""
    g = graphviz.Digraph(name="dependencies")
    g.attr("graph", label="resource dependency graph", **style.GRAPH_ATTRS)
    g.attr("node", **{**style.NODE_ATTRS, "shape": "box"})
    g.attr("edge", **style.EDGE_ATTRS)
    used = {e.upstream for e in task_set.edges} | {e.downstream for e in task_set.edges}
    for res in task_set.resources:
        if res.name not in used and task_set.edges:
            continue  # resources outside the graph are drawn by the schedule trees
        g.node(f"r_{res.name}", resource_label(res), fillcolor=_fill(res), id=f"res_{res.name}")
    for edge in task_set.edges:
        tasks = ", ".join(edge.tasks) or "unbacked!"
        color = style.DEP_EDGE_COLOR.get(edge.kind, "#333333")
        attrs = {"color": color, "fontcolor": color}
        if not edge.tasks:
            attrs.update(style="dashed", color=style.BLOCKED_BORDER, fontcolor=style.BLOCKED_BORDER)
        g.edge(f"r_{edge.upstream}", f"r_{edge.downstream}", label=f"{tasks}\\n{edge.kind}", **attrs)
    return g


__all__ = ["dependency_graph", "resource_label"]
