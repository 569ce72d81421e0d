"""The explorer's Deadlock tab: step through the current counterexample, or through a gallery example.

A configuration without a deadlock still gets a working tab: a button opens
the stepper on a gallery case, so a newcomer sees what the tab is for. A
verdict that is UNSAFE because a check failed with no search finding (a
verification rule such as the GEMM's async-read rule, whose early release TS
cannot see) names the failed checks and offers the same repair search.
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
        if verdict.ok or not verdict.failed_checks:
            text = ("Verification passed: there is no deadlock to step through." if verdict.ok else
                    "The exhaustive search found no deadlock or race; the Verdict tab says why this is not SAFE.")
            return [widgets.HTML(panels.note_html(text)), *example_deadlock()]
        return [widgets.HTML(failed_checks_html(verdict, repairs=bool(extra))), *extra]
    return [Stepper(verdict).widget, *extra]


def failed_checks_html(verdict: Verdict, repairs: bool = False) -> str:
    """What makes a verdict without a counterexample UNSAFE: each failed check with its message and hint
    (``repairs``: the repair search follows, and says that its repairs pass these checks too)."""
    more = " Find repairs searches schedule edits that pass them too, each proven SAFE." if repairs else ""
    parts = [panels.note_html("There is no deadlock or race to step through: the schedule is UNSAFE because "
                              f"these checks failed.{more}", panels.WARN_COLOUR)]
    for check in verdict.failed_checks:
        parts.append(panels.message_html(check.title or check.name, check.message, check.hint))
    return "".join(parts)


__all__ = ["EXAMPLE_DEADLOCK", "deadlock_children", "example_deadlock", "failed_checks_html"]
