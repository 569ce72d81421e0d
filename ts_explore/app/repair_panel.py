"""The Deadlock tab's repairs: search on a click, list each proven repair with its drawing, apply and undo.

"Find repairs" runs :func:`ts_explore.repairs` on the current UNSAFE verdict
in a thread (a Cancel button stops it; the explorer stays usable
meanwhile). Each repair shows its sentence, its before/after drawing and an
"Apply" button that makes the repaired schedule the explorer's current view
(its SAFE verdict, drawing and dependencies); "Undo" goes back to the
schedule as the scenario built it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import ipywidgets as widgets

from ..render.repair import repair_graph
from . import panels


class RepairPanel:
    """Repairs of one verdict (``build`` makes its tasks afresh); ``apply(repair)`` shows one in the explorer."""

    def __init__(self, verdict: Any, build: Callable[[], dict[str, Any]], apply: Callable[[Any], None],
                 seconds: float = 2.0) -> None:
        self.verdict = verdict
        self.build = build
        self.apply = apply
        self.seconds = seconds
        self.found: Any = None
        self.cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self.find_button = widgets.Button(description="Find repairs", icon="wrench",
                                          tooltip="search small schedule edits and keep those proven SAFE")
        self.cancel_button = widgets.Button(description="Cancel", icon="stop", disabled=True)
        self.status = widgets.HTML()
        self.items = widgets.VBox()
        self.find_button.on_click(lambda _: self.search())
        self.cancel_button.on_click(lambda _: self.cancel.set())
        self.widget = widgets.VBox([widgets.HBox([self.find_button, self.cancel_button]), self.status, self.items])

    def search(self, block: bool = False) -> None:
        """Start the search (in a thread, or here with ``block``); the list fills when it ends."""
        if self._thread is not None and self._thread.is_alive():
            return
        self.find_button.disabled, self.cancel_button.disabled = True, False
        self.status.value = panels.note_html("searching small edits of the schedule ...")
        self._thread = threading.Thread(target=self._run, name="ts-explore-repairs", daemon=True)
        self._thread.start()
        if block:
            self.join()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the search; True when it is done."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is None or not self._thread.is_alive()

    def _progress(self, checked: int, found: int, elapsed: float) -> None:
        self.status.value = panels.note_html(f"searching: {checked} candidate schedule(s) checked, {found} proven "
                                             f"SAFE ({elapsed:.1f} s)")

    def _run(self) -> None:
        from ..repair import repairs

        try:
            self.found = repairs(self.verdict, self.build, seconds=self.seconds, progress=self._progress,
                                 cancel=self.cancel)
            self.status.value = panels.note_html(self.found.tried)
            self.items.children = [self._item(i, r) for i, r in enumerate(self.found, 1)]
        except Exception as exc:  # noqa: BLE001 - the explorer must stay usable
            self.status.value = panels.message_html("The repair search failed", f"{type(exc).__name__}: {exc}",
                                                    "Report this with the configuration.")
        finally:
            self.find_button.disabled, self.cancel_button.disabled = False, True

    def _item(self, rank: int, repair: Any) -> widgets.Widget:
        button = widgets.Button(description="Apply", icon="check",
                                tooltip="show the repaired schedule (proven SAFE) as the current view")
        button.on_click(lambda _: self.apply(repair))
        cost = f", +{repair.added_bytes} B shared memory" if repair.added_bytes else ""
        text = widgets.HTML(panels.note_html(f"{rank}. {repair.sentence} ({repair.size} step(s) touched{cost})"))
        return widgets.VBox([widgets.HBox([button, text]), widgets.HTML(panels.svg_html(repair_graph(repair)))])


def undo_bar(sentence: str, undo: Callable[[], None]) -> list[widgets.Widget]:
    """What the tab shows while a repair is applied: which one, and a button back."""
    button = widgets.Button(description="Undo", icon="undo", tooltip="back to the schedule as the scenario built it")
    button.on_click(lambda _: undo())
    return [widgets.HTML(panels.note_html(f"Showing a repair, proven SAFE: {sentence}")), button]


__all__ = ["RepairPanel", "undo_bar"]
