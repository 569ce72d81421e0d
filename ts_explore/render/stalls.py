"""Where a traced kernel waits, as a matplotlib figure and as HTML.

Pure: a :class:`~ts_explore.analysis.stalls.Stalls` in, a
:class:`matplotlib.figure.Figure` (or an HTML string) out, no pyplot state.
Left: one lane per warp, its work steps in light grey and each wait coloured
by the pipeline it waits on (hatched when a producer waits for an empty
slot, solid when a consumer waits for a full one); the steps of the critical
path are outlined in black. Right: each pipeline's wait share of the waiting
task's time, one bar per side.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .timeline_html import png_html

if TYPE_CHECKING:
    from ..analysis.stalls import Stalls

WORK_FILL = "#e0e0e0"
PATH_EDGE = "#000000"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
HATCH = {"empty": "///", "full": None}


def pipeline_colours(stalls: Stalls) -> dict[str, str]:
    """One colour per pipeline that anyone waits on, in the order of the report."""
    names = list(dict.fromkeys(p.pipeline for p in stalls.pipelines))
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def stalls_figure(stalls: Stalls, *, cta: int | None = None, width: float = 12.0) -> Figure:
    """Lanes with waits coloured by pipeline (left) and the wait share per pipeline and side (right).

    ``cta`` keeps the lanes of one CTA (the bars always sum every traced CTA).
    """
    timeline = stalls.timeline
    lanes = list(timeline.warps(cta)) if timeline is not None else []
    fig = Figure(figsize=(width, 1.6 + 0.34 * max(4, len(lanes))), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[3, 1])
    colours = pipeline_colours(stalls)
    on_path = {id(e) for e in stalls.path.steps}
    if not lanes:
        left.set_title(f"{stalls.scenario}: no lanes to draw (the stall report was built without its timeline)")
        left.set_axis_off()
    for y, (c, w) in enumerate(lanes):
        work, waits, path = [], {}, []
        for e in timeline.lane(c, w):
            bar = (e.start_ns / 1e3, max(e.duration_ns, 1) / 1e3)
            if e.blocking:
                name = e.label.split(".", 1)[0]
                waits.setdefault((name, "empty" if e.stage.is_producer else "full"), []).append(bar)
            else:
                work.append(bar)
            if id(e) in on_path:
                path.append(bar)
        left.broken_barh(work, (y - 0.35, 0.7), facecolors=WORK_FILL, edgecolors="none")
        for (name, side), bars in waits.items():
            left.broken_barh(bars, (y - 0.4, 0.8), facecolors=colours.get(name, "#888888"), edgecolors="white",
                             linewidth=0.3, hatch=HATCH[side])
        if path:
            left.broken_barh(path, (y - 0.45, 0.9), facecolors="none", edgecolors=PATH_EDGE, linewidth=0.9)
    if lanes:
        left.set_yticks(range(len(lanes)), [f"CTA {c} · warp {w} ({timeline.task_of(w) or '?'})" for c, w in lanes],
                        fontsize="small")
        left.set_ylim(len(lanes) - 0.5, -0.5)
        left.set_xlabel("time since the first traced step (µs)")
        left.grid(axis="x", alpha=0.3)
        scope = f"CTA {cta}" if cta is not None else f"{len(timeline.ctas)} CTA(s)"
        ends = stalls.path.steps[-1].cta if stalls.path.steps else None
        where = ("black outline: critical path" if cta is None or any(e.cta == cta for e in stalls.path.steps)
                 else f"the critical path runs in CTA {ends}, not shown")
        left.set_title(f"{stalls.scenario}: waits by pipeline, {scope}; {where}", fontsize="medium")
    handles = [Patch(facecolor=WORK_FILL, label="work and other steps")]
    for name, side in dict.fromkeys((p.pipeline, p.side) for p in stalls.pipelines):
        handles.append(Patch(facecolor=colours[name], label=f"waits for `{name}` to fill") if side == "full" else
                       Patch(facecolor=colours[name], hatch="///", edgecolor="white",
                             label=f"waits for a free `{name}` slot"))
    handles.append(Patch(facecolor="none", edgecolor=PATH_EDGE, label="on the critical path"))
    fig.legend(handles=handles, fontsize="x-small", loc="outside lower left", ncol=4)
    rows = list(stalls.pipelines)
    labels = [f"{p.task} waits for\n{'free ' if p.side == 'empty' else ''}`{p.pipeline}`"
              f"{' to fill' if p.side == 'full' else ''}" for p in rows]
    shares = [100 * p.share for p in rows]
    bars = right.barh(range(len(rows)), shares, color=[colours.get(p.pipeline, "#888888") for p in rows],
                      hatch=None)
    for bar, p in zip(bars, rows):
        if p.side == "empty":
            bar.set_hatch("///")
            bar.set_edgecolor("white")
    for y, s in enumerate(shares):
        right.text(s, y, f" {s:.0f} %", va="center", fontsize="small")
    right.set_yticks(range(len(rows)), labels, fontsize="small")
    right.set_ylim(len(rows) - 0.5 if rows else 0.5, -0.5)
    right.set_xlim(0, max([100.0 / 1.25, *shares]) * 1.25)
    right.set_xlabel("% of the waiting task's warp time")
    right.set_title("wait share per pipeline" if rows else "no task waits on any pipeline", fontsize="medium")
    fig.suptitle(stalls.bottleneck(), fontsize="medium")
    return fig


def stalls_html(stalls: Stalls, figure: bool = True) -> str:
    """The bound in a sentence, the report as text, and (``figure``) the picture."""
    head = f"<div style='font-family:sans-serif;font-weight:bold'>Why slow: {html.escape(stalls.bottleneck())}</div>"
    body = f"<pre style='font-size:small'>{html.escape(stalls.text())}</pre>"
    return head + body + (png_html(stalls_figure(stalls)) if figure and stalls.timeline is not None else "")


def advice_html(advice: Any) -> str:
    """An :class:`~ts_explore.gpu.advise.Advice` as text in a ``<pre>`` block after the stall view."""
    return stalls_html(advice.stalls) + f"<pre style='font-size:small'>{html.escape(advice.text())}</pre>"


__all__ = ["advice_html", "pipeline_colours", "stalls_figure", "stalls_html"]
