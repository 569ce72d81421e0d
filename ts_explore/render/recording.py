"""The notebook view of a Recording: the error box (if any), the unrouted outputs, then the drawing.

Pure: text in, HTML out.

>>> page = recording_html(None, ("src.get_item() produces 'item' but it is never routed.",), "<svg/>")
>>> "never routed" in page and page.endswith("<svg/></div>")
True
"""

from __future__ import annotations

import html

from ..model import Problem
from . import style


def recording_html(problem: Problem | None, unrouted: tuple[str, ...], drawing: str) -> str:
    """A Task-time problem above the schedule it concerns, and TS's never-routed warnings as a list."""
    parts = ['<div class="ts-explore-recording">']
    if problem is not None:
        parts.append(problem.to_html())
        parts.append("<div style='font-family:sans-serif;font-size:12px;color:#555;margin:4px 0'>"
                     "TS recorded the schedule below, but <code>Task(schedule=...)</code> rejects it:</div>")
    if unrouted:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in unrouted)
        parts.append(
            f"<div class='ts-explore-unrouted' style='font-family:sans-serif;font-size:12px;"
            f"color:{style.UNROUTED_COLOR};margin:4px 0'><b>never routed</b> (badged on the step):<ul "
            f"style='margin:2px 0'>{items}</ul></div>"
        )
    parts.append(drawing)
    parts.append("</div>")
    return "".join(parts)


__all__ = ["recording_html"]
