"""The explorer, driven headless: set control values, watch the schedule, verdict and messages follow."""

from __future__ import annotations

import asyncio

import ipywidgets as widgets
import pytest
from explorer_support import COPY

import ts_explore
from ts_explore.analysis.diff import Change
from ts_explore.app.explorer import Explorer
from ts_explore.model import QueueKind
from ts_explore.scenarios import CATALOG


@pytest.fixture()
def ex() -> Explorer:
    return Explorer(COPY, debounce_s=0)


def test_public_name_and_catalog_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CATALOG, COPY.name, COPY)
    explorer = ts_explore.Explorer(COPY.name, debounce_s=0, rows=6)
    assert explorer.scenario is COPY and explorer.config.rows == 6 and explorer.controls["rows"].value == 6
    with pytest.raises(KeyError, match="no scenario named 'nope'"):
        Explorer("nope")


def test_controls_follow_the_config_fields(ex: Explorer) -> None:
    c = ex.controls
    assert list(c) == ["rows", "stages", "queue", "skip_tiles", "forget_commit", "queue_ops_in_skippable",
                       "tile_lengths", "unroll"]
    assert isinstance(c["rows"], widgets.IntSlider)
    assert (c["rows"].min, c["rows"].max, c["rows"].continuous_update) == (1, 16, False)
    assert c["rows"].description == "rows per tile" and c["rows"].tooltip == "domain loop trip count"
    assert isinstance(c["queue"], widgets.Dropdown)
    assert [label for label, _ in c["queue"].options] == ["none", "static", "clc"]
    assert isinstance(c["skip_tiles"], widgets.Checkbox)
    assert isinstance(c["tile_lengths"], widgets.Text) and c["tile_lengths"].value == "3, 4"
    assert [label for label, _ in c["unroll"].options] == ["none", "two"]


def test_unknown_override_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no setting colour; its settings are: .*queue"):
        Explorer(COPY, debounce_s=0, colour=3)


def test_override_beyond_the_knob_range_is_refused_by_its_label() -> None:
    with pytest.raises(ValueError, match="rows per tile: 40 is out of range; must be between 1 and 16"):
        Explorer(COPY, debounce_s=0, rows=40)


def test_initial_state_is_verified_and_drawn(ex: Explorer) -> None:
    assert ex.verdict.ok and ex.error is None and ex.problem is None
    assert "work_tile_loop(wq" in ex.dot and "[static]" in ex.dot
    assert "<svg" in ex.panes["schedule"].value
    assert "&#10004;" in ex.status.value and ex.last_safe_config == ex.config


def test_queue_dropdown_redraws_with_a_scheduler_task(ex: Explorer) -> None:
    before = ex.dot
    ex.controls["queue"].value = QueueKind.CLC
    assert ex.config.queue is QueueKind.CLC and ex.dot != before
    assert "Task scheduler" in ex.dot and "fetch_work_tile" in ex.dot and "[clc]" in ex.dot
    assert ex.verdict.ok
    ex.controls["queue"].value = QueueKind.NONE
    assert "work_tile_loop" not in ex.dot and "Task scheduler" not in ex.dot


def test_slider_changes_the_loop_bounds(ex: Explorer) -> None:
    ex.controls["rows"].value = 9
    assert "domain_loop(0, 9, 1" in ex.dot and "[9 iterations]" in ex.dot


def test_failed_verification_shows_in_the_verdict_and_recovers(ex: Explorer) -> None:
    from ts_explore.render import style

    ex.controls["forget_commit"].value = True
    assert ex.verdict is not None and not ex.verdict.ok and ex.verdict.deadlocks
    assert "&#10008;" in ex.status.value and "credit simulation blocked" in ex.status.value
    assert f'color="{style.BLOCKED_BORDER}"' in ex.dot  # the blocked steps are marked in the drawing
    ex.tabs.selected_index = 2  # Verdict: every check, the failing ones crossed out
    failing = [c for c in ex.verdict.checks if not c.passed]
    assert failing and all(c.title in ex.panes["verdict"].value for c in ex.verdict.checks)
    assert "UNSAFE" in ex.panes["verdict"].value and "&#10007;" in ex.panes["verdict"].value
    ex.tabs.selected_index = 3  # Deadlock: the counterexample stepper
    stepper = ex.deadlock_box.children[0]  # the repairs panel follows it
    sliders = [w for w in stepper.children for w in getattr(w, "children", ()) if isinstance(w, widgets.IntSlider)]
    assert sliders and sliders[0].max == len(ex.verdict.deadlocks[0].interleaving)
    ex.tabs.selected_index = 2
    ex.controls["forget_commit"].value = False
    assert ex.verdict.ok and "&#10004;" in ex.status.value
    assert "SAFE" in ex.panes["verdict"].value and "&#10007;" not in ex.panes["verdict"].value  # redrawn
    ex.tabs.selected_index = 3
    assert "no deadlock to step through" in ex.deadlock_box.children[0].value


