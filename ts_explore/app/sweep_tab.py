"""The explorer's Sweep tab: pick two knobs, run a sweep over them, see heatmaps, click a cell to load it.

The other knobs stay as the explorer's controls set them. The heatmaps are
grids of buttons (one per cell), so a click loads that cell's configuration
into the explorer with no JavaScript: the status map colours safe, unsafe,
inconclusive, refused and failed cells; with "launch on GPU" a second map
shades GB/s (or TFLOP/s) from low to high. The sweep runs in a background
thread (:class:`ts_explore.sweeps.Sweep`), rows fill the maps as they arrive,
a progress bar counts them, and Stop keeps the rows already computed.
"""

from __future__ import annotations

import html
import threading
from typing import Any, Callable

import ipywidgets as widgets

from ..scenarios.knobs import Knob, knobs, option_text
from .panels import FAIL_COLOUR, OK_COLOUR, WARN_COLOUR, note_html

STATUS_COLOURS = {"safe": OK_COLOUR, "unsafe": FAIL_COLOUR, "inconclusive": WARN_COLOUR, "refused": "#bbbbbb",
                  "failed": "#6b3fa0"}
PENDING_COLOUR = "#eeeeee"
SWEEPABLE = ("int", "enum", "bool", "choice")
MAX_AXIS = 12  # values per axis offered by default


