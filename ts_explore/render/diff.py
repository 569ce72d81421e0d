"""Draw a schedule diff: the current trees with added and moved steps coloured, removed steps as ghosts.

Pure: (TaskSet, ScheduleDiff) in, ``graphviz.Digraph`` out. Added steps get a
green border and fill, moved steps an orange one (the tooltip says where they
came from); steps that exist only in the baseline are drawn dashed in a
"removed" cluster of their task, so nothing disappears silently.
"""

from __future__ import annotations

import graphviz

from ..analysis.diff import Change, ScheduleDiff, StepChange, TaskDiff
from ..model import Step, TaskSet
from . import style
from .labels import esc, html_label, wrap
from .tree import _new_graph, _task_title, _TreeWriter, step_label

NOTE_WIDTH = 60  # characters per line of a task's change notes
_COLOURS = {Change.ADDED: style.DIFF_ADDED, Change.MOVED: style.DIFF_MOVED}


class _DiffWriter(_TreeWriter):
    """A tree writer that colours steps by how they changed."""

    def __init__(self, root: graphviz.Digraph, prefix: str, task_diff: TaskDiff | None) -> None:
        super().__init__(root, prefix, set())
        self.changes = {s.new_uid: s for s in task_diff.steps} if task_diff is not None else {}

    def step(self, g: graphviz.Digraph, step: Step) -> None:
        change = self.changes.get(step.uid)
        kind = change.change if change is not None else Change.SAME
        tooltip = f"#{step.uid} {step.resource}.{step.method} ({step.stage.value}, {step.section.value})"
        attrs = {"fillcolor": style.FAMILY_FILL[step.family], "id": self.node_id(step.uid)}
        if kind in _COLOURS:
            border, fill = _COLOURS[kind]
            attrs.update(color=border, fillcolor=fill, penwidth=style.DIFF_PENWIDTH)
            assert change is not None
            tooltip = f"{kind.value}: {change.description.lstrip('+~ ')}"
        attrs["tooltip"] = tooltip
        g.node(self.node_id(step.uid), step_label(step), **attrs)
        self.anchors.append(self.node_id(step.uid))


def _ghost_label(change: StepChange) -> str:
    return html_label([
        f"<s>{esc(change.title)}</s>",
        f'<font point-size="9">{esc(change.stage)} &#183; was in {esc(change.old_place or "")}</font>',
    ])


def _removed_cluster(parent: graphviz.Digraph, prefix: str, removed: tuple[StepChange, ...], label: str) -> None:
    border, fill = style.DIFF_REMOVED
    sub = graphviz.Digraph(name=f"cluster_{prefix}removed")
    sub.attr(label=label, color=border, fontcolor=border, style="rounded,dashed", labeljust="l")
    previous = None
    for change in removed:
        nid = f"{prefix}x{change.old_uid}"
        sub.node(nid, _ghost_label(change), id=nid, style="rounded,dashed,filled", color=border,
                 fillcolor=fill, fontcolor=border, tooltip=f"removed: {change.description.lstrip('- ')}")
        if previous is not None:
            sub.edge(previous, nid, style="invis")
        previous = nid
    parent.subgraph(sub)


def _legend(g: graphviz.Digraph) -> None:
    sub = graphviz.Digraph(name="cluster_legend")
    sub.attr(label="legend", color="#cccccc", style="rounded", labeljust="l")
    for kind, (border, fill) in ((Change.ADDED, style.DIFF_ADDED), (Change.MOVED, style.DIFF_MOVED),
                                 (Change.REMOVED, style.DIFF_REMOVED)):
        st = "rounded,dashed,filled" if kind is Change.REMOVED else "rounded,filled"
        sub.node(f"legend_{kind.value}", kind.value, color=border, fillcolor=fill, style=st,
                 penwidth=style.DIFF_PENWIDTH, fontcolor=border if kind is Change.REMOVED else "black")
    sub.edge("legend_added", "legend_moved", style="invis")
    sub.edge("legend_moved", "legend_removed", style="invis")
    g.subgraph(sub)


def diff_graph(current: TaskSet, diff: ScheduleDiff, *, title: str = "changes since the last safe configuration") -> graphviz.Digraph:
    """The current task set's trees, coloured by ``diff`` (from :func:`ts_explore.analysis.diff.diff_task_sets`)."""
    label = "\\n".join(wrap(line) for line in [f"{title}: {diff.summary()}", *diff.notes])
    g = _new_graph("schedule_diff", label)
    by_name = {t.task: t for t in diff.tasks}
    for i, task in enumerate(current.tasks):
        task_diff = by_name.get(task.name)
        sub = graphviz.Digraph(name=f"cluster_t{i}")
        color, st, fill = style.CLUSTER["task"]
        label = _task_title(task)
        if task_diff is not None and task_diff.status == "added":
            label += "  (new task)"
        notes = task_diff.notes if task_diff is not None else ()
        if notes:  # left-justified lines, wrapped so a long loop title does not widen (and so shrink) the drawing
            lines = [part for note in notes for part in wrap(note, NOTE_WIDTH).split("\\n")]
            label = "\\l".join([label, *lines]) + "\\l"
        sub.attr(label=label, color=color, style=st, fillcolor=fill, labeljust="l")
        writer = _DiffWriter(sub, f"t{i}_", task_diff)
        writer.body(sub, task.schedule.body)
        writer.finish(sub, task.schedule)
        removed = task_diff.of(Change.REMOVED) if task_diff is not None else ()
        if removed:
            _removed_cluster(sub, f"t{i}_", removed, "removed since the last safe configuration")
        g.subgraph(sub)
    gone = [t for t in diff.tasks if t.status == "removed"]
    for k, task_diff in enumerate(gone):
        _removed_cluster(g, f"gone{k}_", task_diff.steps, f"Task {task_diff.task} (removed)")
    if not diff.is_empty:
        _legend(g)
    return g


__all__ = ["diff_graph"]
