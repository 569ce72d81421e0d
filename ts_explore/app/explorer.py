"""``ts_explore.Explorer``: turn a scenario's knobs and see the schedule re-recorded, re-verified, redrawn.

>>> ex = ts_explore.Explorer("persistent_copy", queue=QueueKind.CLC)   # doctest: +SKIP
>>> ex                                                                  # doctest: +SKIP

Every control change runs one update: read the config, let the scenario check
it, build (record) the tasks, verify them, draw. Anything that goes wrong on
the way is shown in the panel, and the next valid change works again.
Results are cached per configuration and drawings per DOT text.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterator

import ipywidgets as widgets

from ..analysis.diff import ScheduleDiff, diff_task_sets
from ..reader import problem_from_exception
from ..reader.verify import verify
from ..model import Problem, TaskSet
from ..model.verdict import Verdict
from ..render.deps import dependency_graph
from ..render.diff import diff_graph
from ..render.tree import schedule_graph
from ..scenarios.base import BuildContext, Built, Scenario, get
from . import controls as ctl
from . import panels
from .launch_panel import LaunchPanel
from .stepper import Stepper
from .sweep_tab import SweepTab

TABS = ("schedule", "changes", "verdict", "deadlock", "dependencies", "launch", "sweep")
TAB_TITLES = {
    "schedule": "Schedule",
    "changes": "Changes",
    "verdict": "Verdict",
    "deadlock": "Deadlock",
    "dependencies": "Dependencies",
    "launch": "Launch",
    "sweep": "Sweep",
}
RESULT_CACHE_SIZE = 64


def _verify(built: Built) -> Verdict:
    """Verify a freshly built task set; the one place the explorer asks for a Verdict."""
    return verify(**built.verify_kwargs())


@dataclass(frozen=True)
class Outcome:
    """What one configuration gave: a verdict and drawing, or the error that stopped it."""

    config: Any
    verdict: Verdict | None = None
    task_set: TaskSet | None = None
    dot: str | None = None
    problem: Problem | None = None  # TS rejected the schedule (grammar / Task construction)
    error: str | None = None  # bad input, impossible combination, or a failed verification call
    hint: str = ""
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict is not None and self.task_set is not None and bool(self.verdict.ok)


class Explorer:
    """Widgets for every config field of a scenario, and panels that follow them.

    ``scenario`` is a :class:`~ts_explore.scenarios.Scenario` or its catalog
    name; ``overrides`` set initial values (unknown names raise a ValueError
    listing the valid ones; enum values may be given by name, ``queue="clc"``). ``debounce_s`` coalesces changes that arrive
    within that many seconds (0: update synchronously, as tests do).
    """

    def __init__(self, scenario: Scenario | str, *, build_context: BuildContext | None = None,
                 debounce_s: float = 0.15, **overrides: Any) -> None:
        self.scenario = get(scenario) if isinstance(scenario, str) else scenario
        if not isinstance(self.scenario, Scenario):
            raise TypeError(f"Explorer takes a Scenario or a catalog name; got {type(scenario).__name__}")
        self.build_context = build_context or BuildContext()
        self.debounce_s = debounce_s
        defaults = self.scenario.config()
        self.scenario.config(**overrides)  # unknown names: a ValueError listing the valid ones
        self._config = dataclasses.replace(defaults, **ctl.coerce_values(defaults, overrides))
        self._types = ctl.field_types(type(self._config))
        self.controls: dict[str, widgets.Widget] = ctl.make_controls(self._config)
        self._outcome = Outcome(self._config)
        self._safe: Outcome | None = None  # the last configuration that verified
        self._baseline: Outcome | None = None  # what the current diff compares against
        self._diff: ScheduleDiff | None = None
        self._cache: OrderedDict[Any, Outcome] = OrderedDict()
        self._stale: set[str] = set(TABS)
        self._batching = False
        self._pending: asyncio.TimerHandle | None = None
        self.updates = 0  # how many times the panels were recomputed
        self.seconds = 0.0  # how long the last update took
        self._build_widgets()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.refresh()

    # ----------------------------------------------------------------- state
    @property
    def config(self) -> Any:
        """The configuration the panels show (the last one the controls could express)."""
        return self._outcome.config

    @property
    def verdict(self) -> Verdict | None:
        """The current Verdict, or None when the configuration did not build."""
        return self._outcome.verdict

    @property
    def dot(self) -> str | None:
        """DOT text of the current schedule drawing, or None when nothing recorded."""
        return self._outcome.dot

    @property
    def problem(self) -> Problem | None:
        """The TS grammar problem that stopped recording, if any."""
        return self._outcome.problem

    @property
    def error(self) -> str | None:
        """The message shown for the current configuration, if it could not be verified."""
        if self._outcome.problem is not None:
            return str(self._outcome.problem)
        return self._outcome.error

    @property
    def task_set(self) -> TaskSet | None:
        return self._outcome.task_set

    @property
    def diff(self) -> ScheduleDiff | None:
        """Changes from the last safe configuration to the current one (None when there is none to compare)."""
        return self._diff

    @property
    def last_safe_config(self) -> Any:
        return self._safe.config if self._safe is not None else None

    # --------------------------------------------------------------- widgets
    def _build_widgets(self) -> None:
        title = f"<b>{self.scenario.title}</b>"
        if self.scenario.description:
            title += f"<div style='color:#555'>{self.scenario.description}</div>"
        self.header = widgets.HTML(f"<div style='font-family:sans-serif'>{title}</div>")
        self.back_button = widgets.Button(description="Back to last safe", icon="undo", disabled=True,
                                          tooltip="Set every control to the last configuration that verified")
        self.back_button.on_click(lambda _: self.reset())
        self.status = widgets.HTML()
        self.message = widgets.HTML()
        self.panes: dict[str, widgets.HTML] = {
            name: widgets.HTML() for name in ("schedule", "changes", "verdict", "dependencies")
        }
        self.deadlock_box = widgets.VBox()
        self.launch_panel = LaunchPanel()
        self.sweep_tab = SweepTab(self)
        children = [
            self.panes["schedule"], self.panes["changes"], self.panes["verdict"],
            self.deadlock_box, self.panes["dependencies"], self.launch_panel.widget, self.sweep_tab.widget,
        ]
        self.tabs = widgets.Tab(children=children, titles=tuple(TAB_TITLES[n] for n in TABS))
        self.tabs.observe(lambda _: self._render_visible(), names="selected_index")
        controls_box = widgets.VBox(list(self.controls.values()) + [self.back_button],
                                    layout=widgets.Layout(min_width="440px"))
        self.widget = widgets.VBox([
            self.header,
            widgets.HBox([controls_box, widgets.VBox([self.status, self.message])]),
            self.tabs,
        ])
        self.widget.add_class("ts-explore-explorer")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # --------------------------------------------------------------- changes
    def _on_change(self, _: Any) -> None:
        if self._batching:
            return
        if self.debounce_s <= 0:
            self.refresh()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (plain Python): update now
            self.refresh()
            return
        if self._pending is not None:
            self._pending.cancel()
        self._pending = loop.call_later(self.debounce_s, self._fire)

    def _fire(self) -> None:
        self._pending = None
        self.refresh()

    @contextlib.contextmanager
    def _batch(self) -> Iterator[None]:
        """Set several controls with one update at the end (each control syncs once)."""
        self._batching = True
        try:
            with contextlib.ExitStack() as stack:
                for control in self.controls.values():
                    stack.enter_context(control.hold_sync())
                yield
        finally:
            self._batching = False
        self.refresh()

    def set(self, **values: Any) -> None:
        """Set several config fields at once (one update); unknown names raise a ValueError."""
        self.scenario.config(**values)  # validates the names
        values = ctl.coerce_values(self._config, values)  # and the values, before any control changes
        fields = {f.name: f for f in dataclasses.fields(self._config)}
        # values a widget cannot hold as such (functions given from code): carry them over directly
        fixed = {k: v for k, v in values.items()
                 if ctl.kind_of(self._types[k], getattr(self._config, k)) in ("fixed", "callable")}
        self._config = dataclasses.replace(self._config, **fixed)
        with self._batch():
            for name, value in values.items():
                ctl.show_value(self.controls[name], fields[name], self._types[name], value)

    def reset(self) -> None:
        """Put every control back to the last configuration that verified."""
        if self._safe is None:
            return
        self.set(**{f.name: getattr(self._safe.config, f.name) for f in dataclasses.fields(self._safe.config)})

    # ---------------------------------------------------------------- update
    def refresh(self) -> None:
        """Read the controls and recompute everything now (the debounce calls this)."""
        self.updates += 1
        start = time.perf_counter()
        try:
            outcome = self._outcome_for_controls()
            self._show(outcome, time.perf_counter() - start)
        except Exception as exc:  # noqa: BLE001 - a bug must not freeze the panel
            self._outcome = Outcome(self._outcome.config, error=f"{type(exc).__name__}: {exc}")
            self.message.value = panels.message_html(
                "The explorer hit an internal error", traceback.format_exc(limit=4),
                "Change a control to try again; please report this with the configuration.")
        self.seconds = time.perf_counter() - start

    def _outcome_for_controls(self) -> Outcome:
        try:
            config = ctl.read_config(self._config, self.controls)
        except ctl.ConfigValueError as exc:
            return Outcome(self._outcome.config, error=str(exc), hint="Correct the value in the control.")
        self._config = config
        try:
            cached = self._cache.get(config)
        except TypeError:  # an unhashable config: no caching
            return self._compute(config)
        if cached is not None:
            self._cache.move_to_end(config)
            return cached
        outcome = self._compute(config)
        self._cache[config] = outcome
        while len(self._cache) > RESULT_CACHE_SIZE:
            self._cache.popitem(last=False)
        return outcome

    def _compute(self, config: Any) -> Outcome:
        start = time.perf_counter()
        try:
            self.scenario.check(config)
        except (ValueError, TypeError) as exc:
            return Outcome(config, error=str(exc), hint="Change the settings named in the message.")
        try:
            built = self.scenario.build(config, self.build_context)
        except Exception as exc:  # noqa: BLE001 - a grammar error is data
            return Outcome(config, problem=problem_from_exception(exc))
        try:
            verdict = _verify(built)
        except Exception as exc:  # noqa: BLE001 - misuse of verify itself
            return Outcome(config, error=f"verification could not run: {type(exc).__name__}: {exc}",
                           hint="The scenario built tasks TaskManager cannot take; check the scenario's build().")
        task_set = verdict.task_set
        if task_set is None:  # capture failed: the verdict stands, there is nothing to draw
            return Outcome(config, verdict=verdict, error="the tasks verified but could not be captured for "
                           "drawing: " + panels.headline(verdict), hint="Report this with the configuration.")
        dot = schedule_graph(task_set, highlight=verdict.highlight_keys()).source
        return Outcome(config, verdict=verdict, task_set=task_set, dot=dot, notes=tuple(built.notes),
                       seconds=time.perf_counter() - start)

    def _show(self, outcome: Outcome, elapsed: float) -> None:
        self._outcome = outcome
        safe = self._safe
        self._baseline = safe if safe is not None and safe.config != outcome.config else None
        self._diff = None
        if self._baseline is not None and outcome.task_set is not None:
            assert self._baseline.task_set is not None
            self._diff = diff_task_sets(self._baseline.task_set, outcome.task_set)
        if outcome.ok:
            self._safe = outcome
        self.back_button.disabled = self._safe is None or self._safe.config == outcome.config
        self._show_status(outcome, elapsed)
        self._stale = set(TABS)
        self._render_visible()

    def _show_status(self, outcome: Outcome, elapsed: float) -> None:
        if outcome.problem is not None:
            headline, ok = f"not recorded: {outcome.problem.rule}", None
            self.message.value = panels.problem_html(outcome.problem)
        elif outcome.error is not None:
            headline, ok = "not verified", None
            self.message.value = panels.message_html("This configuration cannot be checked", outcome.error,
                                                     outcome.hint)
        else:
            ok = panels.verdict_state(outcome.verdict)
            headline = panels.headline(outcome.verdict)
            self.message.value = "".join(panels.note_html(n) for n in outcome.notes)
        details = f"changes since last safe: {self._diff.summary()}" if self._diff is not None else ""
        with self.status.hold_sync():
            self.status.value = panels.status_html(ok=ok, headline=headline, details=details, elapsed_s=elapsed)

    # ---------------------------------------------------------------- panels
    def _render_visible(self) -> None:
        index = self.tabs.selected_index or 0
        name = TABS[index]
        if name in self._stale:
            self._stale.discard(name)
            self.render(name)

    def render(self, name: str) -> None:
        """Fill one tab for the current outcome (tabs render when shown)."""
        out = self._outcome
        failure = panels.problem_html(out.problem) if out.problem is not None else (
            panels.message_html("This configuration cannot be checked", out.error or "", out.hint))
        if name == "schedule":
            if out.task_set is None:
                self.panes[name].value = failure
            else:
                graph = schedule_graph(out.task_set, highlight=out.verdict.highlight_keys())
                self.panes[name].value = panels.svg_html(graph)
        elif name == "changes":
            if out.task_set is None:
                self.panes[name].value = failure
            elif self._diff is None:
                self.panes[name].value = panels.note_html(
                    "This is the last safe configuration; change a control to see which steps it adds, "
                    "removes or moves.")
            else:
                graph = diff_graph(out.task_set, self._diff)
                self.panes[name].value = panels.diff_html(self._diff, graph, "compared with the last safe configuration")
        elif name == "verdict":
            self.panes[name].value = failure if out.verdict is None else panels.verdict_html(out.verdict)
        elif name == "dependencies":
            self.panes[name].value = failure if out.task_set is None else panels.svg_html(
                dependency_graph(out.task_set))
        elif name == "deadlock":
            self.deadlock_box.children = self._deadlock_children(out)
        elif name == "launch":
            self.launch_panel.update(self.scenario, out.config, out.task_set if out.ok else None)
        elif name == "sweep":
            self.sweep_tab.update()
        else:
            raise ValueError(f"no tab named {name!r}; tabs: {', '.join(TABS)}")

    def _deadlock_children(self, out: Outcome) -> list[widgets.Widget]:
        if out.verdict is None:
            return [widgets.HTML(panels.note_html("Nothing was verified for this configuration."))]
        if not out.verdict.findings:
            text = ("Verification passed: there is no deadlock to step through." if out.verdict.ok else
                    "The exhaustive search found no deadlock or race; the failing checks are in the Verdict tab.")
            return [widgets.HTML(panels.note_html(text))]
        return [Stepper(out.verdict).widget]


__all__ = ["Explorer", "Outcome"]
