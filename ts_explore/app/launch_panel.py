"""The explorer's launch panel: run the current configuration on the GPU, or say why it cannot.

Whether a launch is possible is decided before the button is enabled, from the
one CUDA probe (:func:`ts_explore.gpu.probe.probe`, run in a child process so
this process never initialises CUDA) and the one rule for what a config needs
(:func:`ts_explore.gpu.safety.required_cc`).
"""

from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as widgets

from ..gpu.probe import Probe, probe
from ..gpu.safety import launch_refusal
from ..model import TaskSet
from .panels import FAIL_COLOUR, OK_COLOUR, note_html


def launch_blockers(task_set: TaskSet | None, device: Probe, scenario: Any = None, config: Any = None) -> list[str]:
    """Every reason the current configuration cannot be launched here (empty: it can)."""
    reasons = []
    if scenario is not None and getattr(scenario, "kernel", "") is None:
        reasons.append(f"scenario {scenario.name!r} has no GPU kernel: it can be recorded and verified, not launched")
    if task_set is None:
        reasons.append("the current configuration does not verify; fix it first (see the Verdict tab)")
    limits = device.limits
    if limits is None:
        reasons.append(device.message)
        return reasons
    if limits.cc < (9, 0):
        reasons.append(f"{limits.name} is sm_{limits.cc[0]}{limits.cc[1]}; TS kernels need sm_90 or newer")
    refusal = launch_refusal(scenario, config, limits) if scenario is not None and config is not None else None
    if refusal is not None:
        reasons.append(refusal[1])
    return reasons


class LaunchPanel:
    """A Launch button (disabled with the reasons while a launch is impossible) and the result area."""

    def __init__(self, launch: Callable[[Any, Any], Any] | None = None,
                 probe: Callable[[], Probe] = probe) -> None:
        self._launch = launch
        self._probe = probe
        self._target: tuple[Any, Any] | None = None
        self.button = widgets.Button(description="Launch on GPU", icon="play", disabled=True)
        self.reasons = widgets.HTML()
        self.result = widgets.HTML()
        self.button.on_click(self._clicked)
        self.widget = widgets.VBox([self.button, self.reasons, self.result])

    def update(self, scenario: Any, config: Any, task_set: TaskSet | None) -> None:
        """Re-decide whether ``config`` of ``scenario`` can be launched here."""
        self._target = (scenario, config) if task_set is not None else None
        blockers = launch_blockers(task_set, self._probe(), scenario, config)
        self.button.disabled = bool(blockers)
        if blockers:
            items = "".join(f"<li>{html.escape(r)}</li>" for r in blockers)
            self.reasons.value = (
                f"<div style='color:{FAIL_COLOUR};font-family:sans-serif'>Cannot launch here:<ul>{items}</ul></div>"
            )
        else:
            self.reasons.value = f"<div style='color:{OK_COLOUR};font-family:sans-serif'>Ready to launch.</div>"

    def _clicked(self, _: Any) -> None:
        if self._target is None:
            return
        self.button.disabled = True
        self.result.value = note_html("launching…")
        try:
            launch = self._launch
            if launch is None:
                from ..gpu import launch
            result = launch(*self._target)
            if hasattr(result, "_repr_html_"):
                self.result.value = result._repr_html_()
            else:
                text = result.summary() if hasattr(result, "summary") else repr(result)
                self.result.value = f"<pre>{html.escape(str(text))}</pre>"
        except Exception as exc:  # noqa: BLE001 - show it, keep the notebook usable
            self.result.value = note_html(f"launch failed: {type(exc).__name__}: {exc}", FAIL_COLOUR)
        finally:
            self.button.disabled = False


__all__ = ["LaunchPanel", "launch_blockers"]