def test_grammar_error_shows_the_problem_box_then_recovers(ex: Explorer) -> None:
    ex.set(skip_tiles=True)
    assert ex.verdict.ok
    ex.controls["queue_ops_in_skippable"].value = True
    assert ex.problem is not None and ex.problem.rule == "workqueue-in-skippable"
    assert ex.dot is None and ex.verdict is None
    assert "How to fix" in ex.message.value and "skippable" in ex.message.value
    panes = [p.value for p in ex.panes.values()] + [ex.status.value]
    assert not any("How to fix" in p for p in panes), "the error box appears once, above the tabs"
    assert "not verified" in ex.panes["schedule"].value
    ex.controls["queue_ops_in_skippable"].value = False
    assert ex.problem is None and ex.verdict.ok and ex.message.value == ""
    assert "<svg" in ex.panes["schedule"].value


def test_bad_combination_from_the_scenario_check(ex: Explorer) -> None:
    ex.set(queue=QueueKind.NONE, skip_tiles=True)
    assert "skippable tiles need a work queue" in ex.error
    assert "skippable tiles need a work queue" in ex.message.value and ex.verdict is None
    ex.controls["skip_tiles"].value = False
    assert ex.error is None and ex.verdict.ok


def test_tuple_text_is_validated(ex: Explorer) -> None:
    ex.controls["tile_lengths"].value = "3, x"
    assert "'x'" in ex.error and "comma-separated whole numbers" in ex.message.value
    ex.controls["tile_lengths"].value = "3, 99"
    assert "between 0 and 64" in ex.error
    ex.controls["tile_lengths"].value = "5, 6"
    assert ex.error is None and ex.config.tile_lengths == (5, 6) and ex.verdict.ok


def test_build_crash_in_a_scenario_is_shown_not_raised() -> None:
    def broken(cfg, ctx):
        if cfg.rows == 3:
            raise ZeroDivisionError("division by zero in my scenario")
        return COPY.build_fn(cfg, ctx)

    from dataclasses import replace

    explorer = Explorer(replace(COPY, build_fn=broken), debounce_s=0)
    explorer.controls["rows"].value = 3
    assert explorer.problem is not None and "division by zero" in explorer.message.value
    explorer.controls["rows"].value = 5
    assert explorer.verdict.ok


def test_changes_tab_compares_with_the_last_safe_configuration(ex: Explorer) -> None:
    ex.tabs.selected_index = 1
    assert "last safe configuration" in ex.panes["changes"].value  # nothing to compare yet
    ex.controls["forget_commit"].value = True  # unsafe: compared with the safe start
    assert [s.title for s in ex.diff.task("producer").of(Change.REMOVED)] == ["smem.commit"]
    assert "<s>smem.commit</s>" in ex.panes["changes"].value or "smem.commit" in ex.panes["changes"].value
    assert "changes since last safe" in ex.status.value
    ex.controls["queue"].value = QueueKind.CLC  # still unsafe: still compared with the safe start
    assert ex.diff.task("scheduler").status == "added"
    assert ex.last_safe_config.queue is QueueKind.STATIC


def test_back_to_last_safe_sets_all_controls_in_one_update(ex: Explorer) -> None:
    ex.controls["queue"].value = QueueKind.CLC
    safe = ex.config
    ex.controls["forget_commit"].value = True
    ex.controls["rows"].value = 9
    assert not ex.back_button.disabled
    updates = ex.updates
    ex.back_button.click()
    assert ex.updates == updates + 1
    assert ex.config == safe and ex.controls["rows"].value == 4 and not ex.controls["forget_commit"].value
    assert ex.back_button.disabled


