"""On a CUDA GPU, the explorer's Launch tab runs the configuration on screen and shows the result."""

from __future__ import annotations

from ts_explore.app.explorer import TABS, Explorer


def test_launch_tab_runs_the_current_config_and_refuses_clc_below_sm100() -> None:
    ex = Explorer("persistent_copy", debounce_s=0)
    ex.tabs.selected_index = TABS.index("launch")
    panel = ex.launch_panel
    assert not panel.button.disabled, panel.reasons.value
    panel.button.click()
    html = panel.result.value
    assert "GB/s" in html and "launch failed" not in html, html[:2000]
    assert not panel.button.disabled, "the button is usable again after a launch"

    ex.set(queue="clc")
    ex.tabs.selected_index = TABS.index("launch")
    from ts_explore.gpu import device_info

    if device_info().cc < (10, 0):
        assert panel.button.disabled and "sm_100" in panel.reasons.value
