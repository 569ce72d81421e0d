"""HTML for the explorer's panels: inline SVG diagrams, verdict table, status line, messages.

Diagrams are inlined as ``text/html`` (not ``image/svg+xml``, which JupyterLab
turns into a static ``<img>``), so Graphviz tooltips keep working. Renders are
cached by DOT text: toggling a knob back shows the earlier drawing at once.
"""

from __future__ import annotations

import functools
import html
from typing import Any

import graphviz

from ..analysis.diff import ScheduleDiff
from ..model import Problem
from ..model.verdict import Status, Verdict
from ..render import style
from ..render.display import graph_mimebundle
from ..render.verdict_html import verdict_html as render_verdict_html

OK_COLOUR = style.PASS_COLOR
FAIL_COLOUR = style.FAIL_COLOR
WARN_COLOUR = style.WARN_COLOR
BOX = "border-radius:6px;padding:6px 10px;margin:4px 0;font-family:sans-serif"


@functools.lru_cache(maxsize=128)
def _svg_html_for(source: str, engine: str) -> str:
    graph = graphviz.Source(source, engine=engine)
    return str(graph_mimebundle(graph)["text/html"])  # type: ignore[arg-type]


def svg_html(graph: graphviz.Digraph) -> str:
    """The graph as inline HTML (SVG with ids unique to this drawing), cached by DOT text."""
    return _svg_html_for(graph.source, graph.engine)


def svg_cache_info() -> Any:
    """Hits and misses of the SVG cache (for the latency benchmark)."""
    return _svg_html_for.cache_info()


def note_html(text: str, colour: str = "#555555") -> str:
    """A plain, muted paragraph."""
    return f"<div style='color:{colour};{BOX}'>{html.escape(text)}</div>"


def message_html(title: str, text: str, hint: str = "") -> str:
    """A red box for errors that are not TS grammar problems (bad input, impossible combination)."""
    fix = f"<div style='margin-top:4px'><b>How to fix:</b> {html.escape(hint)}</div>" if hint else ""
    return (
        f"<div class='ts-explore-message' style='border:2px solid {FAIL_COLOUR};background:#fdf2f2;{BOX}'>"
        f"<div style='color:{FAIL_COLOUR};font-weight:bold'>{html.escape(title)}</div>"
        f"<div style='white-space:pre-wrap'>{html.escape(text)}</div>{fix}</div>"
    )


def problem_html(problem: Problem) -> str:
    """The Problem box (TS grammar error, its rule and the hint)."""
    return problem.to_html()


def verdict_state(verdict: Verdict) -> bool | None:
    """True when proven safe, False when unsafe, None when inconclusive (runtime domain, state cap)."""
    return {Status.SAFE: True, Status.UNSAFE: False}.get(verdict.status)


def headline(verdict: Verdict) -> str:
    """The first line of the verdict's summary, with a count when there are more."""
    lines = [line for line in verdict.summary().splitlines() if line.strip()] or ["verified"]
    more = f" (+{len(lines) - 1} more in the Verdict tab)" if len(lines) > 1 else ""
    return lines[0] + more


def verdict_html(verdict: Verdict) -> str:
    """Every check pass/fail, the exhaustive runs, findings and caveats (the Verdict's own table)."""
    return render_verdict_html(verdict)


def status_html(*, ok: bool | None, headline: str, details: str = "", elapsed_s: float | None = None) -> str:
    """The one-line status above the tabs: safe / unsafe / not recorded, and how long the update took."""
    if ok is None:
        colour, mark = WARN_COLOUR, "&#9888;"
    elif ok:
        colour, mark = OK_COLOUR, "&#10004;"
    else:
        colour, mark = FAIL_COLOUR, "&#10008;"
    timing = f" <span style='color:#888'>({elapsed_s * 1000:.0f} ms)</span>" if elapsed_s is not None else ""
    extra = f" <span style='color:#555'>&#183; {html.escape(details)}</span>" if details else ""
    return (
        f"<div class='ts-explore-status' style='font-family:sans-serif;font-size:14px;margin:4px 0'>"
        f"<span style='color:{colour};font-weight:bold'>{mark} {html.escape(headline)}</span>{extra}{timing}</div>"
    )


def diff_html(diff: ScheduleDiff | None, graph: graphviz.Digraph | None, baseline: str) -> str:
    """The changed steps as a list plus the coloured drawing; explains when there is nothing to compare."""
    if diff is None or graph is None:
        return note_html(baseline)
    # the lines carry their own marks (+ added, - removed, ~ moved, * changed) and indents: no list bullets
    items = "".join(f"<li><code style='white-space:pre'>{html.escape(line)}</code></li>" for line in diff.lines())
    listing = (f"<ul style='font-family:monospace;margin:4px 0;padding-left:4px;list-style:none'>{items}</ul>"
               if items else "")
    return (
        f"<div style='font-family:sans-serif'><div><b>{html.escape(baseline)}</b>: "
        f"{html.escape(diff.summary())}</div>{listing}</div>{svg_html(graph)}"
    )


__all__ = [
    "diff_html",
    "headline",
    "message_html",
    "note_html",
    "problem_html",
    "status_html",
    "svg_cache_info",
    "svg_html",
    "verdict_html",
    "verdict_state",
]
