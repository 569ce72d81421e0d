"""Drawings of a :class:`~ts_explore.model.verdict.Verdict`: swimlanes and the wait-for graph.

>>> import ts_explore
>>> v = ts_explore.verify(**ts_explore.gallery.get("cross_wait").broken())
>>> graph = ts_explore.deadlock_graph(v)   # who waits for whom, the cycle in red (a notebook draws it)
>>> "cycle: Ping -> Pong -> Ping" in graph.source
True
>>> lanes = ts_explore.swimlanes(v)        # one lane per task, the blocked step marked
"""

from __future__ import annotations

from typing import Any

import graphviz

from ..analysis.cycles import wait_for
from ..analysis.unroll import lane_views
from ..model.verdict import Deadlock, ExhaustiveRun, Finding, PdlViolation, Race, Verdict
from . import deadlock as _deadlock
from . import swimlanes as _swimlanes
from .display import fitted
from .labels import wrap


def _verdict(obj: Any) -> Verdict:
    if isinstance(obj, Verdict):
        return obj
    raise TypeError(
        f"expected a Verdict, got {type(obj).__name__}; call ts_explore.verify(tasks=..., "
        "resource_dependency_graph=...) first and pass its result"
    )


def pick(verdict: Verdict, finding: int | Finding | None = 0) -> tuple[ExhaustiveRun | None, Finding | None]:
    """The finding to draw (an index into ``verdict.findings`` or the finding itself) and its run."""
    if finding is None or not verdict.findings:
        return (verdict.runs[0] if verdict.runs else None), None
    if isinstance(finding, int):
        if not 0 <= finding < len(verdict.findings):
            raise IndexError(
                f"finding {finding} does not exist: this verdict has {len(verdict.findings)} "
                "(deadlocks first, then races, then PDL order violations)"
            )
        finding = verdict.findings[finding]
    return verdict.run_of(finding), finding


def _needs(run: ExhaustiveRun, finding: Finding | None) -> list[tuple[str, int, str, int, str]]:
    if not isinstance(finding, Deadlock):
        return []
    out = []
    for edge in wait_for(finding.blocked, run.lanes, finding.cursors).edges:
        for p in edge.providers:
            if edge.blocked.position is not None and p.task != edge.blocked.task:
                out.append((edge.blocked.task, edge.blocked.position, p.task, p.step.index, "needs"))
    return out


def swimlanes(verdict: Verdict, finding: int | Finding | None = 0, *, step: int | None = None,
              max_steps: int = 48) -> graphviz.Digraph:
    """One lane per task (HEAD + iterations + TAIL), at the bad state or after ``step`` moves.

    With a safe verdict the lanes show the checked schedules, nothing marked.
    """
    verdict = _verdict(verdict)
    run, found = pick(verdict, finding)
    if run is None:
        return fitted(_deadlock.note_graph(verdict.summary().splitlines(), title="nothing to unroll (no exhaustive run)"))
    views = lane_views(run, found, step, max_steps)
    if found is None:
        title = f"checked schedules ({run.label})"
    else:
        title = f"{found.kind} ({run.label})"
        if found.interleaving is not None:
            k = len(found.interleaving) if step is None else min(step, len(found.interleaving))
            title += f" - after {k} of {len(found.interleaving)} moves"
    needs = _needs(run, found) if step is None or (found and found.interleaving and step >= len(found.interleaving)) else []
    return fitted(_swimlanes.swimlanes(views, title=wrap(title), needs=needs))


def deadlock_graph(verdict: Verdict, finding: int | Finding | None = 0) -> graphviz.Digraph:
    """The wait-for graph of a deadlock (cycle in red); a conflict graph for a race or PDL order
    violation; a note when the verdict has no such finding."""
    verdict = _verdict(verdict)
    run, found = pick(verdict, finding)
    if isinstance(found, Deadlock) and run is not None:
        credits = None
        if found.interleaving is not None:
            credits = {(c.resource, c.slot): c for c in found.interleaving.credits[-1]}
        wf = wait_for(found.blocked, run.lanes, found.cursors)
        return fitted(_deadlock.wait_for_graph(wf, credits, title=wrap(f"wait-for graph ({run.label})")))
    if isinstance(found, Race):
        return fitted(_deadlock.race_graph(found, title=wrap(f"aliasing race ({run.label if run else ''})")))
    if isinstance(found, PdlViolation):
        return fitted(_deadlock.pdl_graph(found, title=wrap(f"PDL order ({run.label if run else ''})")))
    title = "no deadlock found" if verdict.ok else "no deadlock, but verification failed"
    return fitted(_deadlock.note_graph(verdict.summary().splitlines(), title=title))


__all__ = ["deadlock_graph", "pick", "swimlanes"]
