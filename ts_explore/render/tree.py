"""Draw a schedule tree (with dataflow routes) as nested Graphviz clusters.

Pure: model in, ``graphviz.Digraph`` out; the same model gives the same DOT.
"""

from __future__ import annotations

import textwrap
from typing import Iterable, Mapping

import graphviz

from ..model import (
    Block,
    BlockKind,
    DomainLoop,
    Family,
    Node,
    ScheduleTree,
    Section,
    Step,
    TaskInfo,
    TaskSet,
    WorkTileLoop,
)
from . import style
from .labels import esc, html_label

HighlightKey = tuple[str | None, int]  # (task name or None, step uid)
CAPTION_WIDTH = 60  # characters per line of a frame caption (long captions wrap)


def step_label(step: Step, unrouted: tuple[str, ...] = ()) -> str:
    """HTML-like label: resource.method, stage, call index, literals, outputs (unrouted ones badged)."""
    rows = [f"<b>{esc(step.title)}</b>"]
    rows.append(f'<font point-size="9">{esc(step.stage.short)} &#183; call {step.call_index}</font>')
    if step.literals:
        lits = ", ".join(f"{lit.name}={lit.text}" for lit in step.literals)
        rows.append(f'<font point-size="9" color="#7a4b00">{esc(lits)}</font>')
    used = [r for r in step.returns if r not in unrouted]
    if used:
        rows.append(f'<font point-size="9" color="#1f6fd1">&#8594; {esc(", ".join(used))}</font>')
    if unrouted:
        rows.append(f'<font point-size="9" color="{style.UNROUTED_COLOR}">&#9888; {esc(", ".join(unrouted))} '
                    "never routed</font>")
    return html_label(rows)


def unrouted_outputs(tree: ScheduleTree) -> dict[int, tuple[str, ...]]:
    """Per step uid, the outputs no route and no condition uses (WorkQueue tiles feed TS itself)."""
    used = {(r.source, r.variable) for r in tree.routes}
    used |= {(b.condition.step, b.condition.variable) for b in tree.blocks()
             if b.condition is not None and b.condition.step is not None}
    out: dict[int, tuple[str, ...]] = {}
    for step in tree.steps():
        if step.family is Family.QUEUE:
            continue
        lost = tuple(v for v in step.returns if (step.uid, v) not in used)
        if lost:
            out[step.uid] = lost
    return out


def block_label(block: Block) -> str:
    """The frame title of a guarded block; a key the user passed is shown, TS's own keys are not.

    >>> from ts_explore.model import Condition
    >>> block_label(Block(BlockKind.WHEN_TRUE, (), condition=Condition("shared", "flags", "needs", "flag", 0, True)))
    'when_true(flags.needs() -> flag, key="shared")'
    >>> block_label(Block(BlockKind.WHEN_FALSE, (), condition=Condition("7", explicit_key=True)))
    'when_false(key="7")'
    """
    cond = block.condition
    if block.kind not in (BlockKind.WHEN_TRUE, BlockKind.WHEN_FALSE) or cond is None:
        return block.title
    key = f'key="{cond.key}"' if cond.explicit_key else ""
    if cond.resource and cond.method:
        inner = cond.text + (f", {key}" if key else "")
    else:
        inner = key or cond.key
    return f"{block.kind.value}({inner})"


