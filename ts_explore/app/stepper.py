"""Step through a counterexample: buttons and a slider over the moves, lanes, credits, a sentence.

>>> import ts_explore
>>> v = ts_explore.verify(**ts_explore.gallery.get("missing_release").broken())
>>> stepper = ts_explore.Stepper(v)   # a notebook cell ending in ``stepper`` shows the widget
>>> stepper.slider.max == len(v.deadlocks[0].interleaving)
True

Headless use (tests, scripts): set ``stepper.slider.value`` or call
``stepper.go(k)`` / the button handlers, then read ``stepper.lanes.value``,
``stepper.credits.value`` and ``stepper.sentence.value``.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from ..analysis.narrate import state_sentence
from ..analysis.paths import initial_credits
from ..analysis.unroll import BLOCKED, NEXT, OFFENDING, LaneView, lane_views
from ..render.verdict_drawings import pick
from ..model.verdict import Finding, Verdict
from ..render import style

_BORDER = {NEXT: "2px solid #1f6fd1", BLOCKED: f"3px solid {style.BLOCKED_BORDER}",
           OFFENDING: f"3px solid {style.BLOCKED_BORDER}"}


def lanes_html(views: tuple[LaneView, ...]) -> str:
    """One table row per task; the cursor cell framed blue, a stuck or racing step red."""
    rows = []
    for view in views:
        cells = [f"<td style='font-weight:bold;padding:2px 6px;white-space:nowrap'>{html.escape(view.task)}"
                 f"<br><span style='font-weight:normal;font-size:10px;color:#666'>"
                 f"{'finished' if view.finished else f'step {view.cursor}/{view.length}'}</span></td>"]
        segment = None
        for cell in view.cells:
            if cell.step is None:
                cells.append(f"<td style='color:#999;font-size:10px;padding:0 4px'>&#8230;{cell.folded}&#8230;</td>")
                segment = None
                continue
            s = cell.step
            where = f"<div style='font-size:8px;color:#1f5fa8;text-align:left'>{html.escape(s.where)}</div>"
            if (s.tile, s.section, s.iteration) == segment:
                where = ""
            segment = (s.tile, s.section, s.iteration)
            fill = style.FAMILY_FILL[s.family] if cell.state != "pending" else "#ffffff"
            color = "#222" if cell.state != "pending" else "#999"
            border = _BORDER.get(cell.state, "1px solid #ccc")
            mark = f"<br><span style='font-size:9px'>t{cell.time}</span>" if cell.time else ""
            arrow = "&#9654; " if cell.state in (NEXT, BLOCKED) else ""
            tip = html.escape(f"{s.title} ({s.stage.value}, {s.where})", quote=True)
            cells.append(
                f"<td title='{tip}' data-state='{cell.state}' style='background:{fill};color:{color};border:{border};"
                f"border-radius:4px;padding:1px 4px;font-size:10px;white-space:nowrap;text-align:center'>"
                f"{where}{arrow}{html.escape(s.title)}{mark}</td>"
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class='ts-explore-lanes' style='overflow-x:auto'><table style='border-collapse:separate;"
            f"border-spacing:2px'>{''.join(rows)}</table></div>")


def credits_html(finding: Finding | None, run: Any, k: int) -> str:
    """Free slots and commits per pipeline after ``k`` moves; cells the last move changed are highlighted."""
    inter = finding.interleaving if finding is not None else None
    if inter is not None:
        snapshot = {(c.resource, c.slot): (c.empty, c.full) for c in inter.credits[k]}
        before = {(c.resource, c.slot): (c.empty, c.full) for c in inter.credits[max(k - 1, 0)]}
        changed = set(inter.changed[k]) if k > 0 else set()
    else:
        snapshot = before = {key: (e, f) for key, (e, f) in initial_credits(run.credit_model).items()}
        changed = set()
    if not snapshot:
        return "<i>no pipelined resources: nothing carries credits</i>"
    multi = any(slot for _r, slot in snapshot)
    head = ("<tr><th style='text-align:left'>resource</th>" + ("<th>stage</th>" if multi else "")
            + "<th title='acquire takes one, release gives one'>free slots</th>"
            "<th title='commit gives one, wait takes one'>commits</th></tr>")
    rows = []
    for (resource, slot), (empty, full) in snapshot.items():
        tds = [f"<td>{html.escape(resource)}</td>"] + ([f"<td>{slot}</td>"] if multi else [])
        for kind, value, old in (("empty", empty, before[(resource, slot)][0]), ("full", full, before[(resource, slot)][1])):
            hit = (resource, slot, kind) in changed
            bg = f"background:{style.CHANGED_CELL_FILL};font-weight:bold" if hit else ""
            text = f"{old} &#8594; {value}" if hit else str(value)
            tds.append(f"<td data-changed='{int(hit)}' style='text-align:center;padding:1px 8px;{bg}'>{text}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table style='border-collapse:collapse;font-size:12px'>{head}{''.join(rows)}</table>"


class Stepper:
    """A widget that replays the shortest interleaving to a deadlock, race or PDL violation."""

    def __init__(self, verdict: Verdict, finding: int | Finding = 0, *, max_steps: int = 32) -> None:
        if not isinstance(verdict, Verdict):
            raise TypeError(f"Stepper takes the Verdict returned by ts_explore.verify(...), got {type(verdict).__name__}")
        self.verdict = verdict
        self.max_steps = max_steps
        self.run, self.finding = pick(verdict, finding if verdict.findings else None)
        self.title = widgets.HTML()
        self.slider = widgets.IntSlider(min=0, max=0, value=0, description="move", continuous_update=False)
        self.first_button = widgets.Button(description="first", icon="fast-backward", layout=widgets.Layout(width="80px"))
        self.prev_button = widgets.Button(description="prev", icon="step-backward", layout=widgets.Layout(width="80px"))
        self.next_button = widgets.Button(description="next", icon="step-forward", layout=widgets.Layout(width="80px"))
        self.last_button = widgets.Button(description="last", icon="fast-forward", layout=widgets.Layout(width="80px"))
        self.sentence = widgets.HTML()
        # a width of its own (not its content's) lets a wide lane table scroll inside the output instead of being cut
        self.lanes = widgets.HTML(layout=widgets.Layout(width="100%", overflow="auto"))
        self.credits = widgets.HTML()
        self.first_button.on_click(lambda _b: self.go(0))
        self.prev_button.on_click(lambda _b: self.go(self.slider.value - 1))
        self.next_button.on_click(lambda _b: self.go(self.slider.value + 1))
        self.last_button.on_click(lambda _b: self.go(self.slider.max))
        self.slider.observe(self._on_slider, names="value")
        controls = widgets.HBox([self.first_button, self.prev_button, self.slider, self.next_button, self.last_button])
        self.widget = widgets.VBox(
            [self.title, controls, self.sentence, self.lanes, widgets.HTML("<b>credits</b>"), self.credits],
            layout=widgets.Layout(width="100%"),
        )
        self._setup()

    @property
    def moves(self) -> int:
        """Length of the counterexample (0 when there is none)."""
        inter = self.finding.interleaving if self.finding is not None else None
        return len(inter) if inter is not None else 0

    def _nothing_to_step(self) -> str:
        return html.escape(self.verdict.summary()).replace("\n", "<br>")

    def _setup(self) -> None:
        if self.finding is None:
            why = {
                "safe": "the verdict is safe",
                "inconclusive": "nothing was found, but the verdict is inconclusive",
            }.get(self.verdict.status.value, "verification failed without a deadlock, race or PDL violation")
            self.title.value = f"<b>No counterexample to step through:</b> {html.escape(why)}."
            self.sentence.value = self._nothing_to_step()
            for w in (self.slider, self.first_button, self.prev_button, self.next_button, self.last_button):
                w.disabled = True
            if self.run is not None:
                self.lanes.value = lanes_html(lane_views(self.run, None, None, self.max_steps))
                self.credits.value = credits_html(None, self.run, 0)
            return
        self.title.value = (
            f"<b>{html.escape(self.finding.kind)}</b> ({html.escape(self.run.label if self.run else '')}): "
            f"{self.moves} moves from the start; the shortest interleaving TS's search found"
        )
        if self.finding.interleaving is None:
            self.title.value += " <i>(path unavailable: showing the bad state only)</i>"
        self.slider.max = self.moves
        self._show(0)

    def go(self, k: int) -> None:
        """Show the state after ``k`` moves (clamped to the path)."""
        k = max(self.slider.min, min(int(k), self.slider.max))
        if k == self.slider.value:
            self._show(k)
        else:
            self.slider.value = k  # the observer redraws

    def _on_slider(self, change: dict[str, Any]) -> None:
        self._show(int(change["new"]))

    def _show(self, k: int) -> None:
        if self.finding is None or self.run is None:  # nothing to step through: keep the sentence _setup wrote
            self.sentence.value = self._nothing_to_step()
            return
        try:
            at_end = k >= self.moves
            views = lane_views(self.run, self.finding, None if at_end else k, self.max_steps)
            with self.widget.hold_sync():
                self.lanes.value = lanes_html(views)
                self.credits.value = credits_html(self.finding, self.run, k)
                self.sentence.value = html.escape(state_sentence(self.finding, self.run, k))
                self.first_button.disabled = self.prev_button.disabled = k <= 0
                self.next_button.disabled = self.last_button.disabled = k >= self.moves
        except Exception as exc:  # noqa: BLE001 - show it in the panel, keep the notebook usable
            self.sentence.value = f"<span style='color:{style.FAIL_COLOR}'>could not draw step {k}: {html.escape(repr(exc))}</span>"

    @property
    def text(self) -> str:
        """The sentence for the current move, as plain text."""
        if self.finding is None or self.run is None:
            return self.verdict.summary()
        return state_sentence(self.finding, self.run, self.slider.value)

    @property
    def states(self) -> dict[str, str]:
        """Cell states per task at the current move (for tests and scripts)."""
        k = self.slider.value
        if self.run is None:
            return {}
        views = lane_views(self.run, self.finding, None if k >= self.moves else k, self.max_steps)
        return {v.task: ",".join(c.state for c in v.cells if c.step is not None) for v in views}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


__all__ = ["Stepper", "credits_html", "lanes_html"]