def default_values(k: Knob, current: Any) -> list[str]:
    """Values to try for a knob, as the text the value boxes hold.

    >>> from ts_explore.scenarios.knobs import Knob
    >>> default_values(Knob("stages", "stages", "int", int, 4, min=1, max=8), 4)
    ['1', '2', '3', '4', '5', '6', '7', '8']
    >>> default_values(Knob("tile", "tile", "int", int, 4096, min=256, max=16384, step=256), 4096)
    ['256', '512', '1024', '2048', '4096', '8192', '16384']
    """
    if k.kind == "bool":
        return ["off", "on"]
    if k.kind == "enum":
        return [m.name.lower() for m in k.type]
    if k.kind == "choice":
        return [option_text(o) for o in k.options or ()]
    lo = k.min if k.min is not None else max(0, int(current) // 4)
    hi = k.max if k.max is not None else max(int(current) * 4, lo + 1)
    if hi - lo < MAX_AXIS:
        return [str(v) for v in range(lo, hi + 1)]
    values, v = [], max(1, lo)
    while v <= hi and len(values) < MAX_AXIS:
        values.append(str(v))
        v *= 2
    if int(current) not in map(int, values):
        values = sorted({*values, str(int(current))}, key=int)
    return values


def value_colour(value: float, lo: float, hi: float) -> str:
    """A light-to-dark blue for value within [lo, hi].

    >>> value_colour(0, 0, 10), value_colour(10, 0, 10)
    ('#deebf7', '#08519c')
    """
    t = 0.0 if hi <= lo else max(0.0, min(1.0, (value - lo) / (hi - lo)))
    a, b = (0xDE, 0xEB, 0xF7), (0x08, 0x51, 0x9C)
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


class SweepTab:
    """The tab's widgets and the sweep behind them; ``explorer`` gives the scenario and the base config."""

    def __init__(self, explorer: Any, *, client: Any = None, sweep_factory: Callable[..., Any] | None = None) -> None:
        self.explorer = explorer
        self.client = client
        self._factory = sweep_factory
        self.frame: Any = None  # the last sweep's DataFrame
        self.sweep: Any = None
        self._base: Any = None  # the explorer's config when the sweep started (the knobs not swept)
        self._thread: threading.Thread | None = None
        self._cells: dict[tuple[str, str], widgets.Button] = {}
        self._value_cells: dict[tuple[str, str], widgets.Button] = {}
        self._rows: dict[tuple[str, str], dict[str, Any]] = {}
        self.knob_table = {k.name: k for k in knobs(explorer.scenario.config_type) if k.kind in SWEEPABLE}
        names = list(self.knob_table)
        labels = [(self.knob_table[n].label, n) for n in names]
        self.x = widgets.Dropdown(options=labels, value=names[0] if names else None, description="columns")
        self.y = widgets.Dropdown(options=labels, value=names[1] if len(names) > 1 else None, description="rows")
        self.x_values = widgets.Text(description="values", layout=widgets.Layout(width="420px"))
        self.y_values = widgets.Text(description="values", layout=widgets.Layout(width="420px"))
        self.launch = widgets.Checkbox(value=False, description="launch on GPU (GB/s map)", indent=False)
        self.run_button = widgets.Button(description="Run sweep", icon="play", button_style="primary")
        self.stop_button = widgets.Button(description="Stop", icon="stop", disabled=True)
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="cells", bar_style="info")
        self.message = widgets.HTML()
        self.status_map = widgets.VBox()
        self.value_map = widgets.VBox()
        self.x.observe(lambda _: self._fill_values(self.x, self.x_values), names="value")
        self.y.observe(lambda _: self._fill_values(self.y, self.y_values), names="value")
        self.run_button.on_click(lambda _: self.run())
        self.stop_button.on_click(lambda _: self.stop())
        self._fill_values(self.x, self.x_values)
        self._fill_values(self.y, self.y_values)
        self.widget = widgets.VBox([
            widgets.HBox([self.x, self.x_values]), widgets.HBox([self.y, self.y_values]),
            widgets.HBox([self.launch, self.run_button, self.stop_button, self.progress]),
            self.message, widgets.HBox([self.status_map, self.value_map]),
        ])
        if len(names) < 2:
            self.run_button.disabled = True
            self.message.value = note_html("This scenario has fewer than two knobs a sweep can vary.")

    # -------------------------------------------------------------- controls
    def _fill_values(self, axis: widgets.Dropdown, box: widgets.Text) -> None:
        if axis.value is None:
            return
        k = self.knob_table[axis.value]
        config = self.explorer.config if self.explorer.config is not None else self.explorer.scenario.default_config()
        box.value = ", ".join(default_values(k, getattr(config, k.name)))

    def update(self) -> None:
        """Called when the tab is shown: nothing to recompute (the maps keep the last sweep)."""

    def _axis(self, box: widgets.Text) -> list[str]:
        return [v.strip() for v in box.value.split(",") if v.strip()]

    # --------------------------------------------------------------- running
    def run(self, *, wait: bool = False) -> None:
        """Start a sweep over the two chosen knobs (in a background thread; ``wait`` blocks until done)."""
        if self._thread is not None and self._thread.is_alive():
            return
        if self.x.value == self.y.value:
            self.message.value = note_html("Pick two different knobs for rows and columns.", FAIL_COLOUR)
            return
        xs, ys = self._axis(self.x_values), self._axis(self.y_values)
        if not xs or not ys:
            self.message.value = note_html("Give each knob at least one value (comma-separated).", FAIL_COLOUR)
            return
        self._base = self.explorer.config
        try:
            self.sweep = self._make_sweep({self.y.value: ys, self.x.value: xs})
        except Exception as exc:  # noqa: BLE001 - missing packages, a bad grid: say it in the tab
            self.message.value = note_html(f"cannot sweep: {exc}", FAIL_COLOUR)
            return
        self._build_maps(xs, ys)
        self.progress.max, self.progress.value, self.progress.bar_style = len(xs) * len(ys), 0, "info"
        self.run_button.disabled, self.stop_button.disabled = True, False
        self.message.value = note_html(f"sweeping {len(xs) * len(ys)} configurations ...")
        self._thread = threading.Thread(target=self._work, name="ts-explore-sweep-tab", daemon=True)
        self._thread.start()
        if wait:
            self._thread.join()

    def _make_sweep(self, grid: dict[str, list[str]]) -> Any:
        if self._factory is not None:
            return self._factory(self.explorer.scenario, grid, base=self._base, launch=self.launch.value,
                                 client=self.client)
        from ..sweeps import Sweep

        return Sweep(self.explorer.scenario, grid, base=self._base, launch=self.launch.value, client=self.client,
                     progress=False)

    def stop(self) -> None:
        """Cancel the running sweep; rows already computed stay on the maps and in :attr:`frame`."""
        if self.sweep is not None:
            self.sweep.cancel()

    def _work(self) -> None:
        try:
            self.frame = self.sweep.run(on_row=self._on_row)
            cancelled = self.frame.attrs.get("cancelled")
            counts = self.frame["status"].value_counts()
            summary = ", ".join(f"{int(counts[s])} {s}" for s in counts.index if counts[s])
            self.message.value = note_html(("stopped: " if cancelled else "done: ") + summary
                                           + ". Click a cell to load its configuration.")
            self.progress.bar_style = "warning" if cancelled else "success"
        except Exception as exc:  # noqa: BLE001 - a background failure must reach the user
            self.message.value = note_html(f"the sweep failed: {type(exc).__name__}: {exc}", FAIL_COLOUR)
            self.progress.bar_style = "danger"
        finally:
            self.run_button.disabled, self.stop_button.disabled = False, True

    # ------------------------------------------------------------------ maps
    def _build_maps(self, xs: list[str], ys: list[str]) -> None:
        self._cells, self._value_cells, self._rows = {}, {}, {}
        self.status_map.children = self._grid(xs, ys, self._cells, "status")
        self.value_map.children = self._grid(xs, ys, self._value_cells, "GB/s") if self.launch.value else ()

    def _grid(self, xs: list[str], ys: list[str], store: dict[tuple[str, str], widgets.Button],
              title: str) -> tuple[widgets.Widget, ...]:
        x_label, y_label = self.knob_table[self.x.value].label, self.knob_table[self.y.value].label
        head = widgets.HTML(f"<b>{html.escape(title)}</b>: {html.escape(y_label)} (rows) x "
                            f"{html.escape(x_label)} (columns)")
        cell_layout = widgets.Layout(width="74px", height="30px", margin="1px")
        rows = [widgets.HBox([widgets.Label("", layout=widgets.Layout(width="74px"))]
                             + [widgets.Label(x, layout=cell_layout) for x in xs])]
        for y in ys:
            buttons = []
            for x in xs:
                b = widgets.Button(description="", layout=cell_layout, tooltip="not run yet")
                b.style.button_color = PENDING_COLOUR
                b.on_click(lambda _, key=(y, x): self.load(*key))
                store[(y, x)] = b
                buttons.append(b)
            rows.append(widgets.HBox([widgets.Label(y, layout=widgets.Layout(width="74px"))] + buttons))
        return (head, *rows)

    def _key(self, cell: Any) -> tuple[str, str]:
        return str(cell.values[self.y.value]), str(cell.values[self.x.value])

    def _on_row(self, cell: Any, row: dict[str, Any]) -> None:
        key = self._key(cell)
        self._rows[key] = row
        button = self._cells.get(key)
        if button is not None:
            status = row.get("status") or "failed"
            button.style.button_color = STATUS_COLOURS.get(status, PENDING_COLOUR)
            button.description = status
            button.tooltip = f"{status}: {row.get('reason') or 'proven safe'}"[:400]
        self.progress.value = min(self.progress.max, self.progress.value + 1)
        if self._value_cells:
            self._shade_values()

    def _shade_values(self) -> None:
        values = {k: r["value"] for k, r in self._rows.items() if isinstance(r.get("value"), (int, float))}
        lo, hi = (min(values.values()), max(values.values())) if values else (0.0, 1.0)
        for key, button in self._value_cells.items():
            row = self._rows.get(key)
            if row is None:
                continue
            if key in values:
                button.style.button_color = value_colour(values[key], lo, hi)
                button.description = f"{values[key]:.0f}"
                button.tooltip = f"{values[key]:.1f} {row.get('unit') or ''}; ratio {row.get('ratio')}"
            else:
                button.style.button_color = STATUS_COLOURS.get(row.get("status") or "failed", PENDING_COLOUR)
                button.description = "-"
                button.tooltip = row.get("launch_reason") or row.get("reason") or "not launched"

    def load(self, y: str, x: str) -> None:
        """Load the configuration of cell (row ``y``, column ``x``) into the explorer's controls."""
        import dataclasses

        from ..scenarios.knobs import configure

        try:
            config = configure(self.explorer.scenario, {self.y.value: y, self.x.value: x},
                               base=self._base or self.explorer.config)
            self.explorer.set(**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)})
        except ValueError as exc:  # a refused cell: the coercion says why
            self.message.value = note_html(f"cannot load {self.y.value}={y}, {self.x.value}={x}: {exc}",
                                           FAIL_COLOUR)


__all__ = ["SweepTab", "default_values", "value_colour"]