def test_results_are_cached_per_configuration(ex: Explorer) -> None:
    first = ex.verdict
    ex.controls["rows"].value = 7
    ex.controls["rows"].value = 4
    assert ex.verdict is first


def test_tabs_render_when_shown(ex: Explorer) -> None:
    assert ex.panes["dependencies"].value == ""
    ex.tabs.selected_index = 4
    assert "<svg" in ex.panes["dependencies"].value and "smem" in ex.panes["dependencies"].value
    ex.controls["queue"].value = QueueKind.CLC  # the visible tab follows the change
    assert "clc work queue" in ex.panes["dependencies"].value


def test_svg_ids_are_unique_across_panels(ex: Explorer) -> None:
    import re

    ex.controls["rows"].value = 5
    ex.tabs.selected_index = 1
    ex.tabs.selected_index = 4
    ids = [i for name in ("schedule", "changes", "dependencies")
           for i in re.findall(r'id="([^"]+)"', ex.panes[name].value)]
    assert ids and len(ids) == len(set(ids))


def test_the_explorer_displays_as_a_widget(ex: Explorer) -> None:
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_launch_tab_explains_why_it_cannot_launch(ex: Explorer) -> None:
    from ts_explore.gpu.probe import Probe

    ex.launch_panel._probe = lambda: Probe("no_driver", "no NVIDIA driver could be loaded")
    ex.tabs.selected_index = 5
    assert ex.launch_panel.button.disabled
    assert "no NVIDIA driver" in ex.launch_panel.reasons.value


def test_debounce_coalesces_changes_on_a_running_loop() -> None:
    explorer = Explorer(COPY, debounce_s=0.05)

    async def drive() -> tuple[int, int]:
        start = explorer.updates
        explorer.controls["rows"].value = 5
        explorer.controls["rows"].value = 6
        explorer.controls["rows"].value = 7
        pending = explorer.updates - start
        await asyncio.sleep(0.2)
        return pending, explorer.updates - start

    pending, done = asyncio.run(drive())
    assert (pending, done) == (0, 1)
    assert "domain_loop(0, 7, 1" in explorer.dot


def test_values_can_be_given_by_name_and_bad_values_are_named() -> None:
    explorer = Explorer(COPY, debounce_s=0, queue="clc", tile_lengths=[2, 3])
    assert explorer.config.queue is QueueKind.CLC and explorer.config.tile_lengths == (2, 3)
    with pytest.raises(ValueError, match="queue: 'fast' is not one of none, static, clc"):
        explorer.set(queue="fast", rows=3)
    assert explorer.config.rows == 4  # nothing changed
    with pytest.raises(ValueError, match="rows per tile: 'many' is not a whole number"):
        Explorer(COPY, debounce_s=0, rows="many")


def test_a_function_set_from_code_is_shown_and_survives_other_changes() -> None:
    explorer = Explorer("persistent_copy", debounce_s=0)  # skip_fn: a callable field
    assert explorer.controls["skip_fn"].value == ""

    def every_third(tile):
        return tile % 3 == 0

    explorer.set(skip="user callable", skip_fn=every_third)
    assert explorer.config.skip_fn is every_third and "every_third" in explorer.controls["skip_fn"].value
    assert explorer.verdict is not None
    explorer.controls["overlaunch"].value = 3
    assert explorer.error is None and explorer.config.skip_fn is every_third


def test_an_extra_tab_joins_with_one_entry_and_updates_when_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from ts_explore.app import explorer as module

    class CountingTab:
        def __init__(self, explorer: Explorer) -> None:
            self.explorer, self.widget, self.seen = explorer, widgets.HTML(), []

        def update(self) -> None:
            self.seen.append(self.explorer.config.rows)

    monkeypatch.setattr(module, "EXTRA_TABS", (("counting", "Counting", CountingTab),))
    ex = Explorer(COPY, debounce_s=0)
    tab = ex.extra_tabs["counting"]
    assert ex.tabs.titles[-1] == "Counting" and ex.tabs.children[-1] is tab.widget and tab.seen == []
    ex.tabs.selected_index = len(ex.tab_names) - 1
    ex.controls["rows"].value = 6
    assert tab.seen == [4, 6]
