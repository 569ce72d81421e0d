"""Draw a repair: each task it changes, before (left) and after (right), with the changed steps marked.

Pure: a :class:`~ts_explore.repair.Repair` in, ``graphviz.Digraph`` out (the
same repair gives the same DOT). Before the repair, steps that move or go
are drawn with an orange border; after it, steps that moved or were
inserted get a green one. The title is the repair's sentence; a stage the
repair adds is named in it with its shared-memory cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import graphviz

from ..model import Step, TaskInfo
from . import style
from .tree import _new_graph, _task_title, _TreeWriter, step_label, unrouted_outputs

if TYPE_CHECKING:
    from ..repair.result import Repair


class _MarkedWriter(_TreeWriter):
    """A tree writer that marks some steps with one colour and says why in the tooltip."""

    def __init__(self, root: graphviz.Digraph, prefix: str, tree_task: TaskInfo, marked: set[int],
                 colours: tuple[str, str], why: str) -> None:
        super().__init__(root, prefix, set(), unrouted_outputs(tree_task.schedule))
        self.marked = marked
        self.colours = colours
        self.why = why

    def step(self, g: graphviz.Digraph, step: Step) -> None:
        attrs = {"fillcolor": style.FAMILY_FILL[step.family], "id": self.node_id(step.uid),
                 "tooltip": f"#{step.uid} {step.resource}.{step.method} ({step.stage.value}, {step.section.value})"}
        if step.uid in self.marked:
            border, fill = self.colours
            attrs.update(color=border, fillcolor=fill, penwidth=style.DIFF_PENWIDTH,
                         tooltip=f"{self.why}: {step.resource}.{step.method}")
        g.node(self.node_id(step.uid), step_label(step), **attrs)
        self.anchors.append(self.node_id(step.uid))


def _side(g: graphviz.Digraph, task: TaskInfo, prefix: str, label: str, marked: set[int],
          colours: tuple[str, str], why: str) -> None:
    sub = graphviz.Digraph(name=f"cluster_{prefix}")
    color, st, fill = style.CLUSTER["task"]
    sub.attr(label=f"{label}: {_task_title(task)}", color=color, style=st, fillcolor=fill, labeljust="l")
    writer = _MarkedWriter(sub, f"{prefix}_", task, marked, colours, why)
    writer.body(sub, task.schedule.body)
    writer.finish(sub, task.schedule)
    g.subgraph(sub)


def repair_graph(repair: Repair) -> graphviz.Digraph:
    """Each changed task before and after the repair, side by side, changed steps marked (see the module docstring)."""
    before, after = repair.marks()
    g = _new_graph("repair", f"repair: {repair.sentence}")
    g.attr("graph", rankdir="TB", newrank="true")
    names = [t.name for t in repair.before.tasks if t.name in before or t.name in after]
    if not names:  # a stage added or loop bounds changed: draw the tasks on that resource or loop
        names = [t.name for b, t in zip(repair.before.tasks, repair.after.tasks) if b.schedule != t.schedule]
    for i, name in enumerate(names):
        _side(g, repair.before.task(name), f"t{i}_before", "before", before.get(name, set()), style.DIFF_MOVED,
              "moves or goes")
        _side(g, repair.after.task(name), f"t{i}_after", "after", after.get(name, set()), style.DIFF_ADDED,
              "moved or inserted")
    return g


__all__ = ["repair_graph"]
