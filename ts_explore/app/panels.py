"""HTML for the explorer's panels: inline SVG diagrams, verdict table, status line, messages.

Diagrams are inlined as ``text/html`` (not ``image/svg+xml``, which JupyterLab
turns into a static ``<img>``), so Graphviz tooltips keep working. Renders are
cached by DOT text: toggling a knob back shows the earlier drawing at once.
"""

from __future__ import annotations

import functools
import html
from typing import Any, Iterable

import graphviz

from ..analysis.diff import ScheduleDiff
from ..model import Problem
from ..render.display import graph_mimebundle

OK_COLOUR = "#1a7f37"
FAIL_COLOUR = "#b42318"
WARN_COLOUR = "#9a6700"
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


def verdict_state(verdict: Any) -> bool | None:
    """True when proven safe, False when unsafe, None when inconclusive (runtime domain, state cap)."""
    if verdict.ok:
        return True
    status = getattr(getattr(verdict, "status", None), "value", None)
    return None if status == "inconclusive" else False


def headline(verdict: Any) -> str:
    """The first line of the verdict's summary, with a count when there are more."""
    lines = [line for line in verdict.summary().splitlines() if line.strip()] or ["verified"]
    more = f" (+{len(lines) - 1} more in the Verdict tab)" if len(lines) > 1 else ""
    return lines[0] + more


def _check_rows(checks: Iterable[Any]) -> str:
    rows = []
    for check in checks:
        passed = bool(getattr(check, "passed", False))
        mark = f"<span style='color:{OK_COLOUR}'>&#10004; pass</span>" if passed else (
            f"<span style='color:{FAIL_COLOUR};font-weight:bold'>&#10008; fail</span>")
        name = str(getattr(check, "name", "?"))
        title = str(getattr(check, "title", "") or name)
        message = html.escape(str(getattr(check, "message", "") or ""))
        hint = str(getattr(check, "hint", "") or "")
        if hint and not passed:
            message += f"<div><b>How to fix:</b> {html.escape(hint)}</div>"
        rows.append(
            f"<tr><td style='padding:2px 8px'>{mark}</td>"
            f"<td style='padding:2px 8px;text-align:left' title='{html.escape(name)}'>{html.escape(title)}</td>"
            f"<td style='padding:2px 8px;white-space:pre-wrap;text-align:left'>{message}</td></tr>"
        )
    return "".join(rows)


def verdict_html(verdict: Any) -> str:
    """Every check with pass/fail and its message, under the verdict's summary, then its notes."""
    state = verdict_state(verdict)
    colour = OK_COLOUR if state else (WARN_COLOUR if state is None else FAIL_COLOUR)
    checks = list(getattr(verdict, "checks", ()))
    failed = sum(1 for c in checks if not getattr(c, "passed", False))
    summary = "".join(f"<div>{html.escape(line)}</div>" for line in verdict.summary().splitlines())
    notes = [str(getattr(n, "message", n)) for n in getattr(verdict, "warnings", ())]
    note_list = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    notes_html = f"<div style='margin-top:6px'><b>Notes</b><ul>{note_list}</ul></div>" if notes else ""
    return (
        f"<div class='ts-explore-verdict' style='font-family:sans-serif'>"
        f"<div style='color:{colour};font-weight:bold;margin:4px 0'>{summary}</div>"
        f"<div style='color:#555'>{len(checks)} checks, {failed} failed</div>"
        "<table style='border-collapse:collapse;margin-top:4px'>"
        "<tr><th style='text-align:left;padding:2px 8px'>result</th>"
        "<th style='text-align:left;padding:2px 8px'>check</th>"
        "<th style='text-align:left;padding:2px 8px'>message</th></tr>"
        f"{_check_rows(checks)}</table>{notes_html}</div>"
    )


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
    items = "".join(f"<li><code>{html.escape(line)}</code></li>" for line in diff.lines())
    listing = f"<ul style='font-family:monospace;margin:4px 0'>{items}</ul>" if items else ""
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
