"""The explorer's Deadlock tab: find repairs, apply one (the view turns SAFE), undo; cancel leaves it usable."""

from __future__ import annotations

from ts_explore.app.explorer import Explorer

from explorer_support import COPY


def _deadlock_tab(ex: Explorer) -> None:
    ex.tabs.selected_index = ex.tab_names.index("deadlock")
    ex.render("deadlock")


def test_apply_shows_the_repaired_schedule_and_undo_returns() -> None:
    ex = Explorer(COPY, debounce_s=0, forget_commit=True)
    assert ex.verdict is not None and ex.verdict.status.value == "unsafe"
    _deadlock_tab(ex)
    panel = ex.repair_panel
    assert panel is not None and panel.widget in ex.deadlock_box.children
    panel.search(block=True)
    assert panel.found, panel.status.value
    broken_dot = ex.dot
    ex.apply_repair(panel.found[0])
    assert ex.verdict.ok and ex.dot != broken_dot  # verified and drawn
    assert "Showing a repair" in ex.deadlock_box.children[0].value
    ex.render("launch")  # the Launch tab launches the applied repair (test_repair_launch.py launches one)
    assert ex.launch_panel._repair is panel.found[0]
    ex.undo_repair()
    assert ex.verdict.status.value == "unsafe" and ex.dot == broken_dot


def test_cancel_leaves_the_explorer_usable() -> None:
    ex = Explorer(COPY, debounce_s=0, forget_commit=True)
    _deadlock_tab(ex)
    panel = ex.repair_panel
    panel.cancel.set()
    panel.search(block=True)
    assert "cancelled" in panel.status.value and not panel.find_button.disabled
    ex.set(forget_commit=False)
    assert ex.verdict is not None and ex.verdict.ok and ex.state == "idle"
