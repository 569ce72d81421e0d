"""The one place where model classes get their notebook display hooks and drawing methods.

The model is data: :mod:`ts_explore.model` and :mod:`ts_explore.analysis`
import neither :mod:`ts_explore.render` nor :mod:`ts_explore.app`. What a
notebook shows for a model object (``_repr_html_``) and the drawing methods
users call on it (``Timeline.plot``, ``Timeline.table``, ``Timeline.stalls``,
``Stalls.plot``) are attached here,
by :func:`attach`, which ``import ts_explore`` runs. Each hook imports its
renderer when first called, so importing the package stays cheap.

A launch result (:class:`ts_explore.gpu.result.LaunchResult`) gets its
``_repr_html_`` and ``plot_comparison`` here too, so that the GPU package
does not import its renderers. Importing the GPU package loads the DSL, which
``import ts_explore`` must not, so those hooks are named by module and class
(:data:`LATER`) and attached the moment that module is first imported.

>>> from ts_explore.model.verdict import Verdict
>>> Verdict._repr_html_.__module__
'ts_explore.app.hooks'
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
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


def launch_result_html(self: Any) -> str:
    """A launch result in a notebook (and the launch panel): summary, timing and bandwidth figures, the trace."""
    from ..render.launch_plots import result_html
    from ..render.timeline_html import timeline_html as render_timeline

    html = result_html(self)
    if self.timeline is not None:
        html += render_timeline(self.timeline)
    return html


def launch_result_plot_comparison(self: Any, cta: int | None = None, steps: int = 24) -> Any:
    """The schedule's predicted order beside the measured lanes of ``cta`` (default: the first CTA traced)."""
    from ..gpu.trace_compare import predicted_order
    from ..render.timeline import comparison_figure
    from ..scenarios import get

    timeline, plan = self.traced_run()
    if cta is None:
        cta = min((c for c, _ in timeline.warps()), default=0)
    order = predicted_order(get(self.scenario), self.config, plan, timeline, cta, self.edits)
    return comparison_figure(timeline, order, cta=cta, steps=steps)


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


# module -> (class, attribute, hook): classes of packages that ``import ts_explore`` does not load
LATER: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "ts_explore.gpu.result": (
        ("LaunchResult", "_repr_html_", launch_result_html),
        ("LaunchResult", "plot_comparison", launch_result_plot_comparison),
    ),
}


def _attach_later(module: ModuleType) -> None:
    """Set the :data:`LATER` hooks of ``module`` on its classes."""
    for cls_name, name, fn in LATER[module.__name__]:
        setattr(getattr(module, cls_name), name, fn)


class _AttachOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: hands a module of :data:`LATER` to the path finder and attaches its hooks once it
    is loaded; leaves ``sys.meta_path`` when every module of :data:`LATER` has been."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in LATER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _attach_later(module)
            if all(name in sys.modules for name in LATER) and self in sys.meta_path:
                sys.meta_path.remove(self)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def attach() -> None:
    """Give the model classes (and, when it is loaded, the launch result) their hooks and drawing methods.

    Idempotent: a second call attaches the same functions and installs no second finder (none at all once
    every module of :data:`LATER` is loaded).
    """
    for cls, name, fn in HOOKS:
        setattr(cls, name, fn)
    for module in LATER:
        if module in sys.modules:
            _attach_later(sys.modules[module])
    waiting = any(module not in sys.modules for module in LATER)
    if waiting and not any(isinstance(finder, _AttachOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AttachOnImport())


__all__ = ["HOOKS", "LATER", "attach", "launch_result_html", "launch_result_plot_comparison"]
