"""What the explorer shows: its status line, its tabs, and repairs shown in place of a schedule.

A mixin of :class:`~ts_explore.app.explorer.Explorer`: the explorer decides
*when* a tab is filled (only the visible one, after each change); this
module says *what* fills it, from the current :class:`~.outcome.Outcome`.
Applying a proven repair swaps the outcome shown for the repair's (its SAFE
verdict and drawings) until Undo.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..render.deps import dependency_graph
from ..render.diff import diff_graph
from . import panels
from .deadlock_tab import deadlock_children
from .outcome import Outcome

NOTHING_DRAWN = "Nothing to show: this configuration was not verified (the message above the tabs says why)."


class TabContents:
    """Tab filling and repair apply/undo for the explorer (uses its panes, outcome and status)."""

    _outcome: Outcome
    _unrepaired: Outcome | None
    _repair_sentence: str
    _applied_repair: Any
    _stale: set[str]
    _diff: Any

    def _show_status(self, outcome: Outcome, elapsed: float) -> None:
        adjusted = "".join(panels.note_html(a, panels.WARN_COLOUR) for a in self._adjusted)
        if outcome.problem is not None:
            headline, ok = f"not recorded: {outcome.problem.rule}", None
            self.message.value = adjusted + panels.problem_html(outcome.problem)
        elif outcome.error is not None and outcome.verdict is None:
            headline, ok = "not verified", None
            self.message.value = adjusted + panels.message_html("This configuration cannot be checked",
                                                                outcome.error, outcome.hint)
        else:
            assert outcome.verdict is not None
            ok = panels.verdict_state(outcome.verdict)
            headline = panels.headline(outcome.verdict)
            self.message.value = adjusted + "".join(panels.note_html(n) for n in outcome.notes)
        details = f"changes since last safe: {self._diff.summary()}" if self._diff is not None else ""
        with self.status.hold_sync():
            self.status.value = panels.status_html(ok=ok, headline=headline, details=details, elapsed_s=elapsed)

    def _repair_widgets(self, out: Outcome) -> list[Any]:
        """The repair panel under an UNSAFE counterexample, or the undo bar while a repair is applied."""
        from .repair_panel import RepairPanel, undo_bar

        if self._unrepaired is not None:
            return undo_bar(self._repair_sentence, self.undo_repair)
        if out.verdict is None or out.verdict.status.value != "unsafe" or out.task_set is None:
            return []
        config, scenario, ctx = out.config, self.scenario, self.build_context
        self.repair_panel = RepairPanel(out.verdict, lambda: scenario.build(config, ctx).verify_kwargs(),
                                        self.apply_repair)
        return [self.repair_panel.widget]

    def apply_repair(self, repair: Any) -> None:
        """Show a proven repair as the current view (its SAFE verdict and drawings); :meth:`undo_repair` returns."""
        if self._unrepaired is None:
            self._unrepaired = self._outcome
        self._repair_sentence = repair.sentence
        self._applied_repair = repair
        shown = dataclasses.replace(self._unrepaired, verdict=repair.proof, task_set=repair.proof.task_set, dot=None)
        self._show_current(dataclasses.replace(shown, dot=shown.drawing().source))

    def undo_repair(self) -> None:
        """Back to the schedule as the scenario built it."""
        if self._unrepaired is not None:
            shown, self._unrepaired = self._unrepaired, None
            self._show_current(shown)

    def _show_current(self, outcome: Outcome) -> None:
        self._outcome = outcome
        self._publish()
        self._show_status(outcome, 0.0)
        self._stale = set(self.tab_names)
        self._render_visible()

    # ---------------------------------------------------------------- panels
    def _render_visible(self) -> None:
        index = self.tabs.selected_index or 0
        name = self.tab_names[index]
        if name in self._stale:
            self._stale.discard(name)
            self.render(name)

    def render(self, name: str) -> None:
        """Fill one tab for the current outcome (tabs render when shown); errors show once, above the tabs."""
        out = self._outcome
        nothing = panels.note_html(NOTHING_DRAWN)
        if name == "schedule":
            self.panes[name].value = nothing if out.task_set is None else panels.svg_html(out.drawing())
        elif name == "changes":
            if out.task_set is None:
                self.panes[name].value = nothing
            elif self._diff is None:
                self.panes[name].value = panels.note_html(
                    "This is the last safe configuration; change a control to see which steps it adds, "
                    "removes or moves.")
            else:
                graph = diff_graph(out.task_set, self._diff)
                self.panes[name].value = panels.diff_html(self._diff, graph, "compared with the last safe configuration")
        elif name == "verdict":
            self.panes[name].value = nothing if out.verdict is None else panels.verdict_html(out.verdict)
        elif name == "dependencies":
            self.panes[name].value = nothing if out.task_set is None else panels.svg_html(
                dependency_graph(out.task_set))
        elif name == "deadlock":
            self.deadlock_box.children = deadlock_children(out.verdict, NOTHING_DRAWN, self._repair_widgets(out))
        elif name == "launch":
            # an applied repair is launched with its edits written onto the kernel's own build (proven per instance)
            repair = self._applied_repair if self._unrepaired is not None else None
            self.launch_panel.update(self.scenario, out.config, out.task_set if out.ok else None, repair=repair)
        elif name in self.extra_tabs:
            self.extra_tabs[name].update()
        else:
            raise ValueError(f"no tab named {name!r}; tabs: {', '.join(self.tab_names)}")


__all__ = ["NOTHING_DRAWN", "TabContents"]
