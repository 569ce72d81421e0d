"""Long proofs off the notebook's main thread: progress, a Cancel button, the verdict when it is done.

Each explorer update verifies with a small state cap so the panel answers at
once. When that quick pass stops at its cap (INCONCLUSIVE, nothing found), a
:class:`BackgroundProof` re-verifies the same configuration with our
checker's full cap in a thread, shows states, states/s and elapsed time, and
hands the finished outcome back; a newer change or the Cancel button stops
it (a cancelled proof stays INCONCLUSIVE, never SAFE).
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any, Callable

import ipywidgets as widgets

from .outcome import Outcome, compute

FOREGROUND_STATES = 200_000  # per search run in the quick pass of every update


class BackgroundProof:
    """One proof at a time in a daemon thread; ``on_done(config, outcome)`` receives its result."""

    def __init__(self, on_done: Callable[[Any, Outcome], None]) -> None:
        self._on_done = on_done
        self._thread: threading.Thread | None = None
        self._cancel: threading.Event | None = None
        self.label = widgets.HTML()
        self.cancel_button = widgets.Button(description="Cancel proof", icon="stop", button_style="warning",
                                            tooltip="stop the search: the verdict stays not proven")
        self.cancel_button.on_click(lambda _: self.cancel())
        self.widget = widgets.HBox([self.label, self.cancel_button], layout=widgets.Layout(display="none"))

    @property
    def running(self) -> bool:
        """True while a proof runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, scenario: Any, config: Any, build_context: Any) -> None:
        """Prove ``config`` in the background (stopping a proof still running)."""
        self.cancel()
        cancel = threading.Event()
        started = time.perf_counter()
        self._cancel = cancel
        self._show(f"proving in the background (the quick pass stopped at {FOREGROUND_STATES:,} states) ...")

        def progress(states: int, per_s: float, elapsed: float) -> None:
            if not cancel.is_set():
                self._show(f"proving in the background: {states:,} states, {per_s:,.0f} states/s, "
                           f"{time.perf_counter() - started:.1f} s")

        def run() -> None:
            outcome = compute(scenario, config, build_context, progress=progress, cancel=cancel)
            if cancel.is_set() and self._cancel is not cancel:
                return  # superseded by a newer change: its own proof reports
            self.widget.layout.display = "none"
            self._on_done(config, outcome)

        self._thread = threading.Thread(target=run, name="ts-explore-proof", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop the running proof (its verdict reports the search as cancelled)."""
        if self._cancel is not None:
            self._cancel.set()
        if not self.running:
            self.widget.layout.display = "none"

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the running proof; True when none is running any more."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def _show(self, text: str) -> None:
        self.label.value = f"<span style='font-family:sans-serif'>{html.escape(text)}</span>"
        self.widget.layout.display = ""


def needs_background_proof(outcome: Outcome) -> bool:
    """The quick pass stopped at its cap with nothing found: a longer search may still prove it."""
    v = outcome.verdict
    if v is None or v.status.value != "inconclusive" or v.findings or v.failed_checks:
        return False
    runs = v.scope.runs if v.scope is not None else ()
    return any(r.capped and not r.cancelled and r.engine != "TS exhaustive_checker" for r in runs)


__all__ = ["FOREGROUND_STATES", "BackgroundProof", "needs_background_proof"]
