"""The explorer's Deadlock tab: step through the current counterexample, or through a gallery example.

A configuration without a deadlock still gets a working tab: a button opens
the stepper on a gallery case, so a newcomer sees what the tab is for.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ..model.verdict import Verdict
from . import panels
from .stepper import Stepper

EXAMPLE_DEADLOCK = "cross_wait"  # the gallery case offered when a configuration has no deadlock


def example_deadlock() -> list[widgets.Widget]:
    """A button that steps through a gallery deadlock (verified when clicked), and where it goes."""
    from .. import gallery
    from ..verification.verify import verify

    case = gallery.get(EXAMPLE_DEADLOCK)
    button = widgets.Button(description="Step through an example deadlock", icon="play",
                            tooltip=f"the gallery's {case.name!r}: {case.title}", layout=widgets.Layout(width="auto"))
    holder = widgets.VBox()

    def show(_: Any) -> None:
        holder.children = [widgets.HTML(panels.note_html(f"Gallery case {case.name!r}: {case.title}. {case.fix}")),
                           Stepper(verify(**case.broken())).widget]
        button.disabled = True

    button.on_click(show)
    return [button, holder]


def deadlock_children(verdict: Verdict | None, nothing: str, repairs: Any = None) -> list[widgets.Widget]:
    """The tab's widgets for ``verdict`` (``nothing``: the note for a configuration that was not verified).

    ``repairs``: widgets to show under the counterexample (the repair panel, or an applied repair's undo bar).
    """
    extra = list(repairs or [])
    if extra and verdict is not None and verdict.ok:  # a repair is applied: say which, offer undo
        return extra
    if verdict is None:
        return [widgets.HTML(panels.note_html(nothing))]
    if not verdict.findings:
        text = ("Verification passed: there is no deadlock to step through." if verdict.ok else
                "The exhaustive search found no deadlock or race; the failing checks are in the Verdict tab.")
        return [widgets.HTML(panels.note_html(text)), *example_deadlock()]
    return [Stepper(verdict).widget, *extra]


__all__ = ["EXAMPLE_DEADLOCK", "deadlock_children", "example_deadlock"]
