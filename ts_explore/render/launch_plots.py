"""Matplotlib figures of launch results: timing spread, bandwidth vs size, the scheduling shapes, mismatches.

Every function returns a :class:`matplotlib.figure.Figure` (no pyplot state),
which Jupyter shows inline; :func:`launch_panel_figures` is what the
explorer's launch panel embeds and :func:`to_png` turns a figure into bytes.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..model.plan import MATMUL, MEMCPY, TORCH

if TYPE_CHECKING:
    from ..model.plan import LaunchPlan


class LaunchResult(Protocol):
    """What these figures read of a launch (a :class:`ts_explore.gpu.result.LaunchResult`, which lives above
    the renderers): its runs per size, the scenario and device, and its summary."""

    scenario: str
    device: Any
    runs: Sequence[Any]

    def summary(self) -> str: ...

REFERENCE_STYLE = {MEMCPY: dict(color="tab:gray", linestyle="--"), TORCH: dict(color="tab:purple", linestyle=":"),
                   MATMUL: dict(color="tab:purple", linestyle=":")}
H200_DENSE_BF16_TFLOPS = 989.0  # the data sheet's dense bf16 peak, drawn on TFLOP/s plots of an H200
KERNEL_COLOR = "tab:blue"


def _category_ticks(ax: Any, positions: Any, labels: list[str]) -> None:
    """Put ``labels`` under ``positions``; turn them upright when they would overlap (long shapes: 16384x1024x4096).

    The overlap is measured with the figure's own renderer, so it holds for any
    figure width, font and number of labels.
    """
    ax.set_xticks(positions, labels)
    figure = ax.get_figure()
    if not hasattr(figure.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
    figure.draw_without_rendering()  # lay the figure out first: the axes' final width decides
    renderer = figure.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()), key=lambda b: b.x0)
    if any(a.x1 + 2 > b.x0 for a, b in zip(boxes, boxes[1:])):
        ax.set_xticks(positions, labels, rotation=90)  # upright: labels side by side never touch


def timing_distribution(result: LaunchResult) -> Figure:
    """Per-repetition kernel times for each size (box + points), reference medians as markers."""
    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    ax = fig.add_subplot()
    runs = result.runs
    data = [np.asarray(r.kernel.times_ms) * 1e3 for r in runs]
    positions = np.arange(1, len(runs) + 1)
    ax.boxplot(data, positions=positions, widths=0.5, showfliers=False)
    for pos, times in zip(positions, data):
        jitter = np.linspace(-0.15, 0.15, len(times)) if len(times) > 1 else np.zeros(1)
        ax.scatter(pos + jitter, times, s=8, color=KERNEL_COLOR, alpha=0.6, zorder=3,
                   label="kernel (each repetition)" if pos == 1 else None)
    for label, style in REFERENCE_STYLE.items():
        meds = [r.reference(label).median_ms * 1e3 if r.reference(label) else np.nan for r in runs]
        if not np.all(np.isnan(meds)):
            ax.scatter(positions + 0.3, meds, marker="_", s=300, color=style["color"], label=f"{label} (median)")
    _category_ticks(ax, positions, [r.label for r in runs])
    ax.set_xlabel("problem size")
    ax.set_ylabel("time per launch (µs)")
    ax.set_title(f"{result.scenario}: timing spread over {len(runs[0].kernel.times_ms)} repetitions")
    ax.legend(fontsize="small")
    return fig


def rate_per_problem(result: LaunchResult) -> Figure:
    """TFLOP/s (or GB/s) per problem shape as bars, references and the device's peak as marks."""
    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.add_subplot()
    runs = result.runs
    x = np.arange(len(runs))
    ax.bar(x, [r.rate for r in runs], width=0.6, color=[KERNEL_COLOR if r.ok else "tab:red" for r in runs],
           label=result.scenario)
    for i, r in enumerate(runs):
        ax.text(i, r.rate, f"{r.rate:.0f}" + ("" if r.ok else " (wrong)"), ha="center", va="bottom", fontsize="small")
        for ref in r.references:
            ax.hlines(ref.rate(), i - 0.35, i + 0.35, label=ref.label if i == 0 else None,
                      **REFERENCE_STYLE.get(ref.label, dict(color="tab:gray", linestyle="--")))
    if runs and runs[0].unit == "TFLOP/s" and "H200" in result.device.name:
        ax.axhline(H200_DENSE_BF16_TFLOPS, color="tab:red", linewidth=1,
                   label=f"H200 dense bf16 peak {H200_DENSE_BF16_TFLOPS:.0f} TFLOP/s")
    _category_ticks(ax, x, [r.label for r in runs])
    ax.set_ylabel(runs[0].unit if runs else "")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{result.scenario} on {result.device.name}")
    ax.legend(fontsize="small")
    return fig


