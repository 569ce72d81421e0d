"""Measured timelines as matplotlib figures: lanes per warp, and the predicted order beside them.

Pure: model in, :class:`matplotlib.figure.Figure` out (no pyplot state).
Steps are coloured by family exactly as in the schedule diagrams
(:data:`ts_explore.render.style.FAMILY_FILL`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..model import Family
from .style import BLOCKED_BORDER, FAMILY_FILL, FAMILY_LEGEND

if TYPE_CHECKING:  # the timeline model draws itself through this module
    from ..analysis.timeline import Expected
    from ..model.timeline import Timeline, TimelineEvent

EDGE = "#555555"


def _legend(ax: object, families: set[Family]) -> None:
    handles = [Patch(facecolor=FAMILY_FILL[f], edgecolor=EDGE, label=FAMILY_LEGEND[f]) for f in Family if f in families]
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))  # type: ignore[attr-defined]


def _lanes(timeline: Timeline, cta: int | None) -> list[tuple[int, int]]:
    return list(timeline.warps(cta))


def timeline_figure(timeline: Timeline, *, cta: int | None = None, window_ns: tuple[int, int] | None = None,
                    width: float = 10.0) -> Figure:
    """One lane per traced warp (grouped by task), each step a bar from its start to its end (µs).

    ``cta`` keeps one CTA; ``window_ns`` zooms to ``(start, end)``.
    """
    lanes = _lanes(timeline, cta)
    fig = Figure(figsize=(width, 1.0 + 0.38 * max(1, len(lanes))), layout="constrained")
    ax = fig.add_subplot()
    if not lanes:
        ax.set_title(f"{timeline.scenario}: no step events were recorded")
        ax.set_axis_off()
        return fig
    families: set[Family] = set()
    for y, (c, w) in enumerate(lanes):
        by_family: dict[Family, list[tuple[float, float]]] = {}
        for e in timeline.lane(c, w):
            if window_ns is not None and (e.end_ns < window_ns[0] or e.start_ns > window_ns[1]):
                continue
            by_family.setdefault(e.family, []).append((e.start_ns / 1e3, max(e.duration_ns, 1) / 1e3))
        for family, bars in by_family.items():
            families.add(family)
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=FAMILY_FILL[family], edgecolors=EDGE, linewidth=0.3)
    ax.set_yticks(range(len(lanes)), [f"CTA {c} · warp {w} ({timeline.task_of(w) or '?'})" for c, w in lanes],
                  fontsize="small")
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlabel("time since the first traced step (µs, GPU global timer)")
    if window_ns is not None:
        ax.set_xlim(window_ns[0] / 1e3, window_ns[1] / 1e3)
    scope = f"CTA {cta}" if cta is not None else f"{len(timeline.ctas)} CTA(s)"
    title = f"{timeline.scenario}: measured steps per warp, {scope} ({timeline.spec.stages} steps traced)"
    if timeline.lost:
        title += f"; {sum(n for *_, n in timeline.lost)} events past the capacity are not shown"
    ax.set_title(title, fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    _legend(ax, families)
    return fig


def comparison_figure(timeline: Timeline, predicted: dict[str, Sequence[Expected]], *, cta: int = 0,
                      steps: int = 24, width: float = 10.0) -> Figure:
    """The schedule's order (top, one lane per task) beside the measured lanes of one CTA (bottom).

    Step ``k`` of a task's predicted order is joined to the ``k``-th measured
    event of the task's first warp; a measured step that is not the
    predicted one is outlined in red. Only the first ``steps`` steps of each
    task are drawn.
    """
    lanes = _lanes(timeline, cta)
    tasks = [t for t in timeline.tasks if t.name in predicted]
    fig = Figure(figsize=(width, 2.0 + 0.35 * (len(tasks) + len(lanes))), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=[max(1, len(tasks)), max(1, len(lanes))])
    families: set[Family] = set()
    first_warp: dict[str, tuple[int, list[TimelineEvent]]] = {}
    for y, (c, w) in enumerate(lanes):
        task = timeline.task_of(w)
        events = list(timeline.lane(c, w))[:steps]
        if task is not None and task not in first_warp:
            first_warp[task] = (y, events)
        want = predicted.get(task or "", ())
        for k, e in enumerate(events):
            ok = k < len(want) and want[k].step == e.step and want[k].iteration == e.iteration
            families.add(e.family)
            bottom.broken_barh([(e.start_ns / 1e3, max(e.duration_ns, 1) / 1e3)], (y - 0.4, 0.8),
                               facecolors=FAMILY_FILL[e.family], edgecolors=EDGE if ok else BLOCKED_BORDER,
                               linewidth=0.4 if ok else 1.5)
    by_label: dict[str, Family] = {e.label: e.family for e in timeline.events}
    for y, task in enumerate(tasks):
        for k, step in enumerate(list(predicted[task.name])[:steps]):
            family = by_label.get(step.label, Family.AUX)
            families.add(family)
            top.broken_barh([(k, 0.9)], (y - 0.4, 0.8), facecolors=FAMILY_FILL[family], edgecolors=EDGE,
                            linewidth=0.4, hatch="//" if step.optional else None)
            if k < 12 or k % 5 == 0:
                top.text(k + 0.45, y, step.label.split(".")[-1][:8], ha="center", va="center", fontsize=6)
    top.set_yticks(range(len(tasks)), [f"{t.name} (predicted order)" for t in tasks], fontsize="small")
    top.set_ylim(len(tasks) - 0.5, -0.5)
    top.set_xlabel("step of the schedule (HEAD, iteration 0, iteration 1, ...)")
    top.set_title(f"{timeline.scenario}: predicted order vs measured steps of CTA {cta} (first {steps} per lane)",
                  fontsize="medium")
    bottom.set_yticks(range(len(lanes)), [f"warp {w} ({timeline.task_of(w) or '?'})" for _, w in lanes],
                      fontsize="small")
    bottom.set_ylim(len(lanes) - 0.5, -0.5)
    bottom.set_xlabel("measured time (µs); red outline: not the predicted step at this position")
    bottom.grid(axis="x", alpha=0.3)
    from matplotlib.patches import ConnectionPatch

    for y, task in enumerate(tasks):
        if task.name not in first_warp:
            continue
        lane_y, events = first_warp[task.name]
        for k, e in enumerate(events[: len(predicted[task.name])]):
            fig.add_artist(ConnectionPatch(xyA=(k + 0.45, y + 0.4), coordsA=top.transData,
                                           xyB=((e.start_ns + e.end_ns) / 2e3, lane_y - 0.4), coordsB=bottom.transData,
                                           color="#9e9e9e", linewidth=0.4, alpha=0.7))
    _legend(top, families)
    return fig


__all__ = ["comparison_figure", "timeline_figure"]
