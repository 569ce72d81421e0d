"""Wait-for graphs: who is stuck, on which credit of which resource, and who could free it.

Task boxes point at the credit they wait for ("right: commit"); the credit
points at the task(s) whose later step would provide it, labelled with that
step and with where that task is stuck itself. Edges on a cycle are red.
Races and PDL order violations get a small conflict graph instead; any other
failure (or a safe verdict) a note. Pure: analysis data in, Digraph out.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import graphviz

from ..analysis.cycles import WaitFor
from ..analysis.narrate import step_phrase
from ..model.verdict import COMMIT_CREDIT, CreditCell, PdlViolation, Race
from . import style
from .labels import esc, html_label


def _graph(name: str, title: str) -> graphviz.Digraph:
    g = graphviz.Digraph(name=name)
    g.attr("graph", label=title, **{**style.GRAPH_ATTRS, "rankdir": "LR"})
    g.attr("node", **style.NODE_ATTRS)
    g.attr("edge", **style.EDGE_ATTRS)
    return g


def _task_id(name: str) -> str:
    return "t_" + "".join(ch if ch.isalnum() else "_" for ch in name)


def wait_for_graph(
    wf: WaitFor, credits: Mapping[tuple[str, int], CreditCell] | None = None, *, title: str = "wait-for graph"
) -> graphviz.Digraph:
    """Draw one deadlock's wait-for graph; the cycle (if any) in red."""
    g = _graph("wait_for", title)
    on_cycle = wf.cycle_pairs()
    tasks: dict[str, str] = {}
    for e in wf.edges:
        b = e.blocked
        where = f"iteration {b.iteration}" if b.iteration is not None else (b.section.value.upper() if b.section else "")
        tasks.setdefault(b.task, f"blocked at {b.resource}.{b.stage.method}" + (f" ({where})" if where else ""))
    for e in wf.edges:
        for p in e.providers:
            if p.task not in tasks:
                tasks[p.task] = "finished" if p.stuck_at is None else f"at {step_phrase(p.stuck_at)}"
    for name in wf.finished:
        tasks.setdefault(name, "finished")
    blocked_tasks = {e.blocked.task for e in wf.edges}
    for name, state in tasks.items():
        fill = style.WAIT_TASK_BLOCKED_FILL if name in blocked_tasks else "#ffffff"
        g.node(_task_id(name), html_label([f"<b>{esc(name)}</b>", f'<font point-size="9">{esc(state)}</font>']),
               **{**style.WAIT_TASK, "fillcolor": fill})
    for n, e in enumerate(wf.edges):
        b = e.blocked
        kind = "commit" if b.credit == COMMIT_CREDIT else "empty"
        cid = f"c{n}_" + "".join(ch if ch.isalnum() else "_" for ch in b.resource)
        counts = ""
        cell = (credits or {}).get((b.resource, 0))
        if cell is not None:
            counts = f"commits {cell.full} · free slots {cell.empty}"
        rows = [f"<b>{esc(b.resource)}</b>", f'<font point-size="9">needs a {"commit" if kind == "commit" else "free slot"}</font>']
        if counts:
            rows.append(f'<font point-size="8">{esc(counts)}</font>')
        g.node(cid, html_label(rows), **{**style.WAIT_CREDIT, "fillcolor": style.CREDIT_FILL[kind]})
        cyc = any((b.task, p.task) in on_cycle for p in e.providers)
        g.edge(_task_id(b.task), cid, label="waits for", **(style.CYCLE_EDGE if cyc else style.WAIT_EDGE))
        if not e.providers:
            nid = f"{cid}_none"
            verb = "commits" if kind == "commit" else "releases"
            g.node(nid, f"no task {verb}\\n{b.resource} again", **style.NOTE_NODE)
            g.edge(cid, nid, style="dashed", **style.WAIT_EDGE)
        for p in e.providers:
            label = f"{p.step.title} ({p.step.where})"
            attrs = style.CYCLE_EDGE if (b.task, p.task) in on_cycle else style.WAIT_EDGE
            g.edge(cid, _task_id(p.task), label=f"freed by {label}", **attrs)
    if wf.cycle:
        g.attr("graph", label=f"{title}\\ncycle: {' -> '.join(wf.cycle)}")
    return g


def race_graph(race: Race, *, title: str = "aliasing race") -> graphviz.Digraph:
    """Writer and victim tasks, the two resources, and the bytes they share."""
    g = _graph("race", title)
    access = {"prod": "writes", "cons": "reads", "cons_held": "holds"}.get(race.victim_access, race.victim_access)
    g.node(_task_id(race.writer_task), race.writer_task, **{**style.WAIT_TASK, "fillcolor": style.WAIT_TASK_BLOCKED_FILL})
    g.node(_task_id(race.victim_task), race.victim_task, **{**style.WAIT_TASK, "fillcolor": style.WAIT_TASK_BLOCKED_FILL})
    g.node("r_writer", race.writer_resource, **style.RESOURCE_NODE)
    g.node("r_victim", race.victim_resource, **style.RESOURCE_NODE)
    g.edge(_task_id(race.writer_task), "r_writer", label="writes", **style.CYCLE_EDGE)
    g.edge(_task_id(race.victim_task), "r_victim", label=access, **style.WAIT_EDGE)
    g.edge("r_writer", "r_victim", label=f"same bytes {race.overlap}", **style.ALIAS_EDGE)
    g.node("note", "no pipeline orders these accesses", **style.NOTE_NODE)
    return g


def pdl_graph(violation: PdlViolation, *, title: str = "PDL order") -> graphviz.Digraph:
    """The launch that can run before any wait."""
    g = _graph("pdl", title)
    g.node(_task_id(violation.launch_task), violation.launch_task,
           **{**style.WAIT_TASK, "fillcolor": style.WAIT_TASK_BLOCKED_FILL})
    g.node("launch", f"{violation.launch_resource}.launch_griddep", **style.RESOURCE_NODE)
    g.node("wait", "any wait_griddep", **style.RESOURCE_NODE)
    g.edge(_task_id(violation.launch_task), "launch", label="can run", **style.CYCLE_EDGE)
    g.edge("launch", "wait", label="before", **style.CYCLE_EDGE)
    return g


def note_graph(lines: Sequence[str], *, title: str = "no deadlock") -> graphviz.Digraph:
    """A single note: what the verdict says when there is no wait-for graph to draw."""
    g = _graph("note", title)
    text = "\\l".join(line.replace("\\", "\\\\") for line in lines) + "\\l"
    g.node("note", text, **style.NOTE_NODE)
    return g


__all__ = ["note_graph", "pdl_graph", "race_graph", "wait_for_graph"]
