"""HTML for notebooks and the launch panel: a timeline, its step table, a hang diagnosis.

Pure: model in, an HTML string out (figures inline as PNG).
"""

from __future__ import annotations

import base64
import html
import io
from typing import TYPE_CHECKING, Any

from .style import FAIL_COLOR, FAMILY_FILL, PASS_COLOR

if TYPE_CHECKING:  # the models show themselves through this module
    from ..analysis.timeline import StepTable
    from ..model.hang import HangReport
    from ..model.timeline import Timeline

FONT = "font-family:sans-serif;font-size:12px"


def png_html(fig: Any, dpi: int = 80, width: str = "100%") -> str:
    """A matplotlib figure as an inline ``<img>``."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return f"<img style='max-width:{width}' src='data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}'/>"


def table_html(table: StepTable) -> str:
    """Per task and step: count, mean, blocked time and share, coloured like the diagrams."""
    head = "".join(f"<th style='text-align:{a};padding:2px 6px'>{h}</th>" for h, a in (
        ("task", "left"), ("step", "left"), ("count", "right"), ("mean µs", "right"), ("blocked µs", "right"),
        ("share of the task's time", "right")))
    rows = []
    for r in table.rows:
        swatch = f"<span style='background:{FAMILY_FILL[r.family]};border:1px solid #888;padding:0 6px'></span>"
        rows.append(
            f"<tr><td style='padding:2px 6px'>{html.escape(r.task)}</td>"
            f"<td style='padding:2px 6px'>{swatch} #{r.step} {html.escape(r.label)}</td>"
            f"<td style='text-align:right;padding:2px 6px'>{r.count}</td>"
            f"<td style='text-align:right;padding:2px 6px'>{r.mean_ns / 1e3:.3f}</td>"
            f"<td style='text-align:right;padding:2px 6px'>{r.blocked_ns / 1e3:.2f}</td>"
            f"<td style='text-align:right;padding:2px 6px'>{100 * r.share:.1f}%</td></tr>")
    return (f"<table style='{FONT};border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def timeline_html(timeline: Timeline, dpi: int = 80) -> str:
    """Summary line, the lanes of CTA 0 (or the first traced CTA) and the step table."""
    from .timeline import timeline_figure

    cta = timeline.ctas[0] if timeline.ctas else None
    figure = png_html(timeline_figure(timeline, cta=cta), dpi) if timeline.events else ""
    return (f"<div style='{FONT}'><b>Measured timeline</b>: {html.escape(timeline.summary())}</div>"
            f"{figure}{table_html(timeline.table())}")


def hang_html(report: HangReport) -> str:
    """The hang diagnosis: predicted vs measured lines, then where each group of warps stopped."""
    lines = report.lines()
    head = html.escape(lines[0])
    pairs = "".join(f"<li>{html.escape(line)}</li>" for line in lines[1:] if not line.startswith("  "))
    groups = "".join(f"<li><code>{html.escape(line.strip())}</code></li>" for line in lines[1:]
                     if line.startswith("  "))
    colour = FAIL_COLOR if report.stuck else PASS_COLOR
    return (f"<div style='{FONT}'><div style='color:{colour}'><b>Hang</b>: {head}</div>"
            f"<ul>{pairs}</ul><div>Each warp's last blocking step, read while the kernel hung:</div>"
            f"<ul>{groups}</ul></div>")


__all__ = ["hang_html", "png_html", "table_html", "timeline_html"]
