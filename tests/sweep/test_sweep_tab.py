"""The explorer's Sweep tab, driven headless: two knobs, a sweep on the test cluster, status and value
maps filled as rows arrive, a click loads that cell, Stop keeps the rows computed."""

from __future__ import annotations

from typing import Any

import pandas as pd

import sweep_scenarios as ss
from ts_explore.app.explorer import Explorer
from ts_explore.app.sweep_tab import STATUS_COLOURS, SweepTab


def _sweep_tab(ex: Explorer) -> tuple[SweepTab, int]:
    """The explorer's Sweep tab and its index (a built-in tab, or one registered through EXTRA_TABS)."""
    names = getattr(ex, "tab_names", None)
    if names is not None and "sweep" in getattr(ex, "extra_tabs", {}):
        return ex.extra_tabs["sweep"], names.index("sweep")
    from ts_explore.app.explorer import TABS

    return ex.sweep_tab, TABS.index("sweep")


def test_sweep_two_knobs_see_the_map_and_load_a_cell(client: Any) -> None:
    ex = Explorer("pipelined_copy", debounce_s=0, ctas=2)
    tab, index = _sweep_tab(ex)
    assert ex.tabs.children[index] is tab.widget and ex.tabs.titles[index] == "Sweep"
    tab.client = client
    tab.x.value, tab.y.value = "store_warps", "stages"
    assert tab.x_values.value == "1, 2, 4, 8, 16" and tab.y_values.value == "1, 2, 3, 4, 5, 6, 7, 8"
    tab.x_values.value, tab.y_values.value = "4, 64", "1, 3"
    tab.run(wait=True)
    assert tab.progress.value == 4 and tab.progress.bar_style == "success"
    assert len(tab.frame) == 4 and "done: 2 safe, 2 refused" in tab.message.value
    assert tab._cells[("3", "4")].style.button_color == STATUS_COLOURS["safe"]
    refused = tab._cells[("1", "64")]
    assert refused.style.button_color == STATUS_COLOURS["refused"] and "warps of the store task" in refused.tooltip
    tab._cells[("3", "4")].click()  # loads stages=3, store_warps=4; the other knobs as swept (ctas=2)
    assert (ex.config.stages, ex.config.store_warps, ex.config.ctas) == (3, 4, 2)
    assert ex.verdict is not None and ex.verdict.ok
    tab._cells[("1", "64")].click()
    assert "cannot load" in tab.message.value and ex.config.stages == 3


def test_value_map_shades_launch_results_and_stop_keeps_rows() -> None:
    class FakeSweep:
        """Stands in for a launch sweep on GPUs: rows with GB/s, then a stop after three cells."""

        def __init__(self, scenario: Any, grid: dict[str, list[str]], **kwargs: Any) -> None:
            self.grid, self.kwargs, self.stopped = grid, kwargs, False

        def cancel(self) -> None:
            self.stopped = True

        def run(self, on_row: Any) -> pd.DataFrame:
            rows = []
            (yname, ys), (xname, xs) = self.grid.items()
            for i, (y, x) in enumerate((y, x) for y in ys for x in xs):
                if self.stopped:
                    break
                cell = type("Cell", (), {"values": {yname: y, xname: x}})()
                row = {"status": "safe", "reason": "", "value": 1000.0 * (i + 1), "unit": "GB/s", "ratio": 0.5}
                on_row(cell, row)
                rows.append(row)
                if i == 2:
                    tab.stop()
            df = pd.DataFrame(rows)
            df.attrs["cancelled"] = self.stopped
            return df

    ex = Explorer(ss.GALLERY, debounce_s=0)
    tab = SweepTab(ex, sweep_factory=FakeSweep)
    tab.x.value, tab.y.value = "n", "pattern"
    tab.x_values.value, tab.y_values.value = "1, 2", "cross_wait, self_wait"
    tab.launch.value = True
    tab.run(wait=True)
    assert tab.sweep.kwargs["launch"] is True and tab.sweep.kwargs["base"] == ex.config
    assert tab.progress.value == 3 and tab.progress.bar_style == "warning" and "stopped" in tab.message.value
    low, high = tab._value_cells[("cross_wait", "1")], tab._value_cells[("self_wait", "1")]
    assert (low.description, high.description) == ("1000", "3000")
    assert low.style.button_color == "#deebf7" and high.style.button_color == "#08519c"
    assert tab._value_cells[("self_wait", "2")].style.button_color == "#eeeeee"  # never ran