def bandwidth_vs_size(result: LaunchResult) -> Figure:
    """GB/s (bytes read + written) vs bytes moved, with memcpy / torch.copy_ and the device peak as references."""
    if any(r.shape or r.kernel.flops for r in result.runs):
        return rate_per_problem(result)
    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.add_subplot()
    runs = sorted(result.runs, key=lambda r: r.bytes_moved)
    x = np.array([r.bytes_moved for r in runs], dtype=float)
    med = np.array([r.gbps for r in runs])
    lo = med - np.array([r.kernel.gbps(r.kernel.max_ms) for r in runs])
    hi = np.array([r.kernel.gbps(r.kernel.min_ms) for r in runs]) - med
    ax.errorbar(x, med, yerr=[lo, hi], marker="o", color=KERNEL_COLOR, capsize=3,
                label=f"{result.scenario} (median, min-max)")
    for label, style in REFERENCE_STYLE.items():
        refs = [r.reference(label) for r in runs]
        if any(refs):
            ax.plot(x, [t.gbps() if t else np.nan for t in refs], label=label, **style)
    if result.device.peak_gbps:
        ax.axhline(result.device.peak_gbps, color="tab:red", linewidth=1,
                   label=f"device peak {result.device.peak_gbps:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes read + written per launch")
    ax.set_ylabel("GB/s")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Bandwidth on {result.device.name}")
    ax.legend(fontsize="small")
    return fig


def shapes_side_by_side(results: Mapping[str, Any], plans: Mapping[str, LaunchPlan] | None = None,
                        tiles: int = 48) -> Figure:
    """Bandwidth of each scheduling shape (a refusal shows as an empty bar with its reason),
    above the tile-to-CTA map each shape's launch plan gives (``LaunchPlan.tile_owners``).
    ``results`` maps a label to a LaunchResult, or to a LaunchError/str for a shape that did
    not run; ``plans`` supplies the plans of shapes that did not run (or replaces a result's
    first plan), so their maps still show."""
    labels = list(results)
    fig = Figure(figsize=(7.2, 5.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=[3, 2])
    for i, label in enumerate(labels):
        res = results[label]
        if hasattr(res, "runs"):  # a LaunchResult
            run = res.best
            top.bar(i, run.gbps, color=KERNEL_COLOR if res.ok else "tab:red")
            top.text(i, run.gbps, f"{run.gbps:.0f}" + ("" if res.ok else " (wrong)"), ha="center", va="bottom")
            ref = run.reference(MEMCPY)
            if ref is not None:
                top.hlines(ref.gbps(), i - 0.4, i + 0.4, **REFERENCE_STYLE[MEMCPY])
        else:
            top.bar(i, 0.0, color="none", edgecolor="tab:gray", hatch="//")
            reason = getattr(res, "reason", None) or "not run"
            top.text(i, 0.0, f"not run:\n{reason}", ha="center", va="bottom", fontsize="small", color="tab:gray")
    top.set_xticks(range(len(labels)), labels)
    top.set_ylabel("GB/s (best size)")
    top.set_title("Scheduling shapes side by side (dashed: cudaMemcpyAsync of the same bytes)")
    owners, notes = [], []
    for label in labels:
        plan = (plans or {}).get(label) or next(iter(getattr(results[label], "plans", ()) or ()), None)
        known = plan is not None and plan.tile_owners is not None
        row = [plan.tile_owners.owner(t) if known else None for t in range(tiles)]
        owners.append(np.array([np.nan if o is None else o for o in row], dtype=float))
        notes.append("no launch plan given" if plan is None else "the plan does not say" if not known else
                     "handed out at run time" if plan.tile_owners.ctas == 0 else None)
    grid = np.vstack(owners)
    image = bottom.imshow(grid, aspect="auto", cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=bottom, label="CTA index")
    for row, note in enumerate(notes):
        if note:
            bottom.text(tiles / 2, row, note, ha="center", va="center", fontsize="small")
    bottom.set_yticks(range(len(labels)), labels)
    bottom.set_xlabel(f"tile (first {tiles}); colour = the CTA that copies it (planned)")
    return fig


def mismatch_heatmap(result: LaunchResult) -> Figure | None:
    """Where outputs differ from the host reference (None when every size was correct)."""
    wrong = [(r, m) for r in result.runs for m in r.mismatches if m.count and m.heatmap is not None]
    if not wrong:
        return None
    fig = Figure(figsize=(4.0 * len(wrong), 3.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(wrong)))
    for ax, (run, m) in zip(axes, wrong):
        image = ax.imshow(m.heatmap, aspect="auto", cmap="Reds", interpolation="nearest")
        fig.colorbar(image, ax=ax, label="wrong elements per cell")
        ax.set_title(f"{m.output} @ {run.label}: {m.count:,} of {m.total:,} wrong", fontsize="small")
        ax.set_xlabel("column (binned)")
        ax.set_ylabel("row (binned)")
    return fig


def launch_panel_figures(result: LaunchResult) -> list[Figure]:
    """The figures a launch panel shows: timing spread, bandwidth vs size, and a mismatch heatmap if wrong."""
    figures = [timing_distribution(result), bandwidth_vs_size(result)]
    heat = mismatch_heatmap(result)
    if heat is not None:
        figures.append(heat)
    return figures


def result_html(result: LaunchResult, dpi: int = 80) -> str:
    """The launch summary and its panel figures as one HTML block (PNG images inline)."""
    import base64
    import html

    images = "".join(
        f"<img style='max-width:48%;margin:2px' src='data:image/png;base64,"
        f"{base64.b64encode(to_png(fig, dpi)).decode()}'/>"
        for fig in launch_panel_figures(result)
    )
    return f"<pre>{html.escape(result.summary())}</pre><div>{images}</div>"


def to_png(fig: Figure, dpi: int = 100) -> bytes:
    """PNG bytes of a figure (for widgets.Image or files)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


__all__ = ["bandwidth_vs_size", "rate_per_problem", "launch_panel_figures", "mismatch_heatmap", "result_html", "shapes_side_by_side",
           "timing_distribution", "to_png"]