class _TreeWriter:
    """Writes one schedule tree into a (sub)graph, collecting order anchors."""

    def __init__(self, root: graphviz.Digraph, prefix: str, highlight: set[int],
                 unrouted: dict[int, tuple[str, ...]] | None = None,
                 captions: Mapping[str, str] | None = None, queue_stages: Mapping[str, int] | None = None) -> None:
        self.root = root
        self.queue_stages = queue_stages or {}  # work queue -> stages of its tile-fetch pipeline (CLC)
        self.unrouted = unrouted or {}
        self.captions = captions or {}
        self.prefix = prefix
        self.highlight = highlight
        self.clusters = 0
        self.placeholders = 0
        self.anchors: list[str] = []
        self.block_first: list[tuple[Block, str, str]] = []  # (block, cluster, first anchor)

    def node_id(self, uid: int) -> str:
        return f"{self.prefix}s{uid}"

    def cluster(self, parent: graphviz.Digraph, kind: str, label: str) -> tuple[graphviz.Digraph, str]:
        self.clusters += 1
        name = f"cluster_{self.prefix}c{self.clusters}"
        color, st, fill = style.CLUSTER[kind]
        if self.captions.get(kind):
            label += "\\n" + "\\n".join(textwrap.wrap(self.captions[kind], CAPTION_WIDTH))
        sub = graphviz.Digraph(name=name)
        sub.attr(label=label, color=color, style=st, fillcolor=fill, fontcolor=color, labeljust="l")
        return sub, name

    def step(self, g: graphviz.Digraph, step: Step) -> None:
        attrs = {
            "fillcolor": style.FAMILY_FILL[step.family],
            "tooltip": f"#{step.uid} {step.resource}.{step.method} ({step.stage.value}, {step.section.value})",
            "id": self.node_id(step.uid),
        }
        lost = self.unrouted.get(step.uid, ())
        if lost:
            attrs["tooltip"] += f" - never routed: {', '.join(lost)}"
        if step.uid in self.highlight:
            attrs.update(color=style.BLOCKED_BORDER, penwidth=style.BLOCKED_PENWIDTH)
        elif lost:
            attrs.update(color=style.UNROUTED_COLOR, penwidth="2")
        g.node(self.node_id(step.uid), step_label(step, lost), **attrs)
        self.anchors.append(self.node_id(step.uid))

    def placeholder(self, g: graphviz.Digraph, text: str = "(empty)") -> None:
        self.placeholders += 1
        pid = f"{self.prefix}e{self.placeholders}"
        g.node(pid, text, shape="plaintext", style="", fontcolor="#888888", fontsize="9")
        self.anchors.append(pid)

    def body(self, g: graphviz.Digraph, nodes: tuple[Node, ...]) -> None:
        if not nodes:
            self.placeholder(g)
            return
        i = 0
        while i < len(nodes):
            node = nodes[i]
            if isinstance(node, Step) and node.section in (Section.HEAD, Section.TAIL):
                run = [node]
                while (
                    i + len(run) < len(nodes)
                    and isinstance(nodes[i + len(run)], Step)
                    and nodes[i + len(run)].section is node.section  # type: ignore[union-attr]
                ):
                    run.append(nodes[i + len(run)])  # type: ignore[arg-type]
                kind = node.section.value
                sub, _ = self.cluster(g, kind, kind.upper())
                for s in run:
                    self.step(sub, s)
                g.subgraph(sub)
                i += len(run)
                continue
            self.node(g, node)
            i += 1

    def node(self, g: graphviz.Digraph, node: Node) -> None:
        if isinstance(node, Step):
            self.step(g, node)
        elif isinstance(node, DomainLoop):
            trip = node.trip_count()
            extra = f"  [{trip} iterations]" if trip is not None else ""
            sub, _ = self.cluster(g, "domain_loop", node.title + extra)
            self.body(sub, node.body)
            g.subgraph(sub)
        elif isinstance(node, WorkTileLoop):
            label = node.title
            stages = self.queue_stages.get(node.queue)
            if stages:
                label += f"\\n{node.queue} fetches tiles through {stages} stage{'' if stages == 1 else 's'}"
            if node.skip_if is not None and node.skip_if.source:
                label += f"\\nskip_if: {node.skip_if.source}"
            sub, _ = self.cluster(g, "work_tile_loop", label)
            self.body(sub, node.body)
            g.subgraph(sub)
        else:
            sub, name = self.cluster(g, node.kind.value, block_label(node))
            start = len(self.anchors)
            self.body(sub, node.body)
            g.subgraph(sub)
            if node.kind in (BlockKind.WHEN_TRUE, BlockKind.WHEN_FALSE):
                self.block_first.append((node, name, self.anchors[start]))

    def finish(self, g: graphviz.Digraph, tree: ScheduleTree) -> None:
        for a, b in zip(self.anchors, self.anchors[1:]):
            g.edge(a, b, **style.ORDER_EDGE)
        for route in tree.routes:
            g.edge(
                self.node_id(route.source),
                self.node_id(route.destination),
                label=f"{route.variable} -> {route.argument}",
                **style.ROUTE_EDGE,
            )
        for block, cluster_name, first in self.block_first:
            cond = block.condition
            if cond is not None and cond.step is not None:
                g.edge(self.node_id(cond.step), first, lhead=cluster_name, label="guards", **style.CONDITION_EDGE)


