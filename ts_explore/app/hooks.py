"""The one place where model classes get their notebook display hooks and drawing methods.

The model is data: :mod:`ts_explore.model` and :mod:`ts_explore.analysis`
import neither :mod:`ts_explore.render` nor :mod:`ts_explore.app`. What a
notebook shows for a model object (``_repr_html_``) and the drawing methods
users call on it (``Timeline.plot``, ``Timeline.table``, ``Timeline.stalls``,
``Stalls.plot``) are attached here,
by :func:`attach`, which ``import ts_explore`` runs. Each hook imports its
renderer when first called, so importing the package stays cheap.

>>> from ts_explore.model.verdict import Verdict
>>> Verdict._repr_html_.__module__
'ts_explore.app.hooks'
"""

from __future__ import annotations

from typing import Any

from ..analysis.stalls import Stalls
from ..analysis.timeline import StepTable
from ..model.hang import HangReport
from ..model.recording import Recording
from ..model.timeline import Timeline
from ..model.verdict import Verdict


def verdict_html(self: Verdict) -> str:
    """A Verdict in a notebook: the check table, findings, scope and TS's raw output."""
    from ..render.verdict_html import verdict_html as render

    return render(self)


def timeline_html(self: Timeline) -> str:
    """A Timeline in a notebook: its summary, lanes and step table."""
    from ..render.timeline_html import timeline_html as render

    return render(self)


def hang_html(self: HangReport) -> str:
    """A hang report in a notebook: each warp's last step beside the verifier's prediction."""
    from ..render.timeline_html import hang_html as render

    return render(self)


def step_table_html(self: StepTable) -> str:
    """A step table in a notebook."""
    from ..render.timeline_html import table_html

    return table_html(self)


def recording_mimebundle(self: Recording, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """A Recording in a notebook: the tree with its routes, under the error box when TS or a Task refuses it."""
    from ..render.display import mimebundle
    from ..render.recording import recording_html

    if self.schedule is None:
        assert self.error is not None
        return {"text/html": self.error.to_html(), "text/plain": str(self.error)}
    bundle = mimebundle(self.tree, text=str(self.schedule))
    bundle["text/html"] = recording_html(self.error, self.unrouted, bundle.get("text/html", ""))
    if self.error is not None:
        bundle["text/plain"] = f"{self.error}\n\n{bundle['text/plain']}"
    return bundle


def timeline_plot(self: Timeline, cta: int | None = None, **kwargs: Any) -> Any:
    """Lanes per warp coloured like the diagrams (a matplotlib Figure)."""
    from ..render.timeline import timeline_figure

    return timeline_figure(self, cta=cta, **kwargs)


def timeline_table(self: Timeline) -> StepTable:
    """Per task and step: count, mean duration, time blocked, share of the warps' time."""
    from ..analysis.timeline import step_table

    return step_table(self)


def timeline_stalls(self: Timeline) -> Stalls:
    """Where warps wait, per pipeline and stage, the critical path and the bound in a sentence."""
    from ..analysis.stalls import stalls

    return stalls(self)


def stalls_plot(self: Stalls, **kwargs: Any) -> Any:
    """Lanes with each wait coloured by its pipeline, and the wait share per pipeline (a Figure)."""
    from ..render.stalls import stalls_figure

    return stalls_figure(self, **kwargs)


def stalls_html(self: Stalls) -> str:
    """A stall report in a notebook."""
    from ..render.stalls import stalls_html as render

    return render(self)


HOOKS: tuple[tuple[type, str, Any], ...] = (
    (Verdict, "_repr_html_", verdict_html),
    (Timeline, "_repr_html_", timeline_html),
    (Timeline, "plot", timeline_plot),
    (Timeline, "table", timeline_table),
    (Timeline, "stalls", timeline_stalls),
    (Stalls, "plot", stalls_plot),
    (Stalls, "_repr_html_", stalls_html),
    (HangReport, "_repr_html_", hang_html),
    (Recording, "_repr_mimebundle_", recording_mimebundle),
    (StepTable, "_repr_html_", step_table_html),
)


def attach() -> None:
    """Give the model classes their display hooks and drawing methods (idempotent)."""
    for cls, name, fn in HOOKS:
        setattr(cls, name, fn)


__all__ = ["HOOKS", "attach"]
