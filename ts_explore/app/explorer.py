"""``ts_explore.Explorer``: turn a scenario's knobs and see the schedule re-recorded, re-verified, redrawn.

>>> import ts_explore
>>> ex = ts_explore.Explorer("persistent_copy", queue="clc", debounce_s=0)   # a cell ending in ``ex`` shows it
>>> ex.verdict.ok, ex.state, ex.config.queue.value
(True, 'idle', 'clc')

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
from typing import Any, Callable, Iterator

import ipywidgets as widgets
import traitlets

from ..analysis.diff import ScheduleDiff
from ..analysis.diff import diff_task_sets
from ..model import Problem, TaskSet
from ..model.verdict import Verdict
from ..scenarios.base import BuildContext, Scenario, get
from ..scenarios.choices import Choice, adjust, choices
from ..scenarios.knobs import knobs
from . import controls as ctl
from . import panels
from .launch_panel import LaunchPanel
from .proof import FOREGROUND_STATES, BackgroundProof, needs_background_proof
from .explorer_tabs import NOTHING_DRAWN, TabContents
from .outcome import Outcome, compute

TABS = ("schedule", "changes", "verdict", "deadlock", "dependencies", "launch")
TAB_TITLES = {
    "schedule": "Schedule",
    "changes": "Changes",
    "verdict": "Verdict",
    "deadlock": "Deadlock",
    "dependencies": "Dependencies",
    "launch": "Launch",
}
# More tabs after the built-in ones: (name, title, factory). ``factory(explorer)`` returns an object with a
# ``widget`` and an ``update()`` the explorer calls when the tab is shown after a change.
def _sweep_tab(explorer: Any) -> Any:
    from .sweep_tab import SweepTab

    return SweepTab(explorer)


EXTRA_TABS: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (("sweep", "Sweep", _sweep_tab),)
RESULT_CACHE_SIZE = 64
STATES = ("idle", "verifying", "error")


class Explorer(TabContents, traitlets.HasTraits):
    """Widgets for every config field of a scenario, and panels that follow them.

    ``scenario`` is a :class:`~ts_explore.scenarios.Scenario` or its catalog
    name; ``overrides`` set initial values (unknown names raise a ValueError
    listing the valid ones; enum values may be given by name, ``queue="clc"``).
    ``debounce_s`` coalesces changes that arrive within that many seconds (0:
    update synchronously, as tests do). Each update searches at most
    ``foreground_states`` states per run; when that cap stops a proof with
    nothing found, it goes on in the background (progress and a Cancel button
    under the status; ``wait_for_proof()`` blocks until it is done).

    ``config``, ``verdict`` and ``state`` are traitlets: ``ex.observe(fn,
    names="verdict")`` calls ``fn`` after every update. ``verdict`` is None
    while a proof runs and when the configuration could not be verified;
    ``state`` is ``"verifying"`` during an update, then ``"idle"`` (a verdict
    stands) or ``"error"`` (the message says why nothing was verified).
    """

    config = traitlets.Any(help="the configuration the panels show")
    verdict = traitlets.Instance(Verdict, allow_none=True, help="the current Verdict; None while verifying")
    state = traitlets.Enum(STATES, default_value="idle", help="idle, verifying or error")

    def __init__(self, scenario: Scenario | str, *, build_context: BuildContext | None = None,
                 debounce_s: float = 0.15, foreground_states: int = FOREGROUND_STATES, **overrides: Any) -> None:
        super().__init__()
        self.foreground_states = foreground_states  # search cap of each update's quick pass
        self.scenario = get(scenario) if isinstance(scenario, str) else scenario
        if not isinstance(self.scenario, Scenario):
            raise TypeError(f"Explorer takes a Scenario or a catalog name; got {type(scenario).__name__}")
        self.build_context = build_context or BuildContext()
        self.debounce_s = debounce_s
        defaults = self.scenario.config()
        self.scenario.config(**overrides)  # unknown names: a ValueError listing the valid ones
        self._config = dataclasses.replace(defaults, **ctl.coerce_values(defaults, overrides))
        self._knobs = {k.name: k for k in knobs(type(self._config))}
        self.controls: dict[str, widgets.Widget] = ctl.make_controls(self._config)
        self._names = {id(c): name for name, c in self.controls.items()}
        self._outcome = Outcome(self._config)
        self._safe: Outcome | None = None  # the last configuration that verified
        self._unrepaired: Outcome | None = None  # while a repair is applied: the outcome as built
        self._repair_sentence = ""
        self._applied_repair: Any = None  # the Repair shown while one is applied (the Launch tab launches it)
        self.repair_panel: Any = None
        self._baseline: Outcome | None = None  # what the current diff compares against
        self._diff: ScheduleDiff | None = None
        self._rebase = False  # the next update starts afresh: set(config) went to a whole configuration
        self._cache: OrderedDict[Any, Outcome] = OrderedDict()
        self._choices: OrderedDict[Any, dict[str, Choice]] = OrderedDict()
        self._adjusted: tuple[str, ...] = ()  # sentences for controls the last change moved
        self._changed: str | None = None  # the control the user changed last (never adjusted)
        self.tab_names: tuple[str, ...] = TABS + tuple(name for name, _, _ in EXTRA_TABS)
        self._stale: set[str] = set(self.tab_names)
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
        if self._outcome.error is None:
            return None
        return f"{self._outcome.error}; {self._outcome.hint}" if self._outcome.hint else self._outcome.error

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

    @property
    def adjusted(self) -> tuple[str, ...]:
        """Controls the last change moved to keep the configuration valid, in words."""
        return self._adjusted

    # --------------------------------------------------------------- widgets
    def _build_widgets(self) -> None:
        title = f"<b>{self.scenario.title}</b>"
        if self.scenario.description:
            title += f"<div style='color:#555'>{self.scenario.description}</div>"
        self.header = widgets.HTML(f"<div style='font-family:sans-serif'>{title}</div>")
        self.back_button = widgets.Button(description="Back to last safe", icon="undo", disabled=True,
                                          tooltip="Set every control to the last configuration that verified")
        self.back_button.on_click(lambda _: self.reset())
        self.defaults_button = widgets.Button(description="Defaults", icon="home", disabled=True,
                                              tooltip="Set every control to the scenario's defaults")
        self.defaults_button.on_click(lambda _: self.defaults())
        self.status = widgets.HTML()
        self.message = widgets.HTML()
        self.proof = BackgroundProof(self._proof_done)
        self.panes: dict[str, widgets.HTML] = {
            name: widgets.HTML() for name in ("schedule", "changes", "verdict", "dependencies")
        }
        self.deadlock_box = widgets.VBox()
        self.launch_panel = LaunchPanel()
        children = [
            self.panes["schedule"], self.panes["changes"], self.panes["verdict"],
            self.deadlock_box, self.panes["dependencies"], self.launch_panel.widget,
        ]
        self.extra_tabs = {name: factory(self) for name, _, factory in EXTRA_TABS}
        children += [tab.widget for tab in self.extra_tabs.values()]
        titles = tuple(TAB_TITLES[n] for n in TABS) + tuple(title for _, title, _ in EXTRA_TABS)
        self.tabs = widgets.Tab(children=children, titles=titles)
        self.tabs.observe(lambda _: self._render_visible(), names="selected_index")
        buttons = widgets.HBox([self.back_button, self.defaults_button])
        controls_box = widgets.VBox(list(self.controls.values()) + [buttons],
                                    layout=widgets.Layout(min_width="440px"))
        side = widgets.VBox([self.status, self.proof.widget, self.message],
                            layout=widgets.Layout(flex="1 1 auto", min_width="0"))
        self.widget = widgets.VBox([self.header, widgets.HBox([controls_box, side]), self.tabs])
        self.widget.add_class("ts-explore-explorer")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # --------------------------------------------------------------- changes
    def _on_change(self, change: Any) -> None:
        if self._batching:
            return
        self._changed = self._names.get(id(getattr(change, "owner", None) or change.get("owner")))
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
    def _quiet(self) -> Iterator[None]:
        """Change controls without triggering updates (each control syncs once)."""
        self._batching = True
        try:
            with contextlib.ExitStack() as stack:
                for control in self.controls.values():
                    stack.enter_context(control.hold_sync())
                yield
        finally:
            self._batching = False

    def _show_config(self, config: Any) -> None:
        """Put every value of ``config`` into its control (no update)."""
        fields = {f.name: f for f in dataclasses.fields(config)}
        with self._quiet():
            for name, control in self.controls.items():
                ctl.show_value(control, fields[name], self._knobs[name].type, getattr(config, name))

    def set(self, config: Any = None, /, **values: Any) -> None:
        """Set several config fields at once (one update); unknown names raise a ValueError.

        ``config`` (e.g. an earlier ``ex.config``) sets every field from it
        first and starts afresh, as the explorer opened: no changes are shown
        against the configurations before it. The values given are kept as given; a setting they leave
        refused is moved as the controls would move it (``adjusted`` says
        which). A combination of the given values the scenario refuses shows
        its message.
        """
        if config is not None:
            if not isinstance(config, self.scenario.config_type):
                raise TypeError(f"set() takes a {self.scenario.config_type.__name__}; got {type(config).__name__}")
            values = {**{f.name: getattr(config, f.name) for f in dataclasses.fields(config)}, **values}
        self.scenario.config(**values)  # validates the names
        values = ctl.coerce_values(self._config, values)  # and the values, before any control changes
        self._config = dataclasses.replace(self._config, **values)
        self._widen()
        self._show_config(self._config)
        self._changed = None
        self._rebase = config is not None
        self.refresh(adjust_others=False, keep=tuple(values))

    def reset(self) -> None:
        """Put every control back to the last configuration that verified."""
        if self._safe is None:
            return
        self.set(self._safe.config)

    def defaults(self) -> None:
        """Every control back to the scenario's defaults (one update): the way back from any configuration, also
        where the narrowed ranges offer no step towards them (attention's Q tile 64 with one consumer warpgroup)."""
        self.set(self.scenario.default_config())

    # ---------------------------------------------------------------- update
    def refresh(self, adjust_others: bool = True, keep: tuple[str, ...] | None = None) -> None:
        """Read the controls and recompute everything now (the debounce calls this).

        With ``adjust_others`` a refusal caused by the control changed last is
        resolved by moving the control the scenario's check names; ``keep``
        (fields set from code) are never moved, the others are.
        """
        self.updates += 1
        start = time.perf_counter()
        changed, self._changed = self._changed, None
        self.verdict = None
        self.state = "verifying"
        try:
            kept: Any = keep if keep is not None else changed
            outcome = self._outcome_for_controls(kept, adjust_others or keep is not None)
            self._show(outcome, time.perf_counter() - start)
        except Exception as exc:  # noqa: BLE001 - a bug must not freeze the panel
            self._outcome = Outcome(self._outcome.config, error=f"{type(exc).__name__}: {exc}")
            self.message.value = panels.message_html(
                "The explorer hit an internal error", traceback.format_exc(limit=4),
                "Change a control to try again; please report this with the configuration.")
            self._publish()
        self.seconds = time.perf_counter() - start

    def _publish(self) -> None:
        """Set the observable traits from the current outcome (before the panels draw)."""
        with self.hold_trait_notifications():
            self.config = self._outcome.config
            self.verdict = self._outcome.verdict
            self.state = "idle" if self._outcome.verdict is not None else "error"

    def _outcome_for_controls(self, changed: str | tuple[str, ...] | None, adjust_others: bool) -> Outcome:
        try:
            config = ctl.read_config(self._config, self.controls)
        except ctl.ConfigValueError as exc:
            self._adjusted = ()
            return Outcome(self._outcome.config, error=str(exc), hint="")
        self._adjusted = ()
        if adjust_others:
            config, self._adjusted = adjust(self.scenario, config, keep=changed)
            if self._adjusted:
                self._show_config(config)
        self._config = config
        self._narrow(config)
        try:
            cached = self._cache.get(config)
        except TypeError:  # an unhashable config: no caching
            return compute(self.scenario, config, self.build_context, max_states=self.foreground_states)
        if cached is not None:
            self._cache.move_to_end(config)
            return cached
        outcome = compute(self.scenario, config, self.build_context, max_states=self.foreground_states)
        self._cache[config] = outcome
        while len(self._cache) > RESULT_CACHE_SIZE:
            self._cache.popitem(last=False)
        return outcome

    def _choices_for(self, config: Any) -> dict[str, Choice]:
        try:
            found = self._choices.get(config)
        except TypeError:
            return choices(self.scenario, config)
        if found is None:
            found = self._choices[config] = choices(self.scenario, config)
            while len(self._choices) > RESULT_CACHE_SIZE:
                self._choices.popitem(last=False)
        return found

    def _narrow(self, config: Any) -> None:
        """Offer in each control only what the scenario accepts with the others; disable idle controls."""
        offered = self._choices_for(config)
        with self._quiet():
            for name, control in self.controls.items():
                ctl.apply_choice(control, self._knobs[name], offered[name])

    def _widen(self) -> None:
        """Every control back to its knob's full range (values set from code may lie anywhere in it)."""
        with self._quiet():
            for name, control in self.controls.items():
                ctl.apply_choice(control, self._knobs[name], None)

    def _show(self, outcome: Outcome, elapsed: float) -> None:
        self._unrepaired = None  # a new configuration drops an applied repair
        self._outcome = outcome
        safe = None if self._rebase else self._safe  # a whole configuration set from code is a new start
        self._rebase = False
        self._baseline = safe if safe is not None and safe.config != outcome.config else None
        self._diff = None
        if self._baseline is not None and outcome.task_set is not None:
            assert self._baseline.task_set is not None
            self._diff = diff_task_sets(self._baseline.task_set, outcome.task_set)
        if outcome.ok:
            self._safe = outcome
        self.back_button.disabled = self._safe is None or self._safe.config == outcome.config
        self.defaults_button.disabled = outcome.config == self.scenario.default_config()
        self._publish()
        self._show_status(outcome, elapsed)
        self._stale = set(self.tab_names)
        self._render_visible()
        if needs_background_proof(outcome):  # the quick pass hit its cap: prove it in the background
            self.proof.start(self.scenario, outcome.config, self.build_context)
            with self.hold_trait_notifications():
                self.verdict = None
                self.state = "verifying"
        else:
            self.proof.cancel()

    def _proof_done(self, config: Any, outcome: Outcome) -> None:
        """A background proof finished: keep its outcome and show it if its config is still the current one."""
        try:
            self._cache[config] = outcome
        except TypeError:  # an unhashable config is never cached
            pass
        if config == self._outcome.config:
            self._show(outcome, outcome.seconds)

    def wait_for_proof(self, timeout: float | None = None) -> bool:
        """Block until a background proof finishes (True) or ``timeout`` seconds pass (False)."""
        return self.proof.join(timeout)


__all__ = ["EXTRA_TABS", "Explorer", "Outcome", "STATES", "TABS"]