def _write_tree(g: graphviz.Digraph, tree: ScheduleTree, prefix: str, highlight: set[int],
                captions: Mapping[str, str] | None = None, queue_stages: Mapping[str, int] | None = None) -> None:
    writer = _TreeWriter(g, prefix, highlight, unrouted_outputs(tree), captions, queue_stages)
    writer.body(g, tree.body)
    writer.finish(g, tree)


def _new_graph(name: str, label: str) -> graphviz.Digraph:
    g = graphviz.Digraph(name=name)
    g.attr("graph", label=label, **style.GRAPH_ATTRS)
    g.attr("node", **style.NODE_ATTRS)
    g.attr("edge", **style.EDGE_ATTRS)
    return g


def _missing(tree: ScheduleTree) -> str:
    """What the drawing cannot show, for its title."""
    return f"  (not recovered from TS: {'; '.join(tree.unrecovered)})" if tree.unrecovered else ""


def _tree_title(tree: ScheduleTree) -> str:
    if tree.from_lists:  # a Task's tree: TS does not keep the schedule function's name
        return f"schedule of task {tree.name}" + _missing(tree)
    return f"@schedule {tree.name}" + _missing(tree)


def _task_title(task: TaskInfo) -> str:
    title = f"Task {task.name} | {task.warp_text}"
    if not task.schedule.from_lists:
        title += f" | schedule {task.schedule.name}"
    return title + _missing(task.schedule)


def _uids(highlight: Iterable[HighlightKey], task: str | None) -> set[int]:
    return {uid for name, uid in highlight if name is None or name == task}


def schedule_graph(
    model: ScheduleTree | TaskInfo | TaskSet,
    *,
    highlight: Iterable[HighlightKey] = (),
    captions: Mapping[str, str] | None = None,
) -> graphviz.Digraph:
    """The schedule tree as nested clusters, steps as nodes, routes as blue edges.

    ``highlight`` marks steps (``(task name or None, uid)``) with a red border,
    e.g. the steps a verifier found blocked. ``captions`` adds a line to every
    frame of a kind (``"skippable"``, ``"domain_loop"``, ``"work_tile_loop"``...),
    e.g. a scenario's skip rule on its skippable frame.
    """
    highlight = list(highlight)
    if isinstance(model, ScheduleTree):
        g = _new_graph(f"schedule_{model.name}", _tree_title(model))
        _write_tree(g, model, "", _uids(highlight, None), captions)
        return g
    if isinstance(model, TaskInfo):
        g = _new_graph(f"task_{model.name}", _task_title(model))
        _write_tree(g, model.schedule, "", _uids(highlight, model.name), captions)
        return g
    if isinstance(model, TaskSet):
        n = len(model.tasks)
        g = _new_graph("task_manager", f"{n} task{'' if n == 1 else 's'}")
        stages = {r.name: r.stages for r in model.resources if r.is_work_queue and r.stages}
        for i, task in enumerate(model.tasks):
            sub = graphviz.Digraph(name=f"cluster_t{i}")
            color, st, fill = style.CLUSTER["task"]
            sub.attr(label=_task_title(task), color=color, style=st, fillcolor=fill, labeljust="l")
            _write_tree(sub, task.schedule, f"t{i}_", _uids(highlight, task.name), captions, stages)
            g.subgraph(sub)
        return g
    raise TypeError(f"schedule_graph() cannot draw {type(model).__name__}")


__all__ = ["block_label", "schedule_graph", "step_label", "unrouted_outputs"]
